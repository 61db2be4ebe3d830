"""A sweep's results table: one row per run (:func:`results_table`), one per point with the
runs' means and 95 % confidence half-widths when ``seeds`` > 1 (:func:`summarise_runs`),
written as ``results.parquet`` and ``results.csv`` (and every run's row in ``runs.csv``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from netlock import atomic
from sim.sweep_folder import Provenance
from sim.sweep_grid import Point
from sim.sweep_row import SUMMARY_COLUMNS

if TYPE_CHECKING:
    import pandas as pd


def results_table(points: list[Point], rows: dict[str, dict[str, Any]],
                  provenance: Provenance | None = None) -> pd.DataFrame:
    """One row per run: the point's id, values, run number, seed, result and provenance."""
    import pandas as pd

    records = [{"point": p.pid, **p.values, "run": p.run, "seed": p.seed, **rows[p.pid],
                **(provenance.record(p.config) if provenance else {})} for p in points]
    return pd.DataFrame.from_records(records)


def summarise_runs(runs: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """One row per grid point: the runs' means and, with more than one run per point,
    each metric's 95 % confidence half-width (``<metric>_ci95``, Student's t; ``seeds``:
    the runs). One run per point: the runs' table unchanged."""
    if runs.empty or runs["run"].max() == 0:
        return runs.drop(columns="run")
    import pandas as pd
    from scipy import stats

    metrics = [c for c in runs.columns
               if c in SUMMARY_COLUMNS or c.startswith(("latency_", "txn_latency_"))]
    rows = []
    for _, part in runs.groupby(keys, sort=False, dropna=False):
        first = part.iloc[0]
        row = {c: first[c] for c in runs.columns if c not in metrics and c != "run"}
        row["seeds"] = len(part)
        for column in metrics:
            values = part[column].astype(float).dropna()
            row[column] = float(values.mean()) if len(values) else float("nan")
            row[f"{column}_ci95"] = (float(stats.t.ppf(0.975, len(values) - 1)
                                           * values.std(ddof=1) / len(values) ** 0.5)
                                     if len(values) > 1 else float("nan"))
        rows.append(row)
    return pd.DataFrame.from_records(rows)


def write_table(table: pd.DataFrame, out: Path, runs: pd.DataFrame | None = None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    atomic.write_with(out / "results.parquet", lambda tmp: table.to_parquet(tmp, index=False))
    atomic.write_with(out / "results.csv", lambda tmp: table.to_csv(tmp, index=False))
    if runs is not None:
        atomic.write_with(out / "runs.csv", lambda tmp: runs.to_csv(tmp, index=False))
