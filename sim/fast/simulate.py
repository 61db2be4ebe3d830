"""``simulate_fast(config) -> SimResult``: one run of the fast engine, summarised exactly as
:func:`sim.simulate.simulate` summarises the simpy engine (same keys, ``engine`` = ``fast``).

The plan comes from the same procedure as :func:`sim.model.build`: a synthetic warm-up
trace, then (with switch slots and lock servers) a pilot run of the same rack with every
lock on the lock servers, here on the fast engine, then Algorithm 3 or random allocation
(:mod:`sim.allocation`). A given ``plan`` and ``partition`` skip that step (differential
tests run both engines on one plan).
"""

from __future__ import annotations

import time

import numpy as np

from netlock.config import Config
from netlock.lockserver.layout import CN_EXPIRED
from netlock.plan import Plan
from sim.allocation import (
    Partition,
    Warmup,
    plan_from_trace,
    trace_from_uses,
    warmup_trace,
)
from sim.fast.heap import Q_SEQ
from sim.fast.model import FastModel, assemble, check_supported
from sim.fast.safety import count_violations
from sim.fast.state import (
    K_COPIES,
    K_IGNORED,
    K_LOST,
    K_REORDERED,
    K_RETRIES,
    K_SERVER_DROPS,
    K_SERVER_GRANTS,
    K_STALE,
    K_SWITCH_EXPIRED,
    SF_BUSY,
)
from sim.model import (
    PILOT_MAX_US,
    PILOT_REQUESTS,
    PILOT_STEP_US,
    PILOT_STREAM,
    PILOT_TXNS_PER_CLIENT,
    Progress,
    client_workload,
    pilot_key,
    plan_from_file,
)
from sim.simulate import SimResult, result_of
from sim.spec import RunSpec, run_spec

ENGINE = "fast"
PROGRESS_STEPS = 50
_PILOTS: dict[str, Warmup] = {}


def simulate_fast(config: Config, plan: Plan | None = None,
                  partition: Partition | None = None,
                  progress: Progress | None = None) -> SimResult:
    """Build the rack ``config`` describes, run it on the fast engine, and summarise.

    With ``progress`` the run advances in ``PROGRESS_STEPS`` steps of simulated time and
    reports after each (``progress(now_us, end_us)``); the events, and so the results, are
    the same."""
    t0 = time.perf_counter()
    model = build(config, plan, partition)
    end_us = config.sim.end_s * 1e6
    if progress is None:
        model.advance(end_us)
    else:
        for step in range(1, PROGRESS_STEPS + 1):
            now_us = end_us if step == PROGRESS_STEPS else end_us * step / PROGRESS_STEPS
            model.advance(now_us)
            progress(now_us, end_us)
    model.close(end_us)
    return summarise(model, time.perf_counter() - t0)


def build(config: Config, plan: Plan | None = None,
          partition: Partition | None = None) -> FastModel:
    """The fast model of ``config``; its plan made as :func:`sim.model.build` makes it
    unless one is given."""
    check_supported(config)
    spec = run_spec(config)
    if plan is None or partition is None:
        plan, partition = make_plan(config, spec)
    return assemble(config, plan, partition, seed_key=config.sim.seed, hold_us=spec.hold_us)


def make_plan(config: Config, spec: RunSpec) -> tuple[Plan, Partition]:
    """The plan named by ``policy.plan``, else one made as :func:`sim.model.build` makes it."""
    if config.policy.plan:
        return plan_from_file(config)
    priorities = list(spec.priorities)
    plan_rng = np.random.default_rng(np.random.SeedSequence([config.sim.seed, PILOT_STREAM]))
    trace = warmup_trace(client_workload(config), config, priorities, spec.fetch_hops,
                         plan_rng)
    if config.switch.slots > 0 and config.servers.count > 0:
        trace = pilot_trace(config, trace, priorities, spec.hold_us)
    return plan_from_trace(trace, config, spec.hold_us)


def pilot_trace(config: Config, synthetic: Warmup, priorities: list[int],
                hold_us: float) -> Warmup:
    """:func:`sim.model.pilot_trace` on the fast engine (same stopping rule, same cache
    key: runs differing only in switch memory or policy share their pilot)."""
    key = pilot_key(config)
    trace = _PILOTS.get(key)
    if trace is None:
        servers_only = plan_from_trace(synthetic, config, hold_us, slots=0)
        pilot = assemble(config, *servers_only, seed_key=[config.sim.seed, PILOT_STREAM],
                         hold_us=hold_us)
        wanted = PILOT_TXNS_PER_CLIENT * config.workload.clients
        until = max(config.sim.warmup_s * 1e6, PILOT_STEP_US)
        pilot.advance(until)
        while ((pilot.committed < wanted or pilot.granted < PILOT_REQUESTS)
               and until < PILOT_MAX_US):
            until += PILOT_STEP_US
            pilot.advance(until)
        requests = pilot.requests_frame()
        trace = trace_from_uses(requests, priorities) if len(requests) else synthetic
        _PILOTS.clear()
        _PILOTS[key] = trace
    return trace


def summarise(model: FastModel, wall_s: float) -> SimResult:
    """The result of a finished run, with the keys of :func:`sim.simulate.summarise`; its
    safety checker is the compiled one (:mod:`sim.fast.safety`, tested against
    :mod:`sim.safety`), 2-3x faster on millions of uses."""
    r = model.rack
    servers = model.config.servers.count
    manager = {
        "server_grants": int(r.cnt[K_SERVER_GRANTS]),
        "switch_expired": int(r.cnt[K_SWITCH_EXPIRED]),
        "server_expired": int(r.srv.cnt[CN_EXPIRED]),
        "server_packets": r.srv_packets[:servers].tolist(),
        "server_busy_us": r.srv_f[:servers, SF_BUSY].tolist(),
        "switch_drops": r.sw_drops.tolist(),
        "server_drops": int(r.cnt[K_SERVER_DROPS]),
        "lost_packets": int(r.cnt[K_LOST]),
        "copied_packets": int(r.cnt[K_COPIES]),
        "reordered_packets": int(r.cnt[K_REORDERED]),
    }
    return result_of(model.config, model.requests_frame(), model.txns_frame(), engine=ENGINE,
                     wall_s=wall_s, retries=int(r.cnt[K_RETRIES]),
                     events=int(r.heap.cnt[Q_SEQ]), stale_grants=int(r.cnt[K_STALE]),
                     ignored_grants=int(r.cnt[K_IGNORED]),
                     hold_us=model.hold_us, plan=model.plan, manager=manager,
                     open_waits=model.open_waits, handbacks=model.handbacks_frame(),
                     violations_of=count_violations)
