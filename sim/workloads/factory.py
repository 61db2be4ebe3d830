"""Build the workload generator a config describes (``workload.kind``)."""

from __future__ import annotations

from typing import Any

from netlock.config.derived import lease_guard_us
from netlock.errors import ConfigError, TraceError
from sim.workloads.base import WorkloadGenerator
from sim.workloads.micro import MicroWorkload
from sim.workloads.replay import TraceWorkload
from sim.workloads.sharing import SharingWorkload
from sim.workloads.tpcc import TpccNewOrder
from sim.workloads.tpcc_dslr import TpccDslr


def workload_from_config(config: Any, machines: int | None = None) -> WorkloadGenerator:
    """The generator for ``config``: a whole config or just its ``workload`` section.

    TPC-C's ``workload.generator`` picks DSLR's generator (all clients share
    ``workload.warehouses`` warehouses) or the sketch, which places ``workload.warehouses``
    warehouses on each client node. The node count is
    ``clients.machines`` when a whole config is given, else ``machines``, else one node per
    client process (``workload.clients``). A ``trace`` workload has no generator (it is
    replayed from its file) and is a :class:`ConfigError` here. The sharing workload's nodes
    are found the same way.
    """
    workload = getattr(config, "workload", config)
    if hasattr(config, "workload") and machines is None:
        machines = config.clients.machines
    kind = workload.kind
    try:
        if kind == "micro":
            return MicroWorkload(locks=workload.locks, mode=workload.mode,
                                 shared_fraction=workload.shared_fraction, zipf=workload.zipf,
                                 locks_per_txn=workload.locks_per_txn)
        if kind == "tpcc" and workload.generator in ("dslr", "dslr_uniform"):
            return TpccDslr(warehouses=workload.warehouses,
                            uniform_ids=workload.generator == "dslr_uniform")
        if kind == "tpcc":
            return TpccNewOrder(warehouses_per_node=workload.warehouses,
                                nodes=machines or workload.clients,
                                ol_cnt_min=workload.ol_cnt_min, ol_cnt_max=workload.ol_cnt_max,
                                insert_locks=workload.insert_locks)
        if kind == "sharing":
            return SharingWorkload(shared_locks=workload.shared_locks,
                                   private_locks=workload.locks,
                                   machines=machines or workload.clients,
                                   sharing_ratio=workload.sharing_ratio,
                                   shared_fraction=workload.shared_fraction)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    raise ConfigError(f"workload.kind: {kind!r} has no generator (micro, tpcc and sharing do; a "
                      f"trace is replayed from its file)")


def make_workload(config: Any) -> WorkloadGenerator:
    """The workload a whole config's ``workload.kind`` names: a generator, or the recorded
    trace replayed (:class:`TraceWorkload`; ``workload.replay``: timed, or loop). A timed
    replay's holds leave out the clients' round trip (``client_rtt_us``,
    :func:`sim.workloads.replay.replay_timing`); one that no client lease covers (with the
    lease guard, :func:`netlock.config.derived.lease_guard_us`) could never commit, and is
    a TraceError naming the transaction."""
    wl = config.workload
    if wl.kind != "trace":
        return workload_from_config(config)
    trip = config.client_rtt_us if wl.timed_replay else None
    trace = TraceWorkload.from_file(wl.trace, wl.clients, round_trip_us=trip)
    hold, txn = trace.longest_hold()
    guard = lease_guard_us(config)
    if hold + guard >= config.lease.us:
        raise TraceError(f"{wl.trace}: txn_id {txn} holds its locks {hold:g} us (t_release - "
                         f"t_request less the {trip:g} us round trip), more than lease.us "
                         f"{config.lease.us:g} less the clients' {guard:g} us guard allows: "
                         f"raise lease.us, or set workload.replay: loop")
    return trace
