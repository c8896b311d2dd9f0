"""Start-up guards (issue 15): the solver libraries and numba load only when a backend that
needs them runs. Each case runs in a fresh interpreter and reads ``sys.modules`` there."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("numba", "llvmlite", "cpmpy", "ortools", "pyomo", "pysat", "highspy", "sklearn", "dask", "distributed",
         "matplotlib", "pandas")


def _loaded_after(code: str) -> list[str]:
    """Top-level packages of HEAVY that are in ``sys.modules`` after running ``code``."""
    probe = (
        "import sys, json\n" + code + "\n"
        f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({list(HEAVY)!r}))))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_odt_loads_no_solver_library():
    assert _loaded_after("import odt") == []


def test_the_facade_and_every_backend_class_load_no_solver_library():
    code = "import odt, odt.program, odt.backends\nodt.compile\nodt.Tree\nodt.backends.capabilities()"
    assert _loaded_after(code) == []


def test_odtc_help_and_check_load_no_solver_library():
    code = (
        "from odt.cli import main\n"
        "for argv in (['--help'], ['check', 'examples/quickstart.odt']):\n"
        "    try:\n"
        "        main(argv)\n"
        "    except SystemExit:\n"
        "        pass\n"
    )
    assert _loaded_after(code) == []


def test_odtc_help_does_not_even_load_numpy():
    code = "from odt.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass\nimport sys\nassert 'numpy' not in sys.modules"
    assert _loaded_after(code) == []


@pytest.mark.parametrize("backend, needs", [("dp", "numba")])
def test_a_backend_loads_its_library_when_it_runs(backend, needs):
    """The other side of the guard: the probe sees a library once its backend solves
    (maxsat is not probed: on this program the dp warm start already closes the gap)."""
    code = (
        "import odt\n"
        "p = odt.compile('model tree(depth <= 2)\\nminimize errors',\n"
        "                data={'a': [0, 1, 2, 3, 4, 5], 'b': [1, 0, 1, 0, 1, 1], 'class': [0, 0, 1, 1, 0, 1]})\n"
        f"r = p.solve(backend={backend!r})\n"
        "assert r.status == 'optimal', r.status\n"
    )
    assert needs in _loaded_after(code)
