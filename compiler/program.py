"""The public façade: text (or a file) + data -> ``Program`` -> ``SolveResult`` (E4).

``compile`` runs parse and check; ``Program.solve`` lowers, picks the backend, solves,
decodes and re-verifies (E2). Every result says whether the decoded classifier's numbers,
recomputed in numpy, agree with what the solver claimed.
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable

from odt.backends import BACKENDS, capabilities, get_backend
from odt.backends.dp import DpBackend, fragment_error
from odt.backends.base import Artifact, BackendResult, Progress, SolveOptions, Status

from . import ir
from .check import check, load_table
from .classifier import Tree
from .data import table_from_python
from .encode import objective as objective_enc
from .errors import InfeasibleProgram, OdtError, UnsupportedConstruct
from .evaluate import ConstraintCheck, Evaluation, evaluate
from .lower import Lowered, lower
from .parse import parse_program
from .program_types import CheckedProgram, LinearConstraint, LinearForm, QuantityRef, TreeSkeleton

_TOL = 1e-6
#: ``auto`` prefers cp to maxsat from this many distinct training rows (see _preference)
CP_FROM_BUCKETS = 250


@dataclass(frozen=True)
class SolveResult:
    status: str
    classifier: Tree | None
    objective: float | None  # first level, in the user's sense (maximize shows the maximum)
    objective_levels: tuple[float, ...]
    bound: float | None
    gap: float | None
    backend: str
    seconds: float
    train_errors: float | None
    verified: bool
    constraints: tuple[ConstraintCheck, ...]
    solver_errors: float | None
    log: str = ""
    evaluation: Evaluation | None = field(default=None, repr=False)

    @property
    def report(self) -> str:
        """A human-readable summary of the solve and its re-verification."""
        lines = [f"status      {self.status}", f"backend     {self.backend}", f"time        {self.seconds:.2f} s"]
        if self.objective is not None:
            lines.append(f"objective   {_fmt(self.objective)}" + (
                f"  (levels: {', '.join(_fmt(v) for v in self.objective_levels)})" if len(self.objective_levels) > 1 else ""))
        if self.bound is not None:
            lines.append(f"bound       {_fmt(self.bound)}" + (f"  gap {self.gap:.2%}" if self.gap is not None else ""))
        if self.train_errors is not None:
            lines.append(f"errors      {_fmt(self.train_errors)} (recomputed in numpy; solver said {_fmt(self.solver_errors)})")
        for c in self.constraints:
            lines.append(f"constraint  {c.text}: {_fmt(c.value)} {c.op} {_fmt(c.bound)}  {'holds' if c.holds else 'VIOLATED'}")
        lines.append(f"verified    {'yes' if self.verified else 'NO'}")
        return "\n".join(lines)

    def as_dict(self) -> dict:
        return {
            "status": self.status, "objective": self.objective, "objective_levels": list(self.objective_levels),
            "bound": self.bound, "gap": self.gap, "backend": self.backend, "seconds": round(self.seconds, 4),
            "train_errors": self.train_errors, "verified": self.verified,
            "constraints": [c.as_dict() for c in self.constraints],
            "classifier": self.classifier.to_json() if self.classifier is not None else None,
        }


def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    return str(int(x)) if float(x).is_integer() else f"{x:.6g}"


class Program:
    """A checked odt program bound to its data; lower and solve it as often as you like."""

    def __init__(self, checked: CheckedProgram):
        self.checked = checked
        self._lowered: dict[str, Lowered] = {}

    @property
    def dataset(self):
        return self.checked.dataset

    def lowered(self, encoding: str = "paths", backend: str | None = None) -> Lowered:
        """The IR of the program with the named skeleton encoding (cached)."""
        if encoding not in self._lowered:
            self._lowered[encoding] = lower(self.checked, encoding, backend)
        return self._lowered[encoding]

    @property
    def model(self) -> ir.Model:
        return self.lowered().model

    def backend_name(self, requested: str | None = None) -> str:
        """The backend to use: the requested one, else the program's ``solve`` directive;
        ``auto`` takes the first backend (in the registry's order of preference) whose
        encoding lowers the program and whose capabilities cover the result."""
        name = requested or self.checked.solve.backend
        if name != "auto":
            return name
        first_error: OdtError | None = None
        for candidate in self._preference():
            if _is_program_backend(candidate):
                if fragment_error(self.checked) is None:
                    return candidate
                continue
            try:
                get_backend(candidate).check_capabilities(self.lowered_for(candidate).model, capabilities())
                return candidate
            except UnsupportedConstruct as exc:
                first_error = first_error or exc
        assert first_error is not None
        raise first_error

    def _preference(self) -> list[str]:
        """The registry's order, except that ``cp`` goes before ``maxsat``
        * when the path encoding carries linear rows with unequal weights (rates and group
          counts over deduplicated rows): CP-SAT propagates them natively, while MaxSAT
          needs their BDD encodings (COMPAS with a four-fifths rule: cp 4.6 s, maxsat
          > 120 s);
        * or when there are many distinct rows (``CP_FROM_BUCKETS``): RC2's cores grow with
          the soft clauses, CP-SAT's search does not (spect-heart, 267 rows, depth 2: cp
          2.0 s, maxsat 3.9 s; Pima with ``uses``, 768 rows: cp 2 s, maxsat > 30 s;
          heart-cleveland with a group accuracy, 297 rows: cp 15 s, maxsat > 120 s)."""
        order = list(BACKENDS)
        try:
            low = self.lowered("paths")
        except UnsupportedConstruct:
            return order
        weighted = any(len({c for c, _ in r.terms}) > 1 for r in low.model.linears)
        many = len(getattr(low.encoding, "buckets", ())) >= CP_FROM_BUCKETS
        if (weighted or many) and "cp" in order and "maxsat" in order:
            order.remove("cp")
            order.insert(order.index("maxsat"), "cp")
        return order

    def _check_strategy(self) -> None:
        """``strategy incremental`` takes exactly: a depth range, ``minimize depth`` alone
        (DT_depth) or ``minimize depth then nodes`` (DT_size; ``then leaves`` too), and one
        constraint ``errors <= k`` (or ``errors == 0``)."""
        if self.checked.solve.strategy == "incremental" and self._incremental_bound() is None:
            raise UnsupportedConstruct(
                "'strategy incremental' (Avellaneda's Algorithm 3) takes a depth range, 'minimize depth' or "
                "'minimize depth then nodes', and one constraint 'errors <= k' or 'errors == 0'",
                self.checked.solve.span,
                "e.g. model tree(depth in 1..10)  minimize depth then nodes  subject to { errors == 0 }")

    def _incremental_bound(self) -> Fraction | None:
        c = self.checked
        sk = c.skeleton
        if not isinstance(sk, TreeSkeleton) or sk.depth_range is None or sk.leaves is not None or sk.nodes is not None:
            return None
        levels = [[(q.kind, q.group, coef > 0) for q, coef in lvl.terms] for lvl in c.objective.levels]
        if levels not in ([[("depth", None, True)]], [[("depth", None, True)], [("nodes", None, True)]],
                          [[("depth", None, True)], [("leaves", None, True)]]):
            return None
        if c.splits != "univariate" or len(c.constraints) != 1:
            return None
        k = c.constraints[0]
        if not isinstance(k, LinearConstraint) or k.scope is not None or k.op not in ("<=", "==") \
                or [(q.kind, q.group) for q, _ in k.form.terms] != [("errors", None)] or k.form.terms[0][1] <= 0:
            return None
        bound = -k.form.constant / k.form.terms[0][1]
        return bound if (k.op == "<=" or bound == 0) and bound >= 0 else None

    def _capabilities(self, name: str, low: Lowered) -> None:
        """The backend's capability check; a refusal caused by the directive's ``encoding``
        option is reported at the directive."""
        try:
            self._backend(name).check_capabilities(low.model, capabilities())
        except UnsupportedConstruct as exc:
            req = self.checked.solve
            if exc.diagnostics[0].span is None and "encoding" in req.options and req.span is not None:
                raise UnsupportedConstruct(f"{exc.message}, which the '{req.options['encoding']}' encoding uses",
                                           req.span, exc.diagnostics[0].hint) from None
            raise

    def check_backend(self, name: str) -> str:
        """Raise the error ``name`` would raise before solving; else describe the model."""
        self._check_strategy()
        impl = self._backend(name)
        if _is_program_backend(name):
            impl.refuse_outside_fragment(self.checked)
            return "ConTree search on the program (no IR)"
        low = self.lowered_for(name)
        self._capabilities(name, low)
        st = low.model.stats()
        return (f"{low.encoding_name} encoding: {st.variables} variables, {st.clauses} clauses, "
                f"{st.linear_rows} linear rows")

    def lowered_for(self, backend: str) -> Lowered:
        """The IR for ``backend``: its own encoding, or the one the solve directive names
        (``solve milp(encoding = "paths")``)."""
        if _is_program_backend(backend):
            raise UnsupportedConstruct(f"backend '{backend}' searches the program directly and has no IR or solver file",
                                       hint="compile with --to wcnf, cpmpy or pyomo")
        encoding = self.checked.solve.options.get("encoding") or self._backend(backend).ENCODING
        return self.lowered(encoding, backend)

    def _backend(self, name: str):
        """The backend object; an unknown or unavailable name from the program's solve
        directive is reported at the directive."""
        try:
            return get_backend(name)
        except OdtError as exc:
            req = self.checked.solve
            if req.span is not None and req.backend == name:
                raise OdtError(exc.message, req.span, exc.diagnostics[0].hint) from None
            raise

    def emit(self, backend: str = "maxsat", **kwargs: Any) -> Artifact:
        """The solver input of ``backend`` (WCNF text, a pickled CPMpy model, LP + MPS)."""
        b = self._backend(backend)
        model = self.lowered_for(backend).model
        b.check_capabilities(model, capabilities())
        return b.emit(model, **kwargs)

    def solve(self, backend: str | None = None, time_limit: float | None = None, threads: int | None = None,
              seed: int | None = None, verbose: bool = False,
              progress: Callable[[Progress], None] | None = None, warm_start: bool = True) -> SolveResult:
        """Solve, decode and re-verify. Options given here override the ``solve`` directive.

        With ``warm_start`` (B4), a solver backend first gets the ConTree tree of the
        program's depth-limited error-minimisation relaxation; if that tree satisfies the
        program (by re-evaluation), its value is handed to the solver as a cutoff: the
        solver then searches only for strictly better trees, and if there are none, the
        warm start is the proven optimum."""
        if getattr(self.checked.skeleton, "depth_range", None) is not None:  # S3: trees and BDDs
            return self._solve_depth_range(backend, time_limit, threads, seed, verbose, progress, warm_start)
        req = self.checked.solve
        self._check_strategy()
        if req.strategy == "incremental":
            raise UnsupportedConstruct("'strategy incremental' applies to a depth range with 'minimize depth' "
                                       "and an 'errors <= k' constraint", req.span,
                                       "e.g. model tree(depth in 1..10)  minimize depth  subject to { errors == 0 }")
        name = self.backend_name(backend)
        impl = self._backend(name)
        if progress is not None and self.checked.objective.maximized:
            shown = progress

            def progress(p: Progress) -> None:  # report in the user's sense (a maximum)
                shown(Progress(p.elapsed, None if p.incumbent is None else -p.incumbent,
                               None if p.bound is None else -p.bound))

        opts = SolveOptions(
            time_limit=time_limit if time_limit is not None else req.options.get("time_limit"),
            threads=threads if threads is not None else req.options.get("threads", 1),
            seed=seed if seed is not None else req.options.get("seed", 0),
            verbose=verbose or bool(req.options.get("verbose", False)),
            on_progress=progress,
            extra={k: v for k, v in req.options.items() if k == "solver"},
        )
        if _is_program_backend(name):  # dp: the checked program, no IR
            tree, res = impl.solve_program(self.checked, opts)
            return self._result(name, res, None, tree)
        low = self.lowered_for(name)
        self._capabilities(name, low)
        started = time.perf_counter()
        warm = self._warm_start(opts) if warm_start else None
        if opts.time_limit is not None:  # the warm start's time comes out of the budget
            opts = dataclasses.replace(opts, time_limit=max(0.05, opts.time_limit - (time.perf_counter() - started)))
        if warm is not None:
            opts = dataclasses.replace(opts, extra={**opts.extra, "cutoff": warm[1]})
            if progress is not None:
                progress(Progress(0.0, warm[1], None))
        res = impl.solve(low.model, opts)
        if warm is not None and res.status is Status.INFEASIBLE:  # nothing beats the warm start
            done = BackendResult(Status.OPTIMAL, None, (warm[1],), warm[1], res.seconds,
                                 res.log + "; the warm start is optimal (nothing better exists)")
            return self._result(name, done, None, warm[0])
        if warm is not None and res.values is None:  # time out without a better incumbent
            # the solver's bound holds for trees better than the warm start, so the
            # optimum is at least min(bound, warm value): at or above it, the warm start wins
            proved = res.bound is not None and res.bound >= warm[1]
            kept = BackendResult(Status.OPTIMAL if proved else Status.FEASIBLE, None, (warm[1],),
                                 warm[1] if proved else res.bound, res.seconds,
                                 res.log + "; the warm start is the incumbent")
            return self._result(name, kept, None, warm[0])
        return self._result(name, res, low)

    def _solve_depth_range(self, backend, time_limit, threads, seed, verbose, progress, warm_start) -> SolveResult:
        """S3, Avellaneda's DT_depth / DT_size: ``tree(depth in a..b)`` with an objective
        whose first level is ``depth``. Depths a, a+1, ... are tried in turn, each as the
        program with ``depth <= k`` and the remaining objective levels, until one is
        feasible: that k is the minimum depth (every smaller one was proved infeasible),
        and the tree found there is optimal for the remaining levels. ``bdd(depth in a..b)``
        is Hu's linear search on H for P_bdd (with ``errors == 0``): each k is the BDD
        program with k levels."""
        c = self.checked
        sk = c.skeleton
        assert sk.depth_range is not None
        kind = "tree" if isinstance(sk, TreeSkeleton) else "BDD"
        if not isinstance(sk, TreeSkeleton) and c.solve.strategy == "incremental":
            raise UnsupportedConstruct("'strategy incremental' (Avellaneda's Algorithm 3) applies to tree depth "
                                       "ranges, not to a bdd", c.solve.span, "drop 'strategy incremental'")
        levels = c.objective.levels
        first = levels[0]
        if [q.kind for q, _ in first.terms] != ["depth"] or first.terms[0][1] <= 0:
            raise UnsupportedConstruct("a depth range needs 'minimize depth' (optionally 'then ...') as its objective",
                                       c.objective.span, "e.g. minimize depth then nodes")
        rest = levels[1:] or (LinearForm.of(QuantityRef("errors")),)
        low, high = sk.depth_range
        clock = time.perf_counter()
        if c.solve.strategy == "incremental":
            return self._incremental_depth(low, high, time_limit, clock)
        for k in range(low, high + 1):
            remaining = None if time_limit is None else time_limit - (time.perf_counter() - clock)
            if remaining is not None and remaining <= 0:
                break
            sub = Program(dataclasses.replace(
                c, skeleton=dataclasses.replace(sk, depth=k, depth_range=None),
                objective=dataclasses.replace(c.objective, levels=tuple(rest))))
            try:
                res = sub.solve(backend, remaining, threads, seed, verbose, progress, warm_start)
            except InfeasibleProgram:
                continue
            if res.classifier is None:
                break
            depth = float(res.classifier.depth)
            value = float(first.terms[0][1]) * depth + float(first.constant)
            status = res.status if res.classifier.depth == k or res.status != "optimal" else "optimal"
            return dataclasses.replace(res, status=status, objective=value,
                                       objective_levels=(value,) + (res.objective_levels if levels[1:] else ()),
                                       seconds=time.perf_counter() - clock,
                                       log=f"depth search: depths {low}..{k - 1} infeasible; " + res.log)
        if time_limit is not None and time.perf_counter() - clock >= time_limit:
            return SolveResult("unknown", None, None, (), None, None, backend or "auto", time.perf_counter() - clock,
                               None, False, (), None, "depth search: time limit")
        raise InfeasibleProgram(f"infeasible: no {kind} of depth at most {high} satisfies the program "
                                f"(every depth from {low} to {high} was proved infeasible)",
                                sk.span, "raise the upper end of the depth range or relax a constraint")

    def _incremental_depth(self, low: int, high: int, time_limit: float | None, clock: float) -> SolveResult:
        """DT_depth (``minimize depth``) or DT_size (``minimize depth then nodes``) with
        Algorithm 3 at each depth (B3); DT_size then searches the node count dichotomically
        on the solver of the minimum depth, under assumptions on the unary counter of
        Avellaneda's eqs (7)-(10). The log gives the rows and SAT calls each step needed."""
        from .incremental import dt_depth_size

        self._check_strategy()
        bound = self._incremental_bound()
        assert bound is not None
        if time_limit is None:
            time_limit = self.checked.solve.options.get("time_limit")
        deadline = None if time_limit is None else clock + float(time_limit)
        size = len(self.checked.objective.levels) == 2
        out = dt_depth_size(self.checked, low, high, bound, size, deadline)
        seconds = time.perf_counter() - clock
        if out.tree is None and out.optimal:
            raise InfeasibleProgram(f"infeasible: no tree of depth at most {high} satisfies the program "
                                    f"(every depth from {low} to {high} was proved infeasible, incrementally)",
                                    self.checked.skeleton.span, "raise the upper end of the depth range")
        if out.tree is None:  # time limit before any tree: the depths below were proved infeasible
            return SolveResult("unknown", None, None, (), float(out.lower), None, "maxsat-incremental", seconds,
                               None, False, (), None, out.log)
        ev = evaluate(self.checked, out.tree)
        levels = tuple(float(v) for v in ev.objective)
        verified = ev.feasible and out.tree.depth <= out.depth
        return SolveResult("optimal" if out.optimal else "feasible", out.tree, levels[0], levels, levels[0], 0.0,
                           "maxsat-incremental", seconds, ev.train_errors, verified, ev.constraints,
                           ev.train_errors, out.log, ev)

    def explain(self, backend: str | None = None, time_limit: float | None = None) -> list[tuple[str, Any]]:
        """For an infeasible program: a minimal set of its own constraints (and skeleton
        size limits) that cannot hold together, as (source text, span) pairs. Deletion
        based: drop each constraint in turn and keep it out while the rest stays
        infeasible. Returns [] when the program is feasible."""
        c = self.checked
        sk = c.skeleton
        items: list[tuple[str, Any, Any]] = [("constraint", k, k) for k in c.constraints]
        if isinstance(sk, TreeSkeleton) and (sk.leaves is not None or sk.nodes is not None):
            items.append(("size", "size", sk))

        def infeasible(keep: list) -> bool:
            constraints = tuple(k for kind, k, _ in keep if kind == "constraint")
            skel = sk
            if isinstance(sk, TreeSkeleton) and not any(kind == "size" for kind, _, _ in keep):
                skel = dataclasses.replace(sk, leaves=None, nodes=None)
            sub = Program(dataclasses.replace(c, constraints=constraints, skeleton=skel))
            try:
                sub.solve(backend=backend if backend and backend != "dp" else None, time_limit=time_limit,
                          warm_start=True)
            except InfeasibleProgram:
                return True
            return False

        if not infeasible(items):
            return []
        core = list(items)
        for item in list(items):
            trial = [x for x in core if x is not item]
            if infeasible(trial):
                core = trial
        out = []
        for kind, k, obj in core:
            if kind == "constraint":
                out.append((k.span.quote() if k.span else str(k), k.span))
            else:
                limits = [f"{n} <= {v}" for n, v in (("leaves", obj.leaves), ("nodes", obj.nodes)) if v is not None]
                out.append((", ".join(limits) + " (model)", obj.span))
        return out

    def _warm_start(self, opts: SolveOptions) -> tuple[Tree, Fraction] | None:
        """The ConTree tree of the relaxation, with its objective value, if it satisfies the
        program and the objective has a single level (else None). A diagram skeleton with
        univariate splits gets Florio's greedy construction instead (``diagram_greedy``)."""
        c = self.checked
        sk = c.skeleton
        from .program_types import DiagramSkeleton

        if isinstance(sk, DiagramSkeleton) and c.splits == "univariate" and len(c.objective.levels) == 1:
            from .diagram_greedy import warm_start as diagram_warm_start

            return diagram_warm_start(c, 2.0 if opts.time_limit is None else min(2.0, 0.1 * opts.time_limit))
        if not isinstance(sk, TreeSkeleton) or sk.depth_range is not None or c.splits != "univariate" \
                or len(c.objective.levels) != 1:
            return None
        budget = 2.0 if opts.time_limit is None else min(2.0, 0.1 * opts.time_limit)
        tree, _ = DpBackend().relaxation(c, budget)
        ev = evaluate(c, tree)
        if not ev.feasible:
            return None
        return tree, Fraction(ev.objective[0]).limit_denominator(10**9)

    def _result(self, backend: str, res: BackendResult, low: Lowered | None, tree: Tree | None = None) -> SolveResult:
        maximized = self.checked.objective.maximized
        sign = -1.0 if maximized else 1.0
        if res.status is Status.INFEASIBLE:
            raise InfeasibleProgram(
                "infeasible: no classifier satisfies every constraint of the program on this data "
                f"(proved by backend '{backend}' in {res.seconds:.2f} s)",
                hint="`odtc explain <program>` (or Program.explain()) names a minimal set of conflicting "
                     "constraints; relax one, raise the depth, or drop a size limit",
            )
        if res.values is None and tree is None:
            return SolveResult(res.status.value, None, None, (), _f(res.bound, sign), None, backend, res.seconds,
                               None, False, (), None, res.log)
        if low is not None:
            tree = low.encoding.decode(res.values, self.dataset, _input_columns(self.checked))
            terms, constant = low.encoding.errors()
            solver_errors = float(objective_enc.level_values([ir.Objective(tuple(terms), constant)], res.values,
                                                             low.model)[0])
        elif backend == "dp":  # its objective is the (scaled) errors
            lvl = self.checked.objective.levels[0]
            solver_errors = float((res.objective[0] - lvl.constant) / lvl.terms[0][1])
        else:  # a warm-start tree: the value claimed for it is its re-evaluated value
            solver_errors = evaluate(self.checked, tree).train_errors
        assert tree is not None
        ev = evaluate(self.checked, tree)
        claimed = [float(v) for v in res.objective or ()]
        if res.status is Status.OPTIMAL:
            agree = all(abs(a - b) <= _TOL for a, b in zip(ev.objective, claimed)) and \
                abs(ev.train_errors - solver_errors) <= _TOL
        else:
            agree = bool(ev.objective) and ev.objective[0] <= claimed[0] + _TOL and ev.train_errors <= solver_errors + _TOL
        verified = agree and ev.feasible
        objective = ev.objective[0] if ev.objective else None
        bound = float(res.bound) if res.bound is not None else None
        gap = None
        if objective is not None and bound is not None:
            gap = 0.0 if abs(objective - bound) <= _TOL else abs(objective - bound) / max(abs(objective), 1e-12)
        return SolveResult(
            res.status.value, tree, None if objective is None else sign * objective,
            tuple(sign * v for v in ev.objective), None if bound is None else sign * bound, gap, backend, res.seconds,
            ev.train_errors, verified, ev.constraints, solver_errors, res.log, ev,
        )


def _is_program_backend(name: str) -> bool:
    return hasattr(BACKENDS.get(name), "solve_program")


def _f(x: Fraction | None, sign: float) -> float | None:
    return None if x is None else sign * float(x)


def _input_columns(checked: CheckedProgram) -> tuple[str, ...]:
    data = checked.dataset
    return tuple(dict.fromkeys(f.column for f in data.features))


def compile(text: str, data: Any = None, target: Any = None, filename: str = "<string>",
            base_dir: str | Path | None = None) -> Program:
    """Parse and check an odt program.

    Args:
        text: the program.
        data: a pandas DataFrame, a dict of columns or a 2-D numpy array; when None the
            program's ``data "file.csv"`` block is read (relative to ``base_dir``).
        target: the labels when ``data`` is an array (its column becomes ``class``).
    Raises:
        OdtError: syntax, name, type or data errors, all reported together.
    """
    ast_program = parse_program(text, filename)
    if data is not None:
        table = table_from_python(data, target)
    else:
        table = load_table(ast_program, Path(base_dir) if base_dir is not None else None)
    return Program(check(ast_program, table))


def compile_file(path: str | Path, data: Any = None, target: Any = None) -> Program:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise OdtError(f"program file '{path}' not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise OdtError(f"cannot read program file '{path}': {exc}") from None
    return compile(text, data=data, target=target, filename=str(path), base_dir=path.parent)
