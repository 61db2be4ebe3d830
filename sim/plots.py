"""PNG plots of a sweep's results table, in the toolkit's style (:mod:`netlock.plotstyle`).

The first grid axis is the x axis; the second, if any, gives one line per value; further
axes split the plot into one file per combination of their values. One figure per metric:
granted throughput, transactions per second, p99 request latency and switch share. A
numeric x axis spanning two decades or more (switch memory 0..100,000 slots) is drawn on a
symmetric-log scale; a categorical one (``manager.kind``) as points at evenly spaced, labelled
positions. Points whose metric is missing (a run that granted nothing has no latency) are
left out, never drawn as 0. With several seeds per point the ``<metric>_ci95`` columns give
error bars. ``caption`` (config, engine, measured time) goes under the title.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import NullLocator

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


MAX_VALUE_TICKS = 8
"""A log-scaled x axis with at most this many grid values is ticked at exactly those values."""

METRICS = (
    Metric("throughput_rps", "Lock throughput", "granted lock requests", "req/s"),
    Metric("tps", "Transaction throughput", "committed transactions", "txn/s"),
    Metric("latency_p99_us", "Tail latency", "p99 request latency", "us"),
    Metric("switch_share", "Switch share", "requests granted by the switch", "%"),
)


def plot_sweep(table: pd.DataFrame, keys: list[str], out_dir: str | Path,
               caption: str = "") -> list[Path]:
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
        fixed = "; ".join(t for t in (caption, ", ".join(
            f"{plotstyle.axis_label(k)} = {v}" for k, v in zip(rest, values, strict=True)))
            if t)
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
    table = table[table[metric.column].notna()]
    categorical = not pd.api.types.is_numeric_dtype(table[x_key])
    categories = sorted(table[x_key].astype(str).unique())
    lines = [(None, table)] if line_key is None else table.groupby(line_key, sort=True)
    for i, (value, part) in enumerate(lines):
        part = part.sort_values(x_key)
        x = ([categories.index(v) for v in part[x_key].astype(str)] if categorical
             else part[x_key])
        error = part.get(f"{metric.column}_ci95")
        ax.errorbar(x, part[metric.column], yerr=error, capsize=3 if error is not None else 0,
                    marker=plotstyle.MARKERS[i % 8],
                    linestyle="none" if categorical else "-",
                    label=None if line_key is None else f"{value:g}" if isinstance(
                        value, float) else str(value))
    plotstyle.titles(ax, f"{metric.title} vs {plotstyle.axis_label(x_key)}", fixed)
    ax.set_xlabel(plotstyle.axis_label(x_key))
    if categorical:
        ax.set_xticks(range(len(categories)), categories, rotation=30, ha="right")
    elif spans_decades(table[x_key]):
        positive = table[x_key][table[x_key] > 0]
        ax.set_xscale("symlog", linthresh=float(positive.min()))
        ticks = sorted(table[x_key].unique())
        if len(ticks) <= MAX_VALUE_TICKS:
            ax.set_xticks(ticks, [f"{v:,g}" for v in ticks])
            ax.xaxis.set_minor_locator(NullLocator())
    if metric.unit.endswith("/s"):
        unit = plotstyle.rate(ax, float(table[metric.column].max()) if len(table) else 0.0,
                              metric.unit)
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


def spans_decades(values: pd.Series, decades: float = 2.0) -> bool:
    """Whether the positive ``values`` span ``decades`` powers of ten or more."""
    positive = values[values > 0]
    return len(positive) > 1 and float(positive.max() / positive.min()) >= 10 ** decades
