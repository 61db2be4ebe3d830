"""The PNG of ``netlock capacity``: predicted throughput per switch memory for each lock-server
count (lines), the simulated racks beside them (markers), and the target."""

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
        fig = plotstyle.figure()
        ax = fig.add_subplot()
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
        return plotstyle.save(fig, path)
