"""Accuracy with and without the constraints, for every constrained example.

Run from anywhere, no arguments:  python examples/compare.py

For each ``examples/*.odt`` with a ``subject to`` block, the program is solved twice: as
written, and with its constraints removed (same data, skeleton and objective; the backend
chosen by ``auto``, the program's solve directive dropped with them). The unconstrained
tree is then re-evaluated against the constrained program, which gives each constraint's
value *before* it was imposed. Prints a markdown table (pasted into examples/README.md);
a regression tree's column shows its training loss instead of an accuracy.
"""
from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import odt
from odt.compiler.checked import SolveRequest
from odt.compiler.evaluate import ConstraintCheck, evaluate
from odt.compiler.regression import program_loss
from odt.program import Program

EXAMPLES = Path(__file__).resolve().parent
TIME_LIMIT = 120.0


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:.3f}"


def _check(c: ConstraintCheck) -> str:
    return f"{_num(c.value)} {c.op} {_num(c.bound)} {'(holds)' if c.holds else '(**violated**)'}"


def _accuracy(prog: Program, res) -> str:
    loss = program_loss(prog.checked)
    if loss is not None:  # a regression tree: its training loss, not an accuracy
        return f"{loss.replace('_', ' ')} {_num(res.train_errors)}"
    total = float(prog.dataset.row_weights().sum())
    errors = _num(res.train_errors)
    return f"{1 - res.train_errors / total:.2%} ({errors} error{'' if errors == '1' else 's'})"


def _own_checks(prog: Program, checks) -> list[ConstraintCheck]:
    """The checks of the program's `subject to` constraints (not the skeleton's limits)."""
    skeleton = prog.checked.skeleton
    skeleton_line = skeleton.span.line if getattr(skeleton, "span", None) is not None else None
    lines = {c.span.line for c in prog.checked.constraints if c.span is not None}
    return [c for c in checks if c.line in lines and not (
        c.line == skeleton_line and c.text.split()[0] in ("depth", "leaves", "nodes"))]


def compare(path: Path) -> list[str] | None:
    prog = odt.compile_file(path)
    if not prog.checked.constraints:
        return None
    with_c = prog.solve(time_limit=TIME_LIMIT)
    # without its constraints the program's own solve directive may no longer apply (a strategy
    # that needs `errors == 0`, as dt_depth_mouse.odt's): the program without either, as `auto` runs it
    free = Program(dataclasses.replace(prog.checked, constraints=(), solve=SolveRequest("auto", {}, None, None)))
    without = free.solve(backend="auto", time_limit=TIME_LIMIT)
    for label, res in (("with", with_c), ("without", without)):
        if res.status != "optimal" or not res.verified:
            print(f"warning: {path.name} {label} constraints: status {res.status}, verified {res.verified}",
                  file=sys.stderr)
    after = _own_checks(prog, with_c.evaluation.constraints)
    before = _own_checks(prog, evaluate(prog.checked, without.classifier).constraints)
    rows = []
    for i, (b, a) in enumerate(zip(before, after)):
        assert b.text == a.text
        first = i == 0
        rows.append("| " + " | ".join([
            f"`{path.name}`" if first else "",
            _accuracy(free, without) if first else "",
            _accuracy(prog, with_c) if first else "",
            f"`{a.text}`",
            _check(b),
            _check(a),
        ]) + " |")
    return rows


def main() -> None:
    print("| example | accuracy without | accuracy with | constraint | value without | value with |")
    print("|---|---|---|---|---|---|")
    for path in sorted(EXAMPLES.glob("*.odt")):
        rows = compare(path)
        if rows:
            print("\n".join(rows), flush=True)


if __name__ == "__main__":
    main()
