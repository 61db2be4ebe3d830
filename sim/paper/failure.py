"""Section 6.5's failure handling: Figure 15, throughput over time through a switch that
stops and is reactivated with empty registers."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure as MplFigure

from . import plotting as p
from .figure import Check, Figure, safe_and_live, timeseries_table

RECOVERED = 0.9
"""Share of the pre-failure throughput that counts as "returns to the pre-failure level"."""


def _fig15_table(experiment, results) -> pd.DataFrame:
    t = timeseries_table(experiment, results)
    failures = experiment.points[0].config.failures
    t["fail_s"] = failures.switch_fail_s
    t["restart_s"] = failures.switch_restart_s
    return t


def _phases(table: pd.DataFrame) -> tuple[pd.Series, pd.Series, pd.Series]:
    fail, restart = table["fail_s"].iloc[0], table["restart_s"].iloc[0]
    total = table.groupby("t_s")["granted_rps"].sum()
    step = total.index.to_series().diff().min()
    t = total.index.to_numpy()
    before = total[(t >= fail / 3) & (t + step <= fail)]
    during = total[(t >= fail + step) & (t + step <= restart)]
    after = total[t >= restart + (restart - fail) / 3]
    return before, during, after[after.index + step <= t.max()]


def _fig15_checks(table: pd.DataFrame) -> list[Check]:
    before, during, after = _phases(table)
    return [
        Check("throughput drops to zero while the switch is stopped", bool((during == 0).all()),
              f"largest rate during the outage: {during.max():,.0f} requests/s"),
        Check("after reactivation throughput returns to the pre-failure level",
              after.mean() >= RECOVERED * before.mean(),
              f"before {before.mean():,.0f}, after {after.mean():,.0f} requests/s"),
        safe_and_live(table),
    ]


def _fig15_plot(table: pd.DataFrame) -> MplFigure:
    fig, (ax,) = p.axes("Figure 15: switch failure and reactivation (TPC-C)", "time (ms)",
                        "throughput (M lock requests/s)")
    total = table.groupby("t_s")["granted_rps"].sum()
    ax.plot(total.index * 1e3, total.to_numpy(), marker="o", markersize=3)
    fail, restart = table["fail_s"].iloc[0], table["restart_s"].iloc[0]
    ax.axvspan(fail * 1e3, restart * 1e3, color="grey", alpha=0.2, label="switch stopped")
    p.millions(ax)
    p.from_zero(ax)
    p.legend(ax)
    return fig


FIGURES = [
    Figure("fig15", "Figure 15: failure handling", "6.5", _fig15_table, _fig15_checks,
           lambda t, x: _fig15_plot(t)),
]
