"""The Diagram classifier (E1, E3): routing, reduction, JSON, rendering — no solver involved."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from odt.compiler.classifiers import Leaf, Split, Tree, load_classifier
from odt.compiler.data import Feature, table_from_python
from odt.compiler.classifiers.diagram import DNode, Diagram, compact_diagram, leaf_ref
from odt.compiler.classifiers.render import to_dot, to_svg

A, B, C = (Feature(n, "binary") for n in "abc")


def xor_diagram() -> Diagram:
    """a XOR b with a shared node per value of b: the shape a tree cannot share."""
    nodes = (
        DNode(0, 1, 2, 0),  # a ? n1 : n2
        DNode(1, leaf_ref(0), leaf_ref(1), 1),  # a: b ? 0 : 1
        DNode(1, leaf_ref(1), leaf_ref(0), 1),  # not a: b ? 1 : 0
    )
    return Diagram((A, B), (0, 1), nodes, 0, ("a", "b"))


def rows(**cols):
    return table_from_python({k: np.array(v) for k, v in cols.items()})


def test_routing_follows_arcs_and_counts_rows_per_node():
    d = xor_diagram()
    Xb = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], dtype=bool)
    labels, counts, arcs = d.route(Xb)
    assert labels.tolist() == [0, 1, 1, 0]
    assert counts.tolist() == [4, 2, 2]
    assert arcs[0, True].tolist() == [False, False, True, True]


def test_predict_takes_raw_rows_and_matches_the_unfolded_tree():
    d = xor_diagram()
    table = rows(a=[0, 0, 1, 1], b=[0, 1, 0, 1])
    assert d.predict(table).tolist() == [0, 1, 1, 0]
    assert d.unfold().predict(table).tolist() == [0, 1, 1, 0]
    assert d.predict({"a": [1], "b": [0]}).tolist() == [1]


def test_counts_follow_the_vocabulary_of_the_language():
    d = xor_diagram()
    assert (d.n_nodes, d.n_leaves, d.depth) == (3, 4, 2)
    assert d.features_used() == {"a", "b"}
    assert sorted(len(p) for p, _ in d.paths()) == [2, 2, 2, 2]


def test_nodes_must_be_in_topological_order():
    with pytest.raises(ValueError, match="topological"):
        Diagram((A,), (0, 1), (DNode(0, 0, leaf_ref(1), 0),), 0)


def test_reduction_merges_equal_nodes_and_drops_arcs_no_training_row_takes():
    # n1 and n2 are the same test with the same successors: one node after reduction
    nodes = (DNode(0, 1, 2, 0), DNode(1, leaf_ref(0), leaf_ref(1), 1), DNode(1, leaf_ref(0), leaf_ref(1), 1))
    d = Diagram((A, B, C), (0, 1), nodes, 0)
    r = compact_diagram(d)
    assert r.n_nodes == 1 and r.features == (B,)
    # with training rows that never have a = 1, the root's yes arc is dropped
    Xb = np.array([[0, 0, 0], [0, 1, 0]], dtype=bool)
    r2 = compact_diagram(xor_diagram(), Xb[:, :2])
    assert r2.n_nodes == 1
    assert (r2.predict_binary(np.array([[0], [1]], dtype=bool)) == xor_diagram().predict_binary(Xb[:, :2])).all()


def test_compaction_never_changes_a_training_prediction():
    rng = np.random.default_rng(7)
    for _ in range(200):
        n_feat = 3
        nodes = []
        widths = [1, 2, 2]
        first = [0, 1, 3]
        for layer, w in enumerate(widths):
            for _k in range(w):
                nxt = list(range(first[layer + 1], first[layer + 1] + widths[layer + 1])) if layer + 1 < len(widths) else []
                choices = nxt + [leaf_ref(0), leaf_ref(1)]
                nodes.append(DNode(int(rng.integers(n_feat)), int(rng.choice(choices)), int(rng.choice(choices)), layer))
        d = Diagram((A, B, C), (0, 1), tuple(nodes), 0)
        Xb = rng.integers(0, 2, size=(int(rng.integers(1, 9)), n_feat)).astype(bool)
        r = compact_diagram(d, Xb)
        cols = [d.features.index(f) for f in r.features]
        assert (r.predict_binary(Xb[:, cols]) == d.predict_binary(Xb)).all()
        assert r.n_nodes <= d.n_nodes


def test_json_round_trip_and_load_classifier_dispatch(tmp_path):
    d = xor_diagram()
    path = tmp_path / "d.json"
    d.save(path)
    obj = json.loads(path.read_text())
    assert obj["type"] == "diagram" and obj["kind"] == "diagram"
    back = load_classifier(path)
    assert back == d
    tree = Tree((A,), (0, 1), Split(0, Leaf(1), Leaf(0)), ("a",))
    tree.save(tmp_path / "t.json")
    assert load_classifier(tmp_path / "t.json") == tree


def test_dot_and_svg_show_rows_per_node_and_arc():
    d = xor_diagram()
    table = rows(a=[0, 0, 1, 1, 1], b=[0, 1, 0, 1, 1])
    dot = to_dot(d, table)
    assert "5 samples" in dot and "yes (3)" in dot and "rank=same" in dot
    svg = to_svg(d, table)
    root = ET.fromstring(svg)  # well-formed XML
    assert root.tag.endswith("svg")
    assert "5 samples" in svg
    tree = Tree((A,), ("no", "yes"), Split(0, Leaf(1), Leaf(0)), ("a",))
    assert "3 samples" in to_svg(tree, table) and "yes (3)" in to_dot(tree, table)
    ET.fromstring(to_svg(tree))


def test_a_one_class_diagram_is_a_leaf():
    d = Diagram((), ("x", "y"), (), leaf_ref(1))
    assert d.predict({"a": [0, 1]}).tolist() == ["y", "y"]
    assert (d.n_nodes, d.n_leaves, d.depth) == (0, 1, 0)
    assert d.to_text() == "predict y"
    ET.fromstring(to_svg(d))

