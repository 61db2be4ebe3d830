"""``netlock bench`` figures for the fast engine, beside the simpy engine and plain simpy.

The microbenchmark of the design notes (120 clients, 5000 exclusive locks, zero think time;
:func:`sim.bench.micro_config`) runs on the fast engine, on the simpy engine and on the
plain simpy model of :mod:`sim.baseline` (a process per client, a ``simpy.Resource`` per
lock), interleaved in the same process; each figure is the median over repeats of granted
requests per wall-clock second of the run (models are built beforehand: plan making and
JIT loading are one-time costs, reported separately; as in a sweep, a fast run reuses the
recorder memory of earlier runs in the process, :mod:`sim.fast.chunks`). The fast engine
must make at least 3,000,000 requests/s and 40x the plain simpy model, and it must agree
with the simpy engine: a short run of three configs on both engines with the same seed must
give the same throughput, switch share and latency p50/p99 within 2 % and no safety
violation, or the results are marked failed.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time

from netlock.bench import BenchResult
from netlock.config import Config, override_config
from sim.bench import baseline_rate, engine_rate, micro_config
from sim.fast.simulate import build, simulate_fast
from sim.simulate import simulate

SUITE = "sim-fast"
TARGET_RPS = 3_000_000.0
TARGET_SPEEDUP = 40.0
TOLERANCE = 0.02
BASELINE_NAME = "plain simpy (process per client, Resource per lock)"


def fast_rate(duration_s: float) -> tuple[float, float]:
    """(granted requests per wall-clock second of the fast run, seconds spent building)."""
    t0 = time.perf_counter()
    model = build(micro_config(duration_s))
    t1 = time.perf_counter()
    model.advance(duration_s * 1e6)
    t2 = time.perf_counter()
    return model.granted / (t2 - t1), t1 - t0


def agreement_configs() -> dict[str, Config]:
    """Short runs covering the switch, contention with overflow to a server, and loss."""
    micro = micro_config(0.002)
    return {
        "exclusive": micro,
        "contended+overflow": override_config(micro, {"workload.locks": 100, "switch.slots": 150,
                                                    "workload.zipf": 0.9}),
        "lossy": override_config(micro, {"workload.locks": 100, "network.loss": 0.01,
                                       "lease.us": 300.0}),
    }


def disagreement(fast: dict, slow: dict) -> float:
    """The largest relative difference over throughput, switch share, p50 and p99."""
    pairs = [(fast["throughput_rps"], slow["throughput_rps"]),
             (fast["switch_share"], slow["switch_share"])]
    pairs += [(fast["latency_us"][q], slow["latency_us"][q]) for q in ("p50", "p99")]
    return max(abs(a - b) / max(abs(a), abs(b), 1e-12) for a, b in pairs)


def check_agreement() -> tuple[float, list[str]]:
    """Worst relative difference between the engines and the problems found."""
    worst = 0.0
    problems = []
    for name, cfg in agreement_configs().items():
        fast, slow = simulate_fast(cfg).summary, simulate(cfg).summary
        diff = disagreement(fast, slow)
        worst = max(worst, diff)
        if diff > TOLERANCE:
            problems.append(f"{name}: engines differ by {diff:.1%}")
        if fast["violations"] or slow["violations"]:
            problems.append(f"{name}: violations fast {fast['violations']} "
                            f"simpy {slow['violations']}")
    return worst, problems


def first_load_s() -> float:
    """Seconds of the first fast-engine run in this process (JIT cache load, or compile)."""
    t0 = time.perf_counter()
    simulate_fast(micro_config(0.0002))
    return time.perf_counter() - t0


def cold_compile_s() -> float:
    """Seconds to compile the fast engine from scratch (a child process, empty cache)."""
    code = ("from sim.bench import micro_config; from sim.fast.simulate import simulate_fast; "
            "simulate_fast(micro_config(0.0002))")
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, env=env,
                       stdout=subprocess.DEVNULL)
        return time.perf_counter() - t0


def run(quick: bool) -> list[BenchResult]:
    """Fast engine, simpy engine and plain simpy, interleaved; medians over repeats."""
    load_s = first_load_s()
    fast_s, slow_s = (0.02, 0.004) if quick else (0.1, 0.02)
    repeats = 3 if quick else 5
    fast, slow, plain, setup = [], [], [], []
    for _ in range(repeats):
        rate, built = fast_rate(fast_s)
        fast.append(rate)
        setup.append(built)
        slow.append(engine_rate(slow_s)[0])
        plain.append(baseline_rate(slow_s))
    value, simpy_value, base = (statistics.median(x) for x in (fast, slow, plain))
    worst, problems = check_agreement()
    agree = not problems
    speedup = value / base
    fast_ok = value >= TARGET_RPS and speedup >= TARGET_SPEEDUP and agree
    failed = "; ".join(problems) if problems else ""
    results = [
        BenchResult(suite=SUITE, name="fast engine, micro-exclusive", value=value,
                    unit="requests/s", repeats=repeats, baseline_name=BASELINE_NAME,
                    baseline_value=base, target=TARGET_RPS, ok=fast_ok,
                    note=f"needs >= {TARGET_RPS:,.0f}/s and >= {TARGET_SPEEDUP:g}x; "
                         f"{fast_s * 1e3:g} ms simulated per run; model build "
                         f"{statistics.median(setup):.2f} s not counted; recorder memory of "
                         f"earlier runs reused"
                         + (f"; ENGINES DISAGREE: {failed}" if failed else "")),
        BenchResult(suite=SUITE, name="fast engine vs simpy engine, micro-exclusive",
                    value=value, unit="requests/s", repeats=repeats,
                    baseline_name="simpy engine", baseline_value=simpy_value, ok=agree,
                    note=f"simpy engine: {slow_s * 1e3:g} ms simulated per run"),
        BenchResult(suite=SUITE, name="engines agree (throughput, switch share, p50, p99)",
                    value=worst, unit="max relative difference", repeats=1,
                    target=TOLERANCE, higher_is_better=False, ok=agree,
                    note=failed or "same seed, 3 configs, zero violations on both engines"),
        BenchResult(suite=SUITE, name="fast engine JIT, first run in this process",
                    value=load_s, unit="s", repeats=1, higher_is_better=False,
                    note="loads numba's cache (cache=True); compiles if the cache is empty"),
    ]
    if not quick:
        results.append(BenchResult(suite=SUITE, name="fast engine JIT compile, empty cache",
                                   value=cold_compile_s(), unit="s", repeats=1,
                                   higher_is_better=False, note="child process"))
    return results
