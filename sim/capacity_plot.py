"""The PNG of ``netlock capacity``: predicted throughput per switch memory for each lock-server
count (lines), the simulated racks beside them (markers), and the target; under it the
verified racks' p99 of transaction latency, predicted beside simulated."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from netlock import plotstyle


def plot_frontier(grid: Any, rows: list[dict[str, Any]], target: Any, path: Path) -> Path:
    """Draw the frontier to ``path`` (written atomically)."""
    per_txn = target.tps is not None
    key_pred, key_sim = ("txn_rps", "sim_tps") if per_txn else ("total_rps", "sim_total_rps")
    goal = target.tps if per_txn else target.rps
    with plotstyle.styled():
        fig = plotstyle.figure(height=6.4)
        ax, lat = fig.subplots(2, 1, height_ratios=(3, 2))
        servers = sorted({c.servers for c in grid})
        peak = max([getattr(c, key_pred) for c in grid] + [r[key_sim] for r in rows] + [goal])
        for k in servers:
            line = sorted((c.slots, getattr(c, key_pred)) for c in grid if c.servers == k)
            ax.plot([s for s, _ in line], [v for _, v in line], marker=".", linewidth=1,
                    label=f"{k} server(s), predicted")
        for r in rows:
            ax.scatter([r["slots"]], [r[key_sim]], marker="o" if r["meets"] else "x",
                       s=40, color="black", zorder=3)
            ax.annotate(f"{r['servers']}", (r["slots"], r[key_sim]), fontsize=7,
                        xytext=(3, 3), textcoords="offset points")
        ax.axhline(goal, color="red", linestyle="--", linewidth=1, label="target")
        ax.set_xscale("log")
        ax.set_xlabel("switch memory (slots)")
        unit = plotstyle.rate(ax, peak, "txn/s" if per_txn else "req/s")
        ax.set_ylabel(f"throughput ({unit})")
        plotstyle.from_zero(ax)
        plotstyle.titles(ax, "Capacity frontier",
                         "lines: model; o simulated rack meets the target, x misses "
                         "(label: servers)")
        plotstyle.legend_outside(ax)
        _latency(lat, rows, target)
        return plotstyle.save(fig, path)


def _latency(ax: Any, rows: list[dict[str, Any]], target: Any) -> None:
    """The verified racks' p99 (us): the model's beside the simulator's."""
    slots = [r["slots"] for r in rows]
    ax.scatter(slots, [r["pred_p99_us"] for r in rows], marker="s", s=30, facecolors="none",
               edgecolors="black", label="p99, predicted", zorder=3)
    ax.scatter(slots, [r["sim_p99_us"] for r in rows], marker="o", s=30, color="black",
               label="p99, simulated", zorder=3)
    for r in rows:
        ax.annotate(f"{r['servers']}", (r["slots"], r["sim_p99_us"]), fontsize=7,
                    xytext=(3, 3), textcoords="offset points")
    if target.p99_us is not None:
        ax.axhline(target.p99_us, color="red", linestyle="--", linewidth=1,
                   label="p99 target")
    ax.set_xscale("log")
    ax.set_xlabel("switch memory (slots)")
    ax.set_ylabel("p99 transaction latency (us)")
    plotstyle.from_zero(ax)
    plotstyle.legend_outside(ax)
