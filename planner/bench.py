"""Planner benchmarks for ``netlock bench``: trace ingest and measure + allocate at scale.

:func:`run_on` times the planner on trace files it is given; the suite's input (a
Zipf(0.99) microbenchmark over 1M locks, 10M requests, 1M in quick mode, as Parquet and CSV)
is drawn by the simulator's workload generator, above the planner, in
:mod:`sim.planner_bench`. Figures (medians):

- ingest rows/s for each format (parse + validate into arrays), beside pandas' reader of
  the same file with no validation; target >= 5M rows/s;
- measure r_i / c_i + allocate (Algorithm 3) seconds for the whole trace, beside a naive
  pandas groupby-apply (per-lock sort + cumsum) timed on a time-window subsample and
  scaled by rows; target < 2 s;
- the whole plan (measure, allocate, layout, partition) seconds, for reference.

The baseline's c_i on the subsample must equal ours, or the figure is marked not ok.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from netlock.bench import BenchResult, median_time_s, meets
from netlock.geometry import SwitchGeometry
from netlock.trace import Trace, read_trace
from planner.allocate import allocate
from planner.measure import measure
from planner.planning import PlanOptions, make_plan

SUITE = "planner"
INGEST_TARGET_ROWS_S = 5e6
MEASURE_TARGET_S = 2.0
BASELINE_ROWS = 50_000


def run_on(paths: list[Path], rows: int) -> list[BenchResult]:
    """Time ingest of each trace file (``rows`` rows each, the same trace) and planning on
    the first one."""
    repeats = 3
    results = [_ingest(path, rows, repeats) for path in paths]
    trace = read_trace(paths[0])
    results.append(_measure_allocate(trace, repeats))
    results.append(_whole_plan(trace, repeats))
    return results


def _ingest(path: Path, rows: int, repeats: int) -> BenchResult:
    fmt = path.suffix.lstrip(".")
    ours = median_time_s(lambda: read_trace(path), repeats)
    reader = pd.read_parquet if fmt == "parquet" else pd.read_csv
    base = median_time_s(lambda: reader(path), repeats)
    value = rows / ours
    return BenchResult(
        suite=SUITE, name=f"ingest {fmt} ({rows / 1e6:g}M rows)", value=value, unit="rows/s",
        repeats=repeats, baseline_name=f"pandas.read_{fmt} (no validation)",
        baseline_value=rows / base, target=INGEST_TARGET_ROWS_S, higher_is_better=True,
        ok=meets(value, INGEST_TARGET_ROWS_S, True))


def _measure_allocate(trace: Trace, repeats: int) -> BenchResult:
    geometry = SwitchGeometry.uniform(100_000)
    capacities = (geometry.total_slots,)

    def ours() -> None:
        stats = measure(trace)
        allocate(stats.rate_rps, stats.contention, stats.priority, 100_000, capacities)

    measure(Trace("warm-up", trace.lock_id[:100], trace.mode[:100], trace.t_request[:100],
                  trace.t_release[:100]))
    value = median_time_s(ours, repeats)
    window = slice(0, min(BASELINE_ROWS, len(trace)))
    sample = Trace("sample", trace.lock_id[window], trace.mode[window],
                   trace.t_request[window], trace.t_release[window])
    base = median_time_s(lambda: _pandas_contention(sample), repeats) * len(trace) / len(sample)
    agrees = np.array_equal(_pandas_contention(sample).to_numpy(), measure(sample).contention)
    locks = len(np.unique(trace.lock_id))
    return BenchResult(
        suite=SUITE, name=f"measure + allocate ({len(trace) / 1e6:g}M requests, {locks:,} "
        f"locks)", value=value, unit="s", repeats=repeats,
        baseline_name=f"pandas groupby-apply on {len(sample):,} rows, scaled",
        baseline_value=base, target=MEASURE_TARGET_S, higher_is_better=False,
        ok=agrees and meets(value, MEASURE_TARGET_S, False),
        note="" if agrees else "baseline c_i differs from ours on the subsample")


def _whole_plan(trace: Trace, repeats: int) -> BenchResult:
    geometry = SwitchGeometry.uniform(100_000)
    value = median_time_s(lambda: make_plan(trace, geometry, PlanOptions(slots=100_000)),
                          repeats)
    return BenchResult(suite=SUITE, name=f"whole plan ({len(trace) / 1e6:g}M requests)",
                       value=value, unit="s", repeats=repeats, higher_is_better=False)


def _pandas_contention(trace: Trace) -> pd.Series:
    """c_i the obvious way: per lock, sort +1/-1 events (releases first at ties), cumsum."""
    frame = pd.DataFrame({"lock": trace.lock_id, "start": trace.t_request,
                          "end": trace.t_release})

    def most_overlapping(group: pd.DataFrame) -> int:
        times = np.concatenate([group["end"].to_numpy(), group["start"].to_numpy()])
        delta = np.concatenate([-np.ones(len(group)), np.ones(len(group))])
        order = np.lexsort((delta, times))
        return max(int(np.cumsum(delta[order]).max()), 1)

    return frame.groupby("lock")[["start", "end"]].apply(most_overlapping)
