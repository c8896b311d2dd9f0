"""A dp search's forked workers belong to their parent (``backends/dp/workers.py``).

``PR_SET_PDEATHSIG`` only reaches a worker whose parent dies after the worker asked for it;
a parent killed in the few milliseconds between the fork and that call must still not
leave a worker behind (an orphan waits on its task queue forever and holds the pipes it
inherited: a CI run once hung on such a worker, holding the output of a killed solve).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from helpers import process_alive  # noqa: E402

# a parent that forks a worker and dies before the worker's start_worker runs
ORPHANING = textwrap.dedent("""
    import multiprocessing as mp, os, time
    from odt.backends.dp.workers import start_worker

    def worker(parent):
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):  # not the test's pipes: it reads them to their end
            os.dup2(null, fd)
        time.sleep(0.5)  # the parent is gone by now: this worker's parent is init
        start_worker(parent)
        time.sleep(120)  # an orphan would wait here, as on an empty task queue

    proc = mp.get_context("fork").Process(target=worker, args=(os.getpid(),))
    proc.start()
    print(proc.pid, flush=True)
    os._exit(0)
""")


def test_a_worker_whose_parent_died_before_it_started_ends_at_once():
    run = subprocess.run([sys.executable, "-c", ORPHANING], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    worker = int(run.stdout.split()[0])
    try:
        end = time.monotonic() + 10
        while time.monotonic() < end and process_alive(worker):
            time.sleep(0.05)
        assert not process_alive(worker), "the worker outlived the parent that died before it started"
    finally:
        if process_alive(worker):
            os.kill(worker, signal.SIGKILL)


def test_a_worker_of_a_live_parent_runs_on():
    script = textwrap.dedent("""
        import multiprocessing as mp, os
        from odt.backends.dp.workers import start_worker

        def worker(parent):
            start_worker(parent)
            print("started", flush=True)

        proc = mp.get_context("fork").Process(target=worker, args=(os.getpid(),))
        proc.start()
        proc.join()
        print("exit", proc.exitcode, flush=True)
    """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert run.stdout.split() == ["started", "exit", "0"], run.stderr
