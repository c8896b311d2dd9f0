"""Loading a saved classifier of any type (tree, diagram, BDD)."""
from __future__ import annotations

import json
from pathlib import Path

from ..errors import OdtError
from .common import SCHEMA
from .diagram import Diagram
from .tree import Tree


def load_classifier(path: str | Path) -> Tree | Diagram:
    """Load a classifier (tree, diagram or BDD) saved with ``save`` / ``odtc solve -o``."""
    try:
        obj = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise OdtError(f"model file '{path}' not found") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise OdtError(f"cannot read model file '{path}': {exc}") from None
    if isinstance(obj, dict) and obj.get("schema") == SCHEMA and obj.get("type") == "diagram":
        return Diagram.from_json(obj)
    return Tree.from_json(obj)
