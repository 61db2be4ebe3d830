"""``netlock bench`` figures for the simulator: simulated lock requests per wall-clock second.

The microbenchmark of the design notes (120 clients, 5000 exclusive locks, zero think time,
``configs/micro-exclusive.yaml`` values) runs on the simpy engine and, in the same process
and interleaved with it, on the plain simpy model of :mod:`sim.baseline` (a process per
client, a ``simpy.Resource`` per lock). Each figure is the median over repeats of granted
requests divided by the wall-clock seconds of the run (the model is built beforehand: plan
making and JIT loading are one-time costs, reported separately).
"""

from __future__ import annotations

import statistics
import time

from netlock.bench import BenchResult, meets
from netlock.config import config_from_dict
from sim.baseline import run_baseline
from sim.model import build

TARGET_RPS = 150_000.0
SUITE = "sim"


def micro_config(duration_s: float) -> object:
    """The microbenchmark: 120 clients, 5000 exclusive locks, zero think time."""
    return config_from_dict({
        "clients": {"machines": 12},
        "servers": {"count": 1},
        "workload": {"kind": "micro", "clients": 120, "locks": 5000, "mode": "X",
                     "think_time_us": 0.0, "zipf": 0.0, "locks_per_txn": 1},
        "sim": {"duration_s": duration_s, "warmup_s": 0.0},
    })


def engine_rate(duration_s: float) -> tuple[float, float]:
    """(granted requests per wall-clock second of the run, seconds spent building)."""
    t0 = time.perf_counter()
    model = build(micro_config(duration_s))
    t1 = time.perf_counter()
    model.run()
    t2 = time.perf_counter()
    granted = model.recorder.granted
    return granted / (t2 - t1), t1 - t0


def baseline_rate(duration_s: float) -> float:
    t0 = time.perf_counter()
    result = run_baseline(clients=120, locks=5000, rtt_us=5.0, duration_us=duration_s * 1e6)
    return result.granted / (time.perf_counter() - t0)


def run(quick: bool) -> list[BenchResult]:
    """Engine and baseline, interleaved, medians over repeats."""
    duration_s = 0.004 if quick else 0.02
    repeats = 3 if quick else 5
    engine_rate(0.0005)
    engine, baseline, setup = [], [], []
    for _ in range(repeats):
        rate, built = engine_rate(duration_s)
        engine.append(rate)
        setup.append(built)
        baseline.append(baseline_rate(duration_s))
    value = statistics.median(engine)
    base = statistics.median(baseline)
    ok = meets(value, TARGET_RPS, True)
    return [
        BenchResult(suite=SUITE, name="simpy engine, micro-exclusive", value=value,
                    unit="requests/s", repeats=repeats,
                    baseline_name="plain simpy (process per client, Resource per lock)",
                    baseline_value=base, target=TARGET_RPS, ok=ok,
                    note=f"{duration_s * 1e3:g} ms simulated per run; model build "
                         f"{statistics.median(setup):.2f} s (plan + JIT load) not counted"),
    ]
