"""Output folders written as a whole, a user's README left alone, and worker processes that
neither outnumber the work nor outlive their parent (issue 34: on main a kill during
``sim --out DIR`` left a new summary.json beside the old tables, ``paper --out DIR``
overwrote DIR/README.md, a killed sweep left its workers running and ``--workers 500``
forked 500 processes for 2 points)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from sim.paper.experiments import write_index
from sim.simulate_simpy import simulate
from sim.sweep_workers import worker_count
from tests.sim.helpers import config


def small(**overrides):
    return config("micro-exclusive", workload__locks=300, workload__think_time_us=3,
                  sim__duration_s=0.002, sim__warmup_s=0.0005, **overrides)


class Killed(Exception):
    pass


def test_a_run_that_dies_while_writing_leaves_the_earlier_run_whole(tmp_path, monkeypatch):
    out = tmp_path / "out"
    first = simulate(small())
    first.write(out, "csv")
    (out / "notes.txt").write_text("mine")
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    second = simulate(small(sim__seed=7))
    monkeypatch.setattr(pd.DataFrame, "to_csv", lambda *a, **k: (_ for _ in ()).throw(Killed))
    with pytest.raises(Killed):
        second.write(out, "csv")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"], "no temporary folder left"
    monkeypatch.undo()
    second.write(out, "csv")
    assert json.loads((out / "summary.json").read_text()) == json.loads(
        json.dumps(second.summary, default=lambda v: v.item()))
    assert (out / "notes.txt").read_text() == "mine", "a user's file is carried over"
    assert len(pd.read_csv(out / "requests.csv")) == len(second.requests)


def test_the_figure_index_leaves_a_users_readme_alone(tmp_path):
    (tmp_path / "README.md").write_text("# my results\n")
    written = write_index(tmp_path)
    assert (tmp_path / "README.md").read_text() == "# my results\n"
    assert written.name == "FIGURES.md" and written.exists()
    (tmp_path / "README.md").unlink()
    assert write_index(tmp_path).name == "README.md"
    assert write_index(tmp_path).name == "README.md", "its own index it rewrites"


def test_workers_are_capped_at_the_points_and_the_cores():
    assert worker_count(500, 2) == min(2, os.cpu_count() or 1)
    assert worker_count(500, 10_000) == (os.cpu_count() or 1)
    assert worker_count(0, 3) == 1


def test_every_set_of_points_runs_through_the_one_loop():
    """Sweeps, the paper's figures, capacity, Concordia and NetStore all run their points
    through ``sim.sweep_workers.run_each``, so each has the worker cap, Ctrl-C and dying workers:
    no other module starts a process pool of its own."""
    root = Path(__file__).resolve().parents[2]
    pools = sorted(str(path.relative_to(root))
                   for package in ("netlock", "sim", "planner", "hwrunner")
                   for path in (root / package).rglob("*.py")
                   if re.search(r"ProcessPoolExecutor|multiprocessing\.Pool\b|\bPool\(",
                                path.read_text(encoding="utf-8")))
    assert pools == ["sim/sweep_workers.py"]


SWEEP = """
import os, sys, time
from sim.sweep_grid import Point
from sim.sweep_workers import run_in_processes

def measure(config):
    open(os.path.join(sys.argv[1], str(os.getpid())), "w").close()
    time.sleep(600)

run_in_processes([Point(str(i), {}, i, None) for i in range(2)], 2, lambda p, r: None,
                 measure)
"""


def test_workers_die_with_a_killed_sweep(tmp_path):
    script = tmp_path / "sweep.py"
    script.write_text(SWEEP)
    pids = tmp_path / "pids"
    pids.mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    parent = subprocess.Popen([sys.executable, str(script), str(pids)], env=env)
    deadline = time.monotonic() + 120
    while len(list(pids.iterdir())) < min(2, os.cpu_count() or 1):
        assert time.monotonic() < deadline and parent.poll() is None
        time.sleep(0.05)
    workers = [int(p.name) for p in pids.iterdir()]
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 30
    alive = workers
    while alive and time.monotonic() < deadline:
        alive = [w for w in workers if _alive(w)]
        time.sleep(0.05)
    assert alive == []


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"
