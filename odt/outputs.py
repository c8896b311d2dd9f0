"""Where odt writes its outputs: checks made before any work is done.

``check_writable(path)`` is called by every command that takes ``-o`` before it compiles
or solves, so an output that cannot be written is reported at once instead of after a long
solve whose result would be lost.
"""
from __future__ import annotations

import os
from pathlib import Path

from odt.compiler.errors import OdtError


def check_writable(path: str | os.PathLike[str]) -> Path:
    """``path`` as a ``Path`` when a file can be written there; else ``OdtError`` saying why
    (a missing folder, a folder in its place, a file where a folder should be, no
    permission).

    >>> try:
    ...     check_writable("/proc/no/such/folder/model.json")
    ... except OdtError as exc:
    ...     print(exc.message)
    cannot write '/proc/no/such/folder/model.json': the folder '/proc/no/such/folder' does not exist
    """
    target = Path(path)
    if str(path) == "":
        raise OdtError("the output path is empty")
    if target.is_dir():
        raise OdtError(f"cannot write '{path}': it is a folder", hint="give a file name inside it")
    parent = target.parent if str(target.parent) else Path(".")
    for ancestor in (parent, *parent.parents):
        if ancestor.exists() and not ancestor.is_dir():
            raise OdtError(f"cannot write '{path}': '{ancestor}' is a file, not a folder")
        if ancestor.exists():
            break
    if not parent.exists():
        raise OdtError(f"cannot write '{path}': the folder '{parent}' does not exist", hint="create it first")
    if not os.access(parent, os.W_OK | os.X_OK) or (target.exists() and not os.access(target, os.W_OK)):
        raise OdtError(f"cannot write '{path}': permission denied")
    return target
