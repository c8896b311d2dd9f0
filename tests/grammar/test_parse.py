"""The grammar accepts every construct of the language sketch and builds the right AST."""
from __future__ import annotations

from fractions import Fraction

import pytest

from odt.compiler import ast
from odt.compiler.errors import OdtSyntaxError
from odt.compiler.parse import parse_program

SKETCH = '''
# examples/fair_credit.odt
data "data/credit.csv" {
    target   approved            # label column (any number of classes)
    weight   w                   # optional per-row weight
    id       customer            # optional row names, for same_leaf(...)
    categorical job, housing     # one-hot
    numeric  age by quantiles(10)      # binarised thresholds
    numeric  income by thresholds(all) # every midpoint between sorted unique values
    numeric  debt by [0, 1000.5, -3]
    numeric  score by raw
    binary   smoker
    drop     timestamp
}

group women = sex == "F"
group men   = sex == "M"
group sick_women = women and class == 1
group young_or_old = age < 25 or not (age <= 65)
group region = state in {"NY", "CA", 3}

cost prices = { glucose: 3, insulin: 8, * : 1 }

model tree(depth <= 3, leaves <= 6, nodes <= 5) {
    splits univariate
    features age, income
}

minimize errors + 0.01 * nodes then -leaves

subject to {
    rate(1, women) >= 0.8 * rate(1, men)     # four-fifths rule (Florio eq. 19)
    abs(rate(1, women) - rate(1, men)) <= 0.05
    accuracy(sick_women) >= 0.9              # Nanfack 4.7.2
    0.1 <= predicted(1, women) / 10 <= 0.5
    tp(women) + fn(women) >= 2
    errors == 0
    errors(men) < 4
    nodes <= 7
    every leaf: samples >= 5                 # Nanfack 4.4
    every node: samples >= 20
    every path: age before bilirubin         # Nanfack 4.1
    every path: not (l_core and l_surf)      # Nanfack 4.6 (per branch)
    uses pregnancy                           # Nanfack 4.6 (presence)
    not (uses a and uses b)
    (uses a or uses `odd name`)
    every path: cost <= 10 with cost { glucose: 3, insulin: 8, * : 1 }   # Nanfack 4.2
    expected_cost <= 4 with cost prices
    same_leaf(r1, "r 2")
    threshold age in [18, 65]
}

solve maxsat(time_limit = 60s, threads = 2, seed = 7, solver = "g3") strategy incremental
'''


def test_the_sketch_program_parses_into_each_item_kind():
    program = parse_program(SKETCH, "sketch.odt")
    kinds = [type(i).__name__ for i in program.items]
    assert kinds == ["DataBlock"] + ["GroupDef"] * 5 + ["CostDef", "ModelDef", "Objective", "ConstraintBlock", "SolveStmt"]


def test_data_items_keep_binarisation_methods():
    data = parse_program(SKETCH).of(ast.DataBlock)[0]
    numeric = [i for i in data.items if isinstance(i, ast.NumericItem)]
    assert isinstance(numeric[0].binarization, ast.Quantiles) and numeric[0].binarization.k == 10
    assert isinstance(numeric[1].binarization, ast.AllThresholds)
    assert numeric[2].binarization.values == (Fraction(0), Fraction("1000.5"), Fraction(-3))
    assert isinstance(numeric[3].binarization, ast.RawValues)


def test_every_constraint_form_has_its_node():
    block = parse_program(SKETCH).of(ast.ConstraintBlock)[0]
    kinds = [type(c).__name__ for c in block.constraints]
    assert kinds.count("Relation") == 9
    assert kinds.count("Every") == 5
    assert kinds.count("UsesConstraint") == 3
    assert "CallConstraint" in kinds and "ThresholdRange" in kinds
    chain = block.constraints[3]
    assert chain.ops == ("<=", "<=") and len(chain.parts) == 3
    cost = [c for c in block.constraints if isinstance(c, ast.Every) and isinstance(c.body, ast.Relation)
            and c.body.cost is not None][0]
    assert cost.body.cost.table.default == 1


def test_objective_levels_and_exact_coefficients():
    obj = parse_program(SKETCH).of(ast.Objective)[0]
    assert obj.sense == "minimize" and len(obj.levels) == 2
    assert obj.levels[0].right.left.value == Fraction(1, 100)
    assert isinstance(obj.levels[1], ast.Neg)


def test_solve_directive_options_and_strategy():
    s = parse_program(SKETCH).of(ast.SolveStmt)[0]
    assert s.backend.text == "maxsat" and s.strategy.text == "incremental"
    opts = {o.name.text: o.value for o in s.options}
    assert opts == {"time_limit": 60.0, "threads": Fraction(2), "seed": Fraction(7), "solver": "g3"}


@pytest.mark.parametrize("text", [
    "model diagram(widths = [1, 2, 4, 4])",
    "model bdd(depth = 4)",
    "model tree(depth in 1..10)\nminimize depth then nodes",
    "model tree(depth <= 2) { splits multivariate }",
    "maximize accuracy",
    "solve cp",
    "solve milp(time_limit = 2min)",
    "data { target y }",
])
def test_other_skeletons_and_directives_parse(text):
    assert parse_program(text).items


def test_spans_point_at_the_source():
    program = parse_program("model tree(depth <= 2)\nminimize errors", "f.odt")
    obj = program.of(ast.Objective)[0]
    assert (obj.span.line, obj.span.column) == (2, 1)
    assert obj.levels[0].name.span.column == 10


def test_column_names_may_be_keywords_where_a_name_is_expected():
    program = parse_program('data "x.csv" { target weight\n id id\n drop data }')
    items = program.items[0].items
    assert items[0].name.text == "weight" and items[1].name.text == "id" and items[2].names[0].text == "data"


def test_a_syntax_error_names_line_column_and_expected_tokens():
    with pytest.raises(OdtSyntaxError) as info:
        parse_program("model tree(depth <= 2)\nminimize errors +\n", "f.odt")
    text = str(info.value)
    assert text.startswith("f.odt:2:18: error: unexpected end of input")
    assert "expected" in text
