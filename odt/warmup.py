"""Compile the dp engines' numba kernels into numba's on-disk cache before they are needed.

    odtc warmup [GROUP ...] [--force]        (or: python -m odt.warmup ...)

Input: kernel groups (``streed``, ``contree``, ``contree-float``; default: the first two,
what plain programs use). Output: each group compiled by a few tiny solves that take every
compiled path the group's programs take (so numba caches exactly the specialisations real
solves call), and its stamp written (``backends/dp/jit.py``): later processes load the
machine code instead of compiling it. For CI and container images; a user needs nothing
of this, since a solve that finds its group cold starts ``background`` by itself.

Invariants: exercises solve in memory (no file is read); a group whose stamp is current
is skipped (``--force``: compiled again); one warm-up per group at a time (the group's
lock; ``odtc warmup`` waits for a warm-up another process runs and then reads its stamp).
"""
from __future__ import annotations

import os
import sys
import threading
import time
import traceback
from typing import Any, Iterable

import numpy as np

from odt.backends.dp import jit

#: the groups ``odtc warmup`` compiles when none is named (fractional row weights are rare)
DEFAULT_GROUPS = ("streed", "contree")


def _binary(seed: int, n: int, m: int, classes: int, duplicates: bool, weights: str = "") -> dict[str, list]:
    """0/1 columns f0.., a class column (``duplicates``: every row twice) and with
    ``weights`` (``int`` or ``float``) a column w of row weights."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, m))
    y = (X[:, 0] ^ X[:, 1]) | (X[:, 2] & rng.integers(0, 2, size=n))
    y = (y + X[:, 3] * (classes - 1)) % classes
    if duplicates:
        X, y = np.vstack([X, X]), np.concatenate([y, y])
    data: dict[str, list] = {f"f{j}": X[:, j].tolist() for j in range(m)}
    data["class"] = y.tolist()
    if weights:
        w = rng.integers(1, 4, size=len(y)) if weights == "int" else (rng.random(len(y)) + 0.25).round(2)
        data["w"] = w.tolist()
    return data


def _numeric(seed: int, n: int, m: int, classes: int, weights: bool) -> dict[str, list]:
    """Continuous columns x0.. (every value distinct), a class column, and with
    ``weights`` a column w of fractional row weights."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, m)).round(3)
    y = ((X[:, 0] > 0).astype(int) + (X[:, 1] * X[:, 2] > 0.3)) % classes
    data: dict[str, list] = {f"x{j}": X[:, j].tolist() for j in range(m)}
    data["class"] = y.tolist()
    if weights:
        data["w"] = (rng.random(n) + 0.25).round(2).tolist()
    return data


def _regression(seed: int, n: int, m: int) -> dict[str, list]:
    """0/1 columns f0.. and a numeric target y."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, m))
    y = (X[:, 0] * 2.0 + X[:, 1] * X[:, 2] + rng.normal(size=n)).round(3)
    data: dict[str, list] = {f"f{j}": X[:, j].tolist() for j in range(m)}
    data["y"] = y.tolist()
    return data


def exercises(group: str) -> list[tuple[str, dict[str, list]]]:
    """(program text, data) of the tiny solves that compile ``group``: every data shape and
    construct that takes a different compiled kernel (two or three classes, depth two to
    four, a minimum leaf size, a node budget, cost complexity, rows of weight above one)."""
    if group == "streed":
        shapes = [("", _binary(1, 60, 6, 2, False)), ("", _binary(2, 40, 6, 3, True)),
                  ("\nweight w", _binary(5, 50, 6, 2, False, "int")), ("\nweight w", _binary(6, 50, 6, 3, False, "float"))]
        models = ["model tree(depth <= 2)\nminimize errors",
                  "model tree(depth <= 3)\nminimize errors",
                  "model tree(depth <= 4)\nminimize errors",
                  "model tree(depth <= 3)\nminimize errors\nsubject to { every leaf: samples >= 3 }",
                  "model tree(depth <= 3, nodes <= 5)\nminimize errors",
                  "model tree(depth <= 3)\nminimize errors + 1/2 * nodes"]
        programs = [("data { target class" + w + " }\n" + m, d) for w, d in shapes for m in models]
        # regression's squared-error kernel (``kernels_sq``): directly, by difference, with branch masks
        reg = ["model tree(depth <= 2)\nminimize squared_error",
               "model tree(depth <= 3)\nminimize squared_error",
               "model tree(depth <= 3)\nminimize squared_error + 1/2 * nodes",
               "model tree(depth <= 3)\nminimize squared_error\nsubject to { every leaf: samples >= 3 }"]
        return programs + [("data { target y }\n" + m, _regression(7, 60, 6)) for m in reg]
    if group in ("contree", "contree-float"):
        weighted = group == "contree-float"
        head = "data { target class" + ("\nweight w" if weighted else "") + " }\n"
        # a minimum leaf size at depth three (the compiled root, kernels_root_ml) and four
        # (the Python root search over its kernels, as larger data at depth three takes)
        models = ["model tree(depth <= 2)\nminimize errors",
                  "model tree(depth <= 3)\nminimize errors",
                  "model tree(depth <= 3)\nminimize errors\nsubject to { every leaf: samples >= 3 }",
                  "model tree(depth <= 4)\nminimize errors\nsubject to { every leaf: samples >= 3 }"]
        return [(head + m, _numeric(seed, 80, 3, k, weighted)) for seed, k in ((3, 2), (4, 3)) for m in models]
    raise ValueError(f"unknown kernel group '{group}' (known: {', '.join(jit.GROUPS)})")


def compile_group(group: str) -> float:
    """Run the group's exercises with the kernels compiled in this process (numba writes
    them to its cache); seconds taken."""
    from odt.program import compile as compile_program

    saved = os.environ.get("ODT_KERNELS")
    os.environ["ODT_KERNELS"] = "compile"
    start = time.perf_counter()
    try:
        for text, data in exercises(group):
            res = compile_program(text, data=data).solve(backend="dp")
            if res.status != "optimal":
                raise RuntimeError(f"warm-up solve of {group} ended {res.status}:\n{text}")
    finally:
        if saved is None:
            del os.environ["ODT_KERNELS"]
        else:
            os.environ["ODT_KERNELS"] = saved
    return time.perf_counter() - start


def numba_cached(group: str) -> bool:
    """Whether numba could keep the group's compiled kernels on disk (a cache folder it can
    write): every compiled dispatcher of the group's kernel modules has a real cache."""
    modules = {"streed": ["odt.backends.dp.streed.kernels", "odt.backends.dp.streed.kernels_sq"],
               "contree": ["odt.backends.dp.contree.kernels", "odt.backends.dp.contree.kernels_answer",
                           "odt.backends.dp.contree.kernels_eval", "odt.backends.dp.contree.kernels_minleaf",
                           "odt.backends.dp.contree.kernels_root", "odt.backends.dp.contree.kernels_root_ml"]}
    for name in modules["streed" if group == "streed" else "contree"]:
        mod = sys.modules.get(name)
        for obj in vars(mod).values() if mod is not None else ():
            if getattr(obj, "signatures", None) and type(getattr(obj, "_cache", None)).__name__ == "NullCache":
                return False
    return True


def _compile_and_stamp(group: str, folder: Any) -> tuple[str, float]:
    try:
        jit.forget_stale(group)
        seconds = compile_group(group)
    except Exception:
        traceback.print_exc()
        jit.write_stamp(folder, group, "failed")
        return "failed", 0.0
    status = "ok" if numba_cached(group) else "nocache"
    jit.write_stamp(folder, group, status, seconds=round(seconds, 2))
    return status, seconds


def background(group: str, lock_fd: int) -> None:
    """The detached warm-up a cold solve starts (``jit._start``): holds the group's lock
    (``lock_fd``, inherited), compiles (at ``jit.NICE``, set by its start), writes the stamp, and ends
    within ``jit.WARMUP_SECONDS`` whatever happens."""
    watchdog = threading.Timer(jit.WARMUP_SECONDS, os._exit, (3,))
    watchdog.daemon = True
    watchdog.start()
    folder = jit.writable_dir()
    if folder is None:
        os._exit(1)
    status, seconds = _compile_and_stamp(group, folder)
    print(f"odt warm-up: {group} {status} in {seconds:.1f} s (pid {os.getpid()})", flush=True)
    os.close(lock_fd)
    os._exit(0 if status != "failed" else 1)


def warm(groups: Iterable[str], force: bool = False, out=sys.stdout) -> dict[str, str]:
    """Compile ``groups`` here (``odtc warmup``); group -> its stamp status."""
    groups = list(groups)
    unknown = [g for g in groups if g not in jit.GROUPS]
    if unknown:
        raise ValueError(f"unknown kernel group '{unknown[0]}' (known: {', '.join(jit.GROUPS)})")
    folder = jit.writable_dir()
    result = {}
    for group in groups:
        if not force and jit.stamp_status(group) == "ok":
            print(f"{group}: compiled already", file=out)
            result[group] = "ok"
            continue
        if folder is None:  # nowhere to keep a stamp: numba's cache alone
            jit.forget_stale(group)
            seconds = compile_group(group)
            print(f"{group}: compiled in {seconds:.1f} s (no writable folder for its stamp)", file=out)
            result[group] = "ok" if numba_cached(group) else "nocache"
            continue
        fd = jit.lock(folder, group, wait=True)
        try:
            if not force and jit.stamp_status(group) == "ok":  # another process compiled it meanwhile
                print(f"{group}: compiled already", file=out)
                result[group] = "ok"
                continue
            status, seconds = _compile_and_stamp(group, folder)
            print(f"{group}: {status} in {seconds:.1f} s", file=out)
            result[group] = status
        finally:
            if fd is not None:
                os.close(fd)
    return result


def run(groups: list[str], force: bool = False) -> int:
    """``odtc warmup``: exit code 0 when every group is compiled (or numba is missing)."""
    if not jit.numba_installed():
        print("numba is not installed: the dp engines run on numpy, nothing to compile")
        return 0
    try:
        statuses = warm(groups or DEFAULT_GROUPS, force=force)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0 if all(s in ("ok", "nocache") for s in statuses.values()) else 1


if __name__ == "__main__":  # python -m odt.warmup [GROUP ...] [--force]: the same as odtc warmup
    sys.exit(run([a for a in sys.argv[1:] if a != "--force"], force="--force" in sys.argv[1:]))
