"""Output files written atomically (issue 18, item 5).

Input: a target path and its content (text or bytes). Output: the file, complete, or the
old file (or none) untouched. Invariant: a reader never sees half a file, and no
temporary file is left behind, also when writing fails or a signal interrupts it: the
content goes to a temporary file in the target's own folder (so the rename stays on one
file system), which ``os.replace`` renames over the target.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path


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
