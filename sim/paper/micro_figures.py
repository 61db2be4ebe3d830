"""Section 6.2, the switch's basic performance: Figures 8a-8d (latency and throughput on
shared, uncontended and contended exclusive locks) and Figure 9 (a lock switch against a
lock server of 1-8 cores)."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure as MplFigure

from . import plotting as p
from .figure import Check, Figure, falling, rising, safe_and_live, summary_table

FLAT_LATENCY = 0.25
"""How much the median latency may move across offered loads for "not affected by the
throughput" (relative to the lightest load)."""
SATURATED = 0.8
"""Share of a lock manager's capacity from which it counts as saturated (Figure 9)."""


def _latency_vs_throughput(table: pd.DataFrame, title: str) -> MplFigure:
    fig, (ax,) = p.axes(title, "throughput (M lock requests/s)", "request latency (us)")
    t = table.sort_values("throughput_rps")
    for column, label, marker in (("latency_p50_us", "median", "o"),
                                  ("latency_mean_us", "mean", "s"),
                                  ("latency_p99_us", "99th percentile", "^")):
        ax.plot(t["throughput_rps"], t[column], marker=marker, label=label)
    p.millions(ax, "x")
    p.from_zero(ax)
    ax.set_xlim(left=0)
    p.legend(ax)
    return fig


def _safe_live_nothing_lost(table: pd.DataFrame) -> Check:
    """:func:`safe_and_live`, and no request dropped by a lock server's RX rings
    (``dropped``): the authors' Figure 8 runs have no lock server (console.py
    server_node_num = 0, :498, :513, :523) and their client never resends, so a request the
    model's overflow server drops is one the switch lost (a table without the column
    dropped nothing)."""
    base = safe_and_live(table)
    dropped = int(table["dropped"].sum()) if "dropped" in table else 0
    return Check(f"{base.claim}, and loses no request", base.holds and dropped == 0,
                 f"{base.detail}, dropped {dropped}")


def _flat_latency_checks(table: pd.DataFrame) -> list[Check]:
    t = table.sort_values("clients.machines")
    rps = t["throughput_rps"].tolist()
    p50 = t["latency_p50_us"].tolist()
    move = max(abs(v - p50[0]) for v in p50) / p50[0]
    return [
        Check("throughput grows with the client machines sending", rising(rps) and
              rps[-1] > 2 * rps[0], f"{rps[0]:,.0f} -> {rps[-1]:,.0f} requests/s"),
        Check("the latency is not affected by the throughput (the switch is not saturated)",
              move <= FLAT_LATENCY, f"median {min(p50):.2f}-{max(p50):.2f} us "
              f"({move:.0%} from the lightest load)"),
        _safe_live_nothing_lost(table),
    ]


def _contention_checks(table: pd.DataFrame) -> list[Check]:
    t = table.sort_values("workload.locks")
    rps = t["throughput_rps"].tolist()
    lat = t["latency_mean_us"].tolist()
    return [
        Check("throughput rises as contention falls (more locks)",
              rising(rps) and rps[-1] > 5 * rps[0],
              f"{rps[0]:,.0f} requests/s at {t['workload.locks'].iloc[0]} locks -> "
              f"{rps[-1]:,.0f} at {t['workload.locks'].iloc[-1]}"),
        Check("latency falls as contention falls",
              falling(lat, slack=0.05) and lat[-1] < lat[0] / 3,
              f"mean {lat[0]:.1f} us -> {lat[-1]:.1f} us"),
        _safe_live_nothing_lost(table),
    ]


def _contention_plot(table: pd.DataFrame) -> MplFigure:
    fig, (left, right) = p.axes("Figure 8c/8d: exclusive locks under contention",
                                "number of locks", "throughput (M lock requests/s)", ncols=2)
    t = table.sort_values("workload.locks")
    left.plot(t["workload.locks"], t["throughput_rps"], marker="o")
    left.set_title("(c) throughput", fontsize=10)
    p.millions(left)
    p.from_zero(left)
    for column, label, marker in (("latency_p50_us", "median", "o"),
                                  ("latency_mean_us", "mean", "s"),
                                  ("latency_p99_us", "99th percentile", "^")):
        right.plot(t["workload.locks"], t[column], marker=marker, label=label)
    right.set_title("(d) latency", fontsize=10)
    right.set_xlabel("number of locks")
    right.set_ylabel("request latency (us)")
    right.set_yscale("log")
    right.set_ylim(bottom=1)
    p.legend(right)
    for ax in (left, right):
        ax.set_xscale("log")
    return fig


def _fig9_table(experiment, results) -> pd.DataFrame:
    t = summary_table(experiment, results)
    t["manager"] = ["lock switch" if s > 0 else "lock server" for s in t["switch.slots"]]
    t["workload"] = [f"{'shared' if m == 'S' else 'exclusive'}, {n:,} locks" for m, n in
                     zip(t["workload.mode"], t["workload.locks"], strict=True)]
    t["server_capacity_rps"] = [point.config.servers.capacity_rps
                                for point in experiment.points]
    t["switch_capacity_rps"] = [point.config.switch.rate_pps / 2 for point in experiment.points]
    return t


def _fig9_checks(table: pd.DataFrame) -> list[Check]:
    checks = []
    for workload, part in table.groupby("workload", sort=False):
        switch = part[part["manager"] == "lock switch"].set_index("servers.cores")
        server = part[part["manager"] == "lock server"].set_index("servers.cores")
        ratios = switch["throughput_rps"] / server["throughput_rps"]
        checks.append(Check(f"{workload}: the lock switch beats the lock server at every "
                            f"core count", bool((ratios > 1).all()),
                            "switch / server: " + ", ".join(
                                f"{c} cores {r:.1f}x" for c, r in ratios.items())))
        checks.append(saturation_check(workload, switch, server))
        rps = server.sort_index()["throughput_rps"].tolist()
        checks.append(Check(f"{workload}: a lock server gains with cores",
                            rising(rps) and rps[-1] > 1.5 * rps[0],
                            f"{rps[0]:,.0f} -> {rps[-1]:,.0f} requests/s"))
    checks.append(safe_and_live(table))
    return checks


def saturation_check(workload: str, switch: pd.DataFrame, server: pd.DataFrame) -> Check:
    """Section 6.2: "the lock server easily gets saturated by a large number of requests",
    the switch does not. Saturated: the server's cores are busy at least :data:`SATURATED`
    of the run at every core count (``server_busy``; what it completes of its capacity,
    ``server_capacity_rps``, is reported beside it: dropped requests and locks held until
    their lease can keep a busy server below it); not saturated: the switch runs below
    :data:`SATURATED` of its packet rate (an acquire and a release per request)."""
    busy = server["server_busy"].sort_index()
    server_load = (server["throughput_rps"] / server["server_capacity_rps"]).sort_index()
    switch_load = switch["throughput_rps"] / switch["switch_capacity_rps"]
    return Check(f"{workload}: the lock server is saturated, the switch is not",
                 bool((busy >= SATURATED).all() and (switch_load < SATURATED).all()),
                 "server cores busy " + ", ".join(f"{c} cores {u:.0%}" for c, u in busy.items())
                 + " (completing " + ", ".join(f"{u:.0%}" for u in server_load)
                 + f" of capacity); switch at {switch_load.max():.2%} of its packet rate")


def _fig9_plot(table: pd.DataFrame) -> MplFigure:
    workloads = list(dict.fromkeys(table["workload"]))
    fig, panels = p.axes("Figure 9: a lock switch vs a lock server (10 client machines)",
                         "lock server cores", "throughput (M lock requests/s)",
                         ncols=len(workloads), width=4.2, sharey=True)
    for ax, workload in zip(panels, workloads, strict=True):
        part = table[table["workload"] == workload]
        for (manager, rows), marker in zip(part.groupby("manager"), p.markers(), strict=False):
            rows = rows.sort_values("servers.cores")
            ax.plot(rows["servers.cores"], rows["throughput_rps"], marker=marker, label=manager)
        ax.set_title(workload, fontsize=10)
        p.millions(ax)
        p.from_zero(ax)
        ax.set_xticks(sorted(part["servers.cores"].unique()))
    p.legend(panels[0])
    return fig


FIGURES = [
    Figure("fig8a", "Figure 8a: shared locks, latency vs throughput", "6.2", summary_table,
           _flat_latency_checks,
           lambda t, x: _latency_vs_throughput(t, "Figure 8a: shared locks")),
    Figure("fig8b", "Figure 8b: exclusive locks without contention", "6.2", summary_table,
           _flat_latency_checks,
           lambda t, x: _latency_vs_throughput(t, "Figure 8b: exclusive locks, no contention")),
    Figure("fig8cd", "Figures 8c/8d: exclusive locks under contention", "6.2", summary_table,
           _contention_checks, lambda t, x: _contention_plot(t), required=False),
    Figure("fig9", "Figure 9: lock switch vs lock server", "6.2", _fig9_table, _fig9_checks,
           lambda t, x: _fig9_plot(t), required=False),
]
