"""Pictures that explain (issue 28 item 5): with rows, every node and leaf shows its rows
per class, leaves are coloured by class and shaded by purity, every box is as wide as
its text — in SVG, DOT and text alike, and in the notebook repr of a fitted estimator."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import odt
from odt.cli import main
from odt.compiler.classifiers.render import PAD_X, text_width, to_dot, to_svg, to_text
from odt.compiler.data import read_csv

ROOT = Path(__file__).resolve().parents[2]
IRIS = ROOT / "examples" / "data" / "iris.csv"
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def tree():
    return odt.compile(f'data "{IRIS}" {{ target class }}\nmodel tree(depth <= 3)\nminimize errors').solve().classifier


def _boxes_and_texts(svg: str):
    root = ET.fromstring(svg)
    rects = [tuple(float(r.get(k)) for k in ("x", "y", "width", "height")) for r in root.iter(SVG + "rect")]
    texts = [(float(t.get("x")), float(t.get("y")), t.text or "") for t in root.iter(SVG + "text")]
    return root, rects, texts


def test_a_depth_three_tree_with_data_shows_counts_per_class_and_keeps_its_text_in_its_boxes(tree):
    table = read_csv(IRIS)
    svg = to_svg(tree, table)
    root, rects, texts = _boxes_and_texts(svg)
    assert tree.depth == 3 and len(rects) == tree.n_nodes + tree.n_leaves
    assert "150 samples" in svg and "value = [50, 50, 50]" in svg  # the root: rows per class
    values = [t for _, _, t in texts if t.startswith("value = [")]
    assert len(values) == len(rects)  # every node and every leaf
    inside = 0
    for x, y, text in texts:
        holders = [r for r in rects if r[0] <= x <= r[0] + r[2] and r[1] <= y <= r[1] + r[3]]
        if not holders:
            continue  # an arc's label
        (rx, _, rw, _), = holders
        half = text_width(text) / 2  # centred on x
        assert rx + PAD_X / 2 <= x - half and x + half <= rx + rw - PAD_X / 2, text
        inside += 1
    assert inside == 3 * len(rects)  # name, samples, value in every box


def test_text_width_is_helveticas():
    assert text_width("M") == pytest.approx(833 * 12 / 1000)
    assert text_width("compactness error <= 0.01881") + 2 * PAD_X > 150  # wider than the old fixed 150 px box


def test_leaves_are_filled_with_their_class_colour_the_stronger_the_purer(tree):
    table = read_csv(IRIS)
    root, _, _ = _boxes_and_texts(to_svg(tree, table))
    leaves = [r for r in root.iter(SVG + "rect") if r.get("rx") == "8"]
    assert len(leaves) == tree.n_leaves
    fills = [r.get("fill") for r in leaves]
    assert "#e58139" in fills  # the pure setosa leaf: its class colour at full strength
    assert len(set(fills)) > 3  # impure leaves lighter, other classes other hues
    pure = [int(c[k:k + 2], 16) for c in ["#e58139"] for k in (1, 3, 5)]
    assert min(pure) < 100


def test_dot_and_text_show_the_same_counts(tree):
    table = read_csv(IRIS)
    dot = to_dot(tree, table)
    assert "value = [50, 50, 50]" in dot and 'fillcolor="#e58139"' in dot
    text = to_text(tree, table)
    assert text.splitlines()[0].endswith("(150 samples, value = [50, 50, 50])")
    assert all("samples" in line or "sample," in line for line in text.splitlines() if line.strip() != "else:")


def test_render_text_with_data_counts_rows_as_the_svg_does(tmp_path, capsys, tree):
    model = tmp_path / "m.json"
    tree.save(model)
    assert main(["render", str(model), "--format", "text", "--data", str(IRIS)]) == 0
    out = capsys.readouterr().out
    assert "(150 samples, value = [50, 50, 50])" in out  # was: the counts ignored
    df = pd.read_csv(IRIS).rename(columns={"class": "species"})
    df.to_csv(tmp_path / "renamed.csv", index=False)
    assert main(["render", str(model), "--format", "svg", "--data", str(tmp_path / "renamed.csv"),
                 "--target", "species"]) == 0
    assert "value = [50, 50, 50]" in capsys.readouterr().out
    assert main(["render", str(model), "--data", str(tmp_path / "renamed.csv")]) == 0  # label column unknown
    out = capsys.readouterr().out
    assert "150 samples" in out and "value" not in out  # rows only, no guessed classes


def test_a_diagram_draws_one_box_per_class_with_its_rows():
    res = odt.compile(f'data "{IRIS}" {{ target class }}\nmodel diagram(widths = [1, 2])\nminimize errors').solve()
    svg = to_svg(res.classifier, read_csv(IRIS))
    assert svg.count("<rect") == res.classifier.n_nodes + len({t for t in res.classifier.classes})
    assert "value = [0, 50, 50]" in svg


def test_a_fitted_estimator_draws_its_training_counts():
    from odt.sklearn import ODTClassifier

    df = pd.read_csv(IRIS)
    est = ODTClassifier(max_depth=2).fit(df.drop(columns="class"), df["class"])
    svg = est._repr_svg_()
    assert "150 samples" in svg and "value = [50, 50, 50]" in svg  # was: no counts although it has them
    assert est._repr_mimebundle_()["image/svg+xml"] == svg
    np.testing.assert_array_equal(est.node_counts_[0], [50, 50, 50])
    assert re.search(r'fill="#e58139"', svg)
