"""In Jupyter: a classifier shows its picture (``_repr_svg_``), a solve result a short HTML
summary with the picture (``_repr_html_``), a fitted estimator its picture and status."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import odt

IRIS = Path(__file__).resolve().parents[2] / "examples" / "data" / "iris.csv"
PROGRAM = f'data "{IRIS}" {{ target class }}\nmodel tree(depth <= 2)\nminimize errors\nsubject to {{ features_used <= 2 }}'


def _solve(text: str = PROGRAM):
    return odt.compile(text).solve()


def test_a_tree_draws_itself_as_svg_with_its_splits_and_classes():
    tree = _solve().classifier
    root = ET.fromstring(tree._repr_svg_())  # well-formed XML
    assert root.tag.endswith("svg")
    texts = {t.text for t in root.iter() if t.tag.endswith("text")}
    splits = {tree.features[n.feature].name for n, _ in tree.walk() if hasattr(n, "feature")}
    labels = {str(tree.classes[n.label]) for n, _ in tree.walk() if hasattr(n, "label")}
    assert splits and splits <= texts and labels <= texts and {"yes", "no"} <= texts


def test_a_diagram_draws_itself_too():
    res = _solve(f'data "{IRIS}" {{ target class }}\nmodel diagram(widths = [1, 2])\nminimize errors')
    assert ET.fromstring(res.classifier._repr_svg_()).tag.endswith("svg")


def test_a_result_summarises_status_gap_verification_constraints_and_shows_the_picture():
    res = _solve()
    page = res._repr_html_()
    assert "<th style='text-align:left'>status</th><td style='text-align:left'>optimal</td>" in page
    assert "<th style='text-align:left'>gap</th><td style='text-align:left'>0.00%</td>" in page
    assert "<th style='text-align:left'>verified</th><td style='text-align:left'>yes</td>" in page
    assert "constraint features_used &lt;= 2" in page and ": holds" in page
    assert page.count("<svg") == 1
    ET.fromstring(page)  # one well-formed fragment


def test_a_fitted_estimator_shows_its_classifier_and_an_unfitted_one_its_parameters():
    import pandas as pd

    from odt.sklearn import ODTClassifier

    df = pd.read_csv(IRIS)
    est = ODTClassifier(max_depth=2)
    assert est._repr_svg_() is None
    est.fit(df.drop(columns="class"), df["class"])
    assert est._repr_svg_() != est.classifier_._repr_svg_()  # the same tree, with its training counts
    assert "value = [50, 50, 50]" in est._repr_svg_() and "value" not in est.classifier_._repr_svg_()
    bundle = est._repr_mimebundle_()
    assert "status <b>optimal</b>" in bundle["text/html"] and bundle["image/svg+xml"].startswith("<svg")
