"""``netlock plan --plot FILE.png``: the shared-queue layout and switch-vs-server load.

Three panels in the toolkit's style (:mod:`netlock.plotstyle`): (1) the used part of the
shared queue slot by slot, coloured by the value r_i / c_i of the lock owning each slot,
with register-array and priority boundaries (the title says how much of the queue that
is); (2) the rate the switch guarantees as slots are handed out in knapsack order and in a
random order; (3) the load on the switch and on the lock servers beside the servers'
capacity and the S/T bound, all in req/s from 0.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import LogNorm
from matplotlib.figure import Figure

from netlock import plotstyle
from planner.allocate import knapsack_order, random_order
from planner.planning import PlanReport

MARGIN = 0.05
"""Free slots shown past the last used one, as a share of the used span."""


def plot_plan(report: PlanReport, path: str | Path) -> None:
    """Render the three panels to ``path`` (PNG)."""
    with plotstyle.styled():
        plotstyle.save(plan_figure(report), path)


def plan_figure(report: PlanReport) -> Figure:
    """The three panels (call inside :func:`netlock.plotstyle.styled`)."""
    fig = plotstyle.figure(9.0, 9.0)
    axes = fig.subplots(3, 1, height_ratios=[1.1, 2, 1.6])
    fig.suptitle(f"Plan: {report.plan.summary.locks_in_switch:,} of "
                 f"{report.plan.summary.locks_total:,} locks in the switch "
                 f"({report.plan.summary.policy})", fontweight="bold")
    _layout_panel(axes[0], report)
    _curve_panel(axes[1], report)
    _load_panel(axes[2], report)
    return fig


def _layout_panel(ax: Axes, report: PlanReport) -> None:
    geometry, entries = report.plan.geometry, report.plan.entries
    total = geometry.total_slots
    value = np.full(total, np.nan)
    if len(entries):
        per_slot = entries.rate_rps / np.maximum(entries.contention, 1)
        owner = np.repeat(np.arange(len(entries)), entries.slots)
        first_of_owner = np.cumsum(entries.slots) - entries.slots
        slot = entries.left[owner] + np.arange(len(owner)) - first_of_owner[owner]
        value[slot] = per_slot[owner]
    used = int(np.count_nonzero(np.isfinite(value)))
    last = int(np.flatnonzero(np.isfinite(value))[-1]) + 1 if used else 0
    shown = min(total, max(int(last * (1 + MARGIN)), 1))
    cmap = matplotlib.colormaps["viridis"].with_extremes(bad="#e6e6e6")
    positive = value[np.isfinite(value) & (value > 0)]
    norm = LogNorm(positive.min(), positive.max()) if len(positive) and \
        positive.min() < positive.max() else None
    image = ax.imshow(value[None, :shown], aspect="auto", cmap=cmap, norm=norm,
                      extent=(0, shown, 0, 1), interpolation="nearest")
    for start, arr in zip(geometry.array_starts, geometry.arrays, strict=False):
        if start < shown:
            ax.axvline(start, color="black", lw=1)
            ax.text(start, 0.88, f" array in stage {arr.stage}", fontsize=7,
                    transform=ax.get_xaxis_transform())
    for cls, (first, _) in enumerate(geometry.priority_ranges):
        if geometry.priorities > 1 and first < shown:
            ax.text(first, 0.08, f" priority {cls}", fontsize=7,
                    transform=ax.get_xaxis_transform(),
                    bbox={"facecolor": "white", "alpha": 0.7, "lw": 0})
    ax.set_yticks([])
    ax.grid(False)
    ax.set_xlim(0, shown)
    ax.set_xlabel("shared-queue slot" + (f" (first {shown:,} of {total:,}; the rest are free)"
                                         if shown < total else ""))
    ax.set_title(f"Shared-queue layout: {used:,} of {total:,} slots used", loc="left")
    bar = ax.figure.colorbar(image, ax=ax, pad=0.01)
    bar.set_label("r_i / c_i (req/s per slot)", fontsize=7)


def _curve_panel(ax: Axes, report: PlanReport) -> None:
    stats = report.stats
    peak = 0.0
    for label, order in (("knapsack order (Algorithm 3)",
                          knapsack_order(stats.rate_rps, stats.contention)),
                         ("random order", random_order(len(stats), report.plan.inputs.slots))):
        slots = np.concatenate([[0], np.cumsum(stats.contention[order])])
        rate = np.concatenate([[0.0], np.cumsum(stats.rate_rps[order])])
        ax.plot(slots, rate, label=label)
        peak = max(peak, float(rate[-1]))
    budget = report.plan.summary.slots_total
    ax.axvline(budget, color="black", ls="--", lw=1, label=f"budget S = {budget:,} slots")
    ax.set_xscale("symlog", linthresh=1)
    ax.set_xlim(left=0)
    ax.set_xlabel("switch slots handed out (each lock takes c_i; log scale)")
    unit = plotstyle.rate(ax, peak)
    ax.set_ylabel(f"rate the switch guarantees ({unit})")
    ax.set_title("Guaranteed switch rate vs switch memory", loc="left")
    ax.legend(loc="upper left")


def _load_panel(ax: Axes, report: PlanReport) -> None:
    s = report.plan.summary
    capacity = s.servers_needed * s.server_rate
    names = ["switch", "lock servers", "lock-server capacity"]
    values = [s.switch_rps, s.server_rps, capacity]
    switch, server = plotstyle.SWITCH_COLOR, plotstyle.SERVER_COLOR
    bars = ax.barh(names, values, color=[switch, server, "none"],
                   edgecolor=[switch, server, server],
                   hatch=[None, None, "//"])
    ax.invert_yaxis()
    peak = max([*values, 1.0])
    unit = plotstyle.rate(ax, peak, axis="x")
    ax.set_xlim(0, peak * 1.25)
    ax.bar_label(bars, labels=[f"{v / _scale(unit):,.3g} {unit}" for v in values], padding=3,
                 fontsize=8)
    if np.isfinite(report.st_bound_rps) and report.st_bound_rps <= peak * 1.25:
        ax.axvline(report.st_bound_rps, color=plotstyle.SWITCH_COLOR, ls=":", lw=1.2,
                   label=f"S/T bound ({report.hold_time_us:.3g} us hold)")
        plotstyle.legend_outside(ax)
    ax.set_xlabel(f"requests per second ({unit})")
    ax.set_title(f"Load: switch vs {s.servers_needed} lock server(s) of "
                 f"{s.server_rate / 1e6:g} M req/s", loc="left")
    ax.grid(axis="y", visible=False)


def _scale(unit: str) -> float:
    return {"M": 1e6, "K": 1e3}.get(unit.split(" ")[0], 1.0)
