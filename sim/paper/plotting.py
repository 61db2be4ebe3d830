"""Drawing the paper's figures in the toolkit's one look (:mod:`netlock.plotstyle`): panels
with a shared title, rate axes in M req/s from 0, legends off the data.

Figure modules draw with these helpers inside :func:`netlock.plotstyle.styled` and return a
bare matplotlib Figure; :func:`sim.paper.experiments.write` saves it.
"""

from __future__ import annotations

from collections.abc import Iterator

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from netlock import plotstyle
from netlock.plotstyle import SERVER_COLOR, SWITCH_COLOR, from_zero, legend_outside

__all__ = ["SERVER_COLOR", "SWITCH_COLOR", "axes", "from_zero", "legend", "log_millions",
           "markers", "millions", "thousands"]

HEIGHT = 3.6
"""Panel height (inches)."""


def axes(title: str, xlabel: str, ylabel: str, ncols: int = 1, width: float = 5.6,
         sharey: bool = False) -> tuple[Figure, list[Axes]]:
    """A figure of ``ncols`` panels under one title; the first panel gets the axis labels;
    ``sharey`` for panels whose values are compared across panels."""
    fig = plotstyle.figure(width * ncols, HEIGHT)
    panels = list(fig.subplots(1, ncols, squeeze=False, sharey=sharey)[0])
    plotstyle.titles(panels[0], title)
    panels[0].set_xlabel(xlabel)
    panels[0].set_ylabel(ylabel)
    return fig, panels


def millions(ax: Axes, axis: str = "y") -> None:
    """A linear rate axis in millions, from 0 (the label says M ...)."""
    plotstyle.rate(ax, 1e6, axis=axis)


def thousands(ax: Axes, axis: str = "y") -> None:
    """A linear rate axis in thousands, from 0 (the label says thousands)."""
    plotstyle.rate(ax, 1e3, axis=axis)


def log_millions(ax: Axes) -> None:
    """A logarithmic y axis with its ticks in millions."""
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v / 1e6:g}"))


def legend(ax: Axes, title: str | None = None) -> None:
    legend_outside(ax, title)


def markers() -> Iterator[str]:
    while True:
        yield from plotstyle.MARKERS
