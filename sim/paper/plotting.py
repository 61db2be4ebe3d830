"""Drawing the paper's figures: one look for all of them (titles, units, M req/s scales).

Each figure module draws with these helpers and returns a matplotlib Figure; the caller
writes it (atomically) where the user asked.
"""

from __future__ import annotations

from collections.abc import Iterable

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

MARKERS = "osD^vx*"


def axes(title: str, xlabel: str, ylabel: str, ncols: int = 1,
         width: float = 6.4, sharey: bool = False) -> tuple[Figure, list[Axes]]:
    """A figure of ``ncols`` panels sharing a title; the first panel gets the labels;
    ``sharey`` for panels whose values are compared across panels."""
    fig, panels = plt.subplots(1, ncols, figsize=(width * ncols if ncols > 1 else width, 4.2),
                               squeeze=False, sharey=sharey)
    fig.suptitle(title, fontsize=12)
    ax_list = list(panels[0])
    for ax in ax_list:
        ax.grid(True, alpha=0.3)
        ax.spines[["top", "right"]].set_visible(False)
    ax_list[0].set_xlabel(xlabel)
    ax_list[0].set_ylabel(ylabel)
    return fig, ax_list


def millions(ax: Axes, axis: str = "y") -> None:
    """Tick labels of a rate axis in millions (the label says M ...)."""
    fmt = FuncFormatter(lambda v, _: f"{v / 1e6:g}")
    (ax.yaxis if axis == "y" else ax.xaxis).set_major_formatter(fmt)


def thousands(ax: Axes, axis: str = "y") -> None:
    fmt = FuncFormatter(lambda v, _: f"{v / 1e3:g}")
    (ax.yaxis if axis == "y" else ax.xaxis).set_major_formatter(fmt)


def from_zero(ax: Axes) -> None:
    """Start the y axis at 0, so that the size of a difference reads right."""
    ax.set_ylim(bottom=0)


def legend(ax: Axes, title: str | None = None) -> None:
    ax.legend(title=title, frameon=False, fontsize=9)


def markers() -> Iterable[str]:
    while True:
        yield from MARKERS


def finish(fig: Figure) -> Figure:
    fig.tight_layout()
    return fig
