"""The planner's ``netlock bench`` suite with its input drawn by the workload generator.

The planner times ingest and planning on trace files (:func:`planner.bench.run_on`); the
files are a Zipf(0.99) microbenchmark trace over 1M locks from 100 clients, 10M requests
(1M in quick mode), written as Parquet and CSV into a temporary directory. The generator
lives with the workloads in ``sim``, above the planner, so the suite is assembled here.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from netlock.bench import BenchResult
from netlock.trace import write_trace
from planner.bench import run_on
from sim.workloads import MicroWorkload
from sim.workloads.tracegen import TraceTiming, generate_trace

LOCKS = 1_000_000


def run(quick: bool) -> list[BenchResult]:
    """Run the planner benchmarks (quick: 1M requests instead of 10M)."""
    rows = 1_000_000 if quick else 10_000_000
    with tempfile.TemporaryDirectory(prefix="netlock-bench-") as tmp:
        return run_on(_make_traces(Path(tmp), rows), rows)


def _make_traces(tmp: Path, rows: int) -> list[Path]:
    workload = MicroWorkload(locks=LOCKS, mode="mixed", zipf=0.99)
    columns = generate_trace(workload, clients=100, requests=rows, timing=TraceTiming(),
                             rng=np.random.default_rng(1))
    paths = [tmp / "zipf.parquet", tmp / "zipf.csv"]
    for path in paths:
        write_trace(columns, path)
    return paths
