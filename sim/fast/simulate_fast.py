"""``simulate_fast(config) -> SimResult``: one run of the fast engine, summarised as the
simpy engine's runs are (:func:`sim.core.result.result_of`: same keys, ``engine`` =
``fast``).

The plan comes from the same procedure as the simpy engine's (:func:`sim.core.pilot.make_plan`),
its pilot run here on the fast engine. A given ``plan`` and ``partition`` skip that step
(differential tests run both engines on one plan).
"""

from __future__ import annotations

import math
import time
from functools import partial

import numpy as np

from netlock.config import Config
from netlock.lockserver.request_path import SV_BUSY_US, SV_PACKETS, SV_RX_DROPS
from netlock.lockserver.server_state import CN_EXPIRED
from netlock.plan import Plan
from sim.core.allocation import Partition
from sim.core.budget import WallBudget, incomplete, stop_boundary_us, stopped_config
from sim.core.pilot import make_plan
from sim.core.result import Progress, SimResult, result_of
from sim.core.run_spec import run_spec
from sim.fast.fast_model import FastModel, check_supported
from sim.fast.heap import Q_SEQ
from sim.fast.rack_build import assemble
from sim.fast.state import (
    K_COPIES,
    K_IGNORED,
    K_LOST,
    K_OL_DROPPED,
    K_OL_SENT,
    K_REORDERED,
    K_RETRIES,
    K_SERVER_DROPS,
    K_SERVER_GRANTS,
    K_STALE,
    K_SWITCH_EXPIRED,
    P_OL_CUTOFF,
)
from sim.workloads.replay import replay_transactions

ENGINE = "fast"
PROGRESS_STEPS = 50
BUDGET_STEP_US = 1000.0
"""Simulated time between checks of a run's wall budget (us): a millisecond of a busy rack
takes the fast engine about a wall second or less."""


def simulate_fast(config: Config, plan: Plan | None = None,
                  partition: Partition | None = None,
                  progress: Progress | None = None,
                  budget: WallBudget | None = None) -> SimResult:
    """Build the rack ``config`` describes, run it on the fast engine, and summarise.

    With ``progress`` the run advances in ``PROGRESS_STEPS`` steps of simulated time and
    reports after each (``progress(now_us, end_us)``); the events, and so the results, are
    the same. With a ``budget`` it advances in steps of ``BUDGET_STEP_US`` and stops at the
    first after the budget is spent, summarised over the time it reached
    (:mod:`sim.core.budget`)."""
    t0 = time.perf_counter()
    model = build(config, plan, partition, budget)
    end_us = config.sim.end_s * 1e6
    steps = PROGRESS_STEPS
    if budget is not None:
        steps = max(PROGRESS_STEPS, math.ceil(end_us / BUDGET_STEP_US))
    now_us = end_us
    if progress is None and budget is None:
        model.advance(end_us)
    else:
        for step in range(1, steps + 1):
            now_us = end_us if step == steps else stop_boundary_us(end_us * step / steps)
            model.advance(now_us)
            if progress is not None:
                progress(now_us, end_us)
            if budget is not None and step < steps and budget.spent():
                break
    model.close(now_us)
    wall_s = time.perf_counter() - t0
    if now_us >= end_us:
        return summarise(model, wall_s)
    result = summarise(model, wall_s, stopped_config(config, now_us, budget))
    result.summary["incomplete"] = incomplete(config, now_us, budget)
    result.config = config.to_dict()
    return result


def build(config: Config, plan: Plan | None = None,
          partition: Partition | None = None, budget: WallBudget | None = None) -> FastModel:
    """The fast model of ``config``; its plan made by :func:`sim.core.pilot.make_plan`, the
    pilot run on this engine within the run's ``budget``, unless one is given."""
    check_supported(config)
    spec = run_spec(config)
    if plan is None or partition is None:
        pilot = partial(assemble, config, hold_us=spec.hold_us)
        plan, partition = make_plan(config, spec, pilot, ENGINE, budget)
    return assemble(config, plan, partition, seed_key=config.sim.seed, hold_us=spec.hold_us)


def summarise(model: FastModel, wall_s: float, config: Config | None = None) -> SimResult:
    """The result of a finished run (:func:`sim.core.result.result_of`), measured over
    ``config``'s window (default: the model's)."""
    r = model.rack
    servers = model.config.servers.count
    manager = {
        "server_grants": int(r.cnt[K_SERVER_GRANTS]),
        "switch_expired": int(r.cnt[K_SWITCH_EXPIRED]),
        "server_expired": int(r.srv.cnt[CN_EXPIRED]),
        "server_packets": r.srv_f[:servers, SV_PACKETS].astype(np.int64).tolist(),
        "server_busy_us": r.srv_f[:servers, SV_BUSY_US].tolist(),
        "switch_drops": r.sw_drops.tolist(),
        "server_drops": int(r.cnt[K_SERVER_DROPS]),
        "server_rx_drops": int(r.srv_f[:servers, SV_RX_DROPS].sum()),
        "lost_packets": int(r.cnt[K_LOST]),
        "copied_packets": int(r.cnt[K_COPIES]),
        "reordered_packets": int(r.cnt[K_REORDERED]),
    }
    return result_of(config or model.config, model.requests_columns(), model.txns_columns(),
                     engine=ENGINE,
                     wall_s=wall_s, retries=int(r.cnt[K_RETRIES]),
                     events=int(r.heap.cnt[Q_SEQ]), stale_grants=int(r.cnt[K_STALE]),
                     ignored_grants=int(r.cnt[K_IGNORED]),
                     hold_us=model.hold_us, plan=model.plan, manager=manager,
                     open_waits=model.open_waits, handbacks=model.handbacks_columns(),
                     replay_txns=replay_transactions(model.workload),
                     open_loop=(float(r.pf[P_OL_CUTOFF]), int(r.cnt[K_OL_SENT]),
                                int(r.cnt[K_OL_DROPPED])))
