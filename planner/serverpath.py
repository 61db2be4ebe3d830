"""What the lock servers add to a one-lock request's round trip: the one-lock model's E (us).

Why it is not "a round trip, a packet and half a drain period": a lock server's core sends
its grants in TX bursts that leave at the core's drain ticks, every ``tx_drain_us`` on one
grid for every core (:mod:`netlock.lockserver.txburst`; a burst leaves early only when
``tx_burst`` packets fill it). A closed-loop client's next request follows its last grant
after a fixed path, so the instant its next server request is ready to leave is not a
uniform phase of the grid: it is locked to the tick its last server grant left at. On the
paper's testbed (5 us round trips, 0.3 us passes, 0.222 us packets, 10 us drains) a grant
leaving at tick k reaches its client, the client's next acquire reaches the server and is
served 10.9 us later: just past tick k + 1, so it waits 9.1 us for tick k + 2, not the 5
us a uniform phase gives; a request that follows a switch request instead is 5.7 us later
in the phase. With 80 % of requests through the servers that is 3 us more per request
than the uniform phase, the one-lock model's +14 % at 1K slots (tests/sim/test_capacity.py).

The model. Times us, the config's numbers (:class:`planner.closedloop.RackTiming`): hop
h = ``network.rtt_us`` / 2 each way, client send and receive processing t_x, r_x
(``clients.tx_us``, ``rx_us``), the switch's pass P (``switch.pass_us``), a packet's service
S (``servers.packet_us``), D = ``servers.tx_drain_us``. From a client acting (sending an
acquire) to its acquire's service ending at the server: a = t_x + 2h + P + Q + S, with Q
the core's mean queueing wait (M/D/1 at the servers' utilisation, RSS spreading the locks
evenly over ``servers.count`` x ``servers.cores`` cores: Q = rho S / (2 (1 - rho))). From a
grant leaving at a tick to the client's next act: b = 2h + r_x + read + think. A switch
request takes c = t_x + 2h + P + r_x + read + think, act to act. A server request sent j
switch requests after the client's last server request is ready to leave at
u_j = b + j c + a past a tick and leaves at the next tick, D ceil(u_j / D): its wait is
W_j = D E[ceil(u_j / D)] - E[u_j]. With q the share of requests the servers take, j is
geometric (P(j) = q (1 - q)^j); u_j's noise is the 2j + 4 hops' jitter (each N(0,
``network.jitter_us``^2), independent), so with u_j normal (mean mu_j, deviation s_j)
E[ceil(u_j / D)] = sum_(k >= 0) Phi((mu_j - k D) / s_j), exact for a normal. The request's
extra time over a switch request is E = 2h + S + Q + sum_j P(j) W_j (the trip to the server
and back, its service and queue, the burst's wait). When the burst fills before the tick
(its core's grants arrive faster than ``tx_burst`` per D), the wait is the fill time instead
(:meth:`planner.closedloop.RackTiming.tx_wait_us`'s (burst - 1) / (2 rate), its uniform
arrivals), whichever is shorter.

Where it is approximate: lock waits (a request queued behind another's exclusive hold) shift
the phase too and are left out of u_j (the microbenchmarks' uniform locks rarely wait; on a
hot lock the switch holds, the MVA's wait is added to the request's time, not its phase);
the grants that leave together at a tick and the acquires that come back together are
queued at their cores as independent arrivals (M/D/1), which matters only where the queue
pushes a request past a tick; the links' FIFO order (a packet never overtakes the one ahead
on its link) and the hops' clipping at zero are left out.
"""

from __future__ import annotations

import math

import numpy as np

from planner.closedloop import RackTiming

PHASE_TAIL = 1e-6
"""Stop summing over j once the geometric tail (1 - q)^j is below this, or after
:data:`PHASE_TERMS` terms; the rest waits D / 2 (its phase, a sum of many hops' noise and
switch cycles, taken as uniform)."""
PHASE_TERMS = 1000


def core_wait_us(rack: RackTiming, server_rps: float, servers: int) -> float:
    """A packet's mean queueing wait at its core (us): M/D/1 at the servers' utilisation
    (an acquire and a release each ``packet_us``)."""
    rho = min(server_rps / rack.capacity_rps(servers), 0.999) if servers > 0 else 0.0
    return rho * rack.packet_us / (2.0 * (1.0 - rho))


def drain_phase_wait_us(rack: RackTiming, served_share: float, queue_us: float) -> float:
    """The mean wait of a server's grant for its core's drain tick (us): sum_j P(j) W_j of
    the module doc, ``served_share`` being q and ``queue_us`` Q."""
    drain = rack.tx_drain_us
    if rack.tx_burst <= 1 or drain <= 0 or served_share <= 0:
        return 0.0
    hop = rack.server_rtt_us / 2.0
    up = rack.client_tx_us + 2 * hop + rack.pass_us + queue_us + rack.packet_us
    down = 2 * hop + rack.client_rx_us + rack.read_us + rack.think_us
    switch = (rack.client_tx_us + 2 * hop + rack.pass_us + rack.client_rx_us + rack.read_us
              + rack.think_us)
    q = min(served_share, 1.0)
    most = 0 if q >= 1.0 else min(math.ceil(math.log(PHASE_TAIL) / math.log1p(-q)),
                                  PHASE_TERMS)
    j = np.arange(most + 1, dtype=np.float64)
    mean = down + j * switch + up
    deviation = rack.jitter_us * np.sqrt(2 * j + 4)
    wait = drain * ticks_after(mean, deviation, drain) - mean
    weight = q * (1.0 - q) ** j
    return float(np.sum(weight * wait) + (1.0 - weight.sum()) * drain / 2.0)


def ticks_after(mean: np.ndarray, deviation: np.ndarray, drain: float) -> np.ndarray:
    """E[ceil(u / D)] for u normal (``mean``, ``deviation``; > 0) and D = ``drain`` (us):
    sum_(k >= 0) Phi((mean - k D) / deviation), exact; a step at deviation 0."""
    ticks = np.arange(math.ceil((float(np.max(mean)) + 10 * float(np.max(deviation)))
                                / drain) + 2)
    gap = mean[:, None] - ticks[None, :] * drain
    if np.all(deviation > 0):
        from scipy.special import ndtr  # here, not with the module: as planner.closedloop

        return ndtr(gap / deviation[:, None]).sum(axis=1)
    return (gap > 0).sum(axis=1).astype(np.float64)


def one_lock_server_us(rack: RackTiming, server_rps: float, servers: int,
                       served_share: float) -> float:
    """E: what the lock servers add to a one-lock request's round trip (us) when ``servers``
    of them serve ``server_rps`` requests, ``served_share`` of all (module doc)."""
    queue = core_wait_us(rack, server_rps, servers)
    wait = drain_phase_wait_us(rack, served_share, queue)
    grants_per_core_us = server_rps * 1e-6 / max(servers * rack.cores, 1)
    if rack.tx_burst > 1 and grants_per_core_us > 0:
        wait = min(wait, (rack.tx_burst - 1) / (2 * grants_per_core_us))
    return rack.server_rtt_us + rack.packet_us + queue + wait
