"""Benchmark results and discovery for ``netlock bench``.

Each package contributes benchmarks through the ``netlock.benchmarks`` entry-point group:
a callable ``run(quick: bool) -> list[BenchResult]``. Every result is measured beside its
baseline in the same run and reports a median over repeats, never a single timing.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from importlib.metadata import entry_points


@dataclass(frozen=True)
class BenchResult:
    """One benchmark figure.

    ``value`` is the median of ``repeats`` runs in ``unit``; ``baseline`` (same unit, same
    run) and ``target`` are optional; ``higher_is_better`` says which way ``target`` points.
    ``ok`` is False when the target is missed or a consistency check failed (``note`` says).
    """

    suite: str
    name: str
    value: float
    unit: str
    repeats: int
    baseline_name: str | None = None
    baseline_value: float | None = None
    target: float | None = None
    higher_is_better: bool = True
    ok: bool = True
    note: str = ""

    @property
    def speedup(self) -> float | None:
        if not self.baseline_value or not self.value:
            return None
        ratio = self.value / self.baseline_value
        return ratio if self.higher_is_better else 1.0 / ratio

    def to_dict(self) -> dict:
        return {**asdict(self), "speedup": self.speedup}


def meets(value: float, target: float | None, higher_is_better: bool) -> bool:
    if target is None:
        return True
    return value >= target if higher_is_better else value <= target


def median_time_s(func: Callable[[], object], repeats: int) -> float:
    """Median wall-clock seconds of ``repeats`` calls of ``func``."""
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        func()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def discover() -> dict[str, Callable[[bool], list[BenchResult]]]:
    """The registered benchmark suites, by entry-point name."""
    return {ep.name: ep.load() for ep in sorted(entry_points(group="netlock.benchmarks"),
                                                 key=lambda e: e.name)}
