"""``every leaf: errors <= e`` (C11): each leaf of a tree misclassifies at most ``e`` rows
(their weight, with row weights), counted over the rows that end in that leaf.

Specification: on tiny random data, every backend that takes the program (dp, maxsat, cp,
milp) proves the brute-force optimum over every tree of the depth whose leaves each
misclassify at most ``e``, under objectives and side constraints that push the errors
down and up (``minimize errors``, ``maximize errors``, ``errors >= k`` with ``minimize
nodes``), and the decoded tree's worst leaf, recomputed here, respects ``e``. The bound is
an upper bound (``every leaf: errors >= k`` is refused everywhere); a decision diagram or
an ordered BDD has no leaves of its own and refuses it with the reason; per leaf,
``errors`` takes no group and is not mixed with ``samples``.
"""
from __future__ import annotations

import random
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import odt
from odt.compiler.errors import InfeasibleProgram, OdtTypeError, UnsupportedConstruct

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from helpers import binary_data, iter_split_trees, tree_facts  # noqa: E402

BACKENDS = ("dp", "maxsat", "cp", "milp")
FAST = 16
SLOW = 200


class Case:
    """A tiny random dataset and a program over it with a per-leaf error bound."""

    def __init__(self, seed: int):
        rnd = random.Random(seed)
        self.k = rnd.randint(2, 3)
        self.n = rnd.randint(5, 9)
        n_classes = 3 if rnd.random() < 0.2 else 2
        self.X = np.array([[rnd.randint(0, 1) for _ in range(self.k)] for _ in range(self.n)], dtype=np.int64)
        self.y = [rnd.randrange(n_classes) for _ in range(self.n)]
        self.y[0], self.y[1] = 0, 1
        self.classes = sorted(set(self.y))
        self.w = [rnd.choice([1, 1, 2, 3]) for _ in range(self.n)] if rnd.random() < 0.3 else None
        self.depth = rnd.choice([1, 2, 2])
        self.e = rnd.choice([0, 1, 1, 2])
        bound = rnd.choice([f"errors <= {self.e}", f"errors < {self.e + 1}", f"{self.e} >= errors"])
        self.shape = rnd.choice(["min", "min", "size", "max", "lower"])
        self.k_low = rnd.randint(1, 3)
        objective = {"min": "minimize errors", "size": "minimize errors + 0.5 * nodes", "max": "maximize errors",
                     "lower": "minimize nodes"}[self.shape]
        extra = f"    errors >= {self.k_low}\n" if self.shape == "lower" else ""
        head = "data { target class" + (" weight w" if self.w is not None else "") + " }\n"
        self.text = (head + f"model tree(depth <= {self.depth})\n{objective}\n"
                     f"subject to {{\n    every leaf: {bound}\n{extra}}}\n")

    def columns(self) -> dict:
        return binary_data(self.X[:, :self.k], self.y, self.w)

    def weight(self, r: int) -> int:
        return 1 if self.w is None else self.w[r]

    def leaf_errors(self, facts) -> list[int]:
        out = [0] * facts.leaves
        for r in range(self.n):
            if facts.leaf_of[r] >= 0 and facts.pred[r] != self.y[r]:
                out[facts.leaf_of[r]] += self.weight(r)
        return out

    def optimum(self) -> Fraction | None:
        rows = [r for r in range(self.n) if self.weight(r) > 0]
        best = None
        for tree in iter_split_trees(self.X, rows, self.classes, self.depth):
            f = tree_facts(tree, self.X, rows)
            if max(self.leaf_errors(f)) > self.e:
                continue
            errors = sum(self.weight(r) for r in rows if f.pred[r] != self.y[r])
            if self.shape == "lower" and errors < self.k_low:
                continue
            value = {"min": Fraction(errors), "size": errors + Fraction(1, 2) * f.nodes, "max": Fraction(errors),
                     "lower": Fraction(f.nodes)}[self.shape]
            if best is None or (value > best if self.shape == "max" else value < best):
                best = value
        return best


def _worst_leaf(case: Case, clf) -> int:
    """The decoded tree's worst leaf, recomputed from its own predictions and routing."""
    from odt.compiler.classifiers import Leaf

    data = case.columns()
    pred = np.asarray(clf.predict(data))
    table = odt.compile(case.text, data=data).checked.dataset.table
    from odt.compiler.data import Binarizer

    Xb = Binarizer(clf.features).transform(table)
    worst = 0

    def go(node, rows):
        nonlocal worst
        if isinstance(node, Leaf):
            worst = max(worst, sum(case.weight(r) for r in rows if pred[r] != case.y[r]))
            return
        go(node.if_true, [r for r in rows if Xb[r, node.feature]])
        go(node.if_false, [r for r in rows if not Xb[r, node.feature]])

    go(clf.root, [r for r in range(case.n) if case.weight(r) > 0])
    return worst


def check(seed: int) -> None:
    case = Case(seed)
    best = case.optimum()
    prog = odt.compile(case.text, data=case.columns())
    solved = []
    for backend in BACKENDS:
        where = f"seed {seed}, backend {backend}\n{case.text}data {case.columns()}"
        try:
            res = prog.solve(backend=backend, warm_start=bool(seed % 2))
        except UnsupportedConstruct:
            assert backend == "dp" and case.shape == "max", where  # dp minimises errors and size only
            continue
        except InfeasibleProgram:
            assert best is None, f"{where}\nproved infeasible; brute force: {best}"
            solved.append(backend)
            continue
        assert best is not None, f"{where}\nbrute force: infeasible\n{res.report}"
        assert res.status == "optimal" and res.verified, f"{where}\n{res.report}"
        assert res.objective == pytest.approx(float(best)), f"{where}\nbrute force {best}\n{res.report}"
        assert _worst_leaf(case, res.classifier) <= case.e, f"{where}\n{res.classifier.to_text()}"
        solved.append(backend)
    assert set(solved) >= {"maxsat", "cp", "milp"}


@pytest.mark.parametrize("seed", range(FAST))
def test_every_backend_matches_brute_force_under_a_per_leaf_error_bound(seed):
    check(seed)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(FAST, FAST + SLOW))
def test_every_backend_matches_brute_force_under_a_per_leaf_error_bound_many(seed):
    check(seed)


def _numeric(n: int = 40, seed: int = 4) -> dict:
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 6, n).astype(float)
    z = rng.integers(0, 4, n).astype(float)
    noisy = (x + z + rng.integers(0, 3, n) > 5).astype(int)
    return {"x": x, "z": z, "class": noisy}


@pytest.mark.parametrize("depth", [2, 3])
def test_dp_on_raw_thresholds_and_its_depth_three_kernels_keep_the_bound(depth):
    """Raw numeric columns go to ConTree and rows of weight one to the compiled depth-two and
    -three kernels without the bound; with it, dp's search honours it and agrees with maxsat."""
    text = f"model tree(depth <= {depth})\nminimize errors\nsubject to {{ every leaf: errors <= 1 }}"
    plain = odt.compile(f"model tree(depth <= {depth})\nminimize errors", data=_numeric()).solve(backend="dp")
    dp = odt.compile(text, data=_numeric()).solve(backend="dp")
    ref = odt.compile(text, data=_numeric()).solve(backend="maxsat")
    assert dp.verified and ref.verified and dp.status == ref.status == "optimal"
    assert dp.objective == pytest.approx(ref.objective) and dp.objective >= plain.objective
    assert max(c.value for c in dp.constraints if c.text.startswith("every leaf")) <= 1


@pytest.mark.parametrize("model, where", [("diagram(widths = [1, 2])", "diagram"), ("bdd(depth = 2)", "bdd")])
def test_diagrams_and_bdds_refuse_it_with_the_reason(model, where):
    prog = odt.compile(f"model {model}\nminimize errors\nsubject to {{ every leaf: errors <= 2 }}", data=_numeric())
    with pytest.raises(UnsupportedConstruct, match=f"every leaf: errors <= e .* is not supported on a {where}"):
        prog.solve()


def test_a_lower_bound_per_leaf_is_refused_everywhere():
    prog = odt.compile("model tree(depth <= 2)\nsubject to { every leaf: errors >= 1 }", data=_numeric())
    with pytest.raises(UnsupportedConstruct, match="every leaf: errors bounded from below"):
        prog.solve()


@pytest.mark.parametrize("body, said", [
    ("every leaf: errors(G) <= 1", "takes no argument per leaf"),
    ("every leaf: errors <= 0.5 * samples", "bounds one quantity"),
    ("every node: errors <= 1", "'errors' has no meaning per node"),
])
def test_per_leaf_errors_count_the_leafs_own_rows_one_quantity_at_a_time(body, said):
    with pytest.raises(OdtTypeError, match=said):
        odt.compile("group G = z >= 2\nmodel tree(depth <= 2)\nsubject to { " + body + " }", data=_numeric())


@pytest.mark.parametrize("constraint, holds", [
    ("every leaf: errors < 1", False), ("every leaf: errors <= 1", True), ("1 >= errors", True),
    ("every leaf: errors <= 0.5", False),
])
def test_the_re_check_counts_each_leafs_misclassified_rows(constraint, holds):
    """A tree whose right leaf misclassifies one of its three rows; ``errors < 1`` is checked
    as ``errors <= 0`` (strict bounds as checked, not as written)."""
    from odt.compiler.classifiers import Leaf, Split, Tree
    from odt.compiler.evaluate import evaluate

    text = constraint if constraint.startswith("every") else f"every leaf: {constraint}"
    prog = odt.compile(f"model tree(depth <= 1)\nsubject to {{ {text} }}",
                       data={"a": [0, 0, 0, 1, 1, 1], "class": [0, 0, 0, 1, 1, 0]})
    a = prog.dataset.features.find_name("a")
    tree = Tree((a,), prog.dataset.classes, Split(0, Leaf(1), Leaf(0)), ("a",))
    ev = evaluate(prog.checked, tree)
    (check,) = [c for c in ev.constraints if c.text == text]
    assert check.holds is holds and check.value == 1
