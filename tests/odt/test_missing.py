"""Missing values: ``missing "?" (drop)`` in a data block says what a marked cell means —
a category of its own in a categorical column, a dropped row in a numeric or binary one.
Without a declaration a marked numeric cell is an error naming the column, the row and the
declaration that would accept it. Real UCI files with '?' cells (hepatitis, credit-approval)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import odt
from odt.compiler.errors import OdtDataError, OdtTypeError, UnsupportedConstruct

DATA = Path(__file__).resolve().parents[1] / "fixtures" / "data"


def _program(data_items: str, file: str = "hepatitis.csv", depth: int = 2) -> str:
    return f'data "{DATA / file}" {{ target class {data_items} }}\nmodel tree(depth <= {depth})\nminimize errors'


def test_without_a_declaration_a_marked_numeric_cell_names_column_row_and_the_declaration():
    with pytest.raises(OdtDataError) as exc:
        odt.compile(_program(""))
    first = exc.value.diagnostics[0]
    assert first.message.endswith("column 'STEROID' is numeric but row 4 (line 5) holds '?'")
    assert 'missing "?" (drop)' in first.hint


def test_markers_without_a_policy_still_refuse_a_missing_number_and_say_how_to_accept_it():
    with pytest.raises(OdtDataError) as exc:
        odt.compile(_program('missing "?"'))
    first = exc.value.diagnostics[0]
    assert "column 'STEROID', row 4 (line 5): missing value '?' in a numeric column" in first.message
    assert first.span is not None and first.span.quote() == 'missing "?"'
    assert 'missing "?" (drop)' in first.hint and "categorical STEROID" in first.hint


def test_a_learned_default_direction_is_refused_as_not_supported_yet():
    with pytest.raises(UnsupportedConstruct) as exc:
        odt.compile(_program('missing "?" (learn)'))
    assert len(exc.value.diagnostics) == 1
    assert "missing (learn), a default direction learned for each split, is not supported yet" in str(exc.value)
    with pytest.raises(OdtTypeError, match="unknown missing-value policy 'skip'"):
        odt.compile(_program('missing "?" (skip)'))


def test_drop_removes_the_rows_with_a_missing_number_and_trains_on_the_rest():
    prog = odt.compile(_program('missing "?" (drop)'))
    raw = pd.read_csv(DATA / "hepatitis.csv", dtype=str)
    complete = ~(raw == "?").any(axis=1)
    assert prog.dataset.n_rows == complete.sum() == 80
    assert list(prog.dataset.dropped_rows) == list(np.flatnonzero(~complete))
    res = prog.solve()
    assert res.status == "optimal" and res.verified
    # the same tree as training on the complete rows alone
    alone = odt.compile("data { target class }\nmodel tree(depth <= 2)\nminimize errors",
                        data=raw[complete].astype(float)).solve()
    assert res.objective == alone.objective


def test_in_a_categorical_column_missing_is_a_category_of_its_own_and_predict_routes_it():
    prog = odt.compile(_program('missing "?" (drop)', "credit-approval.csv", depth=2))
    cats = {f.category for f in prog.dataset.features if f.column == "A1" and f.kind == "category"}
    assert cats == {"?", "a", "b"}
    assert len(prog.dataset.dropped_rows) == 24  # '?' in the numeric A2 or A14
    res = prog.solve()
    assert res.status == "optimal" and res.verified
    raw = pd.read_csv(DATA / "credit-approval.csv", dtype=str)
    marked = raw[(raw["A1"] == "?") & (raw["A2"] != "?") & (raw["A14"] != "?")]
    assert len(marked) > 0
    labels = res.classifier.predict(marked)  # rows with a missing category: no error
    assert set(labels) <= {"+", "-"}


def test_a_missing_number_at_prediction_is_a_clear_error_naming_column_and_row():
    res = odt.compile(_program('missing "?" (drop)')).solve()
    used = sorted(res.classifier.features_used())
    raw = pd.read_csv(DATA / "hepatitis.csv", dtype=str)
    row = raw[raw[used[0]] == "?"].head(1)
    with pytest.raises(OdtDataError, match=rf"column '({'|'.join(used)})', row 1: '\?' is not a number"):
        res.classifier.predict(row)  # a row (drop) would have dropped is not classified
    with pytest.raises(OdtDataError, match="so this row cannot be classified"):
        res.classifier.predict(row)


def test_python_data_nan_and_none_are_missing_once_declared():
    df = pd.DataFrame({"x": [1.0, 2.0, np.nan, 4.0, 5.0, 6.0], "c": ["a", None, "b", "a", "b", "b"],
                       "class": [0, 0, 1, 1, 1, 0]})
    text = 'data { target class missing "?" (drop) }\nmodel tree(depth <= 1)\nminimize errors'
    prog = odt.compile(text, data=df)
    assert prog.dataset.dropped_rows == (2,)
    assert {f.category for f in prog.dataset.features if f.column == "c"} == {"?", "a", "b"}
    with pytest.raises(OdtDataError, match=r"column 'x', row 3: missing value \(NaN\)") as exc:
        odt.compile(text.replace(' missing "?" (drop)', ""), data=df)
    assert 'missing "?" (drop)' in exc.value.diagnostics[0].hint


def test_the_estimator_takes_missing_cells_with_missing_drop():
    from odt.sklearn import ODTClassifier

    df = pd.read_csv(DATA / "credit-approval.csv", na_values="?")
    X, y = df.drop(columns="class"), df["class"]
    with pytest.raises(ValueError, match=r"column 'A1', row \d+: missing value"):
        ODTClassifier(max_depth=1).fit(X, y)
    est = ODTClassifier(max_depth=2, missing="drop").fit(X, y)
    assert est.verified_ and len(est.result_.classifier.features) > 0
    numbers_present = X[["A2", "A14"]].notna().all(axis=1)
    assert est._repr_svg_() is not None and len(X) - numbers_present.sum() == 24  # the dropped rows
    rows = X[numbers_present & X["A1"].isna()]  # a missing category: predicted, as a category
    assert len(rows) > 0 and set(est.predict(rows)) <= {"+", "-"}
    np.testing.assert_allclose(est.predict_proba(rows).sum(axis=1), 1.0)
