"""A run's derived parameters, computed once from its config for both engines.

Both the simpy engine (:mod:`sim.simpy_model`) and the fast engine
(:mod:`sim.fast.fast_model`) build their rack from a :class:`RunSpec`, so the data read,
the clients' usable lease, the hold time and the clients' priorities cannot drift apart
between them. Times are us.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from netlock.config import Config
from netlock.config.derived import lease_guard_us, lease_problem
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


def unanswered_cutoff_us(config: Config) -> float:
    """Open-loop runs: an acquire sent before this time (us) and still unanswered at the
    run's end waited longer than :func:`stall_bound_us` and counts as stalled; -inf for
    closed-loop runs, whose waits the liveness checker sees as transactions' waits."""
    if config.clients.send_limit_per_ms == 0:
        return -math.inf
    return config.sim.end_s * 1e6 - stall_bound_us(config)


def run_spec(config: Config) -> RunSpec:
    """The derived parameters of ``config``; a ConfigError naming ``lease.us`` when the
    lease is too short for the clients to use it as the rules require (the loader refuses
    such a config already; this covers one built otherwise)."""
    problem = lease_problem(config)
    if problem is not None:
        raise ConfigError(f"{config.source}: {problem}")
    one_rtt = config.workload.kind == "tpcc" and config.network.one_rtt
    fetch_hops = config.fetch_hops
    guard = lease_guard_us(config)
    tenant_of = {t.id: t for t in config.tenants}
    rate_rps = config.workload.rate_rps
    return RunSpec(fetch_hops=fetch_hops, grant_extra_hops=2 if one_rtt else 0,
                   client_lease_us=config.lease.us - guard,
                   gap_per_lock_us=1e6 / rate_rps if rate_rps > 0 else 0.0,
                   hold_us=config.hold_time_us(fetch_hops),
                   priorities=tuple(tenant_of[t].priority for t in config.client_tenants))
