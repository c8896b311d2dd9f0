"""A greedy decision diagram within a skeleton: Florio et al. (AAAI 2023), "Training
Strategy", Step 1 — the warm start (B4) of the diagram MILP.

Input: a binarised matrix, labels, row weights, the layer widths and a node cost. Output:
a ``Diagram`` whose layer l holds at most ``widths[l]`` nodes. Construction, layer by
layer from the root (a CART-like top-down pass whose connections are decided as it goes):
  * each node of layer l takes the univariate split of largest (weighted) Gini gain; on
    the last layer, the split of fewest errors, both sides going to their majority class;
  * each side of a split is a *sample flow*; a pure flow goes straight to its class (a
    long arc); while more flows remain than layer l + 1 has nodes, the pair whose merge
    loses the least Gini gain is merged (the paper's greedy merging policy); each
    remaining flow becomes a node of layer l + 1;
  * bottom-up pruning: a node whose two arcs reach class leaves becomes the majority
    class of its rows when that lowers errors + node_cost * nodes.
Restarts (the paper's multi-start) draw a random 60% of the features for every split;
the best diagram by errors + node_cost * nodes is returned. Pure numpy; deterministic
for a seed.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from odt.compiler.classifiers.diagram import DNode, Diagram, compact_diagram, leaf_ref


@dataclass
class _GNode:
    rows: np.ndarray  # bool mask of the rows reaching the node
    layer: int
    feature: int = -1
    targets: dict[bool, Any] = field(default_factory=dict)  # side -> ("leaf", k) or ("node", _GNode)


def _class_weights(W: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return W[mask].sum(axis=0)


def _gini(cw: np.ndarray) -> float:
    total = cw.sum()
    return 0.0 if total <= 0 else float(total - (cw * cw).sum() / total)


def _errors(cw: np.ndarray) -> float:
    return float(cw.sum() - cw.max()) if cw.size else 0.0


def _best_split(Xb: np.ndarray, W: np.ndarray, mask: np.ndarray, feats: np.ndarray, last: bool) -> int:
    """The feature of largest Gini gain (fewest errors on the last layer) at a node."""
    here = Xb[mask][:, feats]  # rows x candidate features
    wt = W[mask]  # rows x classes
    true_cw = here.T.astype(float) @ wt  # features x classes
    false_cw = wt.sum(axis=0)[None, :] - true_cw
    if last:
        score = (true_cw.sum(1) - true_cw.max(1)) + (false_cw.sum(1) - false_cw.max(1))
    else:
        def g(cw):
            tot = cw.sum(1)
            return np.where(tot > 0, tot - (cw * cw).sum(1) / np.maximum(tot, 1e-300), 0.0)
        score = g(true_cw) + g(false_cw)
    splits = (here.any(axis=0)) & (~here.all(axis=0))
    score = np.where(splits, score, np.inf)
    return int(feats[int(np.argmin(score))]) if np.isfinite(score).any() else int(feats[0])


def _build(Xb: np.ndarray, W: np.ndarray, widths: tuple[int, ...], rng: np.random.Generator | None) -> _GNode:
    n_feat = Xb.shape[1]
    root = _GNode(np.ones(Xb.shape[0], bool), 0)
    layer = [root]
    for l in range(len(widths)):
        last = l == len(widths) - 1
        flows: list[tuple[np.ndarray, list[tuple[_GNode, bool]]]] = []  # (rows, arcs that feed it)
        for node in layer:
            feats = np.arange(n_feat)
            if rng is not None and n_feat > 1:
                feats = np.sort(rng.choice(n_feat, size=max(1, int(round(0.6 * n_feat))), replace=False))
            node.feature = _best_split(Xb, W, node.rows, feats, last)
            go = Xb[:, node.feature]
            for side in (True, False):
                rows = node.rows & (go if side else ~go)
                cw = _class_weights(W, rows)
                if last or _errors(cw) == 0:
                    node.targets[side] = ("leaf", int(np.argmax(cw)) if cw.sum() > 0 else 0)
                else:
                    flows.append((rows, [(node, side)]))
        if last:
            break
        while len(flows) > widths[l + 1]:  # merge the pair that loses the least gain
            best = None
            for i in range(len(flows)):
                for j in range(i + 1, len(flows)):
                    a, b = _class_weights(W, flows[i][0]), _class_weights(W, flows[j][0])
                    loss = _gini(a + b) - _gini(a) - _gini(b)
                    if best is None or loss < best[0]:
                        best = (loss, i, j)
            assert best is not None
            _, i, j = best
            flows[i] = (flows[i][0] | flows[j][0], flows[i][1] + flows[j][1])
            del flows[j]
        layer = []
        for rows, arcs in flows:
            child = _GNode(rows, l + 1)
            for node, side in arcs:
                node.targets[side] = ("node", child)
            layer.append(child)
    return root


def _prune(root: _GNode, Xb: np.ndarray, W: np.ndarray, node_cost: float) -> Any:
    """Bottom-up: a node with two leaf arcs becomes its majority class when that lowers
    errors + node_cost * nodes (or when both arcs reach one class). Returns the root's
    target."""
    memo: dict[int, Any] = {}

    def visit(node: _GNode) -> Any:
        if id(node) in memo:
            return memo[id(node)]
        for side in (True, False):
            kind, x = node.targets[side]
            if kind == "node":
                node.targets[side] = visit(x)
        out: Any = ("node", node)
        if node.targets[True][0] == "leaf" and node.targets[False][0] == "leaf":
            go = Xb[:, node.feature]
            split_err = 0.0
            for side in (True, False):
                rows = node.rows & (go if side else ~go)
                split_err += float(W[rows].sum() - W[rows][:, node.targets[side][1]].sum())
            cw = _class_weights(W, node.rows)
            if node.targets[True] == node.targets[False] or _errors(cw) < split_err + node_cost:
                out = ("leaf", int(np.argmax(cw)) if cw.sum() > 0 else 0)
        memo[id(node)] = out
        return out

    return visit(root)


def _to_diagram(top: Any, features: tuple, classes: tuple, input_columns: tuple, Xb: np.ndarray) -> Diagram:
    if top[0] == "leaf":
        return Diagram((), classes, (), leaf_ref(top[1]), input_columns)
    order: list[_GNode] = []
    seen: set[int] = set()
    stack = [top[1]]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        order.append(node)
        stack.extend(x for kind, x in node.targets.values() if kind == "node")
    order.sort(key=lambda g: g.layer)
    index = {id(g): i for i, g in enumerate(order)}

    def ref(t: Any) -> int:
        return leaf_ref(t[1]) if t[0] == "leaf" else index[id(t[1])]

    nodes = tuple(DNode(g.feature, ref(g.targets[True]), ref(g.targets[False]), g.layer) for g in order)
    return compact_diagram(Diagram(features, classes, nodes, 0, input_columns), Xb)


def greedy_diagram(Xb: np.ndarray, y: np.ndarray, weights: np.ndarray, classes: tuple, features: tuple,
                   widths: tuple[int, ...], node_cost: float = 0.0, input_columns: tuple = (),
                   restarts: int = 20, seed: int = 0, budget: float | None = None) -> Diagram:
    """The best of ``restarts`` greedy constructions (the first uses every feature).

    Args:
        Xb: rows x features, bool (the columns of ``features``).
        y: class index per row; weights: row weights.
        widths: the skeleton (first width 1).
        node_cost: the price of one decision node against one unit of error weight.
        budget: seconds; restarts stop when it is spent (the first always runs).
    Returns:
        A ``Diagram`` with at most ``widths[l]`` nodes on layer l, compacted on the rows.
    """
    started = time.perf_counter()
    W = np.zeros((Xb.shape[0], len(classes)))
    W[np.arange(Xb.shape[0]), y] = weights
    rng = np.random.default_rng(seed)
    best: tuple[float, Diagram] | None = None
    if Xb.shape[1] == 0:
        cw = W.sum(axis=0)
        return Diagram((), classes, (), leaf_ref(int(np.argmax(cw))), input_columns)
    for attempt in range(max(1, restarts)):
        if attempt and budget is not None and time.perf_counter() - started > budget:
            break
        root = _build(Xb, W, tuple(widths), rng if attempt else None)
        d = _to_diagram(_prune(root, Xb, W, node_cost), features, classes, input_columns, Xb)
        pred = d.predict_binary(_columns(d, features, Xb))
        value = float(W.sum() - W[np.arange(Xb.shape[0]), pred].sum()) + node_cost * d.n_nodes
        if best is None or value < best[0] - 1e-12:
            best = (value, d)
    assert best is not None
    return best[1]


def _columns(d: Diagram, features: tuple, Xb: np.ndarray) -> np.ndarray:
    """The columns of ``Xb`` for the (compacted) diagram's features."""
    pos = {id(f): j for j, f in enumerate(features)}
    return Xb[:, [pos[id(f)] for f in d.features]] if d.features else np.zeros((Xb.shape[0], 0), bool)


def warm_start(checked, budget: float) -> tuple[Diagram, Fraction] | None:
    """B4 for ``model diagram(...)`` with univariate splits and one objective level: the
    greedy diagram (node cost read off the objective's ``nodes`` coefficient, relative to
    ``errors``) with its re-evaluated objective, when it satisfies the program."""
    from odt.compiler.evaluate import evaluate
    from odt.compiler.lower import allowed_features
    from odt.compiler.skeletons.tree_paths import useful_features

    data = checked.dataset
    level = checked.objective.levels[0]
    coef = {q.kind: c for q, c in level.terms if q.group is None}
    err = coef.get("errors", Fraction(0))
    node_cost = float(coef.get("nodes", 0) / err) if err > 0 else 0.0
    keep = useful_features(data.X, allowed_features(checked))
    features = tuple(data.features[f] for f in keep)
    cols = data.features.columns()
    d = greedy_diagram(data.X[:, keep], data.y, data.row_weights(), data.classes, features,
                       checked.skeleton.widths, max(node_cost, 0.0), cols, budget=budget)
    ev = evaluate(checked, d)
    if not ev.feasible:
        return None
    return d, Fraction(ev.objective[0]).limit_denominator(10**9)
