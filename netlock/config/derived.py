"""Values a run derives from several config keys, with the one rule they impose (the lease).

Both engines (through :mod:`sim.core.run_spec`), the footprint estimate and ``netlock config
check`` read them here, so that ``config check`` refuses what ``sim`` refuses and the most
locks a transaction takes has one answer. Times are us.
"""

from __future__ import annotations

from netlock.client import longest_hold_us
from netlock.config.schema import Config
from netlock.config.typed import Problem

TPCC_FIXED_LOCKS = 8
"""Locks of a TPC-C transaction besides its order lines (warehouse, district, customer, ...)."""
TPCC_LOCKS_PER_LINE = 11
"""Locks per order line of a TPC-C transaction (:mod:`sim.workloads.tpcc`)."""
TPCC_DSLR_LOCKS = 9
"""The most locks a transaction of DSLR's TPC-C takes (a NewOrder with the NEW_ORDER table's
lock, :mod:`sim.workloads.tpcc_dslr`)."""


def most_locks_per_txn(config: Config) -> int | None:
    """The most locks one transaction of ``config``'s workload takes, or None for a trace
    workload (bounded by the trace file, not the config)."""
    wl = config.workload
    if wl.kind == "micro":
        return wl.locks_per_txn
    if wl.kind == "tpcc" and wl.generator != "sketch":
        return TPCC_DSLR_LOCKS
    if wl.kind == "tpcc":
        return TPCC_FIXED_LOCKS + TPCC_LOCKS_PER_LINE * wl.ol_cnt_max
    return None




def lease_guard_us(config: Config) -> float:
    """How long before its lease ends a client stops using a lock (us): a release must
    reach the switch before the lease sweep could hand the lock to someone else, so the
    client keeps one round trip (its own processing included) plus ten jitter deviations of
    margin."""
    return config.client_rtt_us + 10 * config.network.jitter_us


def lease_problem(config: Config) -> Problem | None:
    """``lease.us`` too short for the clients to use a lease as the rules require: not longer
    than the guard, or than the longest a live client holds a lock plus the guard (a trace's
    transactions are taken to have several locks)."""
    lease, guard = config.lease.us, lease_guard_us(config)
    if lease <= guard:
        return Problem("lease.us", f"{lease:g} us is too short: clients keep {guard:g} us of "
                       f"margin (a round trip plus ten jitter deviations) before a lease ends")
    locks = most_locks_per_txn(config) or 2
    longest = longest_hold_us(locks, config.clients.timeout_us, config.workload.think_time_us,
                              config.read_us(config.fetch_hops)) + guard
    if lease <= longest:
        return Problem("lease.us", f"{lease:g} us is shorter than a live client may hold a "
                       f"lock ({longest:g} us: attempt timeout, data read, think time and the "
                       f"guard); raise lease.us")
    return None
