"""The classifier family (E1, E3): trees, decision diagrams and ordered BDDs as plain
data that predict raw rows, save and load as JSON; rendering depends on them, never the
reverse; ``tree_build`` and ``bdd_build`` are the constructions the decoders share."""
from __future__ import annotations

from typing import Union

from .diagram import Diagram, DNode
from .io import load_classifier
from .tree import Leaf, Split, Tree, TreeNode

Classifier = Union[Tree, Diagram]

__all__ = ["Classifier", "DNode", "Diagram", "Leaf", "Split", "Tree", "TreeNode", "load_classifier"]
