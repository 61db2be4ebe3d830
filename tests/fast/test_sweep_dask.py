"""Sweeps on the fast engine: local processes and a dask cluster give the serial results;
points stream to disk, an interrupted sweep resumes, workers return summary rows only."""

from __future__ import annotations

import numbers

import pandas as pd
import pytest
from dask.distributed import LocalCluster

from netlock.errors import ConfigError
from sim import sweep, sweep_row, sweep_workers
from sim.sweep import run_sweep
from sim.sweep_grid import grid_points, parse_grid
from tests.sim.helpers import config


def points(axes=("switch.slots=0,200", "workload.locks=100,1000")):
    base = config("micro-exclusive", sim__duration_s=0.001, sim__warmup_s=0.0002,
                  sim__engine="fast")
    return grid_points(base, parse_grid(list(axes)))


def same_table(a: pd.DataFrame, b: pd.DataFrame) -> None:
    columns = [c for c in a.columns if c != "wall_s"]
    pd.testing.assert_frame_equal(a[columns], b[columns])


def test_a_dask_cluster_gives_the_serial_results(tmp_path):
    grid = points()
    serial = run_sweep(grid, tmp_path / "serial")
    with LocalCluster(processes=False, n_workers=2, threads_per_worker=1,
                      dashboard_address=None) as cluster:
        on_dask = run_sweep(grid, tmp_path / "dask", scheduler=cluster.scheduler_address)
    same_table(serial, on_dask)
    assert len(list((tmp_path / "dask" / "points").glob("*.json"))) == len(grid)
    assert (serial["violations"] == 0).all()


def test_local_processes_give_the_serial_results(tmp_path):
    grid = points(("workload.locks=100,1000",))
    same_table(run_sweep(grid, tmp_path / "a"), run_sweep(grid, tmp_path / "b", workers=2))


def test_an_interrupted_sweep_keeps_finished_points_and_resumes(tmp_path, monkeypatch):
    grid = points()

    def stop_after_two(done: int, total: int) -> None:
        if done == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_sweep(grid, tmp_path, progress=stop_after_two)
    assert len(list((tmp_path / "points").glob("*.json"))) == 2
    ran = []
    real = sweep.run_point
    monkeypatch.setattr(sweep, "run_point",
                        lambda cfg, progress=None: ran.append(cfg) or real(cfg, progress))
    table = run_sweep(grid, tmp_path, resume=True)
    assert len(ran) == len(grid) - 2
    same_table(table, run_sweep(grid, tmp_path / "fresh"))


def test_workers_send_back_one_summary_row_not_samples():
    row = sweep_row.run_point(points()[0].config)
    assert row.pop("ended") == "duration"
    assert all(isinstance(v, numbers.Number) for v in row.values())


def test_an_unreachable_scheduler_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setattr(sweep_workers, "DASK_CONNECT_S", 1)
    with pytest.raises(ConfigError, match="cannot reach a dask scheduler"):
        run_sweep(points(("workload.locks=100",)), tmp_path, scheduler="tcp://127.0.0.1:9")
