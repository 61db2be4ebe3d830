"""``netlock plan --plot FILE.png``: the shared-queue layout and switch-vs-server load.

Three panels: (1) the shared queue slot by slot, coloured by the value r_i / c_i of the
lock owning each slot (free slots grey), with register-array and priority boundaries;
(2) the rate the switch guarantees as slots are handed out in knapsack order and in a
random order; (3) the load split between switch and lock servers, with the servers'
capacity and the S/T bound. Drawn on a bare :class:`matplotlib.figure.Figure` (the Agg
canvas, no pyplot state), written atomically.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import LogNorm
from matplotlib.figure import Figure

from netlock import atomic
from netlock.errors import NetlockError
from planner.allocate import knapsack_order, random_order
from planner.planning import PlanReport


def plot_plan(report: PlanReport, path: str | Path) -> None:
    """Render the three panels to ``path`` (PNG)."""
    fig = Figure(figsize=(10, 9))
    axes = fig.subplots(3, 1, gridspec_kw={"height_ratios": [1, 2, 2]})
    _layout_panel(axes[0], report)
    _curve_panel(axes[1], report)
    _load_panel(axes[2], report)
    fig.tight_layout()
    try:
        atomic.write_with(path, lambda tmp: fig.savefig(tmp, format="png", dpi=110))
    except OSError as exc:
        raise NetlockError(f"--plot {path}: cannot write: {exc.strerror or exc}") from None


def _layout_panel(ax: Axes, report: PlanReport) -> None:
    geometry, entries = report.plan.geometry, report.plan.entries
    value = np.full(geometry.total_slots, np.nan)
    if len(entries):
        per_slot = entries.rate_rps / np.maximum(entries.contention, 1)
        owner = np.repeat(np.arange(len(entries)), entries.slots)
        first_of_owner = np.cumsum(entries.slots) - entries.slots
        slot = entries.left[owner] + np.arange(len(owner)) - first_of_owner[owner]
        value[slot] = per_slot[owner]
    cmap = matplotlib.colormaps["viridis"].with_extremes(bad="#dddddd")
    positive = value[np.isfinite(value) & (value > 0)]
    norm = LogNorm(positive.min(), positive.max()) if len(positive) and \
        positive.min() < positive.max() else None
    image = ax.imshow(value[None, :], aspect="auto", cmap=cmap, norm=norm,
                      extent=(0, geometry.total_slots, 0, 1), interpolation="nearest")
    for start, arr in zip(geometry.array_starts[:-1], geometry.arrays, strict=True):
        ax.axvline(start, color="black", lw=1)
        ax.text(start, 0.85, f" stage {arr.stage}", fontsize=7,
                transform=ax.get_xaxis_transform())
    for cls, (first, _) in enumerate(geometry.priority_ranges):
        ax.text(first, 0.08, f" priority {cls}", fontsize=7, transform=ax.get_xaxis_transform(),
                bbox={"facecolor": "white", "alpha": 0.7, "lw": 0})
    ax.set_yticks([])
    ax.set_xlabel("shared-queue slot")
    ax.set_title("Shared-queue layout (colour: r_i / c_i of the owning lock, rps per slot)",
                 fontsize=9, loc="left", pad=4)
    ax.figure.colorbar(image, ax=ax, pad=0.01)


def _curve_panel(ax: Axes, report: PlanReport) -> None:
    stats = report.stats
    for label, order in (("knapsack order", knapsack_order(stats.rate_rps, stats.contention)),
                         ("random order", random_order(len(stats), report.plan.inputs.slots))):
        slots = np.concatenate([[0], np.cumsum(stats.contention[order])])
        rate = np.concatenate([[0.0], np.cumsum(stats.rate_rps[order])])
        ax.plot(slots, rate, label=label)
    ax.axvline(report.plan.summary.slots_total, color="black", ls="--", lw=1,
               label=f"budget S = {report.plan.summary.slots_total:,} slots")
    ax.set_xscale("symlog", linthresh=1)
    ax.set_xlim(left=0)
    ax.set_xlabel("switch slots (each lock gets c_i)")
    ax.set_ylabel("rate the switch guarantees (rps)")
    ax.set_title("Guaranteed switch rate vs slots", fontsize=9, loc="left")
    ax.legend(fontsize=8)


def _load_panel(ax: Axes, report: PlanReport) -> None:
    s = report.plan.summary
    ax.bar(["switch", "lock servers"], [s.switch_rps, s.server_rps], color=["C2", "C1"])
    capacity = s.servers_needed * s.server_rate
    ax.axhline(capacity, color="C1", ls="--", lw=1,
               label=f"{s.servers_needed} server(s) x {s.server_rate:,.0f} rps")
    if np.isfinite(report.st_bound_rps) and report.st_bound_rps < 10 * max(s.total_rps, 1):
        ax.axhline(report.st_bound_rps, color="C2", ls=":", lw=1,
                   label=f"S/T bound ({report.hold_time_us:.3g} us hold)")
    ax.set_ylabel("requests per second")
    ax.set_title("Load: switch vs lock servers", fontsize=9, loc="left")
    ax.legend(fontsize=8)
