"""The family registry: every constraint that is not a plain relation over quantities is
recognised by its shape once, by exactly one family, which names its support-table rows,
lowers it, re-checks it and (where dp takes it) writes it into dp's search IR.

Specification: over a corpus of programs using every constraint form of the language (the
examples and the support table's programs), each per-node / per-leaf / per-path /
structural constraint is claimed by exactly one family of ``registry.FAMILIES``, every
family claims some constraint, and the checker's vocabulary inside ``every <scope>:`` is
what the families measure there — a quantity named as written (``accuracy`` is not the
``errors`` it stands for) outside it is a type error.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

import odt
from odt.compiler.checked import LinearConstraint
from odt.compiler.constraints.registry import FAMILIES, scoped_quantities
from odt.compiler.errors import OdtTypeError

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from test_support import DATA, HEAD, PROGRAMS  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def _corpus() -> list:
    out = []
    for text, _ in PROGRAMS:
        out.extend(odt.compile(HEAD + text, data=DATA).checked.constraints)
    for path in sorted(EXAMPLES.glob("*.odt")):
        out.extend(odt.compile_file(path).checked.constraints)
    return out


CORPUS = _corpus()


def test_each_constraint_beyond_a_relation_is_claimed_by_exactly_one_family():
    for c in CORPUS:
        claimers = [type(f).__name__ for f in FAMILIES if f.claims(c)]
        if isinstance(c, LinearConstraint) and c.scope is None and not claimers:
            continue  # a relation over quantities: the quantities name its rows
        assert len(claimers) == 1, (c.span.quote(), claimers)


def test_every_family_claims_some_constraint_of_the_corpus():
    assert {type(f).__name__ for f in FAMILIES} == {type(f).__name__ for f in FAMILIES for c in CORPUS
                                                    if f.claims(c)}


def test_the_vocabulary_of_each_scope_is_what_the_families_measure_there():
    assert "samples" in scoped_quantities("leaf") and "samples" in scoped_quantities("node")
    assert scoped_quantities("path") == {"cost"}


@pytest.mark.parametrize("body, said", [
    ("every leaf: accuracy >= 0.5", "'accuracy' has no meaning per leaf"),
    ("every node: cost <= 3 with cost { a: 1 }", "'cost' has no meaning per node"),
    ("every path: samples >= 2", "'samples' has no meaning per path"),
])
def test_a_quantity_a_scope_does_not_measure_is_a_type_error_named_as_written(body, said):
    with pytest.raises(OdtTypeError, match=said):
        odt.compile(HEAD + "model tree(depth <= 2)\nsubject to { " + body + " }", data=DATA)
