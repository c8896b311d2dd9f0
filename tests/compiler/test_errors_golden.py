"""Golden error messages: each bad program in tests/fixtures/errors gives exactly the text
in its ``.err`` file, exit code 1 and no traceback. Regenerate with ODT_UPDATE_GOLDEN=1
after reviewing the new text."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from odt.cli import main

ERRORS = Path(__file__).resolve().parents[1] / "fixtures" / "errors"
CASES = sorted(p.stem for p in ERRORS.glob("*.odt"))


def test_there_are_at_least_fifteen_distinct_messages():
    assert len(CASES) >= 15
    texts = {(ERRORS / f"{c}.err").read_text() for c in CASES if (ERRORS / f"{c}.err").exists()}
    assert len(texts) == len(CASES)


@pytest.mark.parametrize("case", CASES)
def test_golden_error(case, capsys, monkeypatch):
    monkeypatch.chdir(ERRORS)
    code = main(["check", f"{case}.odt"])
    err = capsys.readouterr().err
    assert code == 1
    assert "Traceback" not in err
    golden = ERRORS / f"{case}.err"
    if os.environ.get("ODT_UPDATE_GOLDEN"):
        golden.write_text(err)
    assert err == golden.read_text()
