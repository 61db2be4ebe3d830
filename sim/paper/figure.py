"""What a paper figure is to the toolkit: its experiment, its table, its checks and its plot.

A :class:`Figure` turns the measured points of its experiment (:mod:`sim.paper.run_points`) into
a table with one row per plotted point (``table``), checks the qualitative outcome the
paper's text states for it (``checks``: each a :class:`Check` that holds or not, never a
comparison with the paper's withheld numbers) and draws the figure (``plot``). Figures
whose lock managers the toolkit does not model yet are reserved with what they need.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from matplotlib.figure import Figure as MplFigure

from .experiment_file import Experiment


@dataclass(frozen=True)
class Check:
    """One qualitative outcome the paper states, and whether the run shows it."""

    claim: str
    holds: bool
    detail: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "holds", bool(self.holds))

    def to_dict(self) -> dict[str, Any]:
        return {"claim": self.claim, "holds": self.holds, "detail": self.detail}


@dataclass(frozen=True)
class Figure:
    """A figure of the paper's evaluation (section 6) or analysis (section 4.5)."""

    name: str
    title: str
    section: str
    table: Callable[[Experiment, list[dict[str, Any]]], pd.DataFrame]
    checks: Callable[[pd.DataFrame], list[Check]]
    plot: Callable[[pd.DataFrame, dict[str, pd.DataFrame]], MplFigure]
    """The figure from its table and its ``extra`` tables."""
    extra: Callable[[Experiment, list[dict[str, Any]]], dict[str, pd.DataFrame]] = field(
        default=lambda experiment, results: {})
    """Tables beside the points (such as a latency CDF), written as ``FIG-<name>.csv``."""
    required: bool = True
    """Whether a check that fails makes ``netlock paper`` fail; figures whose outcome the
    model does not reproduce yet report their checks only (README)."""


def summary_table(experiment: Experiment, results: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per point: the values it varies, then its summary row."""
    return pd.DataFrame.from_records(
        [{**point.values, **result["row"]}
         for point, result in zip(experiment.points, results, strict=True)])


def timeseries_table(experiment: Experiment, results: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per (point, time bin, tenant): the values the point varies, ``t_s``,
    ``tenant``, ``granted_rps`` and ``tps`` (bins of ``sim.timeseries_bin_s``), and the
    point's ``violations`` and ``stalled``."""
    return pd.DataFrame.from_records(
        [{**point.values, **sample, "violations": result["row"]["violations"],
          "stalled": result["row"]["stalled"]}
         for point, result in zip(experiment.points, results, strict=True)
         for sample in result["timeseries"]])


def cdf_table(experiment: Experiment, results: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per (point, quantile): the values the point varies, ``q``, ``latency_us``."""
    return pd.DataFrame.from_records(
        [{**point.values, **sample}
         for point, result in zip(experiment.points, results, strict=True)
         for sample in result["cdf"]])


def safe_and_live(table: pd.DataFrame) -> Check:
    """Every run of the figure: no two incompatible holders, no request stalled."""
    violations = int(table["violations"].sum())
    stalled = int(table["stalled"].sum())
    return Check("every run is safe and live", violations == 0 and stalled == 0,
                 f"violations {violations}, stalled {stalled}")


def rising(values: list[float], slack: float = 0.02) -> bool:
    """Non-decreasing up to ``slack`` (relative) between neighbours."""
    return all(b >= a * (1 - slack) for a, b in itertools.pairwise(values))


def falling(values: list[float], slack: float = 0.02) -> bool:
    """Non-increasing up to ``slack`` (relative) between neighbours (positive values)."""
    return all(b <= a * (1 + slack) for a, b in itertools.pairwise(values))
