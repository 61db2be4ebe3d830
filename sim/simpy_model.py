"""Build the model of one rack from a config: clients, network, lock manager, recorder.

Everything random draws from streams spawned from ``sim.seed`` in a fixed order (network,
plan, client start phases, probes, then one per client), so the same config gives the same
run, and a client's transactions do not depend on what other clients do.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np

from netlock.config import Config
from netlock.plan import Plan
from sim.client_inputs import ClientParams, SimpyRack, client_machines
from sim.clients import Client, make_clients
from sim.core.allocation import Partition
from sim.core.budget import WallBudget, stop_boundary_us
from sim.core.draws import fault_rng
from sim.core.parts import client_workload, rx_cores_per_client, send_window_phases
from sim.core.pilot import make_plan, no_plan
from sim.core.result import Progress
from sim.core.rows import Columns
from sim.core.run_spec import run_spec, unanswered_cutoff_us
from sim.engine import Engine
from sim.managers.context import ManagerContext
from sim.managers.interface import LockManager
from sim.managers.netlock_rack.failures import schedule_failures
from sim.managers.registry import make_manager
from sim.network import Faults, Network
from sim.open_loop import make_open_loop_clients
from sim.recorder import Recorder
from sim.workloads import WorkloadGenerator

ENGINE = "simpy"
FLUSH_EVERY_US = 100.0
"""Simulated time between moves of the clients' records into compact arrays: short, so
the rows (about 2,000 on the microbenchmark) are still in the CPU's cache when packed."""


@dataclass
class Model:
    """One rack, built and ready to run."""

    config: Config
    engine: Engine
    network: Network
    recorder: Recorder
    manager: LockManager
    clients: list[Client]
    workload: WorkloadGenerator
    plan: Plan
    hold_us: float
    probe_rng: np.random.Generator

    def run(self, until_us: float | None = None, failures: bool = True,
            progress: Progress | None = None, stop: Callable[[], bool] | None = None) -> float:
        """Start everything, run to ``until_us`` (default ``sim.end_s``: the warm-up, then
        the measured duration) or until ``stop()`` says so, and record the uses still open
        as ending there; where it ended (us). ``failures`` arms the config's failures;
        ``progress(now_us, end_us)`` is told how far the run has come."""
        end_us = self.config.sim.end_s * 1e6 if until_us is None else until_us
        self.start(failures)
        end_us = self.advance(end_us, progress, stop)
        for client in self.clients:
            client.close(end_us)
        self.recorder.flush()
        return end_us

    def start(self, failures: bool = True) -> None:
        self.manager.start()
        if failures and self.config.manager.kind == "netlock":
            schedule_failures(self.manager, self.config.failures)

    def advance(self, until_us: float, progress: Progress | None = None,
                stop: Callable[[], bool] | None = None) -> float:
        """Process the events up to ``until_us`` (``progress`` told after each step), or
        up to the first step after which ``stop()`` is true; where it stopped (us).

        The cyclic garbage collector is off while the events run: the hot path makes no
        reference cycles (reference counting frees every request), and full collections
        over the model's many long-lived objects would otherwise cost more than the model.
        """
        collecting = gc.isenabled()
        gc.disable()
        try:
            t = self.engine.now
            while t < until_us:
                t = min(stop_boundary_us(t + FLUSH_EVERY_US), until_us)
                self.engine.run(t)
                self.recorder.flush()
                if progress is not None:
                    progress(t, until_us)
                if stop is not None and stop():
                    break
        finally:
            if collecting:
                gc.enable()
        return t

    @property
    def committed(self) -> int:
        return self.recorder.committed

    @property
    def granted(self) -> int:
        return self.recorder.granted

    def requests_columns(self) -> Columns:
        return self.recorder.requests_columns()


def build(config: Config, budget: WallBudget | None = None) -> Model:
    """The model of ``config``, with its plan made as :func:`sim.core.pilot.make_plan` makes
    it, the pilot run on this engine within the run's ``budget`` (a design other than
    NetLock gets no plan)."""
    spec = run_spec(config)
    if config.manager.kind != "netlock":
        return assemble(config, no_plan(config), Partition(config.servers.count),
                        seed_key=config.sim.seed)
    plan, partition = make_plan(config, spec, partial(start_pilot, config), ENGINE, budget)
    return assemble(config, plan, partition, seed_key=config.sim.seed)


def start_pilot(config: Config, plan: Plan, partition: Partition, seed_key: object) -> Model:
    """The rack of ``config`` with ``plan``, started without failures (a pilot run)."""
    model = assemble(config, plan, partition, seed_key)
    model.start(failures=False)
    return model


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
    if manager.entry_hops == 0:
        # A design in the client's own library is entered by a call, not a packet, and its
        # RDMA verbs ride reliable connections (docs/config.md, network.duplicate): no
        # copy or reordering reaches it.
        network.faults = None
    rack = SimpyRack(engine, network, recorder, manager)
    cl = config.clients
    # The clients' per-packet send and receive processing applies to lock packets that
    # leave the machine; a design in the client's own library is entered by a call and
    # times its RDMA verbs on its fabric's NIC model.
    network_entry = manager.entry_hops > 0
    params = ClientParams(
        think_us=wl.think_time_us, lease_us=spec.client_lease_us,
        timeout_us=cl.timeout_us, fetch_hops=spec.fetch_hops,
        gap_per_lock_us=spec.gap_per_lock_us,
        seed=config.sim.seed, backoff_slot_us=cl.backoff_slot_us,
        backoff_slots=cl.backoff_slots, tx_us=cl.tx_us if network_entry else 0.0,
        rx_us=cl.rx_us if network_entry else 0.0)
    machines = client_machines(wl.clients, config.clients.machines, config.clients.rate_rps)
    phase = start_rng.uniform(0.0, config.network.rtt_us / 2.0, wl.clients)
    if cl.send_limit_per_ms > 0:
        clients = make_open_loop_clients(rack, workload, params, machines, tenants,
                                         list(spec.priorities), streams[3:],
                                         cl.send_limit_per_ms, cl.skip_held,
                                         (rx_cores_per_client(wl.clients, cl.machines,
                                                              cl.rx_cores),
                                          cl.tx_burst, cl.tx_drain_us),
                                         send_window_phases(start_rng, wl.clients),
                                         unanswered_cutoff_us(config))
    else:
        clients = make_clients(rack, workload, params, machines, tenants,
                               list(spec.priorities), streams[3:])
    for client, offset in zip(clients, phase.tolist(), strict=True):
        client.start(tenant_of[client.tenant].start_s * 1e6 + offset)
    return Model(config=config, engine=engine, network=network, recorder=recorder,
                 manager=manager, clients=clients, workload=workload, plan=plan,
                 hold_us=spec.hold_us, probe_rng=probe_rng)
