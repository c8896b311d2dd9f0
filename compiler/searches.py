"""The search IRs of one checked program, each built at most once.

Input: a ``CheckedProgram``. Output, on first use and then kept: its ``TreeSearch``
(``lower_search``), the ``TreeSearch`` of its relaxation (``lower_search.relaxation``) and
its ``BddSearch`` (``lower_search_bdd``). A program backend (dp) picks which one it
searches; the greedy start and the warm start read the same objects, so a solve reads its
search lowering once. Whether dp takes the program at all is the support table's
decision, made before any of these is built.
"""
from __future__ import annotations

from .checked import CheckedProgram
from .lower_search import lower_search, relaxation
from .lower_search_bdd import lower_search_bdd
from .search import TreeSearch
from .search_bdd import BddSearch


class Searches:
    """The lazily built, kept search IRs of ``program`` (the search matrices are never
    written to by their readers)."""

    def __init__(self, program: CheckedProgram) -> None:
        self.program = program
        self._tree: TreeSearch | None = None
        self._relaxation: TreeSearch | None = None
        self._bdd: BddSearch | None = None

    def tree(self) -> TreeSearch:
        """The tree program as dp's engines take it (``lower_search``)."""
        if self._tree is None:
            self._tree = lower_search(self.program)
        return self._tree

    def relaxation(self) -> TreeSearch:
        """The depth-limited error minimisation of the tree program (B4)."""
        if self._relaxation is None:
            self._relaxation = relaxation(self.program)
        return self._relaxation

    def bdd(self) -> BddSearch:
        """The ordered-BDD program as dp's subset enumeration takes it (``lower_search_bdd``)."""
        if self._bdd is None:
            self._bdd = lower_search_bdd(self.program)
        return self._bdd
