"""``netlock bench`` figures for the simulator: simulated lock requests per second of CPU time.

The microbenchmark of the design notes (120 clients, 5000 exclusive locks, zero think time,
``configs/micro-exclusive.yaml`` values, leases and recording on as in any run) runs on the
simpy engine and, in the same process and interleaved with it, on the plain simpy model of
:mod:`sim.baseline` (a process per client, a ``simpy.Resource`` per lock: what a user writes
in an afternoon). A run of an engine is timed in three phases, each reported on its own:

- setup: making the plan (the synthetic warm-up trace, the pilot run with every lock on the
  lock servers, Algorithm 3's allocation) and assembling the rack; the pilot is made afresh
  for every run (a sweep shares it between points, a single run does not);
- the event loop: the simulated duration's events;
- results: the summary, with the safety checker and the liveness check.

Times are the process's CPU seconds (``time.process_time``, every thread's): on a machine
shared with other jobs, wall-clock time also measures them. Each run's wall-clock seconds
are kept too (the fast engine draws randomness and checks results on a second thread, so
its wall time is less than its CPU time). Each figure is the median over interleaved
repeats; requests are the granted requests of the run.
"""

from __future__ import annotations

import contextlib
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, fields

from netlock.bench import BenchResult
from netlock.config import Config, config_from_dict
from sim.baseline import run_baseline
from sim.core import plan_cache
from sim.core.pilot import forget_pilots
from sim.simpy_model import build
from sim.simulate_simpy import summarise

SUITE = "sim"
TARGET_SPEEDUP = 2.0
"""The simpy engine's event loop against the plain simpy model."""
TARGET_WHOLE = 1.5
"""The simpy engine's whole run (setup, loop, results) against the plain simpy model, when
the run's plan is in the plan cache (a re-run; issue 32)."""
BASELINE_NAME = "plain simpy (process per client, Resource per lock)"
clock = time.process_time


def micro_config(duration_s: float) -> Config:
    """The microbenchmark: 120 clients, 5000 exclusive locks, zero think time."""
    return config_from_dict({
        "clients": {"machines": 12},
        "servers": {"count": 1},
        "workload": {"kind": "micro", "clients": 120, "locks": 5000, "mode": "X",
                     "think_time_us": 0.0, "zipf": 0.0, "locks_per_txn": 1},
        "sim": {"duration_s": duration_s, "warmup_s": 0.0},
    })


@dataclass(frozen=True)
class Phases:
    """One timed run: granted requests, events handled, the CPU seconds of each phase and
    the wall-clock seconds of setup and of the rest (loop and results); ``folded``: events
    handled without the event queue (the fast engine's folded grant arrivals)."""

    granted: int
    events: int
    setup_s: float
    loop_s: float
    results_s: float
    setup_wall_s: float
    run_wall_s: float
    folded: int = 0

    @property
    def loop_rps(self) -> float:
        """Granted requests per CPU second of the event loop."""
        return self.granted / self.loop_s

    @property
    def whole_rps(self) -> float:
        """Granted requests per CPU second of the whole run (setup, loop, results)."""
        return self.granted / (self.setup_s + self.loop_s + self.results_s)


def medians(runs: list[Phases]) -> Phases:
    """The median of each field over ``runs``."""
    return Phases(*(statistics.median(getattr(r, f.name) for r in runs) for f in fields(Phases)))


def timed_phases(build_model: Callable[[], object], run_loop: Callable[[object], None],
                 results: Callable[[object], dict], clear: Callable[[], None],
                 cached: bool = False) -> Phases:
    """Time setup (``build_model``, after ``clear`` drops cached pilots; the plan cache
    bypassed unless ``cached``), the loop and the results of one run; ``results`` returns
    the run's summary."""
    clear()
    w0, t0 = time.perf_counter(), clock()
    with contextlib.nullcontext() if cached else plan_cache.bypassed():
        model = build_model()
    w1, t1 = time.perf_counter(), clock()
    run_loop(model)
    t2 = clock()
    summary = results(model)
    w3, t3 = time.perf_counter(), clock()
    if summary["violations"]:
        raise RuntimeError(f"bench run: {summary['violations']} safety violations")
    return Phases(granted=summary["granted"], events=summary["events"], setup_s=t1 - t0,
                  loop_s=t2 - t1, results_s=t3 - t2, setup_wall_s=w1 - w0, run_wall_s=w3 - w1,
                  folded=summary.get("folded", 0))


def simpy_run(duration_s: float, cached: bool = False) -> Phases:
    """One timed run of the simpy engine; its plan from the plan cache when ``cached``."""
    cfg = micro_config(duration_s)
    return timed_phases(lambda: build(cfg), lambda m: m.run(), lambda m: summarise(m, 0.0).summary,
                        forget_pilots, cached=cached)


def baseline_rate(duration_s: float) -> float:
    """Granted requests per CPU second of the plain simpy model."""
    t0 = clock()
    result = run_baseline(clients=120, locks=5000, rtt_us=5.0, duration_us=duration_s * 1e6)
    return result.granted / (clock() - t0)


def phase_results(suite: str, engine: str, runs: list[Phases], duration_s: float,
                  base: float) -> list[BenchResult]:
    """Setup, results and the whole run of an engine's runs (medians)."""
    m = medians(runs)
    repeats = len(runs)
    return [
        BenchResult(suite=suite, name=f"{engine}: setup (warm-up trace, pilot run, plan, rack)",
                    value=m.setup_s, unit="CPU s", repeats=repeats, higher_is_better=False,
                    note=f"pilot made afresh; {m.granted / m.setup_s:,.0f} requests of the run "
                         f"per setup second"),
        BenchResult(suite=suite, name=f"{engine}: results (summary, safety and liveness "
                    f"checks)", value=m.results_s, unit="CPU s", repeats=repeats,
                    higher_is_better=False,
                    note=f"{m.granted / m.results_s:,.0f} requests per second of results"),
        BenchResult(suite=suite, name=f"{engine}: whole run (setup + loop + results)",
                    value=statistics.median(r.whole_rps for r in runs), unit="requests/s",
                    repeats=repeats, baseline_name=BASELINE_NAME, baseline_value=base,
                    note=f"{duration_s * 1e3:g} ms simulated, {m.granted:,} requests; "
                         f"setup {m.setup_s:.2f} s, loop {m.loop_s:.2f} s, results "
                         f"{m.results_s:.2f} s"),
    ]


def run(quick: bool) -> list[BenchResult]:
    """Engine and baseline, interleaved, medians over repeats."""
    duration_s = 0.004 if quick else 0.02
    repeats = 3 if quick else 5
    simpy_run(0.0005)
    runs, again, baseline = [], [], []
    with plan_cache.temporary_cache():
        simpy_run(duration_s, cached=True)
        for _ in range(repeats):
            runs.append(simpy_run(duration_s))
            again.append(simpy_run(duration_s, cached=True))
            baseline.append(baseline_rate(duration_s))
    value = statistics.median(r.loop_rps for r in runs)
    base = statistics.median(baseline)
    whole = statistics.median(r.whole_rps for r in again)
    m = medians(again)
    return [
        BenchResult(suite=SUITE, name="simpy engine, micro-exclusive: event loop", value=value,
                    unit="requests/s", repeats=repeats, baseline_name=BASELINE_NAME,
                    baseline_value=base, ok=value >= TARGET_SPEEDUP * base,
                    note=f"needs >= {TARGET_SPEEDUP:g}x plain simpy; {duration_s * 1e3:g} ms "
                         f"simulated per run"),
        *phase_results(SUITE, "simpy engine", runs, duration_s, base),
        BenchResult(suite=SUITE, name="simpy engine: whole run, plan cached (a re-run)",
                    value=whole, unit="requests/s", repeats=repeats,
                    baseline_name=BASELINE_NAME, baseline_value=base,
                    ok=whole >= TARGET_WHOLE * base,
                    note=f"needs >= {TARGET_WHOLE:g}x plain simpy; setup {m.setup_s:.2f} s "
                         f"(the rack; the plan from sim.core.plan_cache), loop {m.loop_s:.2f} "
                         f"s, results {m.results_s:.2f} s; a first run makes the plan: the "
                         f"whole-run row above"),
    ]
