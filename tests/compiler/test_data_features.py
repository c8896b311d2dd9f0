"""The lazy feature sequence (issue 15): a dataset's numeric columns keep their cuts as one
threshold array each (``ThresholdBlock``) and a ``Feature`` is made only when indexed or
iterated. The sequence must be the tuple the eager construction built — same features,
same order, same ``len``/indexing/slicing/iteration/``==``/``hash`` — and everything made
from it (the 0/1 matrix, saved models) must be unchanged.
"""
from __future__ import annotations

import dataclasses
import json
import pickle
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import odt
from odt.compiler.data import Binarizer, Dataset, Feature, FeatureList, RawTable, ThresholdBlock, read_csv

DATA = Path(__file__).resolve().parents[1] / "fixtures" / "data"
GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "models" / "before_lazy_features.json"


def _eager(table: RawTable, target: str, categorical: tuple[str, ...] = (), marker: str | None = None) -> tuple:
    """The features as the specification (S7) defines them, built one by one: a 0/1 column
    is one binary feature, a text column one feature per category (sorted), a numeric
    column one threshold per midpoint of consecutive distinct values — twice, missing on
    the yes side then on the no side, when it holds the ``marker``."""
    out: list[Feature] = []
    for col in table.columns:
        if col == target:
            continue
        if col in categorical:
            out += [Feature(col, "category", category=c) for c in sorted(set(table.strings(col)))]
            continue
        texts = table.strings(col)
        missing = marker is not None and bool((texts == marker).any())
        values = np.array([float(t) for t in texts if t != marker])
        uniq = sorted(set(values.tolist()))
        if not missing and set(uniq) <= {0.0, 1.0}:
            out.append(Feature(col, "binary"))
            continue
        mids = [(a + b) / 2.0 for a, b in zip(uniq, uniq[1:])]
        if missing:
            out += [Feature(col, "threshold", t, f"missing:{side}|{marker}") for t in mids for side in ("yes", "no")]
        else:
            out += [Feature(col, "threshold", t) for t in mids]
    return tuple(out)


def _dataset(file: str, items: str = "") -> Dataset:
    return odt.compile(f'data "{DATA / file}" {{ target class {items} }}\nmodel tree(depth <= 2)').dataset


REAL = [("banknote.csv", "", (), None), ("lung-cancer.csv", "", (), None), ("mouse.csv", "", (), None),
        ("bmi.csv", "categorical Gender", ("Gender",), None),
        ("hepatitis.csv", 'missing "?" (learn)', (), "?")]


@pytest.mark.parametrize("file, items, categorical, marker", REAL)
def test_the_lazy_features_are_the_eager_ones_in_the_same_order(file, items, categorical, marker):
    data = _dataset(file, items)
    expected = _eager(read_csv(DATA / file), "class", categorical, marker)
    features = data.features
    assert isinstance(features, FeatureList)
    assert len(features) == len(expected)
    assert tuple(features) == expected and features == expected and expected == features
    assert [features[i] for i in range(len(features))] == list(expected)
    assert [type(f.threshold) for f in features] == [type(f.threshold) for f in expected]  # floats, not numpy scalars
    assert hash(features) == hash(expected)
    assert features.columns() == tuple(dict.fromkeys(f.column for f in expected))


def test_a_raw_numeric_column_is_one_threshold_block_and_nothing_is_made_up_front():
    features = _dataset("banknote.csv").features
    kinds = [(type(b).__name__, len(b)) for _, b in features.blocks()]
    assert [k for k, _ in kinds] == ["ThresholdBlock"] * 4
    assert sum(n for _, n in kinds) == len(features)


@pytest.mark.parametrize("file, items", [("banknote.csv", ""), ("hepatitis.csv", 'missing "?" (learn)'),
                                         ("bmi.csv", "categorical Gender"), ("mouse.csv", "")])
def test_the_block_matrix_is_the_feature_by_feature_matrix(file, items):
    data = _dataset(file, items)
    by_block = Binarizer(data.features).transform(data.table)
    by_feature = np.column_stack([Binarizer((f,)).transform(data.table)[:, 0] for f in data.features])
    assert by_block.dtype == bool and np.array_equal(by_block, by_feature)
    assert np.array_equal(data.X, by_feature)
    for j in (0, len(data.features) // 2, len(data.features) - 1):
        assert np.array_equal(data.column(j), by_feature[:, j])


def test_binary_columns_between_categories_are_compared_together_and_land_in_their_places():
    """A block of binary features split by category features (compared with 1 in one
    operation, ``Binarizer.transform``) is the matrix of its features one by one."""
    data = odt.compile('data { target y\n categorical c }\nmodel tree(depth <= 2)',
                       data={"a": [0, 1, 1, 0], "c": ["x", "y", "x", "z"], "b": [1, 1, 0, 0],
                             "d": [0, 0, 1, 1], "y": [0, 1, 0, 1]}).dataset
    kinds = [f.kind for f in data.features]
    assert "binary" in kinds and "category" in kinds
    features = tuple(data.features)
    mixed = (features[-1],) + features[:-1] + (features[0],)  # binary features on both sides of the categories
    by_block = Binarizer(mixed).transform(data.table)
    by_feature = np.column_stack([Binarizer((f,)).transform(data.table)[:, 0] for f in mixed])
    assert np.array_equal(by_block, by_feature)
    assert by_feature[:, [i for i, f in enumerate(mixed) if f.kind == "binary"]].any()


@pytest.mark.parametrize("file, items", [("banknote.csv", ""), ("hepatitis.csv", 'missing "?" (learn)'),
                                         ("bmi.csv", "categorical Gender")])
def test_names_columns_and_masks_are_answered_without_making_every_feature(file, items):
    features = _dataset(file, items).features
    eager = tuple(features)
    names = [f.name for f in eager[:: max(1, len(eager) // 40)]] + [eager[-1].name]
    names += ["nope", "Height <= x", "Height <= inf", "Height <= 1e+99", "Variance_of_wavelet <= -0"]
    for name in names:
        assert features.find_name(name) == next((f for f in eager if f.name == name), None)
    cols = features.columns()
    for wanted in ({cols[0]}, set(cols[1:]), set(), {"not a column"}):
        assert features.column_mask(wanted).tolist() == [f.column in wanted for f in eager]


def _blocks() -> st.SearchStrategy[list]:
    made = st.lists(st.sampled_from([Feature("b", "binary"), Feature("c", "category", category="x"),
                                     Feature("m", "threshold", 0.5, "missing:yes|?")]), max_size=3).map(tuple)
    cuts = st.lists(st.floats(-1e6, 1e6, allow_nan=False), max_size=5, unique=True).map(
        lambda ts: ThresholdBlock("t", sorted(ts)))
    return st.lists(st.one_of(made, cuts), max_size=5)


@settings(max_examples=150, deadline=None)
@given(_blocks(), st.integers(-12, 12), st.integers(-12, 12), st.sampled_from([None, 1, 2, -1, -3]))
def test_the_sequence_is_the_tuple_it_stands_for(blocks, start, stop, step):
    lazy = FeatureList(blocks)
    eager = tuple(f for b in blocks for f in b)
    assert len(lazy) == len(eager) and tuple(lazy) == eager and list(reversed(lazy)) == list(reversed(eager))
    for i in range(-len(eager), len(eager)):
        assert lazy[i] == eager[i]
    for bad in (len(eager), -len(eager) - 1):
        with pytest.raises(IndexError):
            lazy[bad]
    part = lazy[start:stop:step]
    assert isinstance(part, FeatureList) and tuple(part) == eager[start:stop:step] and part == eager[start:stop:step]
    assert lazy == FeatureList([eager]) and lazy == eager and eager == lazy and not lazy != eager
    assert hash(lazy) == hash(eager) and hash(lazy) == hash(FeatureList([eager]))
    assert all(f in lazy for f in eager) and Feature("t", "threshold", 2e6) not in lazy
    assert (lazy + eager) == eager + eager and (eager + lazy) == eager + eager
    assert pickle.loads(pickle.dumps(lazy)) == eager
    assert Binarizer(lazy).to_json() == Binarizer(eager).to_json()
    if eager:
        assert lazy.index(eager[-1]) == eager.index(eager[-1]) and lazy.count(eager[0]) == eager.count(eager[0])


def test_unequal_sequences_and_other_types():
    a = FeatureList([ThresholdBlock("x", [1.0, 2.0])])
    assert a != FeatureList([ThresholdBlock("x", [1.0, 3.0])]) and a != FeatureList([ThresholdBlock("y", [1.0, 2.0])])
    assert a != (Feature("x", "threshold", 1.0),) and a != [Feature("x", "threshold", 1.0), Feature("x", "threshold", 2.0)]
    assert a == (Feature("x", "threshold", 1.0), Feature("x", "threshold", 2.0))
    with pytest.raises(TypeError):
        a["0"]  # type: ignore[call-overload]
    assert "2 features" in repr(a) and len(FeatureList()) == 0 and FeatureList() == ()


def test_a_dataset_holds_one_feature_list_and_stays_frozen():
    data = _dataset("lung-cancer.csv")
    plain = dataclasses.replace(data, binarizer=Binarizer(tuple(data.features)))
    assert isinstance(plain.features, FeatureList) and plain.features is plain.features
    assert plain.features == data.features
    with pytest.raises(dataclasses.FrozenInstanceError):
        data.binarizer = plain.binarizer  # type: ignore[misc]


def _golden() -> dict:
    return json.loads(GOLDEN.read_text())


#: The programs whose solved models the eager construction saved (at 5184efb) in GOLDEN.
PROGRAMS = {
    "banknote_dp": ('data "{d}/banknote.csv" {{ target class }}\nmodel tree(depth <= 2)\nminimize errors', "dp"),
    "lung_maxsat": ('data "{d}/lung-cancer.csv" {{ target class }}\nmodel tree(depth <= 2)\nminimize errors', "maxsat"),
    "bmi_dp": ('data "{d}/bmi.csv" {{ target class categorical Gender }}\nmodel tree(depth <= 2)\nminimize errors', "dp"),
    "hepatitis_learn_dp": ('data "{d}/hepatitis.csv" {{ target class missing "?" (learn) }}\nmodel tree(depth <= 2)\n'
                           'minimize errors', "dp"),
    "lung_range_features_maxsat": ('data "{d}/lung-cancer.csv" {{ target class numeric Alkhol by quantiles(4) }}\n'
                                   'model tree(depth <= 2) {{ features Age, Smokes, Alkhol }}\nminimize errors\n'
                                   'subject to {{ threshold Age in [30, 60] }}', "maxsat"),
    "lung_range_dp": ('data "{d}/lung-cancer.csv" {{ target class numeric AreaQ by [2.5, 5.5] }}\nmodel tree(depth <= 2)\n'
                      'minimize errors\nsubject to {{ threshold Age in [30, 60] }}', "dp"),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_solved_models_and_their_json_are_unchanged(name, tmp_path):
    text, backend = PROGRAMS[name]
    prog = odt.compile(text.format(d=DATA))
    res = prog.solve(backend=backend, time_limit=120)
    want = _golden()[name]
    assert (res.status, res.objective, len(prog.dataset.features)) == (want["status"], want["objective"], want["n_features"])
    got = json.loads(json.dumps(res.classifier.to_json()))
    assert got["seen"].pop("target") == "class"  # recorded since issue 28 (render/export --data count its classes)
    assert got == want["model"]
    res.classifier.save(tmp_path / "m.json")
    again = odt.load_classifier(tmp_path / "m.json")
    assert again.to_json() == res.classifier.to_json()
    assert (again.predict(prog.dataset.table.columns) == res.classifier.predict(prog.dataset.table.columns)).all()


@pytest.mark.parametrize("file, items, model", [
    ("banknote.csv", "", "tree(depth <= 2)"),
    ("hepatitis.csv", 'missing "?" (learn)', "tree(depth <= 2)"),
    ("bmi.csv", "categorical Gender", "tree(depth <= 2) { features Gender, Weight }"),
    ("lung-cancer.csv", "numeric AreaQ by [2.5, 5.5]", "tree(depth <= 2) { features Age, AreaQ }"),
])
def test_row_patterns_tell_the_rows_of_the_matrix_apart_without_building_it(file, items, model):
    prog = odt.compile(f'data "{DATA / file}" {{ target class {items} }}\nmodel {model}\nminimize errors\n'
                       'solve maxsat')
    data, mask = prog.dataset, prog.checked.feature_mask
    patterns = data.row_patterns(mask)
    assert "X" not in data.__dict__
    rows = data.X[:, mask]
    _, of_x = np.unique(rows, axis=0, return_inverse=True)
    _, of_p = np.unique(patterns, axis=0, return_inverse=True)
    pairs = set(zip(of_x.reshape(-1).tolist(), of_p.reshape(-1).tolist()))
    assert len(pairs) == len(set(of_x.reshape(-1).tolist())) == len(set(of_p.reshape(-1).tolist()))  # a bijection


def test_check_estimates_a_solver_encoding_of_raw_columns_without_the_matrix(tmp_path):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 3))
    csv = tmp_path / "d.csv"
    np.savetxt(csv, np.column_stack([X, X[:, 0] > 0]), delimiter=",", header="a,b,c,class", comments="", fmt="%.17g")
    prog = odt.compile(f'data "{csv}" {{ target class }}\nmodel tree(depth <= 2)\nminimize errors\nsolve maxsat')
    described = prog.check_backend("maxsat")
    assert "estimated" in described and "X" not in prog.dataset.__dict__
    from odt.routing import distinct_rows
    assert distinct_rows(prog.checked) == 400 == len(np.unique(prog.dataset.X, axis=0))


def test_thresholds_are_read_only_and_a_plain_tuple_is_found_as_the_feature_it_equals():
    cuts = np.array([1.0, 2.0])
    block = ThresholdBlock("x", cuts)
    with pytest.raises(ValueError):
        block.thresholds[0] = 5.0
    cuts[0] = 0.5  # the caller's array stays its own, and writable
    assert block.thresholds.tolist() == [1.0, 2.0] and FeatureList([block])[1:][0].threshold == 2.0
    fl = FeatureList([block, (Feature("b", "binary"),), (), ThresholdBlock("y", []), (Feature("c", "binary"),)])
    assert [len(b) for _, b in fl.blocks()] == [2, 2]  # empty blocks dropped, adjacent made features merged
    assert ("x", "threshold", 2.0, None, ()) in fl and ("x", "threshold", 2, None, ()) in fl
    assert ("x", "threshold", 3.0, None, ()) not in fl and "x" not in fl and ("b", "binary", None, None, ()) in fl


def test_a_missing_column_is_named_by_the_matrix_of_a_feature_list():
    from odt.compiler.errors import OdtDataError

    features = _dataset("bmi.csv", "categorical Gender").features  # Gender categories, then Height, Weight cuts
    table = RawTable("t.csv", {"Gender": np.array(["Male"], dtype=object), "Weight": np.array([80.0])})
    with pytest.raises(OdtDataError, match="the classifier needs column 'Height', which is missing"):
        Binarizer(features).transform(table)
