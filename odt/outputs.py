"""Where odt writes its outputs (issues 18 and 24): checks made before any work is done,
files written atomically, and results kept when writing fails after all.

``check_writable(path)`` is called by every command that takes ``-o`` before it compiles
or solves, so an output that cannot be written is reported at once instead of after a long
solve whose result would be lost. ``refuse_inputs(output, inputs)`` refuses an output that
is one of the run's input files — the same file by device and inode, so another name for it
(``./p.odt``, a symbolic or hard link) is caught too. ``write_atomic(path, content)`` gives
the file complete or leaves the old one (or none) untouched: a reader never sees half a
file, and no temporary file is left behind, also when writing fails or a signal interrupts
it (the content goes to a temporary file in the target's own folder, which ``os.replace``
renames over the target). ``write_or_keep(path, content)`` is ``write_atomic`` for a
result that exists already (a solved classifier, predictions): when the target cannot be
written after all (its folder removed or made read-only during the run, a folder put in
its place, a full disk), the content is kept in a file of the system's temporary folder
and the returned ``OdtError`` names both.
"""
from __future__ import annotations

import errno
import os
import stat
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator

from odt.compiler import limits
from odt.compiler.errors import OdtError
from odt.compiler.source import Span

Path_ = str | os.PathLike[str]


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


def refuse_inputs(output: Path_, inputs: Iterable[tuple[str, Path_ | None]], option: str = "-o",
                  span: Span | None = None) -> None:
    """Raise ``OdtError`` when ``output`` is the same file as one of ``inputs`` (pairs of
    what the input is and its path; None is skipped): same device and inode, so any name
    of the file counts. An output that does not exist yet is no input.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp()); (d / "p.odt").write_text("model tree(depth <= 1)")
    22
    >>> try:
    ...     refuse_inputs(f"{d}/./p.odt", [("the program file", d / "p.odt")])
    ... except OdtError as exc:
    ...     print(exc.message.replace(str(d), "D"))
    -o 'D/./p.odt' would overwrite the program file 'D/p.odt', an input of this run
    >>> refuse_inputs(d / "m.json", [("the program file", d / "p.odt")])  # a new file: fine
    """
    try:
        out = os.stat(output)
    except (OSError, ValueError):  # not there (yet), or a name no file system takes
        return
    for what, path in inputs:
        if path is None:
            continue
        try:
            st = os.stat(path)
        except (OSError, ValueError):
            continue
        if (st.st_dev, st.st_ino) == (out.st_dev, out.st_ino):
            raise OdtError(f"{option} '{output}' would overwrite {what} '{path}', an input of this run", span,
                           hint="write the output to another file")


def refuse_same_outputs(outputs: Iterable[tuple[str, Path_ | None]]) -> None:
    """Raise ``OdtError`` when two of ``outputs`` (option, path) name the same file, so
    that one would replace the other (compared by their resolved paths, and by inode when
    both exist).

    >>> try:
    ...     refuse_same_outputs([("-o", "s.csv"), ("--plot", "./s.csv")])
    ... except OdtError as exc:
    ...     print(exc.message)
    -o 's.csv' and --plot './s.csv' name the same file: one would overwrite the other
    """
    given = [(option, path) for option, path in outputs if path is not None]
    for i, (a, pa) in enumerate(given):
        for b, pb in given[i + 1:]:
            same = os.path.realpath(pa) == os.path.realpath(pb)
            if not same:
                try:
                    same = os.path.samefile(pa, pb)
                except (OSError, ValueError):
                    pass
            if same:
                raise OdtError(f"{a} '{pa}' and {b} '{pb}' name the same file: one would overwrite the other",
                               hint="give each output its own file name")


def write_atomic(path: str | os.PathLike, content: str | bytes) -> None:
    """Write ``content`` to ``path`` through a temporary file in the same folder. A
    symbolic link is followed (the file it points to is replaced, the link stays); a
    device or a named pipe (``/dev/null``, ``/dev/stdout``, ``mkfifo``), which no file may
    replace, is written into directly.

    Raises:
        OSError: the folder is missing or not writable, or ``path`` is a folder; the
            temporary file is removed first.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> write_atomic(d / "a.txt", "hello\\n"); (d / "a.txt").read_text(), sorted(p.name for p in d.iterdir())
    ('hello\\n', ['a.txt'])
    """
    target = Path(path)
    data = content.encode("utf-8") if isinstance(content, str) else content
    if target.is_symlink():
        target = Path(os.path.realpath(target))
    try:
        mode = os.stat(target).st_mode
    except OSError:
        mode = stat.S_IFREG
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):  # a folder fails in os.replace below
        with open(target, "wb") as stream:
            stream.write(data)
        return
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent or Path("."))
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the file the usual mode
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_or_keep(path: Path_, content: str | bytes, what: str = "the output") -> OdtError | None:
    """Write ``content`` to ``path`` atomically; None when it is written. When it cannot be
    (any ``OSError``: the folder gone or read-only, a folder or a file in the way, a full
    disk), keep ``content`` in a new file of the system's temporary folder and return the
    error to report, naming the target, why, and where ``what`` is kept. Never raises
    ``OSError``: a result that exists is not lost to a failed write.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp()); (d / "m.json").mkdir()
    >>> problem = write_or_keep(d / "m.json", "{}\\n", "the classifier")
    >>> print(problem.message.replace(str(d), "D").split(";")[0])
    cannot write 'D/m.json': it is a folder
    >>> kept = pathlib.Path(problem.message.split("kept in '")[1].rstrip("'")); kept.read_text()
    '{}\\n'
    >>> kept.unlink()
    """
    try:
        write_atomic(path, content)
        return None
    except OSError as exc:
        reason = _why(exc, Path(path))
    try:
        fd, kept = tempfile.mkstemp(prefix="odtc-", suffix="-" + Path(path).name)
        with os.fdopen(fd, "wb") as fh:
            fh.write(content.encode("utf-8") if isinstance(content, str) else content)
    except OSError as exc:
        return OdtError(f"cannot write '{path}': {reason}; {what} could not be kept in the temporary folder "
                        f"'{tempfile.gettempdir()}' either: {_why(exc, Path(tempfile.gettempdir()))}")
    return OdtError(f"cannot write '{path}': {reason}; {what} is kept in '{kept}'",
                    hint="move that file where you want it")


def _why(exc: OSError, path: Path) -> str:
    """The reason of a failed write, in words."""
    if exc.errno == errno.EISDIR or path.is_dir():
        return "it is a folder"
    if exc.errno == errno.ENOENT:
        return f"the folder '{path.parent}' does not exist (any more)"
    if exc.errno == errno.ENOTDIR:
        return f"a part of '{path.parent}' is a file, not a folder"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if exc.errno == errno.ENOSPC:
        return "no space left on the device"
    if exc.errno == errno.EROFS:
        return "the file system is read-only"
    return exc.strerror or str(exc)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def stdout_for_results() -> Iterator[None]:
    """While a command computes (``odtc solve``, ``explain``, ``sweep``), whatever else is
    written on standard output goes to standard error instead: a library's log handler
    bound to ``sys.stdout`` (Pyomo's), a ``print`` in a dependency, a solver's native
    output. The command's standard output is then its own result alone (``--json``'s one
    object, the report), as a pipeline reading it expects. Nothing is redirected when
    ``sys.stdout`` is not a file (in-process, e.g. under a test's capture)."""
    fd, err = _fileno(sys.stdout), _fileno(sys.stderr)
    try:
        saved = None if fd is None or err is None else os.dup(fd)
    except OSError:  # no descriptor left (EMFILE): the command runs unguarded rather than not at all
        saved = None
    if saved is None or fd is None or err is None:
        yield
        return
    try:
        os.dup2(err, fd)
        yield
    finally:
        with limits.shielded():  # a stop arriving here must not leave stdout pointing at stderr
            flush_quietly(sys.stdout)  # buffered noise goes where it was written, to stderr
            os.dup2(saved, fd)
            os.close(saved)


def _fileno(stream) -> int | None:
    """``stream``'s file descriptor, flushed; None when it has none."""
    try:
        stream.flush()
        return stream.fileno()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both
        return None


def flush_quietly(stream) -> None:
    """``stream.flush()``, ignoring a stream that cannot take it (closed, a broken pipe)."""
    try:
        stream.flush()
    except (AttributeError, OSError, ValueError):
        pass
