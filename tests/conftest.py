"""Shared fixtures: paths to the repo's examples and test data."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

# The tests run the compiled kernels where numba is installed, compiling them in the process
# on first use (numba's own behaviour), rather than on numpy while a background warm-up
# compiles them: which path a test takes must not depend on the state of numba's cache.
# tests/backends/dp/test_jit.py runs the default mode (auto) in its own processes.
os.environ.setdefault("ODT_KERNELS", "compile")


def pytest_configure(config: pytest.Config) -> None:
    """Compile every kernel group once before the tests (``odtc warmup``; a no-op when their
    stamps are current), so that no test's time limit pays for numba's compiler: in the
    controller only (xdist workers start after it)."""
    if hasattr(config, "workerinput") or os.environ.get("ODT_KERNELS") == "numpy":
        return
    from odt.backends.dp import jit

    if jit.numba_installed():
        subprocess.run([sys.executable, "-m", "odt.warmup", *jit.GROUPS], check=False,
                       stdout=subprocess.DEVNULL)

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
