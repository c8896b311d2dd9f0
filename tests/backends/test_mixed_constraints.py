"""Generated programs that mix group constraints (C1, C2), size and support (C3-C6) and
path constraints (C7-C9) on random tiny data.

For every case: each backend that accepts the program reaches the same optimum (or all
of them prove it infeasible), brute force over every tree of the depth agrees, and every
decoded classifier passes re-evaluation against every constraint. Each constraint has two
independent meanings here: the odt text, and a Python check over ``TreeFacts``."""
from __future__ import annotations

import random
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import odt
from odt.compiler.errors import InfeasibleProgram, UnsupportedConstruct

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from helpers import TreeFacts, brute_force_constrained  # noqa: E402

BACKENDS = ("maxsat", "cp", "milp", "dp")
N_CASES = 300
MILP_EVERY = 3  # milp (HiGHS through Pyomo) takes ~0.3 s even on tiny models: a third of the cases


class Ctx:
    """A tiny dataset and what the checks need of it."""

    def __init__(self, rnd: random.Random):
        self.k = rnd.randint(2, 3)
        self.n = rnd.randint(5, 10)
        self.n_classes = 3 if rnd.random() < 0.15 else 2
        pool = [tuple(rnd.randint(0, 1) for _ in range(self.k)) for _ in range(rnd.randint(2, min(self.n, 1 << self.k)))]
        self.X = np.array([pool[i % len(pool)] if i < len(pool) else rnd.choice(pool) for i in range(self.n)],
                          dtype=np.int64)
        self.y = [rnd.randrange(self.n_classes) for _ in range(self.n)]
        i, j = rnd.sample(range(self.n), 2)  # classes 0 and 1 both occur (rates speak of class 1)
        self.y[i], self.y[j] = 0, 1
        self.classes = sorted(set(self.y))
        self.w = [rnd.choice([1, 1, 1, 2]) for _ in range(self.n)] if rnd.random() < 0.3 else None
        self.weights = [Fraction(v) for v in (self.w or [1] * self.n)]
        self.depth = rnd.choice([1, 2, 2, 2])
        self.groups: dict[str, list[bool]] = {}
        splitting = [j for j in range(self.k) if 0 < self.X[:, j].sum() < self.n]
        if splitting:
            j = rnd.choice(splitting)
            self.group_text = f"group A = f{j} == 1\ngroup B = f{j} == 0\n"
            self.groups = {"A": [bool(v) for v in self.X[:, j]], "B": [not v for v in self.X[:, j]]}
        else:
            self.group_text = ""

    def data(self) -> dict:
        d = {"rid": [f"r{i}" for i in range(self.n)]}
        d.update({f"f{j}": [int(v) for v in self.X[:, j]] for j in range(self.k)})
        if self.w is not None:
            d["w"] = self.w
        d["class"] = self.y
        return d

    def header(self) -> str:
        return "data { target class\n id rid" + ("\n weight w" if self.w is not None else "") + " }\n"

    # quantities of C1 over a tree's predictions (exact)
    def size(self, g: str) -> Fraction:
        return sum((w for w, m in zip(self.weights, self.groups[g]) if m), Fraction(0))

    def predicted(self, f: TreeFacts, c: int, g: str) -> Fraction:
        return sum((w for w, m, p in zip(self.weights, self.groups[g], f.pred) if m and p == c), Fraction(0))

    def errors(self, f: TreeFacts, g: str | None = None) -> Fraction:
        mask = self.groups[g] if g else [True] * self.n
        return sum((w for w, m, p, t in zip(self.weights, mask, f.pred, self.y) if m and p != t), Fraction(0))

    def fn(self, f: TreeFacts, g: str) -> Fraction:
        return sum((w for w, m, p, t in zip(self.weights, self.groups[g], f.pred, self.y) if m and t == 1 and p != 1),
                   Fraction(0))


def _group_constraint(rnd: random.Random, ctx: Ctx):
    if not ctx.groups:
        return None
    kind = rnd.choice(["errors", "predicted", "ratio", "abs", "accuracy", "fn"])
    if kind == "fn" and ctx.n_classes != 2:
        kind = "errors"
    if kind == "errors":
        k = rnd.randint(0, int(ctx.size("A")))
        return f"errors(A) <= {k}", lambda f: ctx.errors(f, "A") <= k
    if kind == "predicted":
        k = rnd.randint(1, max(1, int(ctx.size("B")) // 2))
        return f"predicted(1, B) >= {k}", lambda f: ctx.predicted(f, 1, "B") >= k
    if kind == "ratio":
        return ("rate(1, A) >= 0.8 * rate(1, B)",
                lambda f: ctx.predicted(f, 1, "A") / ctx.size("A") >= Fraction(4, 5) * ctx.predicted(f, 1, "B") / ctx.size("B"))
    if kind == "abs":
        return ("abs(rate(1, A) - rate(1, B)) <= 0.25",
                lambda f: abs(ctx.predicted(f, 1, "A") / ctx.size("A") - ctx.predicted(f, 1, "B") / ctx.size("B"))
                <= Fraction(1, 4))
    if kind == "accuracy":
        return "accuracy(A) >= 0.6", lambda f: 1 - ctx.errors(f, "A") / ctx.size("A") >= Fraction(3, 5)
    k = rnd.randint(0, 2)
    return f"fn(A) <= {k}", lambda f: ctx.fn(f, "A") <= k


def _structure_constraint(rnd: random.Random, ctx: Ctx):
    kind = rnd.choice(["node", "leaf", "nodes", "leaves", "same_leaf"])
    if kind == "node":
        s = rnd.randint(2, max(2, ctx.n // 2 + 1))
        return f"every node: samples >= {s}", lambda f: all(r >= s for r in f.node_rows)
    if kind == "leaf":
        m = rnd.randint(1, 3)
        return f"every leaf: samples >= {m}", lambda f: all(r >= m for r in f.leaf_rows)
    if kind == "nodes":
        k = rnd.randint(0, 2)
        return f"nodes <= {k}", lambda f: f.nodes <= k
    if kind == "leaves":
        k = rnd.randint(1, 3)
        return f"leaves <= {k}", lambda f: f.leaves <= k
    r1, r2 = rnd.sample(range(ctx.n), 2)
    return f"same_leaf(r{r1}, r{r2})", lambda f: f.leaf_of[r1] == f.leaf_of[r2]


def _path_constraint(rnd: random.Random, ctx: Ctx):
    kind = rnd.choice(["before", "cost", "expected", "uses", "not_both", "either", "exclusion"])
    a, b = rnd.sample(range(ctx.k), 2)
    if kind == "before":
        return (f"every path: f{a} before f{b}",
                lambda f: all(a in p[:p.index(b)] for p in f.paths if b in p))
    cost = {a: rnd.randint(1, 3)}
    default = rnd.choice([0, 1])
    table = f"with cost {{ f{a}: {cost[a]}, *: {default} }}"

    def path_cost(p):
        return sum(cost.get(j, default) for j in p)
    if kind == "cost":
        t = rnd.randint(1, 3)
        return f"every path: cost <= {t} {table}", lambda f: all(path_cost(p) <= t for p in f.paths)
    if kind == "expected":
        t = Fraction(rnd.randint(1, 6), 4)
        text = f"expected_cost <= {float(t)} {table}"

        def expected(f):
            total = sum(ctx.weights, Fraction(0))
            return sum((w * path_cost(f.paths[f.leaf_of[r]]) for r, w in enumerate(ctx.weights)), Fraction(0)) / total
        return text, lambda f: expected(f) <= t
    if kind == "uses":
        return f"uses f{a}", lambda f: a in f.used
    if kind == "not_both":
        return f"not (uses f{a} and uses f{b})", lambda f: not {a, b} <= f.used
    if kind == "either":
        return f"uses f{a} or not uses f{b}", lambda f: a in f.used or b not in f.used
    return f"every path: not (f{a} and f{b})", lambda f: all(not {a, b} <= set(p) for p in f.paths)


def make_case(seed: int):
    rnd = random.Random(seed)
    ctx = Ctx(rnd)
    makers = [_group_constraint, _structure_constraint, _path_constraint]
    picked = []
    for _ in range(rnd.randint(1, 3)):
        c = rnd.choice(makers)(rnd, ctx)
        if c is not None:
            picked.append(c)
    alpha = rnd.choice([None, None, Fraction(1, 2), Fraction(1, 4)])
    objective = "errors" if alpha is None else f"errors + {float(alpha)} * nodes"
    text = (ctx.header() + ctx.group_text + f"model tree(depth <= {ctx.depth})\nminimize {objective}\n"
            + "subject to {\n" + "".join(f"    {t}\n" for t, _ in picked) + "}\n")

    def cost(f: TreeFacts) -> Fraction:
        return ctx.errors(f) + (alpha or 0) * f.nodes

    def feasible(f: TreeFacts) -> bool:
        return all(check(f) for _, check in picked)

    return ctx, text, cost, feasible


#: the fast tier checks the first FAST_CASES programs; the full tier all N_CASES
FAST_CASES = 100


@pytest.mark.parametrize("seed", [pytest.param(s, marks=[pytest.mark.slow] if s >= FAST_CASES else []) for s in range(N_CASES)])
def test_backends_agree_with_brute_force_on_mixed_constraints(seed):
    ctx, text, cost, feasible = make_case(seed)
    best = brute_force_constrained(ctx.X, ctx.y, ctx.depth, cost, feasible, w=ctx.w, classes=ctx.classes)
    prog = odt.compile(text, data=ctx.data())
    solved = []
    for backend in BACKENDS:
        if backend == "milp" and seed % MILP_EVERY:
            continue
        try:
            res = prog.solve(backend=backend, warm_start=bool(seed % 2))
        except UnsupportedConstruct:
            assert backend == "dp", (backend, text)
            continue
        except InfeasibleProgram:
            assert best is None, (backend, text, ctx.data(), float(best[0]), best[1].tree)
            solved.append(backend)
            continue
        assert best is not None, (backend, text, ctx.data(), res.report)
        assert res.status == "optimal" and res.verified, (backend, text, res.report)
        assert res.evaluation is not None and res.evaluation.feasible, (backend, text, res.report)
        assert res.objective == pytest.approx(float(best[0])), (backend, text, ctx.data(), float(best[0]), best[1].tree)
        solved.append(backend)
    assert {"maxsat", "cp"} <= set(solved), text
