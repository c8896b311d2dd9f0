"""The dp family's ordered-BDD engine (issue 16): exact enumeration of feature subsets
for ``bdd(depth = H)`` programs (Hu, Huguet & Siala, IJCAI 2022).

``counts`` gives every subset's majority errors from pair-count matrices, ``size`` the
best labelling and ordering of one subset when sizes matter, ``search`` the bounded
enumeration (anytime), ``decode`` the classifier.
"""
from __future__ import annotations

from .decode import to_diagram
from .search import BddResult, optimal_bdd

__all__ = ["BddResult", "optimal_bdd", "to_diagram"]
