"""``simulate(config) -> SimResult``: one run of the simpy engine, and what it measured
(:func:`sim.core.result.result_of`, as for the fast engine).

Either engine, by name: :func:`sim.run_engine.run_engine`.
"""

from __future__ import annotations

import time

from netlock.config import Config
from sim.core.budget import WallBudget, incomplete, stopped_config
from sim.core.result import Progress, SimResult, result_of
from sim.core.run_spec import unanswered_cutoff_us
from sim.open_loop import OpenLoopClient
from sim.simpy_model import ENGINE, Model, build
from sim.workloads.replay import replay_transactions


def simulate(config: Config, progress: Progress | None = None,
             budget: WallBudget | None = None) -> SimResult:
    """Build the rack ``config`` describes, run it, and summarise what the clients saw
    (``progress(now_us, end_us)`` is told how far the run has come). A run that spends its
    ``budget`` stops there, summarised over the time it reached
    (:mod:`sim.core.budget`)."""
    t0 = time.perf_counter()
    model = build(config, budget)
    reached_us = model.run(progress=progress, stop=budget.spent if budget else None)
    wall_s = time.perf_counter() - t0
    if budget is None or reached_us >= config.sim.end_s * 1e6:
        return summarise(model, wall_s)
    result = summarise(model, wall_s, stopped_config(config, reached_us, budget))
    result.summary["incomplete"] = incomplete(config, reached_us, budget)
    result.config = config.to_dict()
    return result


def summarise(model: Model, wall_s: float, config: Config | None = None) -> SimResult:
    """The run's result, measured over ``config``'s window (default: the model's)."""
    rec = model.recorder
    return result_of(config or model.config, rec.requests_columns(), rec.txns_columns(),
                     engine=ENGINE,
                     wall_s=wall_s, retries=rec.retries, events=model.engine.events,
                     stale_grants=rec.stale_grants, ignored_grants=rec.ignored_grants,
                     hold_us=model.hold_us, plan=model.plan,
                     manager=model.manager.stats(), open_waits=rec.open_waits,
                     handbacks=rec.handbacks_columns(),
                     one_at_a_time=any(client.sequential for client in model.clients),
                     replay_txns=replay_transactions(model.workload),
                     open_loop=open_loop_counts(model))


def open_loop_counts(model: Model) -> tuple[float, int, int]:
    """``(cutoff_us, sent, dropped)`` for :func:`sim.core.result.unanswered`."""
    cutoff = unanswered_cutoff_us(model.config)
    sent = sum(c.sent_old for c in model.clients if isinstance(c, OpenLoopClient))
    return cutoff, sent, getattr(model.manager, "open_loop_dropped", 0)
