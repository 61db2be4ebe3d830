"""PNG plots of a sweep's results table (matplotlib, Agg backend: no display needed).

The first grid axis is the x axis; the second, if any, gives one line per value; further
axes split the plot into one file per combination of their values. One figure per metric:
granted throughput, transactions per second, p99 request latency and switch share.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

from netlock import atomic

METRICS = (
    ("throughput_rps", "granted lock requests / s"),
    ("tps", "transactions / s"),
    ("latency_p99_us", "p99 request latency (us)"),
    ("switch_share", "share granted by the switch"),
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
        for metric, label in METRICS:
            if metric not in part.columns:
                continue
            path = out / f"{metric}{suffix}.png"
            _plot(part, x_key, line_key, metric, label, path,
                  title=", ".join(f"{k}={v}" for k, v in zip(rest, values, strict=True)))
            written.append(path)
    return written


def _plot(table: pd.DataFrame, x_key: str, line_key: str | None, metric: str, label: str,
          path: Path, title: str) -> None:
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    lines = [(None, table)] if line_key is None else table.groupby(line_key, sort=True)
    markers = itertools.cycle("osD^vx*")
    for value, part in lines:
        part = part.sort_values(x_key)
        name = None if line_key is None else f"{line_key.split('.')[-1]} = {value}"
        ax.plot(part[x_key], part[metric], marker=next(markers), label=name)
    ax.set_xlabel(x_key)
    ax.set_ylabel(label)
    if title:
        ax.set_title(title)
    if line_key is not None:
        ax.legend()
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    atomic.write_with(path, lambda tmp: fig.savefig(tmp, format="png", dpi=110))
    plt.close(fig)
