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
OTHER_QUOTA_KEY = "tenants[1].quota_rps"
KEPT = 0.8
"""Share of its quota (or of its unisolated rate, if lower) a tenant must keep under
isolation for the quota not to have collapsed it; and the share of its unisolated rate an
uncapped tenant must keep when only the other tenant is capped."""
QUOTA_TENANTS = {0: "tenant 0 (28 contexts)", 1: "tenant 1 (12 contexts)"}


def _setting(table: pd.DataFrame) -> pd.Series:
    """Each row's quota setting: (tenant 0's quota, tenant 1's quota), requests/s."""
    return pd.Series(list(zip(table[QUOTA_KEY], table[OTHER_QUOTA_KEY], strict=True)),
                     index=table.index)


def _fig12b_checks(table: pd.DataFrame) -> list[Check]:
    t = table.assign(setting=_setting(table))
    settings = list(dict.fromkeys(t["setting"]))
    free = _mean_rates(t, "setting", (0, 0), 0.0)
    both = next(s for s in settings if s[0] > 0 and s[1] > 0)
    capped = _mean_rates(t, "setting", both, 0.0)
    gap = abs(capped[1] - capped[0]) / max(capped[0], capped[1])
    share = float(both[0])
    kept = {k: capped[k] / min(share, free[k]) for k in capped}
    checks = [
        Check("without isolation the tenant with more clients gets more throughput",
              free[0] > (1 + SIMILAR) * free[1],
              f"tenant 0 {free[0]:,.0f}, tenant 1 {free[1]:,.0f} requests/s"),
        Check("with isolation the two tenants achieve similar throughput", gap <= SIMILAR,
              f"tenant 0 {capped[0]:,.0f}, tenant 1 {capped[1]:,.0f} requests/s"),
        Check("isolation does not collapse either tenant: each gets most of its share",
              all(v >= KEPT for v in kept.values()),
              ", ".join(f"tenant {k} {v:.0%}" for k, v in kept.items())
              + f" of min(quota {share:,.0f}, its unisolated rate)"),
    ]
    alone = next((s for s in settings if s[0] > 0 and s[1] == 0), None)
    if alone is not None:
        checks.append(_spill_check(_mean_rates(t, "setting", alone, 0.0), free, alone[0]))
    return [*checks, safe_and_live(table)]


def _spill_check(alone: dict[int, float], free: dict[int, float], quota: float) -> Check:
    """With only tenant 0 capped, tenant 1 has no quota: what it loses against its
    unisolated rate is what tenant 0's throttling costs it. The switch charges and defers
    single acquires, not transactions: a transaction whose acquire is deferred keeps the
    locks it was already granted (TPC-C's shared hot rows among them) through the deferral
    and any time-out, and every tenant's transactions wait on them."""
    kept = alone[1] / free[1]
    holds = kept >= KEPT
    detail = (f"tenant 1 (no quota) {alone[1]:,.0f} requests/s, {kept:.0%} of its unisolated "
              f"{free[1]:,.0f}, while tenant 0 is held at {alone[0]:,.0f} (quota {quota:,.0f})")
    if not holds:
        detail += (": the switch defers single acquires, and a transaction with a deferred "
                   "acquire keeps the locks it holds (shared hot rows) meanwhile, so a quota "
                   "slows every tenant, the capped one too, below its share")
    return Check("capping one tenant leaves the other's throughput", holds, detail)


def _quota_labels(table: pd.DataFrame) -> dict:
    def label(setting: tuple[float, float]) -> str:
        if setting == (0, 0):
            return "without isolation"
        if setting[1] == 0:
            return f"quota {setting[0] / 1e6:g} M requests/s on tenant 0 only"
        return f"quota {setting[0] / 1e6:g} M requests/s each"
    return {s: label(s) for s in _setting(table)}


def _quota_plot(table: pd.DataFrame) -> MplFigure:
    t = table.assign(setting=_setting(table))
    return _series_plot(t, "setting", _quota_labels(table),
                        "Figure 12b: performance isolation", QUOTA_TENANTS)


FIGURES = [
    Figure("fig12a", "Figure 12a: service differentiation with priorities", "6.3",
           timeseries_table, _fig12a_checks,
           lambda t, x: _series_plot(t, PRIORITY_KEY, PRIORITY_LABELS,
                                  "Figure 12a: service differentiation", PRIORITY_TENANTS)),
    Figure("fig12b", "Figure 12b: performance isolation with quotas", "6.3",
           timeseries_table, _fig12b_checks,
           lambda t, x: _quota_plot(t),
           required=False),
]
