"""Missing values: ``missing "?" (learn)`` or ``(drop)`` in a data block says what a marked
cell means — a category of its own in a categorical column; in a numeric or binary one, a
direction each split learns (learn) or a dropped row (drop).
Without a declaration a marked numeric cell is an error naming the column, the row and the
declaration that would accept it. Real UCI files with '?' cells (hepatitis, credit-approval)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import odt
from odt.compiler.errors import OdtDataError, OdtTypeError

DATA = Path(__file__).resolve().parents[1] / "fixtures" / "data"


def _program(data_items: str, file: str = "hepatitis.csv", depth: int = 2) -> str:
    return f'data "{DATA / file}" {{ target class {data_items} }}\nmodel tree(depth <= {depth})\nminimize errors'


def test_without_a_declaration_a_marked_numeric_cell_names_column_row_and_the_declaration():
    with pytest.raises(OdtDataError) as exc:
        odt.compile(_program(""))
    first = exc.value.diagnostics[0]
    assert first.message.endswith("column 'STEROID' is numeric but row 4 (line 5) holds '?'")
    assert 'missing "?"  (each split learns where it goes' in first.hint and "(drop)" in first.hint


def test_markers_without_a_policy_learn_a_direction_as_scikit_learn_trees_do():
    alone = odt.compile(_program('missing "?"')).solve()  # was: refused until (learn) or (drop) was named
    learned = odt.compile(_program('missing "?" (learn)')).solve()
    assert alone.objective == learned.objective and alone.classifier == learned.classifier
    assert alone.classifier.predict(DATA / "hepatitis.csv").tolist() == \
        learned.classifier.predict(DATA / "hepatitis.csv").tolist()


@pytest.mark.parametrize("backend", ["dp", "maxsat", "cp", "milp"])
@pytest.mark.parametrize("labels, side", [([0, 0, 1, 1, 1, 1], "no"), ([1, 1, 0, 0, 1, 1], "yes")])
def test_learn_lets_each_split_choose_where_a_missing_number_goes(backend, labels, side):
    """x is missing on the last two rows, both of class 1: one split is exact only if it
    sends them to the side of class 1, which is 'no' in the first data set, 'yes' in the other."""
    data = {"x": ["1", "2", "3", "4", "?", "?"], "class": labels}
    text = 'data { target class missing "?" (learn) }\nmodel tree(depth <= 1)\nminimize errors'
    res = odt.compile(text, data=data).solve(backend=backend, time_limit=60)
    assert res.status == "optimal" and res.objective == 0 and res.verified
    assert [f.name for f in res.classifier.features] == [f"x <= 2.5 (missing: {side})"]
    assert list(res.classifier.predict({"x": ["?", "1", "4"]})) == [1, labels[0], labels[3]]


def test_learn_keeps_every_row_and_predict_routes_missing_cells_as_in_training(tmp_path):
    prog = odt.compile(_program('missing "?" (learn)'))
    assert prog.dataset.n_rows == 155 and prog.dataset.dropped_rows == ()
    res = prog.solve()
    assert res.status == "optimal" and res.verified
    raw = pd.read_csv(DATA / "hepatitis.csv", dtype=str)
    wrong = (res.classifier.predict(raw.drop(columns="class")).astype(str) != raw["class"].to_numpy()).sum()
    assert wrong == res.train_errors  # the '?' rows predicted exactly as the solver counted them
    res.classifier.save(tmp_path / "m.json")
    again = odt.load_classifier(tmp_path / "m.json")
    assert (again.predict(raw) == res.classifier.predict(raw)).all()


def test_an_unknown_policy_names_the_two_there_are():
    with pytest.raises(OdtTypeError, match="unknown missing-value policy 'skip'") as exc:
        odt.compile(_program('missing "?" (skip)'))
    assert "(learn)" in str(exc.value) and "(drop)" in str(exc.value)


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
    assert 'missing "?"  (NaN and None count as missing' in exc.value.diagnostics[0].hint


def test_the_estimator_takes_missing_cells_with_missing_drop():
    from odt.sklearn import ODTClassifier

    df = pd.read_csv(DATA / "credit-approval.csv", na_values="?")
    X, y = df.drop(columns="class"), df["class"]
    with pytest.raises(ValueError, match=r"column 'A1', row \d+: missing value"):
        ODTClassifier(max_depth=1, missing="error").fit(X, y)
    est = ODTClassifier(max_depth=2, missing="drop").fit(X, y)
    assert est.verified_ and len(est.result_.classifier.features) > 0
    numbers_present = X[["A2", "A14"]].notna().all(axis=1)
    assert est._repr_svg_() is not None and len(X) - numbers_present.sum() == 24  # the dropped rows
    rows = X[numbers_present & X["A1"].isna()]  # a missing category: predicted, as a category
    assert len(rows) > 0 and set(est.predict(rows)) <= {"+", "-"}
    np.testing.assert_allclose(est.predict_proba(rows).sum(axis=1), 1.0)


def test_the_estimator_learns_where_missing_numbers_go():
    from odt.sklearn import ODTClassifier

    df = pd.read_csv(DATA / "hepatitis.csv", na_values="?")
    X, y = df.drop(columns="class"), df["class"]
    est = ODTClassifier(max_depth=2, missing="learn").fit(X, y)
    direct = odt.compile(_program('missing "?" (learn)')).solve()
    assert est.objective_ == direct.objective  # every row kept, as the program
    assert (est.predict(X) == direct.classifier.predict(pd.read_csv(DATA / "hepatitis.csv", dtype=str))).all()


def test_an_empty_marker_makes_empty_cells_missing_for_training_and_prediction(tmp_path):
    """Issue 24: ``missing "" (learn)`` was ignored (an empty cell stayed an error). An empty
    marker means an empty cell: a number that each split learns to route, a category of
    its own; a classifier predicts rows with empty cells as it was trained to."""
    (tmp_path / "e.csv").write_text("a,job,class\n1,x,0\n2,,1\n,y,0\n4,x,1\n5,y,1\n,,0\n7,x,1\n8,y,0\n")
    prog = odt.compile('data "e.csv" { target class missing "" (learn) categorical job }\nmodel tree(depth <= 2)\n'
                       "subject to { uses job }\n", base_dir=tmp_path)
    assert 'job == ""' in [f.name for f in prog.dataset.features]
    res = prog.solve(backend="dp")
    assert res.verified and res.train_errors == 0
    assert "(missing: yes)" in res.classifier.to_text()
    assert res.classifier.predict(str(tmp_path / "e.csv")).tolist() == [0, 1, 0, 1, 1, 0, 1, 0]
    dropped = odt.compile('data "e.csv" { target class missing "" (drop) }\nmodel tree(depth <= 1)\n', base_dir=tmp_path)
    assert dropped.dataset.dropped_rows == (2, 5)


def test_without_an_empty_marker_an_empty_cell_is_an_error_that_names_the_declaration(tmp_path):
    (tmp_path / "e.csv").write_text("a,class\n1,0\n,1\n3,0\n")
    with pytest.raises(OdtDataError, match=r"column 'a', row 2 \(line 3\): empty cell") as exc:
        odt.compile('data "e.csv" { target class missing "?" (learn) }\nmodel tree(depth <= 1)\n', base_dir=tmp_path)
    assert 'missing ""' in exc.value.diagnostics[0].hint
    assert exc.value.diagnostics[0].span.location() == "e.csv:3:1"
