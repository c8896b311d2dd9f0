"""odt: a declarative language for optimal, interpretable classifiers.

The public façade: ``odt.compile(text, data=...)`` returns a ``Program`` that you
``.solve(backend=..., time_limit=...)``; the ``SolveResult`` carries the verified
classifier. See README.md for a quick start.
"""
from __future__ import annotations

from odt.compiler.errors import OdtError
from odt.program import Program, SolveResult, compile, compile_file
from odt.compiler.classifiers import Tree, load_classifier

__all__ = ["OdtError", "Program", "SolveResult", "compile", "compile_file", "Tree", "load_classifier"]
