"""``sim.fast_bench_process``: the fresh-process rows (fixed CPU, the worker thread with the
cores shared) have their shape and targets; the child process runs (no timing asserted)."""

from __future__ import annotations

import sys
from itertools import cycle

import pytest

from sim import fast_bench_process as proc


@pytest.fixture
def stubbed(monkeypatch):
    monkeypatch.setattr(proc, "tiny_cli_cpu_s", cycle([1.4, 0.9, 1.1]).__next__)
    monkeypatch.setattr(proc, "phases", lambda: {"python_s": 0.03, "imports_s": 0.5,
                                                 "setup_s": 0.4, "run_s": 0.05,
                                                 "exit_s": 0.02})
    walls = {True: cycle([2.0, 2.2, 2.1, 2.3, 2.2, 2.0]), False: cycle([1.0, 1.1, 1.2, 1.0,
                                                                         1.3, 1.1])}
    monkeypatch.setattr(proc, "shared_cores_wall_s",
                        lambda config, duration, ahead: [next(walls[ahead]), next(walls[ahead])])
    monkeypatch.setattr(proc, "cores", lambda: 2)


def test_the_fixed_cpu_is_the_median_of_fresh_processes_against_one_second(stubbed):
    row = proc.run(quick=True)[0]
    assert row.value == pytest.approx(1.1) and row.unit == "CPU s" and row.target == 1.0
    assert not row.ok and "imports 0.50" in row.note and "setup" in row.note
    assert "exit 0.02" in row.note and "re-run" in row.note


def test_the_worker_thread_row_compares_both_ways_with_all_cores_busy(stubbed):
    rows = proc.run(quick=True)
    assert len(rows) == 2
    thread = rows[1]
    assert "2 processes at once" in thread.name
    assert thread.value == pytest.approx(2.15) and thread.baseline_value == pytest.approx(1.1)
    assert thread.speedup == pytest.approx(1.1 / 2.15)
    assert "without the thread is faster" in thread.note
    assert [r.name for r in proc.run(quick=False)][2].startswith("fast engine, TPC-C low")


def test_the_child_times_a_real_run_in_phases():
    p = proc.phases()
    assert p["granted"] > 0
    assert all(p[k] > 0 for k in ("python_s", "imports_s", "setup_s", "run_s"))
    assert p["exit_s"] >= 0


def test_the_children_write_bytecode_elsewhere_than_the_project():
    env = proc.child_env()
    assert "PYTHONDONTWRITEBYTECODE" not in env
    assert env["PYTHONPYCACHEPREFIX"] and env is proc.child_env()


def test_a_failing_child_is_reported_with_its_last_words():
    with pytest.raises(RuntimeError, match="exited 1: boom"):
        proc._child_cpu_s([sys.executable, "-c", "import sys; sys.exit('boom')"])
