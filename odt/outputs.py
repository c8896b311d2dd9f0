"""Where odt writes its outputs (issue 18): checks made before any work is done, and
files written atomically.

``check_writable(path)`` is called by every command that takes ``-o`` before it compiles
or solves, so an output that cannot be written is reported at once instead of after a long
solve whose result would be lost. ``write_atomic(path, content)`` gives the file complete
or leaves the old one (or none) untouched: a reader never sees half a file, and no
temporary file is left behind, also when writing fails or a signal interrupts it (the
content goes to a temporary file in the target's own folder, which ``os.replace`` renames
over the target).
"""
from __future__ import annotations

import os
import tempfile
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


def write_atomic(path: str | os.PathLike, content: str | bytes) -> None:
    """Write ``content`` to ``path`` through a temporary file in the same folder.

    Raises:
        OSError: the folder is missing or not writable, or ``path`` is a folder; the
            temporary file is removed first.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> write_atomic(d / "a.txt", "hello\\n"); (d / "a.txt").read_text(), sorted(p.name for p in d.iterdir())
    ('hello\\n', ['a.txt'])
    """
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent or Path("."))
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(content.encode("utf-8") if isinstance(content, str) else content)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the file the usual mode
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
