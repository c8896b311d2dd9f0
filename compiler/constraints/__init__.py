"""Side constraints, one module per family (``registry.FAMILIES``), each written once
against the skeleton interface and re-checked on decoded classifiers by the same object."""
from .base import Family, LowerContext, SearchParts
from .registry import FAMILIES, family_of, is_structural, mentioned_columns, needs_structure, restrict_features
from .view import ClassifierView, ConstraintCheck

__all__ = ["FAMILIES", "ClassifierView", "ConstraintCheck", "Family", "LowerContext", "SearchParts", "family_of", "is_structural",
           "mentioned_columns", "needs_structure", "restrict_features"]
