"""Section 6.4's memory management (Figure 13: knapsack vs random allocation; Figure 14:
switch memory against think time and against the allocation policy) and section 4.5's
analysis that S slots held T us each serve at most S/T requests/s."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure as MplFigure

from . import plotting as p
from .experiment_file import Experiment
from .figure import Check, Figure, cdf_table, falling, rising, safe_and_live, summary_table

POLICY = "policy.allocation"
SLOTS = "switch.slots"
THINK = "workload.think_time_us"
FLAT = 0.05
"""How much "does not grow" may move (relative to the smallest memory)."""
NEAR_MAX = 0.95
"""Throughput counted as the maximum (share of the best point's)."""
SMALL_FRACTION = 0.1
""""A small fraction of the switch memory": at most this share of the largest memory run."""
RANDOM_SEND_CAP_PER_MS = 3000
"""Packets per ms per TX core that console.py:564-565 (``mem_management``) allows the random
run's clients (``wpkts_send_limit_ms_client = 3000``; client.c:408 counts every packet a TX
core sends, acquires and releases alike). The model does not cap closed-loop clients; the
figure checks that the cap could not have bound."""
TIMEOUT_SET = 0.5
"""A request latency above this share of the attempt timeout (``clients.timeout_us``) is
set by the timeout rather than by where the lock lives: an attempt waits at most the
timeout, so under contention every allocation's slowest grants crowd just below it."""
UNUSED = 0.05
"""Below this share of the grants made by the switch with the most memory, the switch's
memory holds no lock the workload asks for often: memory cannot change throughput."""


def _fig13_table(experiment: Experiment, results: list[dict[str, Any]]) -> pd.DataFrame:
    """The summary rows, plus the packets each client machine sent per ms of the measured
    period (``sent_per_ms_per_machine``): an acquire per grant and per retry, a release per
    grant (the most a machine's TX cores put on the wire together); and the latency tail
    the attempt timeout does not set: ``tail_q``, the highest quantile of the latency CDF
    below :data:`TIMEOUT_SET` of the attempt timeout in every run, and each run's latency
    there (``latency_tail_us``)."""
    table = summary_table(experiment, results)
    machines = pd.Series([p.config.clients.machines for p in experiment.points],
                         index=table.index)
    table["sent_per_ms_per_machine"] = (2 * table["granted"] + table["retries"]) / (
        table["measured_s"] * 1e3 * machines)
    cdfs = [pd.DataFrame(r["cdf"], columns=["q", "latency_us"]) for r in results]
    below = [c.loc[c["latency_us"] < TIMEOUT_SET * p.config.clients.timeout_us, "q"].max()
             for c, p in zip(cdfs, experiment.points, strict=True)]
    tail_q = min(below) if below else float("nan")
    table["tail_q"] = tail_q
    table["latency_tail_us"] = [
        float(c.loc[np.isclose(c["q"], tail_q), "latency_us"].iloc[0])
        if np.isfinite(tail_q) else float("nan") for c in cdfs]
    return table


def send_cap_check(table: pd.DataFrame) -> Check:
    """console.py caps the random run's clients at :data:`RANDOM_SEND_CAP_PER_MS` packets
    per ms per TX core; a machine sending fewer than that on all its cores together could
    not have been held back by it, so leaving the cap out of the model changes nothing."""
    sent = table.loc[table[POLICY] == "random", "sent_per_ms_per_machine"].max()
    return Check(f"the random run's unmodelled send cap ({RANDOM_SEND_CAP_PER_MS:,} packets "
                 "per ms per TX core, console.py:565) cannot bind",
                 sent < RANDOM_SEND_CAP_PER_MS,
                 f"each random-run client machine sent {sent:,.0f} packets per ms on all its "
                 "cores together")


def _fig13_checks(table: pd.DataFrame) -> list[Check]:
    t = table.set_index(POLICY)
    k, r = t.loc["knapsack"], t.loc["random"]
    return [
        Check("knapsack serves more requests in the switch than random",
              k["switch_rps"] > 2 * r["switch_rps"],
              f"switch {k['switch_rps']:,.0f} vs {r['switch_rps']:,.0f} requests/s"),
        Check("knapsack improves the total throughput",
              k["throughput_rps"] > r["throughput_rps"],
              f"{k['throughput_rps']:,.0f} vs {r['throughput_rps']:,.0f} requests/s"),
        Check("knapsack lowers latency, at the mean and at the tail",
              k["latency_mean_us"] < r["latency_mean_us"] and
              k["latency_p99_us"] < r["latency_p99_us"] and
              k["latency_p999_us"] < r["latency_p999_us"],
              f"mean {k['latency_mean_us']:.1f} vs {r['latency_mean_us']:.1f} us, p99 "
              f"{k['latency_p99_us']:.1f} vs {r['latency_p99_us']:.1f} us, p99.9 "
              f"{k['latency_p999_us']:.1f} vs {r['latency_p999_us']:.1f} us"),
        tail_check(k, r),
        send_cap_check(table),
        safe_and_live(table),
    ]


def tail_check(k: pd.Series, r: pd.Series) -> Check:
    """Random's latency is worse than knapsack's, especially at the tail: its p99 ratio
    over knapsack exceeds its mean ratio (section 6.4)."""
    mean = r["latency_mean_us"] / k["latency_mean_us"]
    tail = r["latency_p99_us"] / k["latency_p99_us"]
    detail = f"random / knapsack: mean {mean:.2f}x, p99 {tail:.2f}x"
    q = k.get("tail_q", float("nan"))
    if np.isfinite(q) and q < 0.99:
        below = r["latency_tail_us"] / k["latency_tail_us"]
        detail += (f"; above p{q * 100:g} a run's latency reaches half the attempt timeout, "
                   f"which then sets it (p99 {k['latency_p99_us']:,.0f} and "
                   f"{r['latency_p99_us']:,.0f} us); at p{q * 100:g}: {below:.2f}x")
    return Check("random's latency is worse, especially at the tail (p99 ratio > mean ratio "
                 "> 1)", tail > mean > 1, detail)


def _fig13_plot(table: pd.DataFrame, cdf: pd.DataFrame) -> MplFigure:
    fig, (left, right) = p.axes("Figure 13: knapsack vs random memory allocation (TPC-C)",
                                "allocation", "throughput (M lock requests/s)", ncols=2)
    t = table.set_index(POLICY)
    names = list(t.index)
    left.bar(names, t["switch_rps"], label="lock switch", color=p.SWITCH_COLOR)
    left.bar(names, t["server_rps"], bottom=t["switch_rps"], label="lock servers",
             color=p.SERVER_COLOR)
    left.set_title("(a) throughput and where it is served", fontsize=10)
    p.millions(left)
    p.legend(left)
    for (policy, rows), style in zip(cdf.groupby(POLICY), ("-", "--"), strict=False):
        right.plot(rows["latency_us"], rows["q"], style, label=policy)
    right.set_xscale("log")
    right.set_xlabel("request latency (us)")
    right.set_ylabel("CDF")
    right.set_ylim(0, 1.01)
    right.set_title("(b) latency CDF", fontsize=10)
    p.legend(right)
    return fig


def _fig14a_checks(table: pd.DataFrame) -> list[Check]:
    thinks = sorted(table[THINK].unique())
    zero = table[table[THINK] == thinks[0]].sort_values(SLOTS)
    longest = table[table[THINK] == thinks[-1]].sort_values(SLOTS)
    rps = zero["throughput_rps"].tolist()
    return [
        Check("at think time 0 throughput grows with switch memory",
              rising(rps) and rps[-1] > 1.1 * rps[0],
              f"{rps[0]:,.0f} -> {rps[-1]:,.0f} requests/s"),
        Check("with the longest think time throughput is much lower",
              longest["throughput_rps"].iloc[-1] < 0.6 * rps[-1],
              f"{longest['throughput_rps'].iloc[-1]:,.0f} at think {thinks[-1]:g} us vs "
              f"{rps[-1]:,.0f} at 0, most memory"),
        safe_and_live(table),
    ]


def _fig14b_checks(table: pd.DataFrame) -> list[Check]:
    k = table[table[POLICY] == "knapsack"].sort_values(SLOTS)["throughput_rps"].tolist()
    r = table[table[POLICY] == "random"].sort_values(SLOTS)["throughput_rps"].tolist()
    spread = (max(r) - min(r)) / r[0]
    rises = Check("knapsack: throughput rises with memory", rising(k) and k[-1] > 1.1 * k[0],
                  f"{k[0]:,.0f} -> {k[-1]:,.0f} requests/s")
    return [
        _with_reason(rises, table),
        Check("random: more memory does not improve throughput", spread <= FLAT,
              f"{min(r):,.0f}-{max(r):,.0f} requests/s ({spread:.1%})"),
        _with_reason(saturation_check(table), table),
        safe_and_live(table),
    ]


def _with_reason(check: Check, table: pd.DataFrame) -> Check:
    """``check``, and if it fails while the knapsack's switch with the most memory grants
    under :data:`UNUSED` of the requests (``switch_share``), that reason: no lock the
    workload asks for is popular enough for the switch (as on lock ids drawn uniformly
    over millions of locks), so memory cannot change throughput."""
    if check.holds or "switch_share" not in table.columns:
        return check
    k = table[table[POLICY] == "knapsack"].sort_values(SLOTS)
    share, most = float(k["switch_share"].iloc[-1]), int(k[SLOTS].iloc[-1])
    if share >= UNUSED:
        return check
    return Check(check.claim, check.holds,
                 f"{check.detail}; with all {most:,} slots the switch grants {share:.2%} of "
                 "the requests: the workload has no lock popular enough to be worth a slot "
                 "(lock ids spread evenly over millions of locks), so switch memory cannot "
                 "change throughput")


def saturation_check(table: pd.DataFrame) -> Check:
    """Knapsack reaches its maximum throughput (within :data:`NEAR_MAX`) with a small
    fraction of the switch memory (at most :data:`SMALL_FRACTION` of the largest memory run),
    and memory matters (the smallest memory run is below that); the detail says at how many
    slots."""
    k = table[table[POLICY] == "knapsack"].sort_values(SLOTS)
    best = k["throughput_rps"].max()
    reached = int(k[k["throughput_rps"] >= NEAR_MAX * best][SLOTS].iloc[0])
    most = int(k[SLOTS].max())
    return Check(f"knapsack reaches its maximum within a small fraction of the switch memory "
                 f"(<= {SMALL_FRACTION:.0%})",
                 reached <= SMALL_FRACTION * most
                 and k["throughput_rps"].iloc[0] < NEAR_MAX * best,
                 f"{NEAR_MAX:.0%} of its best {best:,.0f} requests/s at {reached:,} of "
                 f"{most:,} slots ({reached / most:.1%})")


def _lines_vs_slots(table: pd.DataFrame, key: str, label, title: str) -> MplFigure:
    fig, (ax,) = p.axes(title, "switch memory (queue slots)", "throughput (M lock requests/s)")
    for (value, rows), marker in zip(table.groupby(key, sort=True), p.markers(), strict=False):
        rows = rows.sort_values(SLOTS)
        ax.plot(rows[SLOTS], rows["throughput_rps"], marker=marker, label=label(value))
    ax.set_xscale("symlog", linthresh=max(1, table[table[SLOTS] > 0][SLOTS].min()))
    slots = sorted(table[SLOTS].unique())
    ax.set_xticks(slots, [f"{s / 1000:g}K" if s >= 1000 else f"{s:g}" for s in slots],
                  fontsize=8)
    ax.minorticks_off()
    p.millions(ax)
    p.from_zero(ax)
    p.legend(ax)
    return fig


def _st_table(experiment, results) -> pd.DataFrame:
    t = summary_table(experiment, results)
    t["bound_rps"] = t[SLOTS] / (t["hold_time_us"] / 1e6)
    t["switch_over_bound"] = t["switch_rps"] / t["bound_rps"]
    return t


def _st_checks(table: pd.DataFrame) -> list[Check]:
    worst = table["switch_over_bound"].max()
    checks = [Check("the switch never serves more than S/T requests/s", worst <= 1.05,
                    f"largest switch rate / (S/T): {worst:.2f}")]
    for slots, rows in table.groupby(SLOTS):
        rps = rows.sort_values(THINK)["switch_rps"].tolist()
        checks.append(Check(f"{slots} slots: longer holds serve fewer requests",
                            falling(rps) and rps[-1] < 0.6 * rps[0],
                            f"{rps[0]:,.0f} -> {rps[-1]:,.0f} requests/s"))
    for think, rows in table.groupby(THINK):
        rps = rows.sort_values(SLOTS)["switch_rps"].tolist()
        checks.append(Check(f"think time {think:g} us: more slots serve more requests",
                            rising(rps) and rps[-1] > rps[0],
                            f"{rps[0]:,.0f} -> {rps[-1]:,.0f} requests/s"))
    checks.append(safe_and_live(table))
    return checks


def _st_plot(table: pd.DataFrame) -> MplFigure:
    fig, (ax,) = p.axes("Section 4.5: S slots held T us serve at most S/T requests/s",
                        "slot hold time T (us)", "switch throughput (M lock requests/s)")
    for (slots, rows), marker in zip(table.groupby(SLOTS), p.markers(), strict=False):
        rows = rows.sort_values("hold_time_us")
        line, = ax.plot(rows["hold_time_us"], rows["switch_rps"], marker=marker,
                        label=f"S = {slots:,} slots")
        ax.plot(rows["hold_time_us"], rows["bound_rps"], ":", color=line.get_color())
    ax.plot([], [], ":", color="grey", label="S/T (dotted, same colour)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    p.log_millions(ax)
    p.legend(ax)
    return fig


FIGURES = [
    Figure("fig13", "Figure 13: knapsack vs random allocation", "6.4", _fig13_table,
           _fig13_checks, lambda t, x: _fig13_plot(t, x["cdf"]),
           extra=lambda e, r: {"cdf": cdf_table(e, r)}),
    Figure("fig14a", "Figure 14a: switch memory x think time", "6.4", summary_table,
           _fig14a_checks,
           lambda t, x: _lines_vs_slots(t, THINK, lambda v: f"think time {v:g} us",
                                     "Figure 14a: switch memory x think time (TPC-C)")),
    Figure("fig14b", "Figure 14b: switch memory x allocation policy", "6.4", summary_table,
           _fig14b_checks,
           lambda t, x: _lines_vs_slots(t, POLICY, str,
                                     "Figure 14b: switch memory x allocation (TPC-C)"),
           required=False),
    Figure("st", "Section 4.5: switch throughput is bounded by S/T", "4.5", _st_table,
           _st_checks, lambda t, x: _st_plot(t)),
]
