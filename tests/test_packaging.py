"""Packaging guards: every package directory is listed, nothing generic lands at the top
of site-packages, and every solver package imports in one process."""
from __future__ import annotations

import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_directory_is_listed_in_pyproject():
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    mapping = conf["package-dir"]
    listed = set(conf["packages"])
    for name, folder in mapping.items():
        assert name in listed
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            dotted = ".".join((name, *rel.parts)) if rel.parts else name
            assert dotted in listed, f"{dotted} ({init.parent}) is missing from [tool.setuptools] packages"


def test_generic_names_are_not_importable_at_top_level():
    import odt.compiler  # noqa: F401

    assert "compiler" not in sys.modules and "backends" not in sys.modules and "grammar" not in sys.modules


def test_all_solver_packages_import_in_one_process():
    import cpmpy  # noqa: F401
    import highspy  # noqa: F401
    import lark  # noqa: F401
    import numpy  # noqa: F401
    import pyomo.environ  # noqa: F401
    import pysat.examples.rc2  # noqa: F401

    import odt

    assert callable(odt.compile)
