"""Section 6.3's policy support: Figure 12a (service differentiation by priority) and
Figure 12b (performance isolation by quota), as per-tenant throughput over time."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure as MplFigure

from . import plotting as p
from .figure import Check, Figure, safe_and_live, timeseries_table

SIMILAR = 0.25
"""How far apart two tenants' rates may be and still count as "similar" (relative)."""


def _mean_rates(table: pd.DataFrame, key: str, value, start_s: float) -> dict[int, float]:
    """Mean granted requests/s per tenant over the bins from ``start_s`` on."""
    part = table[(table[key] == value) & (table["t_s"] >= start_s)]
    return part.groupby("tenant")["granted_rps"].mean().to_dict()


def _series_plot(table: pd.DataFrame, key: str, labels: dict, title: str,
                 tenant_names: dict[int, str]) -> MplFigure:
    values = list(dict.fromkeys(table[key]))
    fig, panels = p.axes(title, "time (ms)", "throughput (M lock requests/s)",
                         ncols=len(values), width=4.8, sharey=True)
    for ax, value in zip(panels, values, strict=True):
        part = table[table[key] == value]
        for (tenant, rows), marker in zip(part.groupby("tenant"), p.markers(), strict=False):
            ax.plot(rows["t_s"] * 1e3, rows["granted_rps"], marker=marker, markersize=3,
                    label=tenant_names.get(int(tenant), f"tenant {tenant}"))
        ax.set_title(labels.get(value, str(value)), fontsize=10)
        p.millions(ax)
        p.from_zero(ax)
    p.legend(panels[0])
    return fig


PRIORITY_KEY = "tenants[1].priority"
PRIORITY_LABELS = {1: "without differentiation", 0: "with differentiation"}
PRIORITY_TENANTS = {0: "tenant 0 (low priority)", 1: "tenant 1 (high priority)"}


def _fig12a_checks(table: pd.DataFrame) -> list[Check]:
    start = _second_start(table)
    same = _mean_rates(table, PRIORITY_KEY, 1, start)
    diff = _mean_rates(table, PRIORITY_KEY, 0, start)
    gap = abs(same[1] - same[0]) / max(same[0], same[1])
    return [
        Check("without differentiation both tenants have similar throughput once the second "
              "starts", gap <= SIMILAR,
              f"tenant 0 {same[0]:,.0f}, tenant 1 {same[1]:,.0f} requests/s"),
        Check("with differentiation the high-priority tenant is served first",
              diff[1] > (1 + SIMILAR) * diff[0],
              f"high {diff[1]:,.0f}, low {diff[0]:,.0f} requests/s"),
        safe_and_live(table),
    ]


def _second_start(table: pd.DataFrame) -> float:
    """The first bin in which tenant 1 is granted anything, plus one bin to settle."""
    busy = table[(table["tenant"] == 1) & (table["granted_rps"] > 0)]["t_s"]
    step = table["t_s"].drop_duplicates().sort_values().diff().min()
    return float(busy.min() + step)


QUOTA_KEY = "tenants[0].quota_rps"
KEPT = 0.8
"""Share of its quota (or of its unisolated rate, if lower) a tenant must keep under
isolation for the quota not to have collapsed it."""
QUOTA_TENANTS = {0: "tenant 0 (14 contexts)", 1: "tenant 1 (6 contexts)"}


def _fig12b_checks(table: pd.DataFrame) -> list[Check]:
    values = sorted(table[QUOTA_KEY].unique())
    free = _mean_rates(table, QUOTA_KEY, values[0], 0.0)
    capped = _mean_rates(table, QUOTA_KEY, values[-1], 0.0)
    gap = abs(capped[1] - capped[0]) / max(capped[0], capped[1])
    share = float(values[-1])
    return [
        Check("without isolation the tenant with more clients gets more throughput",
              free[0] > (1 + SIMILAR) * free[1],
              f"tenant 0 {free[0]:,.0f}, tenant 1 {free[1]:,.0f} requests/s"),
        Check("with isolation the two tenants achieve similar throughput", gap <= SIMILAR,
              f"tenant 0 {capped[0]:,.0f}, tenant 1 {capped[1]:,.0f} requests/s"),
        Check("isolation does not collapse either tenant: each gets most of its share",
              all(capped[t] >= KEPT * min(share, free[t]) for t in capped),
              ", ".join(f"tenant {t} {capped[t] / min(share, free[t]):.0%}" for t in capped)
              + f" of min(quota {share:,.0f}, its unisolated rate)"),
        safe_and_live(table),
    ]


def _quota_labels(table: pd.DataFrame) -> dict:
    return {v: ("without isolation" if v == 0 else f"quota {v / 1e6:g} M requests/s each")
            for v in table[QUOTA_KEY].unique()}


FIGURES = [
    Figure("fig12a", "Figure 12a: service differentiation with priorities", "6.3",
           timeseries_table, _fig12a_checks,
           lambda t, x: _series_plot(t, PRIORITY_KEY, PRIORITY_LABELS,
                                  "Figure 12a: service differentiation", PRIORITY_TENANTS)),
    Figure("fig12b", "Figure 12b: performance isolation with quotas", "6.3",
           timeseries_table, _fig12b_checks,
           lambda t, x: _series_plot(t, QUOTA_KEY, _quota_labels(t),
                                  "Figure 12b: performance isolation", QUOTA_TENANTS),
           required=False),
]
