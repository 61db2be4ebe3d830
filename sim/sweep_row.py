"""A sweep point's result row: the metrics it keeps (:data:`ROW_COLUMNS`), the run that makes
it (:func:`run_point`, in a worker) and the check of one read back from disk
(:func:`check_row`). Workers send back this row, never the run's raw samples."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from netlock.config import Config
from netlock.errors import ConfigError
from sim.core.budget import require_whole
from sim.core.result import ENDINGS
from sim.run_engine import run_engine

SUMMARY_COLUMNS = ("throughput_rps", "tps", "switch_share", "switch_rps", "server_rps",
                   "retries", "violations", "stalled", "granted", "wall_s", "events",
                   "measured_s")
LATENCY_COLUMNS = ("mean", "p50", "p99", "p999")


def run_point(config: Config,
              progress: Callable[[float, float], None] | None = None,
              max_wall_s: float | None = None) -> dict[str, Any]:
    """Simulate one point (in a worker) on its ``sim.engine``; its flat result row.
    ``progress(now_us, end_us)`` follows the run (serial sweeps show it); a run longer
    than ``max_wall_s`` is :class:`sim.core.budget.WallBudgetSpent`."""
    summary = run_engine(config, progress=progress, max_wall_s=max_wall_s).summary
    require_whole(summary)
    row = {k: summary[k] for k in SUMMARY_COLUMNS}
    row["ended"] = summary["ended"]
    row.update({f"latency_{k}_us": summary["latency_us"][k] for k in LATENCY_COLUMNS})
    row.update({f"txn_latency_{k}_us": summary["txn_latency_us"][k] for k in LATENCY_COLUMNS})
    return row


ROW_COLUMNS = SUMMARY_COLUMNS + tuple(
    f"{kind}_{k}_us" for kind in ("latency", "txn_latency") for k in LATENCY_COLUMNS)
"""What :func:`run_point` returns for a point: the metrics of its row in the table."""


def check_row(result: dict[str, Any], path: Path) -> None:
    """Refuse (ConfigError naming the file and field) a stored point whose result is not a
    number per metric (a latency may be null: nothing granted), so that a damaged point
    file is one line rather than a table that cannot be written."""
    for column in ROW_COLUMNS:
        value = result.get(column)
        if column.endswith("_us") and value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            said = "missing" if column not in result else f"{str(value)[:40]!r} is not a number"
            raise ConfigError(f"--resume: {path}: result.{column}: {said}; remove the file to "
                              f"run the point again, or add --force to replace the sweep")
    if result.get("ended") not in ENDINGS:
        raise ConfigError(f"--resume: {path}: result.ended: {str(result.get('ended'))[:40]!r} "
                          f"is not one of {', '.join(ENDINGS)}; remove the file to run the "
                          f"point again, or add --force to replace the sweep")
