"""Grammar-aware fuzzing: hypothesis writes programs item by item from the shapes of
grammar/odt.lark — data blocks, groups, costs, skeletons, objectives, constraints, solve
directives — with names that exist and names that do not, numbers in and far out of
range, nesting, then sometimes breaks one character. ``odtc check`` must answer each with
exit 0 or with exit 1 and a message that says where; never 2 (an internal error)."""
from __future__ import annotations

import contextlib
import io
import re
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from odt.cli import main

DATA = Path(__file__).resolve().parents[1] / "fixtures" / "fuzz" / "data.csv"
WHERE = re.compile(r"^\S+:\d+:\d+: error: |column '[^']*'|\brow \d+|\bline \d+", re.M)

COLUMNS = ["age", "job", "smoker", "w", "rid", "class"]
NAMES = st.sampled_from(COLUMNS + ["errors", "nodes", "leaves", "accuracy", "depth", "old", "clerks", "erors",
                                   "agee", "data", "model", "`age`", "x.y", "_"])
NUMBERS = st.one_of(st.integers(0, 3000).map(str),
                    st.sampled_from(["0.5", ".25", "2.", "1e3", "1e308", "9" * 60, "1e-300", "0", "1"]))
SIGNED = st.one_of(NUMBERS, NUMBERS.map(lambda n: "-" + n))
QUANTITY = st.sampled_from(["errors", "nodes", "leaves", "accuracy", "depth", "features_used", "samples", "cost",
                            "expected_cost", "erors"])
CALLEE = st.sampled_from(["errors", "accuracy", "rate", "predicted", "size", "abs", "tp", "fn", "foo"])


def _call(args: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.builds(lambda f, a: f"{f}({', '.join(a)})", CALLEE, st.lists(args, max_size=3))


EXPR = st.recursive(
    st.one_of(QUANTITY, NUMBERS, _call(st.one_of(NAMES, NUMBERS, st.just('"F"'), st.just("class")))),
    lambda e: st.one_of(
        st.builds(lambda a, op, b: f"{a} {op} {b}", e, st.sampled_from(["+", "-", "*", "/"]), e),
        e.map(lambda x: f"({x})"),
        e.map(lambda x: f"(-{x})"),
        _call(e),
    ),
    max_leaves=12,
)
VALUE = st.one_of(NAMES, SIGNED, st.just("class"), st.sampled_from(['"clerk"', '"nurse"', '"x"']))
COMPARE = st.sampled_from(["<=", ">=", "==", "!=", "<", ">"])
CONDITION = st.recursive(
    st.one_of(st.builds(lambda a, op, b: f"{a} {op} {b}", VALUE, COMPARE, VALUE), NAMES,
              st.builds(lambda a, vs: f"{a} in {{{', '.join(vs)}}}", VALUE, st.lists(VALUE, min_size=1, max_size=3))),
    lambda c: st.one_of(c.map(lambda x: f"not ({x})"),
                        st.builds(lambda a, op, b: f"{a} {op} {b}", c, st.sampled_from(["and", "or"]), c)),
    max_leaves=8,
)
BINARIZATION = st.one_of(st.just(""), st.just(" by thresholds(all)"), st.just(" by raw"),
                         NUMBERS.map(lambda k: f" by quantiles({k})"),
                         st.lists(SIGNED, min_size=1, max_size=3).map(lambda v: f" by [{', '.join(v)}]"))
DATA_ITEM = st.one_of(
    st.builds(lambda n: f"target {n}", st.sampled_from(COLUMNS + ["label"])),
    st.just("weight w"), st.just("id rid"), st.just("weight job"),
    st.builds(lambda k, ns: f"{k} {', '.join(ns)}", st.sampled_from(["categorical", "binary", "drop"]),
              st.lists(st.sampled_from(COLUMNS + ["jobb"]), min_size=1, max_size=2)),
    st.builds(lambda ns, b: f"numeric {', '.join(ns)}{b}", st.lists(st.sampled_from(COLUMNS), min_size=1, max_size=2),
              BINARIZATION),
)
DATA_BLOCK = st.builds(lambda items, path: f'data {path} {{ {" ".join(items)} }}', st.lists(DATA_ITEM, max_size=4),
                       st.sampled_from(['"data.csv"', '"data.csv"', '"data.csv"', '"missing.csv"', ""]))
SKELETON = st.one_of(
    st.builds(lambda d, extra: f"tree(depth {d}{extra})", st.one_of(NUMBERS.map(lambda n: f"<= {n}"),
                                                                      st.builds(lambda a, b: f"in {a}..{b}",
                                                                                st.integers(0, 14), st.integers(0, 14))),
              st.sampled_from(["", ", leaves <= 3", ", nodes <= 0", ", leafs <= 2"])),
    st.lists(st.integers(0, 5), min_size=1, max_size=4).map(lambda w: f"diagram(widths = [{', '.join(map(str, w))}])"),
    st.builds(lambda d, b: f"bdd(depth = {d}{b})", st.integers(0, 14), st.sampled_from(["", ', bias = "P"', ', bias = "Q"'])),
)
MODEL = st.builds(lambda s, body: f"model {s}{body}", SKELETON,
                  st.sampled_from(["", " { splits multivariate }", " { features age, job }", " { features nope }"]))
OBJECTIVE = st.builds(lambda s, levels: f"{s} {' then '.join(levels)}", st.sampled_from(["minimize", "maximize"]),
                      st.lists(EXPR, min_size=1, max_size=2))
CONSTRAINT = st.one_of(
    st.builds(lambda a, op, b: f"{a} {op} {b}", EXPR, COMPARE, st.one_of(EXPR, SIGNED)),
    st.builds(lambda s, n: f"every {s}: samples >= {n}", st.sampled_from(["leaf", "node", "path"]), NUMBERS),
    st.builds(lambda a, b: f"every path: {a} before {b}", NAMES, NAMES),
    st.builds(lambda a, b: f"every path: not ({a} and {b})", NAMES, NAMES),
    st.builds(lambda t: f"every path: cost <= 3 with cost {{ {t}: 2, *: 1 }}", NAMES),
    st.builds(lambda a, b: f"uses {a} or not uses {b}", NAMES, NAMES),
    st.builds(lambda a, b: f"same_leaf({a}, {b})", st.sampled_from(["r1", "r2", "r99"]), st.sampled_from(["r3", "x"])),
    st.builds(lambda n, a, b: f"threshold {n} in [{a}, {b}]", NAMES, SIGNED, SIGNED),
)
CONSTRAINTS = st.lists(CONSTRAINT, min_size=1, max_size=4).map(lambda cs: "subject to {\n    " + "\n    ".join(cs) + "\n}")
OPTION = st.one_of(
    st.builds(lambda t: f"time_limit = {t}", st.sampled_from(["10s", "0s", "500ms", "2min", "-3", '"x"', "9" * 40 + "s"])),
    st.builds(lambda k, v: f"{k} = {v}", st.sampled_from(["threads", "seed", "preselect", "verbose", "thredas"]), SIGNED),
    st.builds(lambda v: f"solver = {v}", st.sampled_from(['"g3"', '"cd19"', '"nosuchsat"', "3"])),
    st.builds(lambda v: f"encoding = {v}", st.sampled_from(['"paths"', '"flow"', '"flows"'])),
)
SOLVE = st.builds(lambda b, opts, s: f"solve {b}({', '.join(opts)}){s}",
                  st.sampled_from(["auto", "maxsat", "cp", "milp", "dp", "maxsta"]), st.lists(OPTION, max_size=3),
                  st.sampled_from(["", " strategy incremental", " strategy default", " strategy fast"]))
ITEM = st.one_of(
    DATA_BLOCK, MODEL, OBJECTIVE, CONSTRAINTS, SOLVE,
    st.builds(lambda n, c: f"group {n} = {c}", st.sampled_from(["old", "clerks", "g"]), CONDITION),
    st.builds(lambda n, t: f"cost {n} = {{ {t}: 3, *: 1 }}", st.sampled_from(["prices", "p"]), NAMES),
)
PROGRAM = st.builds(lambda data, model, items: "\n".join([data, model, *items]), DATA_BLOCK, MODEL,
                    st.lists(ITEM, max_size=5))


@st.composite
def broken(draw, program: st.SearchStrategy[str]) -> str:
    """A program, sometimes with one character deleted, replaced or inserted."""
    text = draw(program)
    how = draw(st.sampled_from(["keep", "keep", "delete", "insert", "truncate"]))
    if how == "keep" or not text:
        return text
    at = draw(st.integers(0, len(text) - 1))
    if how == "delete":
        return text[:at] + text[at + 1:]
    if how == "truncate":
        return text[:at]
    return text[:at] + draw(st.sampled_from(list("@#$(){}[],;:=<>!\"`\\\n") + ["\u2264", "\x00"])) + text[at:]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(broken(PROGRAM))
def test_check_answers_every_program_with_a_result_or_a_located_error(text):
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(DATA, Path(tmp) / "data.csv")
        path = Path(tmp) / "fuzz.odt"
        path.write_text(text)
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main(["check", str(path)])
    message = err.getvalue()
    assert code in (0, 1), message
    assert "internal error" not in message and "Traceback" not in message, message
    if code == 1:
        assert WHERE.search(message), message
