"""A sweep's grid: axes ``key=v1,v2,...`` over dotted config keys (:func:`parse_grid`) and
their cartesian product (:func:`grid_points`), each point a validated config with its own
seed, derived from the base seed and the point's values alone (so a point's result does not
depend on the grid around it or on the order the points ran), unless ``common_seed`` asks for
the base seed everywhere (common random numbers: smoother curves when points are compared).
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from netlock.config import Config, override_config
from netlock.config.overrides import parse_override
from netlock.errors import ConfigError


@dataclass(frozen=True)
class Axis:
    """One grid axis: a dotted key and the values it takes (typed as in a config file)."""

    key: str
    values: tuple[Any, ...]


@dataclass(frozen=True)
class Point:
    """One run of a grid point: its values per axis key, its seed, its validated config
    (a :class:`Config`; the NetStore experiment's points hold its own config document)
    and which of the point's ``--seeds`` runs it is (0 for the first)."""

    pid: str
    values: dict[str, Any]
    seed: int
    config: Any
    run: int = 0



def parse_grid(items: Iterable[str]) -> list[Axis]:
    """``["switch.slots=500,1000", ...]`` -> axes; a malformed item is a ConfigError."""
    axes: list[Axis] = []
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip()
        values = [v.strip() for v in text.split(",")] if sep else []
        if not sep or not key or not values or any(v == "" for v in values):
            raise ConfigError(f"--grid {item!r}: expected KEY=V1,V2,... with a dotted key "
                              f"and comma-separated values")
        if any(a.key == key for a in axes):
            raise ConfigError(f"--grid {key}: the same key is given twice")
        try:
            typed = tuple(parse_override(key, v) for v in values)
        except Exception as exc:  # the override parser raises its own Problem type
            raise ConfigError(f"--grid {key}: {exc}") from None
        axes.append(Axis(key, typed))
    if not axes:
        raise ConfigError("--grid: give at least one axis, e.g. --grid switch.slots=500,1000")
    return axes


def point_seed(base_seed: int, values: dict[str, Any]) -> int:
    """A seed from the base seed and the point's values only (stable across runs)."""
    text = json.dumps({"seed": base_seed, **values}, sort_keys=True, default=str)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big") >> 1


def grid_points(base: Config, axes: list[Axis], common_seed: bool = False,
                seeds: int = 1) -> list[Point]:
    """Every run of every point of the grid (``seeds`` per point), validated; a bad value
    names its ``--grid`` key. Run ``r`` > 0 of a point seeds from its values and ``r``."""
    if seeds < 1:
        raise ConfigError(f"--seeds: must be at least 1, got {seeds}")
    points = []
    for combo in itertools.product(*(a.values for a in axes)):
        values = {a.key: v for a, v in zip(axes, combo, strict=True)}
        for run in range(seeds):
            salt = {} if run == 0 else {"run": run}
            seed = (base.sim.seed if common_seed else point_seed(base.sim.seed, values))
            if run:
                seed = point_seed(seed, {**values, **salt})
            overrides = {**values, "sim.seed": seed} if "sim.seed" not in values else values
            try:
                config = override_config(base, overrides)
            except ConfigError as exc:
                raise ConfigError(f"--grid {', '.join(values)}: {exc}") from None
            pid = hashlib.sha1(json.dumps({**values, "seed": config.sim.seed, **salt},
                                          sort_keys=True, default=str).encode()).hexdigest()[:12]
            points.append(Point(pid, values, config.sim.seed, config, run))
    return points
