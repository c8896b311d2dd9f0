"""The deep search on one worker, two local workers and a two-worker Dask process cluster
(issue 27, item 2), side by side in one run.

``deep_tree(X, y, D, time_limit=L)`` in this process on ``processes=1``, ``processes=2``
(two forked workers sharing the incumbent) and ``scheduler=ADDRESS`` of a
``LocalCluster(n_workers=2, threads_per_worker=1, processes=True)`` started here (its
start is not timed; each solve sends the data to the workers, which is). Rounds are
interleaved (1, 2, cluster, 1, 2, cluster, ...) so that the load of a shared machine hits
all three alike. Prints every solve (seconds, errors, status) and per dataset the median
times and the speed-ups over one worker; the time to prove the optimum is what is
compared, so depth 4 (where the search finishes) is the default. With --write, appends
the table to bench/RESULTS.md.

    python bench/deep_workers.py [--datasets ionosphere,pima-indians-diabetes] [--depth 4]
                                 [--limit 120] [--rounds 2] [--no-cluster] [--write]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def _load(name: str) -> tuple[np.ndarray, np.ndarray]:
    base = Path(os.environ["ODT_SHARED"]) if os.environ.get("ODT_SHARED") else ROOT.parent / "shared"
    path = base / "datasets" / "continuous" / f"{name}.csv"
    if not path.exists():
        sys.exit(f"{path} is absent (the shared datasets; set ODT_SHARED)")
    raw = np.genfromtxt(path, delimiter=",", skip_header=1, dtype=str)
    _, y = np.unique(raw[:, -1], return_inverse=True)
    return raw[:, :-1].astype(float), y


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", default="ionosphere,pima-indians-diabetes")
    ap.add_argument("--depth", type=int, default=4)
    ap.add_argument("--limit", type=float, default=120.0)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--no-cluster", action="store_true")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()

    from odt.backends.dp.contree.deep import deep_tree

    cluster = client = None
    ways: list[tuple[str, dict]] = [("1 worker", {"processes": 1}), ("2 workers", {"processes": 2})]
    if not args.no_cluster:
        from dask.distributed import Client, LocalCluster

        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
        ways.append(("Dask, 2 processes", {"scheduler": cluster.scheduler_address}))
    warm_X, warm_y = _load("iris")
    for _, kw in ways:  # the kernels here and on the cluster's workers, untimed
        deep_tree(warm_X, warm_y, 3, time_limit=60, **kw)
    lines = ["| dataset | rows x cols | D | way | seconds (rounds) | median s | speed-up | errors | status |",
             "|---|---|---|---|---|---|---|---|---|"]
    try:
        for name in args.datasets.split(","):
            X, y = _load(name)
            times: dict[str, list[float]] = {w: [] for w, _ in ways}
            found: dict[str, tuple[float, str]] = {}
            for r in range(args.rounds):
                for way, kw in ways:
                    t = time.perf_counter()
                    res = deep_tree(X, y, args.depth, time_limit=args.limit, **kw)
                    s = time.perf_counter() - t
                    times[way].append(s)
                    found[way] = (res.cost, res.status)
                    print(f"{name} round {r + 1} {way}: {s:.2f} s, {res.cost:g} errors, {res.status}", flush=True)
            one = statistics.median(times["1 worker"])
            for way, _ in ways:
                med = statistics.median(times[way])
                lines.append(f"| {name} | {X.shape[0]} x {X.shape[1]} | {args.depth} | {way} | "
                             + ", ".join(f"{t:.2f}" for t in times[way]) + f" | {med:.2f} | {one / med:.2f}x | "
                             f"{found[way][0]:g} | {found[way][1]} |")
    finally:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()
    table = "\n".join(lines)
    print(table)
    if args.write:
        load = os.getloadavg()
        with open(ROOT / "bench" / "RESULTS.md", "a", encoding="utf-8") as fh:
            fh.write(f"\n## The deep search on 1 and 2 local workers and a 2-process Dask cluster (issue 27, "
                     f"bench/deep_workers.py --depth {args.depth} --limit {args.limit:g} --rounds {args.rounds}, "
                     f"{time.strftime('%Y-%m-%d %H:%M')})\n\nLoad average at the end {load[0]:.2f} / {load[1]:.2f} "
                     f"on the 2 shared cores.\n\n{table}\n")


if __name__ == "__main__":
    main()
