"""B4: a heuristic classifier whose value becomes the solver's cutoff — the better of
ConTree's tree of the program's relaxation and the greedy (CART-style) tree for trees,
Florio's greedy construction for diagrams — and the greedy start of every tree solve
(issue 24, item 7): a solve stopped by its time limit returns at least that tree."""
from __future__ import annotations

from fractions import Fraction
from typing import NamedTuple

import numpy as np

from odt.backends.base import SolveOptions
from odt.backends.dp import DpBackend

from odt.compiler.searches import Searches
from odt.compiler.support import takes
from odt.compiler.evaluate import evaluate
from odt.compiler.checked import CheckedProgram, TreeSkeleton
from odt.result import Classifier


def warm_start(c: CheckedProgram, opts: SolveOptions, greedy: "Start | None" = None,
               searches: Searches | None = None) -> tuple[Classifier, Fraction] | None:
    """The better of the ConTree tree of the relaxation and the ``greedy`` start, with its
    objective value, if it satisfies the program and the objective has a single level
    (else None). A diagram skeleton with univariate splits gets Florio's greedy
    construction instead (``diagram_greedy``)."""
    sk = c.skeleton
    from odt.compiler.checked import DiagramSkeleton

    if isinstance(sk, DiagramSkeleton) and c.splits == "univariate" and len(c.objective.levels) == 1:
        from odt.strategies.diagram_greedy import warm_start as diagram_warm_start

        return diagram_warm_start(c, 2.0 if opts.time_limit is None else min(2.0, 0.1 * opts.time_limit))
    if not isinstance(sk, TreeSkeleton) or sk.depth_range is not None or c.splits != "univariate" \
            or len(c.objective.levels) != 1:
        return None
    budget = 2.0 if opts.time_limit is None else min(2.0, 0.1 * opts.time_limit)
    searches = searches or Searches(c)
    tree, _ = DpBackend().relaxation(searches.relaxation(), budget)
    ev = evaluate(c, tree)
    relaxed = (tree, Fraction(ev.objective[0]).limit_denominator(10**9)) if ev.feasible else None
    starts = [s for s in (relaxed, None if greedy is None else greedy[:2]) if s is not None]
    return min(starts, key=lambda s: s[1]) if starts else None


class Start(NamedTuple):
    """A start of a solve: the classifier, its first objective level, every level (as
    minimised) and its training errors, all re-evaluated against the program."""

    classifier: Classifier
    value: Fraction
    levels: tuple[float, ...]
    errors: Fraction


def greedy_pays_early(c: CheckedProgram) -> bool:
    """Whether a dp solve should grow its greedy start before searching (a large program,
    which a time limit may stop) rather than only once it is stopped: rows x columns x
    depth of at least 200,000 (heart-cleveland at depth 3, 296 x 95 x 3, grows it in about
    10 ms and dp proves the optimum in 20 ms; anneal at depth 4, 812 x 93 x 4, in 15 ms
    against 0.2 s)."""
    sk = c.skeleton
    if not isinstance(sk, TreeSkeleton) or sk.depth is None:
        return False
    return c.dataset.n_rows * int(c.feature_mask.sum()) * sk.depth >= 200_000


def greedy_start(c: CheckedProgram, searches: Searches | None = None) -> Start | None:
    """The greedy tree of a tree program (``backends.dp.greedy``: CART-style, grown to the
    program's depth with its minimum leaf size and threshold ranges, pruned to its
    objective and caps), if it satisfies the program; else None. Milliseconds to about a
    second. ``searches`` keeps the search IR it reads (dp's own problem, when dp takes the
    program) for the rest of the solve."""
    if not isinstance(c.skeleton, TreeSkeleton) or c.skeleton.depth_range is not None or c.splits != "univariate":
        return None
    from odt.backends.dp.backend import decode_tree
    from odt.backends.dp.greedy import greedy_tree

    searches = searches or Searches(c)
    problem = searches.tree() if takes(c, "dp", directive=False) else searches.relaxation()
    raw = greedy_tree(problem)
    if raw is None:
        return None
    tree = decode_tree(raw, problem)
    ev = evaluate(c, tree)
    if not ev.feasible or not ev.objective:
        return None
    return Start(tree, Fraction(ev.objective[0]).limit_denominator(10**9), tuple(ev.objective),
                 Fraction(ev.train_errors).limit_denominator(10**9))


#: the most constant classifiers ``single_leaf`` evaluates (the heaviest classes first)
SINGLE_LEAF_CLASSES = 64


def single_leaf(c: CheckedProgram) -> tuple[Classifier, Fraction] | None:
    """The best constant classifier (one leaf) that satisfies the program, with its value,
    or None: the incumbent of last resort when a time limit or a signal stops a solve
    before any other (one evaluation per class; with more than ``SINGLE_LEAF_CLASSES``
    classes, of that many heaviest ones: this runs after the time limit, and a class per
    row would be one evaluation per row, issue 24)."""
    from odt.compiler.classifiers import Tree
    from odt.compiler.classifiers.diagram import diagram_of_tree
    from odt.compiler.classifiers.tree import Leaf
    from odt.compiler.checked import DiagramSkeleton

    if not isinstance(c.skeleton, (TreeSkeleton, DiagramSkeleton)) or c.splits != "univariate":
        return None
    columns = c.dataset.features.columns()
    best: tuple[Classifier, Fraction] | None = None
    data = c.dataset
    weight = np.bincount(data.y, weights=data.row_weights(), minlength=len(data.classes))
    for k in sorted(np.argsort(-weight, kind="stable")[:SINGLE_LEAF_CLASSES].tolist()):  # ties: the lowest class
        tree = Tree((), tuple(c.dataset.classes), Leaf(k), columns)
        clf: Classifier = tree if isinstance(c.skeleton, TreeSkeleton) else diagram_of_tree(tree)
        ev = evaluate(c, clf)
        if not ev.feasible or not ev.objective:
            continue
        value = Fraction(ev.objective[0]).limit_denominator(10**9)
        if best is None or value < best[1]:
            best = (clf, value)
    return best
