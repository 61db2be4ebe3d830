"""Sweeps: one simulation per point of a grid of configs, on local processes or dask.

A grid is one or more axes ``key=v1,v2,...`` over dotted config keys; the points are their
cartesian product, each a validated config. Every point gets its own seed, derived from
the base seed and the point's values alone (so a point's result does not depend on the
grid around it or on the order the points ran), unless ``common_seed`` asks for the base
seed everywhere (common random numbers: smoother curves when points are compared).

Points run on the engine their config names (``sim.engine``: simpy or fast), serially, in
local worker processes, or on a dask.distributed cluster; the seeds make all three give the
same results. Each finished point is written at once to ``points/<id>.json`` under the
output folder with the point's full config and the sweep's provenance (engine, durations,
``--set`` overrides, config file and its SHA-256); ``resume`` skips the points already there
and refuses a folder whose points were run with other settings, so one table never mixes
them. ``seeds`` > 1 runs every point that many times with seeds derived from its values and
the run's number; the table then holds each metric's mean over the runs and its 95 %
confidence half-width (``<metric>_ci95``, Student's t). Workers send back one summary row
per run, so memory does not grow with the raw samples of the points. The results table
(one row per point) is written as ``results.parquet`` and ``results.csv``; with ``seeds`` >
1 every run's row is also in ``runs.csv``.

This module runs a sweep (:func:`run_sweep`); its parts live beside it: the grid and its
seeds (:mod:`sim.sweep_grid`), a point's result row (:mod:`sim.sweep_row`), the output
folder's point files and resume checks (:mod:`sim.sweep_folder`), where the points run
(:mod:`sim.sweep_workers`) and the results table (:mod:`sim.sweep_table`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sim.sweep_folder import Provenance, load_finished, save_point
from sim.sweep_grid import Point
from sim.sweep_grid import grid_points as grid_points
from sim.sweep_grid import parse_grid as parse_grid
from sim.sweep_row import run_point
from sim.sweep_table import results_table, summarise_runs, write_table
from sim.sweep_workers import run_each, run_on_dask

if TYPE_CHECKING:
    import pandas as pd


def run_sweep(points: list[Point], out_dir: str | Path, workers: int = 1,
              resume: bool = False,
              progress: Callable[[int, int], None] | None = None,
              scheduler: str | None = None,
              provenance: Provenance | None = None,
              point_progress: Callable[[Point, float, float], None] | None = None,
              max_wall_s: float | None = None) -> pd.DataFrame:
    """Run every point, streaming each result to disk as it finishes; the table.

    Points run serially (``workers`` <= 1), in a pool of ``workers`` local processes, or on
    the dask.distributed cluster whose scheduler is at ``scheduler`` (``tcp://HOST:PORT``).
    Workers return one summary row per point, never the raw samples. ``progress(done,
    total)`` is called after each point. Rows keep the grid's order. An interrupted sweep
    loses only the points that were running; ``resume`` skips the points already on disk
    (all of them checked against this run's settings before any point runs). ``provenance``
    is recorded with every point and in the table. A serial sweep, or one on local processes
    (every ``REPORT_EVERY_S`` of wall time and at each point's end), tells
    ``point_progress(point, now_us, end_us)`` how far each running point has come, and
    ``now_us == end_us`` once it is done (a worker's late reports may follow). A run
    longer than ``max_wall_s`` ends the sweep (:class:`sim.core.budget.WallBudgetSpent`,
    naming its point) before the table is written; the points finished stay for
    ``resume``.
    """
    out = Path(out_dir)
    rows: dict[str, dict[str, Any]] = {}
    todo = []
    for point in points:
        found = load_finished(out, point, provenance) if resume else None
        if found is None:
            todo.append(point)
        else:
            rows[point.pid] = found
    total = len(points)
    if progress:
        progress(len(rows), total)

    def finished(point: Point, row: dict[str, Any]) -> None:
        save_point(out, point, row, provenance)
        rows[point.pid] = row
        if point_progress:
            end_us = point.config.sim.end_s * 1e6
            point_progress(point, end_us, end_us)
        if progress:
            progress(len(rows), total)

    measure = run_point if max_wall_s is None else partial(run_point, max_wall_s=max_wall_s)
    if scheduler is not None:
        run_on_dask(todo, scheduler, finished, measure)
    else:
        run_each(todo, workers, finished, measure, point_progress)
    runs = results_table(points, rows, provenance)
    table = summarise_runs(runs, list(points[0].values) if points else [])
    write_table(table, out, runs if len(table) < len(runs) else None)
    return table
