"""The odt error hierarchy. Every user-facing error derives from ``OdtError``.

An ``OdtError`` holds one or more ``Diagnostic`` values; the checker collects every problem
of a program and raises once, so a user sees all of them in one run (E5). The CLI turns an
``OdtError`` into exit code 1 and its rendered text, never a traceback.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Iterable, Sequence

from .source import SourceFile, Span, render_diagnostic


@dataclass(frozen=True, slots=True)
class Diagnostic:
    message: str
    span: Span | None = None
    hint: str | None = None

    def render(self) -> str:
        return render_diagnostic(self.message, self.span, self.hint)


class OdtError(Exception):
    """Root of all odt errors: a list of diagnostics rendered together."""

    def __init__(self, message: str | Sequence[Diagnostic], span: Span | None = None, hint: str | None = None):
        if isinstance(message, str):
            self.diagnostics: tuple[Diagnostic, ...] = (Diagnostic(message, span, hint),)
        else:
            self.diagnostics = tuple(message)
        super().__init__(self.render())

    @property
    def message(self) -> str:
        return self.diagnostics[0].message

    def render(self) -> str:
        body = "\n".join(d.render() for d in self.diagnostics)
        if len(self.diagnostics) > 1:
            body += f"\n{len(self.diagnostics)} errors"
        return body

    def __str__(self) -> str:
        return self.render()


class OdtSyntaxError(OdtError):
    """The text does not follow the grammar."""


class OdtNameError(OdtError):
    """A name (column, group, feature, class, quantity) is not known."""


class OdtTypeError(OdtError):
    """A construct is used with the wrong kind or number of arguments."""


class OdtDataError(OdtError):
    """The data is unusable: missing target, empty cells, non-numeric values, one class..."""


class OdtInputError(OdtError, ValueError):
    """A Python entry point (``odt.compile``, ``Program.solve``, ``load_classifier``, the
    estimator) was given an argument it cannot take; also a ``ValueError``, as
    scikit-learn and Python code expect of a bad value."""


class OdtInputTypeError(OdtInputError, TypeError):
    """An argument of the wrong type (``progress=5``, ``params=[1, 2]``); also a ``TypeError``."""


class UnsupportedConstruct(OdtError):
    """A construct that parses and type-checks but that a backend (or odt) cannot lower yet."""


class InfeasibleProgram(OdtError):
    """The constraints of the program cannot all hold on this data."""


class VerificationFailed(OdtError):
    """The classifier a solve found fails its re-verification (E2): a constraint does not
    hold on it, or its recomputed objective or errors differ from the solver's. Such a
    result is never returned as ``optimal`` or ``feasible``: ``Program.solve`` raises this
    instead, with the result (status ``unverified``) in ``result`` for inspection."""

    def __init__(self, message: str, result: object = None, hint: str | None = None):
        super().__init__(message, None, hint)
        self.result = result


def closest(name: str, candidates: Iterable[str]) -> str | None:
    """The candidate closest to ``name`` (difflib ratio >= 0.6), or None.

    >>> closest("erors", ["errors", "nodes", "leaves"])
    'errors'
    """
    pool = list(dict.fromkeys(candidates))
    lowered = {c.lower(): c for c in pool}
    if name.lower() in lowered:
        return lowered[name.lower()]
    match = difflib.get_close_matches(name, pool, n=1, cutoff=0.6)
    return match[0] if match else None


def did_you_mean(name: str, candidates: Iterable[str], what: str = "") -> str | None:
    """A hint string 'did you mean X?' or a short list of what is known."""
    pool = list(dict.fromkeys(candidates))
    best = closest(name, pool)
    if best is not None:
        return f"did you mean '{best}'?"
    if not pool:
        return None
    shown = ", ".join(pool[:8]) + (", ..." if len(pool) > 8 else "")
    return f"known {what + ' ' if what else ''}names: {shown}"


class Collector:
    """Diagnostics gathered by the checker's passes, raised together once (house style 8).

    The error class raised is that of the first problem found, so a program whose only
    problems are data problems still raises ``OdtDataError``.

    >>> errs = Collector()
    >>> errs.add(OdtNameError, "unknown quantity 'erors'", None)
    >>> errs.add(OdtTypeError, "a product of two quantities is not linear", None)
    >>> try:
    ...     errs.raise_if_any()
    ... except OdtNameError as exc:
    ...     print(len(exc.diagnostics))
    2
    """

    def __init__(self) -> None:
        self.diagnostics: list[Diagnostic] = []
        self.first_kind: type[OdtError] | None = None

    def add(self, kind: type[OdtError], message: str, span: Span | None, hint: str | None = None) -> None:
        self.diagnostics.append(Diagnostic(message, span, hint))
        self.first_kind = self.first_kind or kind

    def absorb(self, exc: OdtError) -> None:
        self.diagnostics.extend(exc.diagnostics)
        self.first_kind = self.first_kind or type(exc)

    def raise_if_any(self) -> None:
        if self.diagnostics:
            raise (self.first_kind or OdtError)(self.diagnostics)


def decode_utf8(raw: bytes, name: str, what: str = "file") -> str:
    """``raw`` as UTF-8 text (a leading BOM dropped); else an ``OdtError`` at the line and
    column of the first byte that is not UTF-8.

    >>> decode_utf8(b"model tree(depth <= 2)", "a.odt")
    'model tree(depth <= 2)'
    >>> try:
    ...     decode_utf8(b"minimize\\n  err\\xffors", "a.odt", "program")
    ... except Exception as exc:
    ...     print(str(exc).splitlines()[0])
    a.odt:2:6: error: the program is not UTF-8 text: byte 0xff cannot be decoded
    """
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        start = exc.start
        line = raw.count(b"\n", 0, start) + 1
        line_start = raw.rfind(b"\n", 0, start) + 1
        column = len(raw[line_start:start].decode("utf-8", errors="replace")) + 1
        text = raw.decode("utf-8", errors="replace")
        span = Span(SourceFile(name, text), line, column, line, column + 1)
        raise OdtError(f"the {what} is not UTF-8 text: byte 0x{raw[start]:02x} cannot be decoded", span,
                       "save the file as UTF-8") from None
