"""``simulate(config) -> SimResult``: one run of the simpy engine, and what it measured
(:func:`sim.core.result.result_of`, as for the fast engine).

Either engine, by name: :func:`sim.run.run_engine`.
"""

from __future__ import annotations

import time

from netlock.config import Config
from sim.core.result import Progress, SimResult, result_of
from sim.model import ENGINE, Model, build
from sim.workloads.replay import replay_transactions


def simulate(config: Config, progress: Progress | None = None) -> SimResult:
    """Build the rack ``config`` describes, run it, and summarise what the clients saw
    (``progress(now_us, end_us)`` is told how far the run has come)."""
    t0 = time.perf_counter()
    model = build(config)
    model.run(progress=progress)
    wall_s = time.perf_counter() - t0
    return summarise(model, wall_s)


def summarise(model: Model, wall_s: float) -> SimResult:
    rec = model.recorder
    return result_of(model.config, rec.requests_frame(), rec.txns_frame(), engine=ENGINE,
                     wall_s=wall_s, retries=rec.retries, events=model.engine.events,
                     stale_grants=rec.stale_grants, ignored_grants=rec.ignored_grants,
                     hold_us=model.hold_us, plan=model.plan,
                     manager=model.manager.stats(), open_waits=rec.open_waits,
                     handbacks=rec.handbacks_frame(),
                     replay_txns=replay_transactions(model.workload))
