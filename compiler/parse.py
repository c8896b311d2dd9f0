"""Text -> AST. The Lark parse tree never leaves this module.

Syntax errors are translated into ``OdtSyntaxError`` with ``file:line:col``, the source line,
a caret, and what was expected in user-facing words (house style 9).
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any

from lark import Token, Transformer, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError

from odt.grammar import load_parser

from . import ast
from .errors import OdtSyntaxError
from .source import SourceFile, Span

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
        value = Fraction(str(ch[-1]))
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

    def numeric_item(self, meta, ch):
        return ast.NumericItem(ch[0], ch[1] if len(ch) > 1 else None, self.s(meta))

    def all_thresholds(self, meta, ch):
        return ast.AllThresholds(self.s(meta))

    def quantile_thresholds(self, meta, ch):
        return ast.Quantiles(_int(ch[0]), self.s(meta))

    def explicit_thresholds(self, meta, ch):
        return ast.ExplicitThresholds(tuple(ch), self.s(meta))

    def raw_values(self, meta, ch):
        return ast.RawValues(self.s(meta))

    # -- groups
    def group_def(self, meta, ch):
        return ast.GroupDef(ch[0], ch[1], self.s(meta))

    def bool_or(self, meta, ch):
        return ast.BoolOr(tuple(ch), self.s(meta))

    def bool_and(self, meta, ch):
        return ast.BoolAnd(tuple(ch), self.s(meta))

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
        defaults = [c for c in ch if not isinstance(c, tuple)]
        return ast.CostTable(entries, defaults[-1] if defaults else None, self.s(meta))

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
        return ast.ParamRange(ch[0], _int(ch[1]), _int(ch[2]), self.s(meta))

    def param_named(self, meta, ch):
        return ch[0]

    def param_int(self, meta, ch):
        return int(ch[0])

    def param_list(self, meta, ch):
        return tuple(_int(c) for c in ch)

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
        return ast.Number(Fraction(str(ch[0])), self.s(meta))

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
        return ast.UsesAnd(tuple(ch), self.s(meta))

    def uses_or(self, meta, ch):
        return ast.UsesOr(tuple(ch), self.s(meta))

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
        return _seconds(str(ch[0]))

    def option_number(self, meta, ch):
        return ch[0]

    def option_string(self, meta, ch):
        return _unquote(str(ch[0]))

    def option_name(self, meta, ch):
        return ast.BareName(ch[0].text)


def _int(item: Any) -> Any:
    """An INT token as an int; a parameter reference as it is (resolved later)."""
    return item if isinstance(item, ast.ParamRef) else int(item)


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

    Raises:
        OdtSyntaxError: with file:line:col, caret and the expected tokens.

    >>> parse_program("model tree(depth <= 2)\\nminimize errors").items[0].skeleton.kind
    'tree'
    """
    source = SourceFile(filename, text)
    parser = load_parser()
    try:
        tree = parser.parse(text)
    except UnexpectedInput as exc:
        raise _syntax_error(exc, source, text) from None
    try:
        return _ToAst(source).transform(tree)
    except VisitError as exc:  # a malformed literal that the grammar let through
        raise OdtSyntaxError(f"cannot read this construct: {exc.orig_exc}", _span(source, getattr(exc.obj, "meta", None))) from None


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
