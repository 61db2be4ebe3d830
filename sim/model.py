"""Build the model of one rack from a config: clients, network, lock manager, recorder.

Everything random draws from streams spawned from ``sim.seed`` in a fixed order (network,
plan, client start phases, probes, then one per client), so the same config gives the same
run, and a client's transactions do not depend on what other clients do.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from netlock.config import Config
from netlock.errors import ConfigError
from netlock.plan import Plan, PlanInputs, PlanSummary, SwitchEntries
from netlock.plan_io import load_plan
from sim.allocation import (
    CoarseWorkload,
    Partition,
    Warmup,
    plan_from_trace,
    trace_from_uses,
    warmup_trace,
)
from sim.clients import Client, ClientParams, Rack, client_machines, make_clients
from sim.engine import Engine
from sim.managers.base import LockManager
from sim.managers.context import ManagerContext
from sim.managers.netlock.failures import schedule_failures
from sim.managers.registry import make_manager
from sim.metrics import Recorder
from sim.network import Faults, Network, fault_rng
from sim.replay import TraceWorkload
from sim.spec import run_spec
from sim.workloads import Workload, workload_from_config

PILOT_TXNS_PER_CLIENT = 20
PILOT_REQUESTS = 50_000
Progress = Callable[[float, float], None]
"""``progress(now_us, end_us)``: how far a run has come, in simulated microseconds."""

PILOT_STEP_US = 1000.0
PILOT_MAX_US = 50_000.0
PILOT_STREAM = 1
FLUSH_EVERY_US = 500.0
"""Simulated time between moves of the clients' records into compact arrays."""
@dataclass
class Model:
    """One rack, built and ready to run."""

    config: Config
    engine: Engine
    network: Network
    recorder: Recorder
    manager: LockManager
    clients: list[Client]
    workload: Workload
    plan: Plan
    hold_us: float
    probe_rng: np.random.Generator

    def run(self, until_us: float | None = None, failures: bool = True,
            progress: Progress | None = None) -> None:
        """Start everything, run to ``until_us`` (default ``sim.end_s``: the warm-up, then
        the measured duration) and record the uses still open as ending there.
        ``failures`` arms the config's failures; ``progress(now_us, end_us)`` is told how
        far the run has come."""
        end_us = self.config.sim.end_s * 1e6 if until_us is None else until_us
        self.start(failures)
        self.advance(end_us, progress)
        for client in self.clients:
            client.close(end_us)
        self.recorder.flush()

    def start(self, failures: bool = True) -> None:
        self.manager.start()
        if failures and self.config.manager.kind == "netlock":
            schedule_failures(self.manager, self.config.failures)

    def advance(self, until_us: float, progress: Progress | None = None) -> None:
        """Process the events up to ``until_us`` (``progress`` told after each step).

        The cyclic garbage collector is off while the events run: the hot path makes no
        reference cycles (reference counting frees every request), and full collections
        over the model's many long-lived objects would otherwise cost more than the model.
        """
        collecting = gc.isenabled()
        gc.disable()
        try:
            t = self.engine.now
            while t < until_us:
                t = min(t + FLUSH_EVERY_US, until_us)
                self.engine.run(t)
                self.recorder.flush()
                if progress is not None:
                    progress(t, until_us)
        finally:
            if collecting:
                gc.enable()


def make_workload(config: Config) -> Workload:
    if config.workload.kind == "trace":
        return TraceWorkload.from_file(config.workload.trace, config.workload.clients)
    return workload_from_config(config)


def client_workload(config: Config) -> Workload:
    """The transactions the clients run: the workload, with its locks merged into coarse
    locks when ``policy.coarse_group`` > 1."""
    workload = make_workload(config)
    group = config.policy.coarse_group
    return CoarseWorkload(workload, group) if group > 1 else workload


def build(config: Config) -> Model:
    """The model of ``config``, with a plan made on the fly from a warm-up trace.

    The warm-up run (:func:`pilot_trace`) is the same rack with every lock on the lock
    servers, with its own random streams; its granted requests are the trace the plan is
    measured from (:mod:`sim.allocation`).
    """
    spec = run_spec(config)
    if config.manager.kind != "netlock":
        return assemble(config, no_plan(config), Partition(config.servers.count),
                        seed_key=config.sim.seed)
    if config.policy.plan:
        return assemble(config, *plan_from_file(config), seed_key=config.sim.seed)
    priorities = list(spec.priorities)
    plan_rng = np.random.default_rng(np.random.SeedSequence([config.sim.seed, PILOT_STREAM]))
    trace = warmup_trace(client_workload(config), config, priorities, spec.fetch_hops,
                         plan_rng)
    if config.switch.slots > 0 and config.servers.count > 0:
        trace = pilot_trace(config, trace, priorities, spec.hold_us)
    return assemble(config, *plan_from_trace(trace, config, spec.hold_us),
                    seed_key=config.sim.seed)


def no_plan(config: Config) -> Plan:
    """The plan of a design that allocates no NetLock switch memory: nothing in the switch,
    no predicted rates."""
    policy = config.policy.allocation
    return Plan(geometry=config.geometry, policy=policy,
                inputs=PlanInputs(slots=0, server_rate_rps=config.servers.capacity_rps,
                                  lock_group=config.policy.coarse_group),
                entries=SwitchEntries.empty(), partition=(),
                summary=PlanSummary(policy=policy, slots_total=0, slots_used=0,
                                    locks_total=0, locks_in_switch=0, total_rps=0.0,
                                    switch_rps=0.0, server_rps=0.0, servers_needed=0,
                                    server_rate=config.servers.capacity_rps,
                                    rates="none"))


def plan_from_file(config: Config) -> tuple[Plan, Partition]:
    """The plan named by ``policy.plan`` and its partition over ``servers.count`` servers."""
    path = config.policy.plan
    plan = load_plan(path)
    if plan.geometry != config.geometry:
        raise ConfigError(f"{path}: geometry: the plan was made for other register arrays or "
                          f"priorities than this config's switch")
    group = config.policy.coarse_group
    if plan.inputs.lock_group != group:
        raise ConfigError(f"{path}: inputs.lock_group: the plan merges "
                          f"{plan.inputs.lock_group} locks per coarse lock but "
                          f"policy.coarse_group is {group}")
    count = max(config.servers.count, 1)
    if not plan.partition:
        return plan, Partition(count)
    return plan, Partition(count, [p.hi for p in plan.partition],
                           [p.server % count for p in plan.partition])


_PILOTS: dict[str, Warmup] = {}


def pilot_key(config: Config) -> str:
    """What a pilot run depends on: the config without switch memory, allocation policy,
    run length and failures (runs differing only in those share their pilot)."""
    doc = config.to_dict()
    doc["switch"].pop("slots")
    doc["policy"].pop("allocation")
    doc["sim"].pop("duration_s")
    doc.pop("failures")
    return json.dumps(doc, sort_keys=True, default=str)


def pilot_trace(config: Config, synthetic: Warmup, priorities: list[int],
                hold_us: float) -> Warmup:
    """The trace of a warm-up run with every lock on the lock servers.

    It runs for at least ``sim.warmup_s`` and until the clients have committed
    ``PILOT_TXNS_PER_CLIENT`` transactions each and ``PILOT_REQUESTS`` requests in all (at
    most ``PILOT_MAX_US``), so that r_i and c_i rest on enough requests. Runs that differ
    only in switch memory or allocation policy share their warm-up run, which is kept per
    process.
    """
    key = pilot_key(config)
    found = _PILOTS.get(key)
    if found is None:
        servers_only = plan_from_trace(synthetic, config, hold_us, slots=0)
        pilot = assemble(config, *servers_only, seed_key=[config.sim.seed, PILOT_STREAM])
        wanted = PILOT_TXNS_PER_CLIENT * config.workload.clients
        until = max(config.sim.warmup_s * 1e6, PILOT_STEP_US)
        pilot.start(failures=False)
        pilot.advance(until)
        rec = pilot.recorder
        while ((rec.committed < wanted or rec.granted < PILOT_REQUESTS)
               and until < PILOT_MAX_US):
            until += PILOT_STEP_US
            pilot.advance(until)
        requests = pilot.recorder.requests_frame()
        found = trace_from_uses(requests, priorities) if len(requests) else synthetic
        _PILOTS.clear()
        _PILOTS[key] = found
    return found


def assemble(config: Config, plan: Plan, partition: Partition, seed_key: object) -> Model:
    """Clients, network and the lock manager ``manager.kind`` names for ``config`` (NetLock
    with a given plan)."""
    wl = config.workload
    streams = np.random.SeedSequence(seed_key).spawn(3 + wl.clients)
    net_rng, start_rng, probe_rng = (np.random.default_rng(s) for s in streams[:3])
    engine = Engine()
    net = config.network
    faults = Faults(net.duplicate, net.reorder, net.reorder_delay_us, fault_rng(seed_key))
    network = Network(net.rtt_us, net.jitter_us, net.loss, net_rng, faults)
    recorder = Recorder()
    workload = client_workload(config)
    spec = run_spec(config)
    tenant_of = {t.id: t for t in config.tenants}
    tenants = list(config.client_tenants)
    manager = make_manager(ManagerContext(engine, network, config, spec, plan, partition))
    rack = Rack(engine, network, recorder, manager)
    cl = config.clients
    # The clients' per-packet send and receive processing applies to lock packets that
    # leave the machine; a design in the client's own library is entered by a call and
    # times its RDMA verbs on its fabric's NIC model.
    network_entry = manager.entry_hops > 0
    params = ClientParams(
        think_us=wl.think_time_us, lease_us=spec.client_lease_us,
        timeout_us=cl.timeout_us, fetch_hops=spec.fetch_hops,
        gap_per_lock_us=1e6 / wl.rate_rps if wl.rate_rps > 0 else 0.0,
        seed=config.sim.seed, backoff_slot_us=cl.backoff_slot_us,
        backoff_slots=cl.backoff_slots, tx_us=cl.tx_us if network_entry else 0.0,
        rx_us=cl.rx_us if network_entry else 0.0)
    machines = client_machines(wl.clients, config.clients.machines, config.clients.rate_rps)
    clients = make_clients(rack, workload, params, machines, tenants, list(spec.priorities),
                           streams[3:])
    phase = start_rng.uniform(0.0, config.network.rtt_us / 2.0, wl.clients)
    for client, offset in zip(clients, phase.tolist(), strict=True):
        client.start(tenant_of[client.tenant].start_s * 1e6 + offset)
    return Model(config=config, engine=engine, network=network, recorder=recorder,
                 manager=manager, clients=clients, workload=workload, plan=plan,
                 hold_us=spec.hold_us, probe_rng=probe_rng)
