"""Source text, spans and diagnostics rendering.

Input: the text of a program and a file name. Output: ``Span`` values that every AST node,
IR origin and error carries, and ``render_diagnostic`` which turns a span plus a message
into the ``file:line:col: message`` form with the source line and a caret (E5).
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class SourceFile:
    """A program text together with the name it is reported under."""

    name: str
    text: str = field(repr=False)
    first_line: int = 1  # the line number of the text's first line (an excerpt of a file: a CSV row)

    def line(self, lineno: int) -> str:
        """Return line ``lineno`` (1-based) without its newline, or '' when out of range.

        >>> SourceFile("data.csv", "18,clerk", first_line=7).line(7)
        '18,clerk'
        """
        lines = self.text.splitlines()
        i = lineno - self.first_line
        return lines[i] if 0 <= i < len(lines) else ""


@dataclass(frozen=True, slots=True)
class Span:
    """A region of a source file: 1-based line/column of its start and end."""

    source: SourceFile | None = field(repr=False)
    line: int
    column: int
    end_line: int
    end_column: int

    @property
    def file(self) -> str:
        return self.source.name if self.source is not None else "<input>"

    def location(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"

    def snippet(self) -> str:
        """The first source line of the span with a caret line under it."""
        if self.source is None:
            return ""
        text = self.source.line(self.line)
        width = (self.end_column - self.column) if self.end_line == self.line else len(text) - self.column + 1
        width = max(1, width)
        pad = "".join("\t" if ch == "\t" else " " for ch in text[: self.column - 1])
        return f"    {text}\n    {pad}{'^' * width}"

    def quote(self) -> str:
        """The source text covered by the span (its first line when it spans several)."""
        if self.source is None:
            return ""
        text = self.source.line(self.line)
        end = self.end_column - 1 if self.end_line == self.line else len(text)
        return text[self.column - 1 : end].strip()


NO_SPAN = Span(None, 0, 0, 0, 0)


def render_diagnostic(message: str, span: Span | None, hint: str | None = None, kind: str = "error") -> str:
    """Render one diagnostic as ``file:line:col: kind: message`` + source line + caret + hint.

    >>> src = SourceFile("a.odt", "model tre(depth <= 2)")
    >>> print(render_diagnostic("unknown skeleton", Span(src, 1, 7, 1, 10), "did you mean 'tree'?"))
    a.odt:1:7: error: unknown skeleton
        model tre(depth <= 2)
              ^^^
      hint: did you mean 'tree'?
    """
    if span is None or span.source is None and span.line == 0:
        head = f"{kind}: {message}" if span is None or span.source is None else f"{span.file}: {kind}: {message}"
        lines = [head]
    else:
        lines = [f"{span.location()}: {kind}: {message}"]
        snippet = span.snippet()
        if snippet:
            lines.append(snippet)
    if hint:
        lines.append(f"  hint: {hint}")
    return "\n".join(lines)

