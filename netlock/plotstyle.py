"""One look for every figure the toolkit draws (sweeps, plans, runs, notebooks).

Figures are bare :class:`matplotlib.figure.Figure` objects on the Agg canvas (no display, no
pyplot state) with this module's style: titles, axis labels in words with units, rates in
M req/s and times in us (never an offset such as "1e7" above the axis), legends outside the
data, magnitudes measured from 0, and PNGs written atomically at print resolution.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import matplotlib as mpl
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, PercentFormatter

from netlock import atomic
from netlock.errors import ConfigError, NetlockError

DPI = 150
STYLE: dict[str, Any] = {
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.titleweight": "bold",
    "axes.labelsize": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.6,
    "axes.formatter.useoffset": False,
    "axes.formatter.limits": (-4, 6),
    "axes.prop_cycle": mpl.cycler(color=["#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                         "#E69F00", "#56B4E9", "#000000"]),
    "legend.fontsize": 8,
    "legend.frameon": False,
    "lines.linewidth": 1.6,
    "lines.markersize": 5,
    "savefig.dpi": DPI,
}
"""rcParams of every figure: the Okabe-Ito colours (readable in colour-blind vision and in
grey), no offset text, light grids."""

MARKERS = "osD^vP*X"
SWITCH_COLOR = "#009E73"
"""Load and grants of the switch, in every figure."""
SERVER_COLOR = "#D55E00"
"""Load and grants of the lock servers, in every figure."""

AXIS_LABELS = {
    "switch.slots": "switch memory (slots)",
    "workload.think_time_us": "think time (us)",
    "workload.zipf": "Zipf exponent",
    "workload.clients": "clients",
    "workload.locks": "locks",
    "workload.locks_per_txn": "locks per transaction",
    "servers.count": "lock servers",
    "servers.rate_rps": "lock-server rate (req/s)",
    "network.rtt_us": "round-trip time (us)",
    "network.loss": "packet loss probability",
    "lease.us": "lease (us)",
    "policy.allocation": "allocation policy",
    "sim.seed": "seed",
}
"""Human names with units of the config keys sweeps usually vary."""

UNITS = {"_us": "us", "_s": "s", "_rps": "req/s"}


def axis_label(key: str) -> str:
    """A dotted config key as an axis label: its human name with units (``switch.slots`` ->
    ``switch memory (slots)``); other keys by their last part, unit from the suffix."""
    if key in AXIS_LABELS:
        return AXIS_LABELS[key]
    name = key.rsplit(".", 1)[-1]
    for suffix, unit in UNITS.items():
        if name.endswith(suffix):
            return f"{name[: -len(suffix)].replace('_', ' ')} ({unit})"
    return name.replace("_", " ")


@contextmanager
def styled() -> Iterator[None]:
    """Draw inside this block to get the toolkit's look."""
    with mpl.rc_context(STYLE):
        yield


def figure(width: float = 6.4, height: float = 4.0) -> Figure:
    """A bare figure with a constrained layout (labels and outside legends fit), inside
    :func:`styled`."""
    return Figure(figsize=(width, height), layout="constrained")


def rate(ax: Axes, peak: float, unit: str = "req/s", axis: str = "y") -> str:
    """Show a rate axis in millions or thousands as its ``peak`` asks, from 0; the unit to
    put in its label (``M req/s``)."""
    scale, prefix = (1e6, "M ") if peak >= 1e6 else (1e3, "K ") if peak >= 1e3 else (1.0, "")
    fmt = FuncFormatter(lambda v, _pos: f"{v / scale:g}")
    if axis == "y":
        ax.yaxis.set_major_formatter(fmt)
        ax.set_ylim(bottom=0)
    else:
        ax.xaxis.set_major_formatter(fmt)
        ax.set_xlim(left=0)
    return f"{prefix}{unit}"


def percent(ax: Axes) -> None:
    """A share axis (0..1) in percent, 0 to 100 %."""
    ax.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
    ax.set_ylim(0, 1.05)


def from_zero(ax: Axes) -> None:
    """Start the y axis at 0 (magnitudes read true)."""
    ax.set_ylim(bottom=0)


SUBTITLE_CHARS_PER_IN = 15
"""Characters of an 8 pt subtitle per inch of axes width: longer ones wrap (not cut off)."""


def titles(ax: Axes, title: str, subtitle: str = "") -> None:
    """A figure's title above ``ax`` (bold) with an optional line of context under it."""
    ax.figure.suptitle(title, fontweight="bold", fontsize=10, x=0.01, ha="left")
    if subtitle:
        width = int(ax.get_position().width * ax.figure.get_figwidth() * SUBTITLE_CHARS_PER_IN)
        ax.set_title(textwrap.fill(subtitle, max(40, width)), loc="left", fontsize=8,
                     fontweight="normal", color="0.3")


def legend_outside(ax: Axes, title: str | None = None) -> None:
    """The legend to the right of the axes, off the data."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), title=title,
                  title_fontsize=8, borderaxespad=0.0)


FORMATS = ("png", "pdf", "svg")
"""Figure formats :func:`save` writes, chosen by the file's extension."""


def figure_format(path: str | Path) -> str:
    """The format ``path``'s extension names (png, pdf or svg); another is a ConfigError
    naming the path, so a command can refuse it before doing any work."""
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in FORMATS:
        kind = f"'.{suffix}'" if suffix else "a file without an extension"
        raise ConfigError(f"{path}: cannot write a figure as {kind}; name it .png, .pdf or "
                          f".svg")
    return suffix


def save(fig: Figure, path: str | Path) -> Path:
    """Write ``fig`` atomically in the format its extension names (:func:`figure_format`);
    a path that cannot be written is one error line."""
    target = Path(path)
    fmt = figure_format(target)
    try:
        atomic.write_with(target, lambda tmp: fig.savefig(tmp, format=fmt, dpi=DPI))
    except OSError as exc:
        raise NetlockError(f"{target}: cannot write: {exc.strerror or exc}") from None
    return target
