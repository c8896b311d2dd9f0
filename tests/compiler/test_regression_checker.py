"""Regression programs in the language (issue 26): a loss in the objective makes a numeric
target a regression target; the derived quantities (mse, mae, r2) are linear in a loss;
the checker refuses what it cannot mean, at the place that says it; a regression tree
re-verifies, renders with its rows per leaf, and survives JSON, pickle and ``predict``."""
from __future__ import annotations

import json
import pickle
from fractions import Fraction

import numpy as np
import pytest

import odt
from odt.compiler.classifiers import Tree
from odt.compiler.errors import OdtError, OdtTypeError

RNG = np.random.default_rng(0)
N = 40
DATA = {"a": RNG.normal(size=N), "g": np.array(["u", "v"] * (N // 2)), "y": RNG.normal(size=N) * 10,
        "c": np.array(["p", "q"] * (N // 2)), "w": RNG.integers(1, 4, N).astype(float)}


def compile_(text: str):
    return odt.compile("data { target y\n weight w }\nmodel tree(depth <= 2)\n" + text, data=DATA)


def test_a_loss_makes_the_target_a_regression_target():
    prog = compile_("minimize squared_error")
    assert prog.checked.target is not None and prog.checked.target.tolist() == DATA["y"].tolist()
    assert compile_("minimize squared_error").checked.objective.levels[0].kinds() == {"squared_error"}


def test_mse_mae_and_r2_are_linear_in_their_loss():
    w, y = DATA["w"], DATA["y"]
    total = w.sum()
    sst = float((w * (y - (w * y).sum() / total) ** 2).sum())
    (q, c), = compile_("minimize mse").checked.objective.levels[0].terms
    assert q.kind == "squared_error" and float(c) == pytest.approx(1 / total)
    (q, c), = compile_("minimize mae").checked.objective.levels[0].terms
    assert q.kind == "absolute_error" and float(c) == pytest.approx(1 / total)
    form = compile_("maximize r2").checked.objective.levels[0]  # maximize: the negated form is minimised
    (q, c), = form.terms
    assert q.kind == "squared_error" and float(c) == pytest.approx(1 / sst) and form.constant == Fraction(-1)


@pytest.mark.parametrize("text, where, message", [
    ("minimize errors", "4:1", "numeric with 40 distinct values"),
    ("minimize squared_error\nsubject to { errors <= 3 }", "5:14", "'errors' counts misclassified rows"),
    ("minimize squared_error + absolute_error", "4:1", "one loss"),
    ("minimize errors\nsubject to { r2 >= 0.5 }", "4:1", "numeric with 40 distinct values"),
])
def test_the_checker_refuses_what_a_regression_program_cannot_mean(text, where, message):
    with pytest.raises(OdtTypeError) as info:
        compile_(text)
    rendered = info.value.render()
    assert f":{where}:" in rendered and message in rendered and "^" in rendered


def test_a_loss_on_a_text_target_is_an_error_at_the_objective():
    with pytest.raises(OdtTypeError) as info:
        odt.compile("data { target c }\nmodel tree(depth <= 2)\nminimize mse\n", data=DATA)
    rendered = info.value.render()
    assert "<string>:3:1:" in rendered and "not a number on every row" in rendered and "minimize errors" in rendered


def test_a_missing_target_cell_is_an_error_naming_the_row():
    data = dict(DATA, y=np.array([str(v) for v in DATA["y"][:-1]] + ["NA"]))
    with pytest.raises(OdtTypeError, match="row 40"):
        odt.compile('data { target y\n missing "NA" }\nmodel tree(depth <= 1)\nminimize squared_error\n', data=data)


def test_an_integer_target_with_few_values_stays_a_class_label():
    data = dict(DATA, y=RNG.integers(0, 3, N))
    prog = odt.compile("data { target y }\nmodel tree(depth <= 1)\n", data=data)
    assert prog.checked.target is None and prog.checked.dataset.classes == (0, 1, 2)


def test_a_regression_tree_re_verifies_and_round_trips():
    prog = compile_("minimize squared_error\nsubject to { every leaf: samples >= 3 }")
    r = prog.solve(backend="dp")
    tree = r.classifier
    assert r.verified and isinstance(tree, Tree) and tree.regression
    w, y = DATA["w"], DATA["y"]
    pred = tree.predict(DATA)
    assert pred.dtype == np.float64
    assert r.objective == pytest.approx(float((w * (y - pred) ** 2).sum()))
    assert r.evaluation is not None and r.evaluation.train_errors == pytest.approx(r.objective)
    again = Tree.from_json(json.loads(json.dumps(tree.to_json())))
    assert again == tree and again.predict(DATA).tolist() == pred.tolist()
    assert pickle.loads(pickle.dumps(tree)) == tree
    text = tree.to_text(tree.leaf_index_binary(np.zeros((0, len(tree.features)), dtype=bool)))
    assert "(0 rows)" in text


def test_r2_is_reported_and_bounds_the_tree():
    prog = compile_("minimize squared_error + 1000 * nodes\nsubject to { r2 >= 0.3 }")
    r = prog.solve(backend="dp")
    (check,) = [c for c in r.constraints if "r2" in c.text]
    assert check.holds and check.value >= 0.3 - 1e-9


def test_a_regression_model_file_with_text_values_is_malformed(tmp_path):
    from odt.compiler.classifiers.io import load_classifier

    tree = compile_("minimize squared_error").solve(backend="dp").classifier
    obj = tree.to_json()
    obj["classes"] = ["a"] * len(obj["classes"])
    path = tmp_path / "m.json"
    path.write_text(json.dumps(obj))
    with pytest.raises(OdtError, match="not a number"):
        load_classifier(path)


def test_odtc_solves_renders_saves_and_predicts_a_regression_tree(tmp_path, capsys):
    from odt import cli

    rows = ["x,g,y"] + [f"{i},{'ab'[i % 2]},{(i // 5) * 1.5 + (i % 2) * 0.25}" for i in range(20)]
    (tmp_path / "d.csv").write_text("\n".join(rows) + "\n")
    (tmp_path / "p.odt").write_text('data "d.csv" { target y }\nmodel tree(depth <= 2)\nminimize squared_error\n')
    out = tmp_path / "m.json"
    assert cli.main(["solve", str(tmp_path / "p.odt"), "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "verified    yes" in text and "rows)" in text and "predict " in text
    assert cli.main(["predict", str(out), str(tmp_path / "d.csv")]) == 0
    lines = capsys.readouterr().out.split()
    assert lines[0] == "prediction" and all(float(v) == float(v) for v in lines[1:]) and len(lines) == 21
