"""PNG plots of a sweep's results table, in the toolkit's style (:mod:`netlock.plotstyle`).

The first grid axis is the x axis; the second, if any, gives one line per value; further
axes split the plot into one file per combination of their values. One figure per metric:
granted throughput, transactions per second, p99 request latency and switch share.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from netlock import plotstyle


@dataclass(frozen=True)
class Metric:
    """A results column and how to show it: title, y label (with unit) and y scale."""

    column: str
    title: str
    label: str
    unit: str
    """A rate's unit (``req/s``: shown in M or K as the values ask), ``%`` for a share
    (0..1 shown in percent), else the values' own unit."""


METRICS = (
    Metric("throughput_rps", "Lock throughput", "granted lock requests", "req/s"),
    Metric("tps", "Transaction throughput", "committed transactions", "txn/s"),
    Metric("latency_p99_us", "Tail latency", "p99 request latency", "us"),
    Metric("switch_share", "Switch share", "requests granted by the switch", "%"),
)


def plot_sweep(table: pd.DataFrame, keys: list[str], out_dir: str | Path) -> list[Path]:
    """Write one PNG per metric (and per combination of the axes beyond the second)."""
    out = Path(out_dir)
    x_key = keys[0]
    line_key = keys[1] if len(keys) > 1 else None
    rest = keys[2:]
    groups = (table.groupby(rest, sort=True) if rest else [((), table)])
    written = []
    for values, part in groups:
        values = values if isinstance(values, tuple) else (values,)
        suffix = "".join(f"_{k.split('.')[-1]}-{v}" for k, v in zip(rest, values, strict=True))
        fixed = ", ".join(f"{plotstyle.axis_label(k)} = {v}"
                          for k, v in zip(rest, values, strict=True))
        for metric in METRICS:
            if metric.column not in part.columns:
                continue
            path = out / f"{metric.column}{suffix}.png"
            written.append(plot_metric(part, x_key, line_key, metric, path, fixed))
    return written


def plot_metric(table: pd.DataFrame, x_key: str, line_key: str | None, metric: Metric,
                path: Path, fixed: str = "") -> Path:
    """One metric against ``x_key``, a line per value of ``line_key``, as a PNG."""
    with plotstyle.styled():
        return plotstyle.save(metric_figure(table, x_key, line_key, metric, fixed), path)


def metric_figure(table: pd.DataFrame, x_key: str, line_key: str | None, metric: Metric,
                  fixed: str = "") -> Figure:
    """The figure of :func:`plot_metric` (call inside :func:`netlock.plotstyle.styled`)."""
    fig = plotstyle.figure()
    ax = fig.subplots()
    lines = [(None, table)] if line_key is None else table.groupby(line_key, sort=True)
    for i, (value, part) in enumerate(lines):
        part = part.sort_values(x_key)
        ax.plot(part[x_key], part[metric.column], marker=plotstyle.MARKERS[i % 8],
                label=None if line_key is None else f"{value:g}" if isinstance(
                    value, float) else str(value))
    plotstyle.titles(ax, f"{metric.title} vs {plotstyle.axis_label(x_key)}", fixed)
    ax.set_xlabel(plotstyle.axis_label(x_key))
    if metric.unit.endswith("/s"):
        unit = plotstyle.rate(ax, float(table[metric.column].max()), metric.unit)
    elif metric.unit == "%":
        plotstyle.percent(ax)
        unit = "%"
    else:
        plotstyle.from_zero(ax)
        unit = metric.unit
    ax.set_ylabel(f"{metric.label} ({unit})")
    if line_key is not None:
        plotstyle.legend_outside(ax, title=plotstyle.axis_label(line_key))
    return fig
