"""``auto`` without building: which backend takes a checked program, and how large its
encoding would be, decided from the program and cheap counts over the data.

Input: a ``CheckedProgram``. Output: the order in which ``auto`` tries backends, the first
that takes the program (the support table, ``compiler/support.py``, decides whether a
backend takes it; nothing here second-guesses it), and a size estimate of the encoding.
Invariant: nothing here lowers the program or builds an encoding — routing a depth-3
tree on 20,000 continuous rows costs a few array passes, not a SAT encoding.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from odt.backends import BACKENDS

from odt.compiler import support
from odt.compiler.checked import CheckedProgram, DiagramSkeleton, LinearConstraint, TreeSkeleton

#: ``auto`` prefers cp to maxsat from this many distinct training rows (see ``preference``)
CP_FROM_BUCKETS = 250
_ROW_QUANTITIES = {"errors", "predicted", "tp", "fp", "tn", "fn", "expected_cost"}


def encoding_of(program: CheckedProgram, backend: str) -> str:
    """The skeleton encoding ``backend`` would lower ``program`` with."""
    return program.solve.options.get("encoding") or BACKENDS[backend].ENCODING


def distinct_rows(program: CheckedProgram) -> int:
    """Training rows of positive weight with distinct allowed features (the encodings'
    buckets, before group memberships split them), counted by hashing: an estimate."""
    data = program.dataset
    words = data.row_patterns(program.feature_mask)  # never the 0/1 matrix (20,000 x 100 raw: 40 GB)
    positive = data.row_weights() > 0
    if not positive.all():
        words = words[positive]
    if words.shape[0] == 0 or words.shape[1] == 0:
        return min(words.shape[0], 1)
    # one 64-bit hash per row (a random odd multiplier per word): equal rows hash equally,
    # distinct rows collide with probability ~2^-64 per pair -- an estimate's precision
    mult = np.random.default_rng(0).integers(1, 2**63, size=words.shape[1], dtype=np.uint64) | np.uint64(1)
    with np.errstate(over="ignore"):
        keys = (words * mult).sum(axis=1, dtype=np.uint64)
    return int(np.unique(keys).shape[0])


def preference(program: CheckedProgram) -> list[str]:
    """The registry's order, except that ``cp`` goes before ``maxsat``
    * when a constraint weighs rows unequally (rates, group counts, errors of a group,
      expected cost): CP-SAT propagates such rows natively, while MaxSAT needs their BDD
      encodings (COMPAS with a four-fifths rule: cp 4.6 s, maxsat > 120 s);
    * or when there are many distinct rows (``CP_FROM_BUCKETS``): RC2's cores grow with
      the soft clauses, CP-SAT's search does not (spect-heart, 267 rows, depth 2: cp
      2.0 s, maxsat 3.9 s; Pima with ``uses``, 768 rows: cp 2 s, maxsat > 30 s;
      heart-cleveland with a group accuracy, 297 rows: cp 15 s, maxsat > 120 s)."""
    order = list(BACKENDS)
    if "cp" not in order or "maxsat" not in order:
        return order
    weighted = any(isinstance(c, LinearConstraint) and c.scope is None and _row_kinds(c.form)
                   for c in program.constraints)
    if weighted or distinct_rows(program) >= CP_FROM_BUCKETS:
        order.remove("cp")
        order.insert(order.index("maxsat"), "cp")
    return order


def _row_kinds(form) -> bool:
    for q, _ in form.terms:
        if q.kind in _ROW_QUANTITIES or (q.inner is not None and _row_kinds(q.inner)):
            return True
    return False


def route(program: CheckedProgram) -> str:
    """``auto``: the first backend in ``preference`` order that takes the program (the
    support table says); else the first refusal, which names the construct."""
    first = support.refusal(program, "dp") if "dp" in BACKENDS else None
    if "dp" in BACKENDS and first is None:  # the fastest exact engine: no need to order the rest
        return "dp"
    for candidate in preference(program):
        err = support.refusal(program, candidate)
        if err is None:
            return candidate
        first = first or err
    assert first is not None
    raise support.refused_everywhere(program) or first  # a construct no backend takes, else dp's refusal


@dataclass(frozen=True)
class SizeEstimate:
    """An order-of-magnitude size of an encoding, from counts alone."""

    encoding: str
    variables: int
    clauses: int  # clauses, or linear rows for the flow encodings

    def describe(self) -> str:
        what = "rows" if self.encoding == "flow" else "clauses"
        return f"{self.encoding} encoding, estimated ~{_round(self.variables)} variables, ~{_round(self.clauses)} {what}"


def estimate(program: CheckedProgram, backend: str) -> SizeEstimate:
    """The size of the encoding ``backend`` would build, estimated without building it:
    B distinct rows, P allowed features, K classes, and the skeleton's node counts."""
    B = distinct_rows(program)
    P = int(program.feature_mask.sum())
    K = len(program.dataset.classes)
    sk = program.skeleton
    encoding = encoding_of(program, backend)
    if isinstance(sk, TreeSkeleton):
        inner, leaves = (1 << sk.depth) - 1, 1 << sk.depth
        if encoding == "flow":  # Florio's flows on the tree: one flow per row and arc
            return SizeEstimate("flow", inner * (P + 1) + B * (2 * inner + leaves * K), B * (inner + leaves) + inner * P)
        return SizeEstimate("paths", inner * (P + 1) + B * (sk.depth + K) + leaves * K,
                            B * (inner * (P + 1) + leaves * K))
    if isinstance(sk, DiagramSkeleton):
        n = sum(sk.widths)
        arcs = sum(a * b for a, b in zip(sk.widths, sk.widths[1:])) * 2 + n * 2 * K
        if encoding == "flow":
            return SizeEstimate("flow", n * P + B * arcs, B * n + n * P)
        return SizeEstimate("paths", n * P + B * n * 2, B * n * (P + 1))
    H = sk.depth
    return SizeEstimate("bdd", H * P + B * H + (1 << H) * K, B * (H * P + (1 << H)))


def _round(x: int) -> str:
    if x < 1000:
        return str(x)
    for unit, scale in (("G", 10**9), ("M", 10**6), ("k", 10**3)):
        if x >= scale:
            return f"{x / scale:.3g}{unit}"
    return str(x)


#: bytes per estimated variable and per estimated clause (or row) while a backend builds
#: and solves its encoding, measured as peak RSS over the estimate (bench/time_limits.py)
BYTES_PER = {"maxsat": (100, 300), "cp": (200, 600), "milp": (3000, 3000)}
#: the process before any encoding: interpreter, numpy, solver libraries
BASE_BYTES = 400 * 2**20


def memory_needed(program: CheckedProgram, backend: str) -> int:
    """Bytes ``backend`` is expected to need for ``program``'s encoding (an estimate)."""
    est = estimate(program, backend)
    per_var, per_clause = BYTES_PER.get(backend, max(BYTES_PER.values()))
    return BASE_BYTES + per_var * est.variables + per_clause * est.clauses


def default_memory_limit() -> int | None:
    """Without a budget: four fifths of the machine's physical memory (None if unknown)."""
    import os

    try:
        return int(0.8 * os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return None


def check_memory(program: CheckedProgram, backend: str, limit: float | None) -> None:
    """Refuse, before building it, an encoding whose estimated size exceeds ``limit``
    bytes (default: ``default_memory_limit``)."""
    budget = limit if limit is not None else default_memory_limit()
    if budget is None:
        return
    need = memory_needed(program, backend)
    if need > budget:
        est = estimate(program, backend)
        raise support.unsupported(
            f"this program on this data ('{program.model_span.quote()}', line {program.model_span.line})",
            f"it would need about {need / 2**30:.1f} GiB ({est.describe()}), over the memory budget of "
            f"{budget / 2**30:.1f} GiB", program.model_span, backend=backend,
            hint="lower the depth or widths, restrict the features, use backend dp where it applies, "
                 "or raise the budget with --memory-limit")
