"""The ``dp`` backend: exact engines that search the data directly, reading the search IR
(``compiler.search.TreeSearch``) instead of the solver IR.

Two engines: ConTree (Brita, van der Linden, Demirović, AAAI 2025) for the plain
fragment on raw thresholds, depth-limited trees minimising errors with an optional
minimum leaf size (``TreeSearch.plain``) over at least one numeric column cut at every
midpoint; STreeD-style dynamic programming (``streed/``: van der Linden et al., NeurIPS
2023; MurTree, Demirović et al., JMLR 2022) for every other program of the search IR,
plain programs on 0/1 columns included (its bitset depth-two and depth-three kernels are
26-100x faster there than ConTree's intervals on two-valued columns): node and leaf costs and caps, lexicographic levels, ``errors <= k``, node and
leaf sizes and the separable path constraints. Numeric columns cut at every midpoint
enter with their raw values (S7), other features as 0/1 columns. The result is the same
``Tree`` type as every other backend's, with thresholds on raw values.
"""
from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import Callable

from odt.compiler import ir, limits
from odt.compiler.checked import BddSkeleton, CheckedProgram
from odt.compiler.classifiers import Diagram, Leaf, Split, Tree, TreeNode
from odt.compiler.data import Feature
from odt.compiler.search import TreeSearch
from odt.compiler.search_bdd import BddSearch
from odt.compiler.searches import Searches
from odt.compiler.support import unsupported

from ..base import Artifact, Backend, BackendResult, Progress, SolveOptions, Status, Stopwatch
from . import blas, jit, regression_two
from .anytime import EngineResult
from .bdd import optimal_bdd, to_diagram
from .contree import contree_result
from .f1 import dinkelbach
from .task import task_of


def decode_tree(raw: tuple, problem: TreeSearch) -> Tree:
    """An engine tree (``anytime``'s format: nested tuples over the search dimensions, left
    = ``x <= threshold``) as an odt ``Tree``; the one decoder of every dp tree engine."""
    features: list[Feature] = []
    regression = problem.loss != "misclassification"
    values: list[float] = []  # a regression tree's leaf values, its ``classes``

    def build(n: tuple) -> TreeNode:
        if n[0] == "leaf" and regression:
            if float(n[1]) not in values:
                values.append(float(n[1]))
            return Leaf(values.index(float(n[1])))
        if n[0] == "leaf":
            return Leaf(int(n[1]))
        _, j, t, left, right = n
        dim = problem.dims[j]
        test = Feature(dim.column, "threshold", threshold=float(t)) if dim.feature is None else dim.feature
        if test not in features:
            features.append(test)
        k = features.index(test)
        lt, rt = build(left), build(right)
        return Split(k, lt, rt) if dim.feature is None else Split(k, rt, lt)

    root = build(raw)
    if regression:
        return Tree(tuple(features), tuple(values), root, problem.input_columns, regression=True)
    return Tree(tuple(features), problem.classes, root, problem.input_columns)


class DpBackend(Backend):
    NAME = "dp"
    CAPABILITIES = frozenset()  # takes no IR model: the search IR instead
    FILE_FORMAT = "none"
    ENCODING = "none"
    PROGRAM = True

    def solve_program(self, searches: Searches, options: SolveOptions) -> tuple[Tree | Diagram | None, BackendResult]:
        """The checked program's search IR (an ordered BDD's subset enumeration, or a tree
        search), built once by ``searches``, solved by ``solve_search``."""
        bdd = isinstance(searches.program.skeleton, BddSkeleton)
        return self.solve_search(searches.bdd() if bdd else searches.tree(), options)

    @classmethod
    def describe(cls, program: CheckedProgram) -> str:
        data = program.dataset
        rows = int((data.row_weights() > 0).sum())
        if isinstance(program.skeleton, BddSkeleton):
            return f"BDD subset enumeration on the program, no encoding: {rows} rows, {len(data.features)} features"
        return f"dynamic programming on the program (ConTree, STreeD), no encoding: {rows} rows, {len(data.binarizer.columns)} columns"

    def emit(self, model: ir.Model) -> Artifact:
        raise unsupported("a solver file", "it searches the program directly and builds no IR", backend=self.NAME,
                          hint="use --to wcnf, cpmpy or pyomo")

    def solve(self, model: ir.Model, options: SolveOptions) -> BackendResult:
        raise NotImplementedError("the dp backend searches the checked program (solve_program), not IR models")

    def solve_search(self, problem: TreeSearch | BddSearch, options: SolveOptions) -> tuple[Tree | Diagram | None, BackendResult]:
        """The optimal tree of ``problem`` (anytime: the best tree and a proven bound on a
        time-out), every objective level claimed; for a ``BddSearch``, the optimal ordered
        BDD (``bdd/``). The engine is chosen here, by the program and the data's shape."""
        with limits.native(_polled):  # a signal or the hard deadline: the engines poll ``limits.halted``
            if isinstance(problem, BddSearch):
                return self._solve_bdd(problem, options)
            return self._switching(self._solve_tree, problem, options)

    def _switching(self, solve: Callable[[TreeSearch, SolveOptions], tuple[Tree | None, BackendResult]],
                   problem: TreeSearch, options: SolveOptions) -> tuple[Tree | None, BackendResult]:
        """``solve``, on numpy while the engine's kernels compile in another process
        (``jit``); when they are compiled before it ends, it stops and solves again on them
        for the time left, and the better of the two answers is kept (progress reports
        stay monotone across both)."""
        clock = Stopwatch()
        relay = _Relay(options.on_progress, clock)
        options = replace(options, on_progress=relay if options.on_progress is not None else None)
        with jit.switchable() as switch:
            first = solve(problem, options)
        left = None if options.time_limit is None else options.time_limit - clock.elapsed()
        if not switch.fired or limits.halted() or limits.expired() or (left is not None and left < 0.1):
            return first
        second = solve(problem, replace(options, time_limit=left))
        tree, res = _better(first, second)
        return tree, replace(res, seconds=clock.elapsed(), log=res.log + " (restarted on the compiled kernels)")

    def _solve_tree(self, problem: TreeSearch, options: SolveOptions) -> tuple[Tree | None, BackendResult]:
        """The engine's answer as an odt ``Tree`` with its status, levels and bound."""
        clock = Stopwatch()
        name, res = self._tree_engine(problem, options)
        status = _STATUS[res.status]
        log = f"{name}: {res.stats}"
        if res.tree is None:
            return None, BackendResult(status, None, None, res.lower_bound, clock.elapsed(), log)
        # a confusion objective's engine counts reweighted rows (issue 26): no claim on the true errors,
        # which the program's re-evaluation then reports
        errors = res.errors if problem.confusion is None else None
        return decode_tree(res.tree, problem), BackendResult(status, None, res.levels, res.lower_bound,
                                                             clock.elapsed(), log, errors)

    def _tree_engine(self, problem: TreeSearch, options: SolveOptions,
                     shared: dict | None = None) -> tuple[str, EngineResult]:
        """ConTree on raw thresholds for the plain fragment; the STreeD-style searches on
        0/1 columns (the plain fragment included: its bitset kernels) and for every other
        program; Pareto fronts for global constraints. ``shared`` keeps the STreeD-style
        candidates across searches of one matrix that differ in their rows' weights only."""
        on_progress = options.on_progress

        def relay(elapsed: float, incumbent: Fraction, bound: Fraction, note: str = "") -> None:
            assert on_progress is not None
            on_progress(Progress(elapsed, incumbent, bound, note))

        report = relay if on_progress is not None else None  # nobody listening: the engines build no reports

        if problem.confusion is not None and problem.confusion.f1 and not options.extra.get("f1_fronts"):
            steps_share: dict = {}  # the steps differ in their rows' weights only: one candidate set-up for all

            def step(sub: TreeSearch, left: float | None) -> EngineResult:
                return self._tree_engine(sub, replace(options, time_limit=left, on_progress=None), steps_share)[1]

            return "F1 by Dinkelbach steps", dinkelbach(problem, options.time_limit, step, report)
        task = task_of(problem)
        if any(d.ordered for d in problem.dims) and regression_two.takes(problem):  # regression on raw thresholds
            return "depth-two regression", regression_two.optimal_regression_two(problem, options.time_limit, report)
        if problem.plain and task.similarity and any(d.ordered for d in problem.dims):
            return "ConTree", contree_result(problem, options.time_limit, report, options.extra.get("scheduler"))
        from .streed import optimal_constrained_tree, optimal_front_tree
        from .streed.root import candidates

        if task.front:
            try:
                return "Pareto-front DP", optimal_front_tree(problem, options.time_limit, report)
            except OverflowError as e:  # the front engine's exact integers would not fit: decided by the data
                raise unsupported("this program on this data", str(e), backend=self.NAME,
                                  takers=("maxsat", "cp")) from e
        if problem.loss != "misclassification":  # regression: many small products of the depth-two solver
            with blas.one_thread():
                return "STreeD-style DP", optimal_constrained_tree(problem, options.time_limit, report)
        if shared is None:
            return "STreeD-style DP", optimal_constrained_tree(problem, options.time_limit, report)
        if "candidates" not in shared:
            shared["candidates"] = candidates(problem)
        return "STreeD-style DP", optimal_constrained_tree(problem, options.time_limit, report, shared["candidates"])

    def _solve_bdd(self, problem: BddSearch, options: SolveOptions) -> tuple[Diagram | None, BackendResult]:
        """The subset enumeration of ``bdd/search.py``; every objective level is claimed."""
        clock = Stopwatch()
        on_progress = options.on_progress

        def report(elapsed: float, incumbent: float, bound: float) -> None:
            if on_progress is not None:
                on_progress(Progress(elapsed, _exact(incumbent), _exact(bound)))

        res = optimal_bdd(problem, options.time_limit, report, smallest=not options.extra.get("bound_only", False))
        status = _STATUS[res.status]
        bound = None if res.bound is None else _exact(res.bound)
        if res.key is None:
            return None, BackendResult(status, None, None, bound, clock.elapsed(), f"BDD enumeration: {res.stats}")
        return to_diagram(res, problem), BackendResult(
            status, None, tuple(_exact(v) for v in res.key), bound, clock.elapsed(),
            f"BDD enumeration: {res.stats}", errors=_exact(res.errors))

    def relaxation(self, problem: TreeSearch, time_limit: float) -> tuple[Tree, float]:
        """ConTree on a program's relaxation (B4 warm start): its depth, data, binarisation
        and minimum leaf size, the objective ``errors``, no other constraint."""
        with limits.native(_polled):
            res = contree_result(problem, time_limit)
        assert res.tree is not None  # ConTree always has a tree (a leaf at least)
        return decode_tree(res.tree, problem), float(res.errors)


_STATUS = {"optimal": Status.OPTIMAL, "feasible": Status.FEASIBLE, "infeasible": Status.INFEASIBLE,
           "unknown": Status.UNKNOWN}


class _Relay:
    """``on_progress`` across a restart: elapsed time from the first start, the least
    incumbent and the greatest bound reported so far (both runs solve the same problem);
    a report that changes neither (the restarted run finding again what the first had
    found) is not passed on."""

    def __init__(self, target: Callable[[Progress], None] | None, clock: Stopwatch) -> None:
        self.target = target
        self.clock = clock
        self.incumbent: Fraction | None = None
        self.bound: Fraction | None = None
        self.told: tuple | None = None  # (incumbent, bound, note) last passed on

    def __call__(self, p: Progress) -> None:
        if p.incumbent is not None and (self.incumbent is None or p.incumbent < self.incumbent):
            self.incumbent = p.incumbent
        if p.bound is not None and (self.bound is None or p.bound > self.bound):
            self.bound = p.bound
        now = (self.incumbent, self.bound, p.note)
        if self.target is not None and now != self.told:
            self.told = now
            self.target(Progress(self.clock.elapsed(), self.incumbent, self.bound, p.note))


def _better(first: tuple, second: tuple) -> tuple:
    """The better of two answers to one problem: the second (on the compiled kernels) when
    it ended or is at least as good, else the first; the greater of their bounds."""
    (_, a), (_, b) = first, second
    if b.status in (Status.OPTIMAL, Status.INFEASIBLE) or a.objective is None:
        return second
    best = second if b.objective is not None and b.objective <= a.objective else first
    bounds = [x.bound for x in (a, b) if x.bound is not None]
    return best[0], replace(best[1], bound=max(bounds) if bounds else None)


def _polled() -> None:
    """The stop of a dp engine: nothing to call, since the engines, Python code, poll
    ``limits.halted()`` (which this stop's delivery sets) with their deadlines."""


def _exact(value: float) -> Fraction:
    return Fraction(value).limit_denominator(10**9)
