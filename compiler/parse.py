"""Text -> AST. The Lark parse tree never leaves this module.

Syntax errors are translated into ``OdtSyntaxError`` with ``file:line:col``, the source line,
a caret, and what was expected in user-facing words (house style 9).
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from lark import Token, Transformer, Tree, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError

from odt.grammar import load_parser

from . import ast
from .errors import Diagnostic, OdtSyntaxError
from .ranges import MAX_INT, MAX_MAGNITUDE, MAX_SECONDS, out_of_range, power
from .source import SourceFile, Span

#: Words that start a statement; a syntax error is recovered at the next line that
#: starts with one of them, so one run reports an error in every broken statement.
STATEMENT_WORDS = ("data", "group", "cost", "model", "minimize", "maximize", "subject", "solve")
#: Syntax errors reported at most per run (later ones are usually echoes of these).
MAX_SYNTAX_ERRORS = 20

# Hand-written messages for common mistakes, matched by Lark's ``match_examples``.
SYNTAX_ERROR_EXAMPLES: dict[str, list[str]] = {
    "a skeleton needs parentheses, e.g. 'tree(depth <= 3)'": [
        "model tree",
        "model tree depth",
        "model diagram",
        "model bdd",
    ],
    "a constraint block is written 'subject to { ... }'": [
        "subject {",
        "subject to errors",
    ],
    "a data block is written 'data \"file.csv\" { target <column> ... }'": [
        'data "x.csv" target',
        "data {target}",
    ],
    "an objective needs an expression, e.g. 'minimize errors'": [
        "minimize",
        "minimize }",
        "maximize",
    ],
    "a group is defined as 'group <name> = <condition>'": [
        "group a b",
        "group = ",
        "group a ==",
    ],
    "unbalanced parentheses or braces": [
        "minimize (errors",
        "subject to { errors <= 3",
        "model tree(depth <= 3",
    ],
}

_TERMINAL_WORDS = {
    "NAME": "a name",
    "QUOTED_NAME": "a `quoted name`",
    "INT": "an integer",
    "NUMBER": "a number",
    "STRING": 'a "string"',
    "DURATION": "a duration such as 60s",
    "COMPARE": "a comparison (<=, >=, ==, <, >, !=)",
    "CALLEE": "a function call such as rate(...)",
    "$END": "end of input",
}


def _span(source: SourceFile, meta: Any) -> Span:
    if getattr(meta, "empty", False) or not hasattr(meta, "line"):
        return Span(source, 1, 1, 1, 1)
    return Span(source, meta.line, meta.column, meta.end_line, meta.end_column)


def _token_span(source: SourceFile, tok: Token) -> Span:
    return Span(source, tok.line or 1, tok.column or 1, tok.end_line or tok.line or 1, tok.end_column or (tok.column or 1) + 1)


def _unquote(text: str) -> str:
    body = text[1:-1]
    return body.encode("utf-8").decode("unicode_escape") if "\\" in body else body


@v_args(meta=True)
class _ToAst(Transformer):
    """Builds ``ast`` dataclasses from the Lark tree (one method per grammar rule)."""

    def __init__(self, source: SourceFile):
        super().__init__()
        self.src = source
        self.problems: list[Diagnostic] = []  # literals out of range, reported with the syntax errors

    def transform(self, tree: Tree) -> Any:
        """Bottom-up like ``Transformer.transform``, but with an explicit stack instead of
        recursion: an objective of thousands of terms (a left-deep tree) or conditions
        nested hundreds deep transform without ``RecursionError``."""
        done: list[Any] = []  # transformed values, in post-order
        stack: list[tuple[Tree, bool]] = [(tree, False)]
        while stack:
            node, expanded = stack.pop()
            if not expanded:
                stack.append((node, True))
                for child in reversed(node.children):
                    if isinstance(child, Tree):
                        stack.append((child, False))
                continue
            n_trees = sum(isinstance(c, Tree) for c in node.children)
            values = iter(done[len(done) - n_trees:]) if n_trees else iter(())
            if n_trees:
                del_from = len(done) - n_trees
                children = [next(values) if isinstance(c, Tree) else c for c in node.children]
                del done[del_from:]
            else:
                children = list(node.children)
            done.append(self._call_userfunc(node, children))
        return done[0]

    def _literal(self, tok: Token, value: Fraction, limit: int = MAX_MAGNITUDE) -> Fraction:
        problem = out_of_range(value, limit)
        if problem is not None:
            self.problems.append(Diagnostic(problem, _token_span(self.src, tok),
                                            f"odt takes numbers of magnitude at most {power(limit)}"))
            return Fraction(0)
        return value

    def _int(self, tok: Any) -> Any:
        """An INT token as an int (range-checked); a parameter reference as it is
        (resolved, and range-checked, by compiler/params.py)."""
        if isinstance(tok, ast.ParamRef):
            return tok
        return int(self._literal(tok, Fraction(str(tok)), MAX_INT))

    def s(self, meta: Any) -> Span:
        return _span(self.src, meta)

    # -- tokens and small values
    def name(self, meta, ch):
        tok = ch[0]
        text = str(tok)
        if tok.type == "QUOTED_NAME":
            text = text[1:-1]
        return ast.Name(text, _token_span(self.src, tok))

    def signed_number(self, meta, ch):
        value = self._literal(ch[-1], Fraction(str(ch[-1])))
        return -value if len(ch) == 2 else value

    def callee(self, meta, ch):
        return ast.Name(str(ch[0]), _token_span(self.src, ch[0]))

    def name_list(self, meta, ch):
        return tuple(ch)

    # -- parameters
    def param_def(self, meta, ch):
        return ast.ParamDef(ch[0], ch[1], self.s(meta))

    def param_ref(self, meta, ch):
        return ast.ParamRef(ch[0], ch[0].span)

    # -- program
    def start(self, meta, ch):
        return ast.Program(tuple(ch), self.s(meta))

    # -- data
    def data_block(self, meta, ch):
        path = None
        items = []
        for c in ch:
            if isinstance(c, Token):
                path = _unquote(str(c))
            else:
                items.append(c)
        return ast.DataBlock(path, tuple(items), self.s(meta))

    def target_item(self, meta, ch):
        return ast.TargetItem(ch[0], self.s(meta))

    def weight_item(self, meta, ch):
        return ast.WeightItem(ch[0], self.s(meta))

    def id_item(self, meta, ch):
        return ast.IdItem(ch[0], self.s(meta))

    def categorical_item(self, meta, ch):
        return ast.CategoricalItem(ch[0], self.s(meta))

    def binary_item(self, meta, ch):
        return ast.BinaryItem(ch[0], self.s(meta))

    def drop_item(self, meta, ch):
        return ast.DropItem(ch[0], self.s(meta))

    def missing_item(self, meta, ch):
        markers = tuple(_unquote(str(c)) for c in ch if isinstance(c, Token))
        policy = next((c for c in ch if isinstance(c, ast.Name)), None)
        return ast.MissingItem(markers, policy, self.s(meta))

    def numeric_item(self, meta, ch):
        return ast.NumericItem(ch[0], ch[1] if len(ch) > 1 else None, self.s(meta))

    def all_thresholds(self, meta, ch):
        return ast.AllThresholds(self.s(meta))

    def quantile_thresholds(self, meta, ch):
        return ast.Quantiles(self._int(ch[0]), self.s(meta))

    def explicit_thresholds(self, meta, ch):
        return ast.ExplicitThresholds(tuple(ch), self.s(meta))

    def raw_values(self, meta, ch):
        return ast.RawValues(self.s(meta))

    # -- groups
    def group_def(self, meta, ch):
        return ast.GroupDef(ch[0], ch[1], self.s(meta))

    # A one-item and/or is its item: parentheses and plain conditions add no nesting.
    def bool_or(self, meta, ch):
        return ch[0] if len(ch) == 1 else ast.BoolOr(tuple(ch), self.s(meta))

    def bool_and(self, meta, ch):
        return ch[0] if len(ch) == 1 else ast.BoolAnd(tuple(ch), self.s(meta))

    def bool_not(self, meta, ch):
        return ast.BoolNot(ch[0], self.s(meta))

    def comparison(self, meta, ch):
        return ast.Comparison(ch[0], str(ch[1]), ch[2], self.s(meta))

    def membership(self, meta, ch):
        return ast.Membership(ch[0], tuple(ch[1:]), self.s(meta))

    def bool_name(self, meta, ch):
        return ast.BoolName(ch[0], self.s(meta))

    def value_name(self, meta, ch):
        return ast.ValueName(ch[0], self.s(meta))

    def value_class(self, meta, ch):
        return ast.ValueClass(self.s(meta))

    def value_number(self, meta, ch):
        return ast.ValueNumber(ch[0], self.s(meta))

    def value_string(self, meta, ch):
        return ast.ValueString(_unquote(str(ch[0])), self.s(meta))

    # -- cost tables
    def cost_def(self, meta, ch):
        return ast.CostDef(ch[0], ch[1], self.s(meta))

    def cost_table(self, meta, ch):
        entries = tuple(c for c in ch if isinstance(c, tuple))
        pairs = tuple(c for c in ch if isinstance(c, ast.CostPair))
        defaults = [c for c in ch if not isinstance(c, (tuple, ast.CostPair))]
        return ast.CostTable(entries, defaults[-1] if defaults else None, self.s(meta), pairs)

    def cost_pair(self, meta, ch):
        return ast.CostPair(ch[0], ch[1], ch[2], self.s(meta))

    def cost_label(self, meta, ch):
        item = ch[0]
        if isinstance(item, ast.Name):
            return item
        if isinstance(item, Token) and item.type == "STRING":
            return ast.Name(_unquote(str(item)), self.s(meta))
        value = item if isinstance(item, Fraction) else Fraction(str(item))
        text = str(value.numerator) if value.denominator == 1 else str(float(value))
        return ast.Name(text, self.s(meta))

    def cost_entry(self, meta, ch):
        return (ch[0], ch[1])

    def cost_default(self, meta, ch):
        return ch[0]

    def cost_clause(self, meta, ch):
        item = ch[0]
        if isinstance(item, ast.CostTable):
            return ast.CostRef(item, None, self.s(meta))
        return ast.CostRef(None, item, self.s(meta))

    # -- skeleton
    def model_def(self, meta, ch):
        options = ch[1] if len(ch) > 1 else ()
        return ast.ModelDef(ch[0], options, self.s(meta))

    def _keyword(self, meta, ch):
        return str(ch[0])

    skeleton_kind = split_kind = sense = scope = _keyword

    def skeleton(self, meta, ch):
        return ast.Skeleton(str(ch[0]), tuple(c for c in ch[1:] if c is not None), self.s(meta))

    def param_compare(self, meta, ch):
        return ast.ParamCompare(ch[0], str(ch[1]), ch[2], self.s(meta))

    def param_range(self, meta, ch):
        return ast.ParamRange(ch[0], self._int(ch[1]), self._int(ch[2]), self.s(meta))

    def param_named(self, meta, ch):
        return ch[0]

    def param_int(self, meta, ch):
        return self._int(ch[0])

    def param_list(self, meta, ch):
        return tuple(self._int(c) for c in ch)

    def param_string(self, meta, ch):
        return _unquote(str(ch[0]))

    def model_body(self, meta, ch):
        return tuple(ch)

    def splits_option(self, meta, ch):
        return ast.SplitsOption(str(ch[0]), self.s(meta))

    def features_option(self, meta, ch):
        return ast.FeaturesOption(ch[0], self.s(meta))

    # -- expressions
    def number(self, meta, ch):
        return ast.Number(self._literal(ch[0], Fraction(str(ch[0]))), self.s(meta))

    def neg(self, meta, ch):
        return ast.Neg(ch[0], self.s(meta))

    def quantity(self, meta, ch):
        return ast.Quantity(ch[0], self.s(meta))

    def call(self, meta, ch):
        return ast.Call(ch[0], tuple(c for c in ch[1:] if c is not None), self.s(meta))

    def string_arg(self, meta, ch):
        return ast.StringArg(_unquote(str(ch[0])), self.s(meta))

    def class_arg(self, meta, ch):
        return ast.ClassArg(self.s(meta))

    @staticmethod
    def _bin(op: str):  # noqa: N805 - factory for the four arithmetic rules
        def rule(self, meta, ch):
            return ast.BinOp(op, ch[0], ch[1], self.s(meta))
        return rule

    add = _bin("+")
    sub = _bin("-")
    mul = _bin("*")
    div = _bin("/")

    def objective(self, meta, ch):
        return ast.Objective(str(ch[0]), tuple(ch[1:]), self.s(meta))

    # -- constraints
    def constraint_block(self, meta, ch):
        return ast.ConstraintBlock(tuple(ch), self.s(meta))

    def relation(self, meta, ch):
        cost = ch[-1] if ch and isinstance(ch[-1], ast.CostRef) else None
        body = ch[:-1] if cost is not None else ch
        parts = tuple(body[0::2])
        ops = tuple(str(t) for t in body[1::2])
        return ast.Relation(parts, ops, cost, self.s(meta))

    def every(self, meta, ch):
        return ast.Every(str(ch[0]), ch[1], self.s(meta))

    def order_on_path(self, meta, ch):
        return ast.OrderOnPath(ch[0], ch[1], self.s(meta))

    def path_exclusion(self, meta, ch):
        return ast.PathExclusion(tuple(ch), self.s(meta))

    def uses_constraint(self, meta, ch):
        return ast.UsesConstraint(ch[0], self.s(meta))

    def uses_atom(self, meta, ch):
        return ast.UsesAtom(ch[0], self.s(meta))

    def uses_not(self, meta, ch):
        return ast.UsesNot(ch[0], self.s(meta))

    def uses_and(self, meta, ch):
        return ch[0] if len(ch) == 1 else ast.UsesAnd(tuple(ch), self.s(meta))

    def uses_or(self, meta, ch):
        return ch[0] if len(ch) == 1 else ast.UsesOr(tuple(ch), self.s(meta))

    def call_constraint(self, meta, ch):
        return ast.CallConstraint(ast.Call(ch[0], tuple(c for c in ch[1:] if c is not None), self.s(meta)), self.s(meta))

    def threshold_range(self, meta, ch):
        return ast.ThresholdRange(ch[0], ch[1], ch[2], self.s(meta))

    # -- solve
    def solve_stmt(self, meta, ch):
        backend = ch[0]
        options = tuple(c for c in ch[1:] if isinstance(c, ast.SolveOption))
        strategy = ch[-1] if len(ch) > 1 and isinstance(ch[-1], ast.Name) else None
        return ast.SolveStmt(backend, options, strategy, self.s(meta))

    def solve_option(self, meta, ch):
        return ast.SolveOption(ch[0], ch[1], self.s(meta))

    def option_duration(self, meta, ch):
        seconds = _seconds(str(ch[0]))
        if not math.isfinite(seconds) or seconds > MAX_SECONDS:
            self.problems.append(Diagnostic(f"duration {ch[0]} is out of range", _token_span(self.src, ch[0]),
                                            f"at most {power(MAX_SECONDS)} seconds"))
            return 0.0
        return seconds

    def option_number(self, meta, ch):
        return ch[0]

    def option_string(self, meta, ch):
        return _unquote(str(ch[0]))

    def option_name(self, meta, ch):
        return ast.BareName(ch[0].text)


def _seconds(text: str) -> float:
    for unit, factor in (("ms", 0.001), ("min", 60.0), ("s", 1.0), ("h", 3600.0)):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * factor
    return float(text)


def _expected_words(names: set[str]) -> str:
    parser = load_parser()
    by_name = {t.name: t for t in parser.terminals}
    words = []
    for n in sorted(names):
        if n in _TERMINAL_WORDS:
            words.append(_TERMINAL_WORDS[n])
        elif n in by_name and by_name[n].pattern.type == "str":
            words.append(f"'{by_name[n].pattern.value}'")
        else:
            words.append(n.lower())
    words = sorted(set(words))
    if len(words) > 10:
        words = words[:10] + ["..."]
    return ", ".join(words)


def parse_program(text: str, filename: str = "<input>") -> ast.Program:
    """Parse odt source text into an ``ast.Program``.

    A syntax error does not stop the parse: it is recovered at the next line that starts
    a statement (``STATEMENT_WORDS``), so every broken statement is reported in one run.

    Raises:
        OdtSyntaxError: every syntax error (file:line:col, caret, the expected tokens) and
            every number literal out of range.

    >>> parse_program("model tree(depth <= 2)\\nminimize errors").items[0].skeleton.kind
    'tree'
    """
    source = SourceFile(filename, text)
    parser = load_parser()
    try:
        tree = parser.parse(text)
    except UnexpectedInput as exc:
        raise OdtSyntaxError(_recover(exc, source, text)) from None
    builder = _ToAst(source)
    try:
        program = builder.transform(tree)
    except VisitError as exc:  # a malformed literal that the grammar let through
        raise OdtSyntaxError(f"cannot read this construct: {exc.orig_exc}", _span(source, getattr(exc.obj, "meta", None))) from None
    if builder.problems:
        raise OdtSyntaxError(builder.problems)
    return program


def statement_starts(text: str) -> list[int]:
    """Offsets of the lines whose first word starts a statement (``STATEMENT_WORDS``).

    >>> statement_starts("model tree(depth <= 2)\\n  minimize errors\\n# solve\\n")
    [0, 25]
    """
    out = []
    offset = 0
    for line in text.splitlines(keepends=True):
        stripped = line.lstrip()
        word = stripped.split(None, 1)[0] if stripped else ""
        word = word.split("(", 1)[0].split("{", 1)[0]
        if word in STATEMENT_WORDS:
            out.append(offset + len(line) - len(stripped))
        offset += len(line)
    return out


def _recover(first: UnexpectedInput, source: SourceFile, text: str) -> list[Diagnostic]:
    """The first syntax error as Lark found it, then one per later statement that does not
    parse on its own (each parsed with the text before it blanked, so positions hold)."""
    diagnostics = [_syntax_error(first, source, text).diagnostics[0]]
    failed_at = _offset(first, text)
    starts = statement_starts(text) + [len(text)]
    later = [s for s in starts[:-1] if s >= failed_at]
    parser = load_parser()
    for i, begin in enumerate(later):
        end = later[i + 1] if i + 1 < len(later) else len(text)
        masked = _blank(text[:begin]) + text[begin:end]
        try:
            parser.parse(masked)
        except UnexpectedInput as exc:
            found = _syntax_error(exc, source, masked).diagnostics[0]
            if all((d.span.line, d.span.column) != (found.span.line, found.span.column)
                   for d in diagnostics if d.span is not None and found.span is not None):
                diagnostics.append(found)
        if len(diagnostics) >= MAX_SYNTAX_ERRORS:
            break
    return diagnostics


def _blank(text: str) -> str:
    """``text`` with every character but newlines turned into a space."""
    return "".join(ch if ch == "\n" else " " for ch in text)


def _offset(exc: UnexpectedInput, text: str) -> int:
    if isinstance(exc, UnexpectedEOF) or (isinstance(exc, UnexpectedToken) and exc.token.type == "$END"):
        return len(text)
    if isinstance(exc, UnexpectedToken) and exc.token.start_pos is not None:
        return int(exc.token.start_pos)
    pos = getattr(exc, "pos_in_stream", None)
    return int(pos) if isinstance(pos, int) else len(text)


def _syntax_error(exc: UnexpectedInput, source: SourceFile, text: str) -> OdtSyntaxError:
    parser = load_parser()
    label = exc.match_examples(parser.parse, SYNTAX_ERROR_EXAMPLES, use_accepts=True)
    line = getattr(exc, "line", 1) or 1
    col = getattr(exc, "column", 1) or 1
    if isinstance(exc, UnexpectedEOF) or line < 1:
        lines = text.splitlines() or [""]
        line, col = len(lines), len(lines[-1]) + 1
    width = 1
    found = ""
    if isinstance(exc, UnexpectedToken):
        tok = exc.token
        if tok.type == "$END":
            lines = text.splitlines() or [""]
            line, col = len(lines), len(lines[-1]) + 1
            found = "end of input"
        else:
            width = max(1, len(str(tok)))
            found = f"'{tok}'"
        expected = set(exc.accepts or exc.expected)
    elif isinstance(exc, UnexpectedCharacters):
        pos = exc.pos_in_stream or 0
        found = f"character '{text[pos]}'" if pos < len(text) else "end of input"
        expected = set(exc.allowed or ())
    else:
        found = "end of input"
        expected = set(getattr(exc, "expected", ()) or ())
    span = Span(source, line, col, line, col + width)
    message = f"unexpected {found}" if found else "syntax error"
    if label:
        message += f": {label}"
    hint = f"expected {_expected_words(expected)}" if expected else None
    return OdtSyntaxError(message, span, hint)
