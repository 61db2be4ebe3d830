"""The sweep API: grid points, per-point seeds, serial and parallel runs agree."""

from __future__ import annotations

import pandas as pd

from sim.sweep import run_sweep
from sim.sweep_grid import grid_points, parse_grid, point_seed
from tests.sim.helpers import config


def base():
    return config("micro-exclusive", sim__duration_s=0.001, sim__warmup_s=0.0002)


def test_points_are_the_product_with_stable_seeds():
    axes = parse_grid(["switch.slots=100,200,300", "workload.think_time_us=0,1"])
    points = grid_points(base(), axes)
    assert len(points) == 6
    assert len({p.seed for p in points}) == 6
    again = grid_points(base(), list(reversed(axes)))
    assert {p.pid: p.seed for p in points} == {p.pid: p.seed for p in again}
    assert points[0].config.switch.slots == 100
    assert points[0].seed == point_seed(base().sim.seed, points[0].values)
    common = grid_points(base(), axes, common_seed=True)
    assert {p.seed for p in common} == {base().sim.seed}


def test_parallel_and_serial_sweeps_give_the_same_table(tmp_path):
    points = grid_points(base(), parse_grid(["workload.locks=100,1000"]))
    serial = run_sweep(points, tmp_path / "a", workers=1)
    parallel = run_sweep(points, tmp_path / "b", workers=2)
    columns = [c for c in serial.columns if c != "wall_s"]
    pd.testing.assert_frame_equal(serial[columns], parallel[columns])
