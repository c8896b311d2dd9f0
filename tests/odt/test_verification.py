"""No result is called optimal (or feasible) unless it is verified (issue 24): a classifier
that fails its re-verification raises ``VerificationFailed`` from ``Program.solve``, with
the result (status ``unverified``) attached; the CLI prints it, saves nothing and exits 1;
the estimator's ``fit`` and a sweep's fold raise the same error.

A verification failure needs a faulty encoding, so these tests put back the fault issue 24
found — the path encoding's one-sided "a right row forces its leaf's class", without the
converse — on a real solver (maxsat), on a program that bounds errors from below."""
from __future__ import annotations

import json

import numpy as np
import pytest

import odt
from odt.cli import main
from odt.compiler.errors import OdtError, VerificationFailed
from odt.compiler.skeletons import tree_paths

# three rows of class 0, one of class 1: the only tree with 4 errors splits on a (1 node);
# with the fault, the solver may call a constant tree "4 errors" (it has 3 or 1)
DATA = {"a": [0, 0, 0, 1], "class": [0, 0, 0, 1]}
PROGRAM = "model tree(depth <= 1)\nminimize nodes\nsubject to { errors >= 4 }\nsolve maxsat\n"


@pytest.fixture
def one_sided(monkeypatch):
    """The path encoding as it was before issue 24: ok -> class, and nothing back."""
    def forward_only(b, guard, ok, klass):
        b.clause(guard + (-ok, klass))

    monkeypatch.setattr(tree_paths, "leaf_class_clauses", forward_only)


def test_the_sound_encoding_solves_the_program():
    res = odt.compile(PROGRAM, data=DATA).solve()
    assert res.status == "optimal" and res.verified and res.objective == 1 and res.train_errors == 4


def test_a_classifier_that_fails_verification_raises_with_the_result(one_sided):
    with pytest.raises(VerificationFailed) as info:
        odt.compile(PROGRAM, data=DATA).solve()
    err = info.value
    assert isinstance(err, OdtError)
    assert err.result.status == "unverified" and not err.result.verified and err.result.classifier is not None
    assert "errors >= 4" in err.message and "does not hold" in err.message
    assert "fault in odt" in err.render()


def test_the_cli_prints_an_unverified_result_saves_nothing_and_exits_1(one_sided, tmp_path, capsys):
    prog = tmp_path / "p.odt"
    (tmp_path / "d.csv").write_text("a,class\n" + "".join(f"{a},{c}\n" for a, c in zip(DATA["a"], DATA["class"])))
    prog.write_text('data "d.csv" { target class }\n' + PROGRAM)
    model = tmp_path / "m.json"
    assert main(["solve", str(prog), "-o", str(model), "--quiet"]) == 1
    out, err = capsys.readouterr()
    assert "status      unverified" in out and "verified    NO" in out
    assert "fails verification against the program; not saved to" in err and "errors >= 4" in err
    assert not model.exists()
    assert main(["solve", str(prog), "--json", "--quiet"]) == 1
    shown = json.loads(capsys.readouterr().out)
    assert shown["status"] == "unverified" and shown["verified"] is False


def test_the_estimator_refuses_to_fit_an_unverified_classifier(one_sided):
    from odt.sklearn import ODTClassifier

    X = np.array(DATA["a"]).reshape(-1, 1)
    est = ODTClassifier(program="model tree(depth <= 1)\nminimize nodes\nsubject to { errors >= 4 }", backend="maxsat")
    with pytest.raises(VerificationFailed):
        est.fit(X, np.array(DATA["class"]))
    assert not hasattr(est, "classifier_")


def test_a_sweep_fold_refuses_an_unverified_classifier(one_sided):
    from odt.sweeps import run_fold

    train = {k: np.array(v) for k, v in DATA.items()}
    with pytest.raises(VerificationFailed):
        run_fold(PROGRAM, "<sweep>", {}, train, train, "class", None, None)
