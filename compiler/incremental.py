"""Incremental example generation (B3): Avellaneda's Algorithm 3 on the path encoding.

For a fixed depth, the encoding of every bucket of rows is built once, but a bucket's
clauses enter one python-sat solver only when the current tree misclassifies it: solve,
decode, find a misclassified bucket, add it, solve again. The solver is never rebuilt;
``errors <= k`` is a pseudo-Boolean row over the buckets added so far, re-encoded at each
step under a fresh selector literal that is passed as an assumption (older versions are
switched off by leaving their selector out). The search ends with a tree that satisfies
``errors <= k`` on every row, or with a proof that none exists at this depth.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from pysat.solvers import Solver

from . import ir
from .classifier import Tree
from .encode import pb
from .evaluate import train_predictions
from .program_types import CheckedProgram
from .skeletons.tree_paths import encode_tree, make_buckets, useful_features


@dataclass(frozen=True)
class IncrementalResult:
    tree: Tree | None  # None: no tree of this depth has at most k errors
    buckets_used: int
    rows_used: int
    iterations: int
    timed_out: bool = False


def incremental_feasible(program: CheckedProgram, depth: int, max_errors: Fraction,
                         deadline: float | None = None) -> IncrementalResult:
    """A tree of depth <= ``depth`` with weighted errors <= ``max_errors`` (Algorithm 3)."""
    data = program.dataset
    features = useful_features(data.X, program.feature_mask)
    buckets = make_buckets(data.X, data.y, data.row_weights(), features, [])
    b = ir.ModelBuilder()
    enc = encode_tree(b, depth, features, buckets, len(data.classes), count_size=False)
    model = b.build()
    owner: dict[int, int] = {}  # variable -> bucket it belongs to
    for var in model.variables:
        if var.origin.role[0] in ("X", "ok"):
            owner[var.index] = var.origin.role[1]
    base, per_bucket = [], [[] for _ in buckets]
    for c in model.clauses:
        us = {owner[abs(l)] for l in c.lits if abs(l) in owner}
        (per_bucket[us.pop()] if us else base).append(list(c.lits))
    top = [len(model.variables)]

    def new_var() -> int:
        top[0] += 1
        return top[0]

    active: list[int] = []
    iterations = 0
    with Solver(name="g3", bootstrap_with=base) as s:
        assumptions: list[int] = []
        while True:
            if deadline is not None and time.perf_counter() > deadline:
                return IncrementalResult(None, len(active), _rows(buckets, active), iterations, timed_out=True)
            iterations += 1
            if not s.solve(assumptions=assumptions):
                return IncrementalResult(None, len(active), _rows(buckets, active), iterations)
            values = [False] * (top[0] + 1)
            for lit in s.get_model():
                if abs(lit) <= top[0]:
                    values[abs(lit)] = lit > 0
            tree = enc.decode(values, data, tuple(dict.fromkeys(f.column for f in data.features)))
            pred = train_predictions(program, tree)
            wrong_rows = pred != data.y
            errors = Fraction(repr(float(data.row_weights()[wrong_rows].sum())))
            if errors <= max_errors:
                return IncrementalResult(tree, len(active), _rows(buckets, active), iterations)
            candidates = [u for u, bk in enumerate(buckets) if u not in active and wrong_rows[list(bk.rows)].any()]
            if not candidates:  # every misclassified bucket is in, and the solver kept errors <= k
                return IncrementalResult(tree, len(active), _rows(buckets, active), iterations)
            u = candidates[0]
            active.append(u)
            for clause in per_bucket[u]:
                s.add_clause(clause)
            terms = [(w, -enc.ok[v, c]) for v in active for c, w in buckets[v].class_weight]
            row, bound = pb.integer_row(terms, Fraction(max_errors))
            selector = new_var()
            for clause in pb.at_most(row, bound, new_var):
                s.add_clause(clause + [-selector])
            assumptions = [selector]


def _rows(buckets, active: list[int]) -> int:
    return sum(len(buckets[u].rows) for u in active)
