"""A run's derived parameters, computed once from its config for both engines.

Both the simpy engine (:mod:`sim.model`) and the fast engine (:mod:`sim.fast.model`) build
their rack from a :class:`RunSpec`, so the data read, the clients' usable lease, the hold
time and the clients' priorities cannot drift apart between them. Times are us.
"""

from __future__ import annotations

from dataclasses import dataclass

from netlock.client import longest_hold_us
from netlock.config import Config
from netlock.errors import ConfigError


@dataclass(frozen=True)
class RunSpec:
    """What a run derives from its config (us)."""

    fetch_hops: int
    """Hops of the data read after the last grant (0: no read, or the one-RTT mode)."""
    grant_extra_hops: int
    """Hops a switch grant takes through the database server (the one-RTT mode)."""
    client_lease_us: float
    """How long after a grant a client may use the lock: the lease less the guard."""
    gap_per_lock_us: float
    """A client's least time between two lock requests, from ``workload.rate_rps`` (0: no
    cap)."""
    hold_us: float
    """Expected time a one-lock request occupies its queue slot (for the plan)."""
    priorities: tuple[int, ...]
    """Each client's priority class."""


def lease_guard_us(config: Config) -> float:
    """How long before its lease ends a client stops using a lock (us): a release must
    reach the switch before the lease sweep could hand the lock to someone else, so the
    client keeps one round trip (its own processing included) plus ten jitter deviations of
    margin."""
    return config.client_rtt_us + 10 * config.network.jitter_us


def stall_bound_us(config: Config) -> float:
    """The longest a lock can stay idle while a request waits for it when the lock manager
    has lost track of nothing (us; the liveness checker's bound, :mod:`sim.core.liveness`).

    One lost packet (acquire, grant or release) leaves a lock unused until the lease of the
    grant nobody uses ends and the next lease sweep sees it (``lease.us`` + ``sweep_us``);
    the lost grant's acquire may have left a back-off after its attempt's predecessor
    released the lock (the longest back-off); and that acquire, and the grant after the
    sweep, each take up to a round trip between a client and a lock server through the
    switch, covered as the lease guard covers one (:func:`lease_guard_us`). A lost acquire
    of a one-lock attempt idles its lock for less: the attempt's timeout (a lease), a
    back-off and a round trip."""
    cl = config.clients
    longest_backoff = (cl.backoff_slots - 1) * cl.backoff_slot_us
    return (config.lease.us + config.lease.sweep_us + longest_backoff
            + 2 * lease_guard_us(config))


def most_locks_per_txn(config: Config) -> int:
    """An upper bound of a transaction's locks that tells one from several (a trace is
    taken to have several)."""
    wl = config.workload
    return wl.locks_per_txn if wl.kind == "micro" else 2


def run_spec(config: Config) -> RunSpec:
    """The derived parameters of ``config``; a ConfigError naming ``lease.us`` when the
    lease is too short for the clients to use it as the rules require."""
    one_rtt = config.workload.kind == "tpcc" and config.network.one_rtt
    fetch_hops = config.fetch_hops
    lease, guard = config.lease.us, lease_guard_us(config)
    if lease <= guard:
        raise ConfigError(f"{config.source}: lease.us: {lease:g} us is too short: clients keep "
                          f"{guard:g} us of margin (a round trip plus ten jitter deviations) "
                          f"before a lease ends")
    read_us = config.read_us(fetch_hops)
    longest = longest_hold_us(most_locks_per_txn(config), config.clients.timeout_us,
                              config.workload.think_time_us, read_us) + guard
    if lease <= longest:
        raise ConfigError(f"{config.source}: lease.us: {lease:g} us is shorter than a live "
                          f"client may hold a lock ({longest:g} us: attempt timeout, data "
                          f"read, think time and the guard); raise lease.us")
    tenant_of = {t.id: t for t in config.tenants}
    rate_rps = config.workload.rate_rps
    return RunSpec(fetch_hops=fetch_hops, grant_extra_hops=2 if one_rtt else 0,
                   client_lease_us=lease - guard,
                   gap_per_lock_us=1e6 / rate_rps if rate_rps > 0 else 0.0,
                   hold_us=config.hold_time_us(fetch_hops),
                   priorities=tuple(tenant_of[t].priority for t in config.client_tenants))
