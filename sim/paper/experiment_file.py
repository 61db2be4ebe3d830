"""A figure's experiment file (``configs/paper/<figure>.yaml``): what it runs at each scale.

The file names the experiment config the figure starts from (``config``, relative to the
file), overrides common to every point (``set``) and, per scale (``small`` for tests,
``full`` for the paper's ranges), more overrides and the points: ``grid`` axes (their
product) and ``zip`` axes (equal-length lists varied together, such as client machines and
their contexts). Each point is a validated :class:`~netlock.config.Config`; every point of a
figure runs with the same seed (common random numbers: the curves differ by the
parameters, not by noise). Prose in the file's comments says what the paper states and
what was chosen where it is silent.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from netlock.config import Config, load_config, override_config
from netlock.errors import ConfigError
from netlock.inputs import load_yaml

SCALES = ("small", "full")
CONFIG_DIR = Path(__file__).resolve().parents[2] / "configs"


@dataclass(frozen=True)
class PaperPoint:
    """One run of a figure: the values it varies (dotted key -> value) and its config."""

    values: dict[str, Any]
    config: Config


@dataclass(frozen=True)
class Experiment:
    """A figure's experiment at one scale."""

    figure: str
    scale: str
    path: Path
    points: tuple[PaperPoint, ...]
    keys: tuple[str, ...]
    """The varied keys, in the file's order (grid axes, then zip axes)."""


def spec_path(figure: str, config_dir: Path = CONFIG_DIR) -> Path:
    return config_dir / "paper" / f"{figure}.yaml"


def load_experiment(figure: str, scale: str, config_dir: Path = CONFIG_DIR,
                    extra: dict[str, Any] | None = None) -> Experiment:
    """The points of ``figure`` at ``scale``; ``extra``: typed overrides applied last
    (``--set``). Every problem is one :class:`ConfigError` naming the file and field."""
    if scale not in SCALES:
        raise ConfigError(f"--scale: expected one of {', '.join(SCALES)}, got {scale!r}")
    path = spec_path(figure, config_dir)
    doc = load_yaml(path, ConfigError, "experiment file")
    where = str(path)
    if not isinstance(doc, dict):
        raise ConfigError(f"{where}: expected a mapping with config, set, small and full")
    _keys(doc, where, {"config", "set", *SCALES})
    config_file = _field(doc, "config", str, where)
    common = _mapping(doc.get("set", {}), f"{where}: set")
    level = _mapping(doc.get(scale), f"{where}: {scale}")
    _keys(level, f"{where}: {scale}", {"set", "grid", "zip"})
    scale_set = _mapping(level.get("set", {}), f"{where}: {scale}.set")
    grid = _axes(level.get("grid", {}), f"{where}: {scale}.grid")
    zipped = _axes(level.get("zip", {}), f"{where}: {scale}.zip")
    lengths = {len(v) for v in zipped.values()}
    if len(lengths) > 1:
        raise ConfigError(f"{where}: {scale}.zip: every list must have the same length")
    base = load_config(path.parent / config_file)
    try:
        base = override_config(base, {**common, **scale_set, **(extra or {})})
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    rows = [dict(zip(zipped, combo, strict=True))
            for combo in zip(*zipped.values(), strict=True)] or [{}]
    points = []
    for combo in itertools.product(*grid.values()):
        for row in rows:
            values = {**dict(zip(grid, combo, strict=True)), **row}
            try:
                config = override_config(base, values)
            except ConfigError as exc:
                raise ConfigError(f"{where}: {scale} point {values}: {exc}") from None
            points.append(PaperPoint(values, config))
    return Experiment(figure, scale, path, tuple(points), (*grid, *zipped))


def _keys(doc: dict[str, Any], where: str, allowed: set[str]) -> None:
    unknown = sorted(set(doc) - allowed)
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} "
                          f"(expected {', '.join(sorted(allowed))})")


def _field(doc: dict[str, Any], name: str, kind: type, where: str) -> Any:
    value = doc.get(name)
    if not isinstance(value, kind):
        raise ConfigError(f"{where}: {name}: expected a {kind.__name__}")
    return value


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: expected a mapping of dotted keys to values")
    return value


def _axes(value: Any, where: str) -> dict[str, tuple[Any, ...]]:
    axes = _mapping(value, where)
    for key, values in axes.items():
        if not isinstance(values, list) or not values:
            raise ConfigError(f"{where}: {key}: expected a non-empty list of values")
    return {key: tuple(values) for key, values in axes.items()}
