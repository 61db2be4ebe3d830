"""``simulate_fast(config) -> SimResult``: one run of the fast engine, summarised exactly as
:func:`sim.simulate.simulate` summarises the simpy engine (same keys, ``engine`` = ``fast``).

The plan comes from the same procedure as :func:`sim.model.build`: a synthetic warm-up
trace, then (with switch slots and lock servers) a pilot run of the same rack with every
lock on the lock servers, here on the fast engine, then Algorithm 3 or random allocation
(:mod:`sim.allocation`). A given ``plan`` and ``partition`` skip that step (differential
tests run both engines on one plan).
"""

from __future__ import annotations

import json
import time
from typing import Any

import numpy as np

from netlock.config import Config
from netlock.plan import Plan
from sim.allocation import (
    Partition,
    Warmup,
    hold_time_us,
    plan_from_trace,
    trace_from_uses,
    warmup_trace,
)
from sim.fast.heap import Q_SEQ
from sim.fast.lockserver import CN_EXPIRED
from sim.fast.model import FastModel, assemble, check_supported
from sim.fast.safety import count_violations
from sim.fast.state import (
    K_LOST,
    K_RETRIES,
    K_SERVER_DROPS,
    K_SERVER_GRANTS,
    K_STALE,
    K_SWITCH_EXPIRED,
    SF_BUSY,
)
from sim.metrics import Latency, in_window, timeseries
from sim.model import (
    DATA_READ_HOPS,
    PILOT_MAX_US,
    PILOT_REQUESTS,
    PILOT_STEP_US,
    PILOT_STREAM,
    PILOT_TXNS_PER_CLIENT,
    client_workload,
)
from sim.simulate import SimResult, _tenant_summary

ENGINE = "fast"
_PILOTS: dict[str, Warmup] = {}


def simulate_fast(config: Config, plan: Plan | None = None,
                  partition: Partition | None = None) -> SimResult:
    """Build the rack ``config`` describes, run it on the fast engine, and summarise."""
    t0 = time.perf_counter()
    model = build(config, plan, partition)
    model.advance(config.sim.duration_s * 1e6)
    model.close(config.sim.duration_s * 1e6)
    return summarise(model, time.perf_counter() - t0)


def fetch_hops(config: Config) -> int:
    reads_data = config.workload.kind == "tpcc"
    return DATA_READ_HOPS if reads_data and not config.network.one_rtt else 0


def build(config: Config, plan: Plan | None = None,
          partition: Partition | None = None) -> FastModel:
    """The fast model of ``config``; its plan made as :func:`sim.model.build` makes it
    unless one is given."""
    check_supported(config)
    hold_us = hold_time_us(config, fetch_hops(config))
    if plan is None or partition is None:
        plan, partition = make_plan(config, hold_us)
    return assemble(config, plan, partition, seed_key=config.sim.seed, hold_us=hold_us)


def make_plan(config: Config, hold_us: float) -> tuple[Plan, Partition]:
    tenant_of = {t.id: t for t in config.tenants}
    priorities = [tenant_of[t].priority for t in config.client_tenants]
    plan_rng = np.random.default_rng(np.random.SeedSequence([config.sim.seed, PILOT_STREAM]))
    trace = warmup_trace(client_workload(config), config, priorities, fetch_hops(config),
                         plan_rng)
    if config.switch.slots > 0 and config.servers.count > 0:
        trace = pilot_trace(config, trace, priorities, hold_us)
    return plan_from_trace(trace, config, hold_us)


def pilot_trace(config: Config, synthetic: Warmup, priorities: list[int],
                hold_us: float) -> Warmup:
    """:func:`sim.model.pilot_trace` on the fast engine (same stopping rule, same cache
    key: runs differing only in switch memory or policy share their pilot)."""
    doc = config.to_dict()
    doc["switch"].pop("slots")
    doc["policy"].pop("allocation")
    doc["sim"].pop("duration_s")
    doc.pop("failures")
    key = json.dumps(doc, sort_keys=True, default=str)
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
    """The result of a finished run, with the keys of :func:`sim.simulate.summarise`."""
    cfg = model.config
    r = model.rack
    start_us, end_us = cfg.sim.warmup_s * 1e6, cfg.sim.duration_s * 1e6
    window_s = (end_us - start_us) / 1e6
    requests = model.requests_frame()
    txns = model.txns_frame()
    req_w = in_window(requests, start_us, end_us)
    txn_w = in_window(txns, start_us, end_us)
    violations = count_violations(requests["lock"].to_numpy(), requests["mode"].to_numpy(),
                                  requests["t_us"].to_numpy(), requests["end_us"].to_numpy())
    granted = len(req_w)
    by_switch = int(np.count_nonzero(req_w["source"].to_numpy() == 0))
    tenants = sorted({t.id for t in cfg.tenants})
    series = timeseries(requests, txns, end_us, cfg.sim.timeseries_bin_s * 1e6, tenants)
    servers = cfg.servers.count
    manager = {
        "server_grants": int(r.cnt[K_SERVER_GRANTS]),
        "switch_expired": int(r.cnt[K_SWITCH_EXPIRED]),
        "server_expired": int(r.srv.cnt[CN_EXPIRED]),
        "server_packets": r.srv_packets[:servers].tolist(),
        "server_busy_us": r.srv_f[:servers, SF_BUSY].tolist(),
        "switch_drops": r.sw_drops.tolist(),
        "server_drops": int(r.cnt[K_SERVER_DROPS]),
        "lost_packets": int(r.cnt[K_LOST]),
    }
    summary: dict[str, Any] = {
        "engine": ENGINE,
        "sim_time_s": cfg.sim.duration_s,
        "granted": granted,
        "throughput_rps": granted / window_s,
        "tps": len(txn_w) / window_s,
        "switch_share": by_switch / granted if granted else 0.0,
        "latency_us": Latency.of(req_w["latency_us"].to_numpy()).to_dict(),
        "txn_latency_us": Latency.of(txn_w["latency_us"].to_numpy()).to_dict(),
        "retries": int(r.cnt[K_RETRIES]),
        "violations": violations,
        "wall_s": wall_s,
        "events": int(r.heap.cnt[Q_SEQ]),
        "measured_s": window_s,
        "switch_rps": by_switch / window_s,
        "server_rps": (granted - by_switch) / window_s,
        "stale_grants": int(r.cnt[K_STALE]),
        "hold_time_us": model.hold_us,
        "plan": model.plan.summary.to_dict(),
        "manager": manager,
        "tenants": {str(t): _tenant_summary(req_w, txn_w, t, window_s) for t in tenants},
    }
    return SimResult(summary=summary, requests=requests, txns=txns, timeseries=series,
                     config=cfg.to_dict())
