"""The examples in docstrings are specifications too: run them."""
from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["odt.compiler.source", "odt.compiler.errors", "odt.compiler.parse", "odt.compiler.encode.pb",
           "odt.compiler.encode.objective"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    failures, tried = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert tried > 0 and failures == 0
