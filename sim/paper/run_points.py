"""Running a figure's points: one simulation each, in worker processes, measured the way
the paper's figures need (summary, per-tenant rates, time series, latency distribution).

A worker sends back plain data only (no raw samples), so memory stays flat however long
the runs are.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from netlock.config import Config
from sim.core.budget import require_whole
from sim.core.metrics import in_window
from sim.run_engine import run_engine
from sim.sweep_grid import Point
from sim.sweep_row import LATENCY_COLUMNS, SUMMARY_COLUMNS
from sim.sweep_workers import run_each

from .experiment_file import Experiment

CDF_QUANTILES = np.concatenate([np.linspace(0.0, 0.99, 100), [0.995, 0.999, 0.9999, 1.0]])
"""Where the latency CDF is sampled: every percent, then the tail (p99.5, p99.9, p99.99)."""


def server_busy(config: Config, busy_us: list[float] | None) -> float:
    """The share of the run the lock servers' cores were busy (NaN without lock servers):
    their busy time over cores x servers x the whole run (warm-up included, as the busy
    time is counted; work queued before the end counts whole, so an overloaded server can
    show slightly above 1)."""
    if not busy_us:
        return math.nan
    return sum(busy_us) / (len(busy_us) * config.servers.cores * config.sim.end_s * 1e6)


def measure(config: Config, max_wall_s: float | None = None) -> dict[str, Any]:
    """One run on the config's engine: its summary row (``throughput_rps``, ``tps``,
    ``switch_rps``, ``server_rps``, ``latency_{mean,p50,p99,p999}_us``, ``violations``,
    ``stalled``, ``server_busy`` ...), per-tenant rates (rps, tps), the time series
    (``t_s``, ``tenant``, ``granted_rps``, ``tps``) and the request latency CDF (``q``,
    ``latency_us``). A run longer than ``max_wall_s`` is
    :class:`sim.core.budget.WallBudgetSpent`."""
    result = run_engine(config, max_wall_s=max_wall_s)
    summary = result.summary
    require_whole(summary)
    row: dict[str, Any] = {k: summary[k] for k in SUMMARY_COLUMNS}
    row["ended"] = summary["ended"]
    row["stalled"] = summary["stalled"]
    row["hold_time_us"] = summary["hold_time_us"]
    row["server_busy"] = server_busy(config, summary["manager"].get("server_busy_us"))
    row["dropped"] = summary["manager"].get("server_rx_drops", 0)
    row.update({f"latency_{k}_us": summary["latency_us"][k] for k in LATENCY_COLUMNS})
    row.update({f"txn_latency_{k}_us": summary["txn_latency_us"][k] for k in LATENCY_COLUMNS})
    window = in_window(result.requests, config.sim.warmup_s * 1e6, config.sim.duration_s * 1e6)
    latency = window["latency_us"].to_numpy()
    cdf = np.quantile(latency, CDF_QUANTILES) if len(latency) else np.zeros(0)
    return {
        "row": row,
        "tenants": summary["tenants"],
        "timeseries": result.timeseries.to_dict("records"),
        "cdf": [{"q": float(q), "latency_us": float(v)}
                for q, v in zip(CDF_QUANTILES, cdf, strict=False)],
    }


def run_points(experiment: Experiment, workers: int,
               progress: Callable[[int, int], None] | None = None,
               max_wall_s: float | None = None) -> list[dict[str, Any]]:
    """Every point's :func:`measure` (each within ``max_wall_s``), in the experiment's
    order."""
    todo = [Point(str(i), p.values, p.config.sim.seed, p.config)
            for i, p in enumerate(experiment.points)]
    done: dict[str, dict[str, Any]] = {}

    def finished(point: Point, result: dict[str, Any]) -> None:
        done[point.pid] = result
        if progress:
            progress(len(done), len(todo))

    if progress:
        progress(0, len(todo))
    run_each(todo, workers, finished,
             measure if max_wall_s is None else partial(measure, max_wall_s=max_wall_s))
    return [done[p.pid] for p in todo]
