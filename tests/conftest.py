"""Shared fixtures: paths to the repo's examples and test data."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

# The tests run the compiled kernels where numba is installed, compiling them in the process
# on first use (numba's own behaviour), rather than on numpy while a background warm-up
# compiles them: which path a test takes must not depend on the state of numba's cache.
# tests/backends/dp/test_jit.py runs the default mode (auto) in its own processes.
os.environ.setdefault("ODT_KERNELS", "compile")

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
FIXTURES = ROOT / "tests" / "fixtures"
SHARED = ROOT.parent / "shared" / "datasets"


@pytest.fixture
def examples_dir() -> Path:
    return EXAMPLES


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES
