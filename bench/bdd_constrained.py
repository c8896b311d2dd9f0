"""BDD programs that dp does not take, with and without dp's bounds (issue 16: "hand its
incumbent and bound to maxsat/cp").

For each dataset of $ODT_SHARED/datasets/binary (else ../shared next to the repository),
the program

    group g = <first feature> == 1
    model bdd(depth = H)  minimize errors  subject to { accuracy(g) >= s }

goes to ``maxsat`` and ``cp`` (dp does not take group constraints), once with
``warm_start=False`` (the solver alone) and once as ``odtc solve`` runs it (dp's optimal
BDD of the relaxation first: lower bound, cutoff, or the answer). Two shares s: the group
accuracy of the relaxation's optimal BDD (the constraint holds for it: proved without
search) and halfway from there to 1 (a search is needed). Prints status, objective, bound
and seconds side by side.

Run: python bench/bdd_constrained.py [--depth 3] [--limit 20] [--datasets cancer,hepatitis]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

DATA = Path(os.environ.get("ODT_SHARED") or Path(__file__).resolve().parents[2] / "shared") / "datasets" / "binary"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--depth", type=int, default=3)
    ap.add_argument("--limit", type=float, default=20.0)
    ap.add_argument("--datasets", default="cancer,hepatitis,spect-heart,heart-cleveland,cleve,tic-tac-toe")
    args = ap.parse_args(argv)
    if not DATA.is_dir():
        print(f"{DATA} is absent: nothing to measure (the shared binary datasets; set ODT_SHARED)")
        return 0
    import numpy as np
    import pandas as pd

    import odt
    from odt.compiler.errors import InfeasibleProgram

    print("| dataset | s | backend | alone: status, errors, bound, s | with dp's bounds: status, errors, bound, s |")
    print("|---|---:|---|---|---|")
    for name in args.datasets.split(","):
        df = pd.read_csv(DATA / f"{name}.csv")
        first = df.columns[0]
        relaxed = odt.compile(f"model bdd(depth = {args.depth})\nminimize errors", data=df).solve(backend="dp")
        member = df[first].to_numpy() == 1
        pred = np.asarray(relaxed.classifier.predict(df.drop(columns=["class"])))
        own = float((pred[member] == df["class"].to_numpy()[member]).mean())
        own = np.floor(own * 1e4) / 1e4  # written with 4 decimals: never above the BDD's own
        for share in (own, np.floor((own + 1) / 2 * 1e4) / 1e4):
            text = (f"group g = `{first}` == 1\nmodel bdd(depth = {args.depth})\nminimize errors\n"
                    f"subject to {{ accuracy(g) >= {share:.4f} }}")
            program = odt.compile(text, data=df)
            for backend in ("maxsat", "cp"):
                cells = []
                for warm in (False, True):
                    started = time.perf_counter()
                    try:
                        res = program.solve(backend=backend, time_limit=args.limit, warm_start=warm)
                        bound = "-" if res.bound is None else f"{res.bound:g}"
                        cells.append(f"{res.status}, {res.objective if res.objective is not None else '-'}, {bound}, "
                                     f"{time.perf_counter() - started:.2f}")
                    except InfeasibleProgram:
                        cells.append(f"infeasible, {time.perf_counter() - started:.2f}")
                print(f"| {name} | {share:.3f} | {backend} | {cells[0]} | {cells[1]} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
