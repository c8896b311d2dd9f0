"""The examples in docstrings are specifications too: run them."""
from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["odt.compiler.source", "odt.compiler.errors", "odt.compiler.parse", "odt.compiler.encode.pb",
           "odt.compiler.encode.objective", "odt.compiler.polarity", "odt.backends.dp.streed.binarize",
           "odt.backends.dp.streed.root", "odt.outputs", "odt.compiler.classifiers.schema",
           "odt.compiler.classifiers.common", "odt.compiler.ranges", "odt.compiler.search",
           "odt.compiler.classifiers.layout", "odt.compiler.classifiers.render", "odt.compiler.data", "odt.compiler.table", "odt.sweeps", "odt.compiler.support"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    failures, tried = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert tried > 0 and failures == 0


def test_first_level_bound_is_exact_on_integers():
    from fractions import Fraction

    from odt.compiler import ir
    from odt.compiler.encode.objective import combine

    one = combine([ir.Objective(((Fraction(1), 1), (Fraction(1), 2)), Fraction(0))])
    assert [one.first_level_bound(v) for v in (0, 1, 2, 1.9999999, 2.0000001)] == [0, 1, 2, 2, 2]
    two = combine([ir.Objective(((Fraction(1), 1),), Fraction(0)), ir.Objective(((Fraction(1), 2),), Fraction(0))])
    # level 0 counts twice its value (multiplier 2) plus level 1 (0 or 1)
    assert [two.first_level_bound(v) for v in (0, 1, 2, 3)] == [0, 0, 1, 1]
