"""The request rate open-loop clients get through a rack (``clients.send_limit_per_ms`` > 0).

Why a model of its own: an open-loop context (the authors' microbenchmark client,
:mod:`netlock.client`) sends its next one-lock request without waiting for grants, so the
closed loop's "a client's next request follows its last grant" (:mod:`planner.offered`)
does not hold and predicts an order of magnitude too little (Figure 8a: 4 M against the
120 M requests/s its 24 contexts offer). What they get is what they offer, less what the
switch's locks and the lock servers cannot carry. Rates rps, times us, the config's numbers.

Offered: each context sends at most ``send_limit_per_ms`` requests per
:data:`netlock.client.SEND_WINDOW_US` window, no faster than its share of its machine's NIC
(``clients.rate_rps`` split over the machine's contexts, round-robin as the simulator
spreads them): lambda = sum_c min(limit / window, NIC share_c). Lock i gets lambda (x_i +
y_i) (its exclusive and shared shares, as :meth:`planner.demand.Demand.of`).

A lock in the switch. A shared request is granted at once. An exclusive lock hands over once
per T_X: the release leaves its client, crosses a hop to the switch, takes
:data:`planner.offered.HANDOVER_PASSES` passes, the grant crosses a hop and the next
client's receive processing, and its release leaves through the client's receiving core's
TX burst (``clients.tx_burst`` / ``tx_drain_us``: at the core's next drain tick, on a grid
shared by all cores), so with drains T_X = D E[ceil(p / D)] (p the path above, normal with
the two hops' jitter; :func:`planner.serverpath.ticks_after`) and without them T_X = p +
the client's send processing. Lock i carries at most 1 / T_X; a context that skips a lock it
already waits for (``clients.skip_held``) sends its request to another lock instead, so the
exclusive locks together carry min(their offered load, sum_i 1 / T_X) (taken as spread
evenly over the unsaturated locks); without the skip each carries min(lambda_i, 1 / T_X).
A lock's requests overflow its ``s_i`` slots when it holds more: with its holders and
waiters Poisson of mean lambda_i T_X (shared: lambda_i T_X as well, each holding T_X), the
share P(N >= s_i) goes to the lock servers (overflow; the switch's later push-back is not
modelled).

The lock servers take the locks without slots, the overflow and the locks the sample never
drew. Each request is an acquire and a release, ``servers.packet_us`` each on one of
``servers.count`` x ``servers.cores`` cores: C = cores x count / packet_us packets per
second. Below it they carry what they get. Above it their RX rings drop packets
(``servers.rx_ring``): with each arriving packet dropped with probability d, acquires
lambda_s are granted lambda_s (1 - d) and their releases arrive at that rate, and the cores
serve C = lambda_s (1 - d) (2 - d): the grants are lambda_s x with x (1 + x) = C /
lambda_s. This is exact for shared locks (a dropped release costs nothing, the lock keeps
granting) and high for exclusive ones, where a dropped release keeps the lock until its
lease ends (tests/sim/test_capacity.py measures it). The switch passes every acquire and
release: it carries at most ``switch.rate_pps`` / 2 requests per second.

Where it is approximate: the send windows' bursts (a context sends its window's quota at its
NIC rate, then idles) are averaged, so a run shorter than a few windows, or not a whole
number of them, measures more or less; queueing at the server's cores for the locks they
hold is left out of the per-lock hand-over (their CPU bounds those runs first). Measured
against the fast engine at small scale over two whole windows
(tests/sim/test_open_loop_plan.py): Figure 8a and 8cd exact to 0.1 %, Figure 9's shared
rows within 9 %. Two misses, both where the simulation loses requests: Figure 8b (55,000
exclusive locks of one slot each) predicts 120 M against 104 M simulated, whose overflow
backlog leaves thousands of requests unanswered (the overflow's push-back is not
modelled); one one-core lock server under Figure 9's exclusive rows predicts 3.4 M against
2.8 M (a dropped release holds its lock until the lease ends).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from netlock.client import SEND_WINDOW_US
from netlock.config import Config
from planner.closedloop import TxnSample
from planner.offered import HANDOVER_PASSES
from planner.serverpath import ticks_after


@dataclass(frozen=True)
class OpenLoopClients:
    """The open loop's numbers (rps, us), from a config; None from :meth:`of` for a
    closed loop."""

    offered_rps: float
    skip_held: bool
    hop_us: float
    jitter_us: float
    pass_us: float
    tx_us: float
    rx_us: float
    tx_burst: int
    tx_drain_us: float
    switch_rps: float
    cores: int
    packet_us: float

    @classmethod
    def of(cls, config: Config) -> OpenLoopClients | None:
        """The same numbers the simulator uses (``clients``, ``network``, ``switch``,
        ``servers``)."""
        cl = config.clients
        if cl.send_limit_per_ms <= 0:
            return None
        n, machines = config.workload.clients, cl.machines
        per_machine = [len(range(m, n, machines)) for m in range(machines)]
        limit = cl.send_limit_per_ms * 1e6 / SEND_WINDOW_US
        offered = sum(min(limit, cl.rate_rps / per_machine[c % machines]) for c in range(n))
        return cls(offered_rps=offered, skip_held=cl.skip_held,
                   hop_us=config.network.rtt_us / 2.0, jitter_us=config.network.jitter_us,
                   pass_us=config.switch.pass_us, tx_us=cl.tx_us, rx_us=cl.rx_us,
                   tx_burst=cl.tx_burst, tx_drain_us=cl.tx_drain_us,
                   switch_rps=config.switch.rate_pps / 2.0, cores=config.servers.cores,
                   packet_us=config.servers.packet_us)

    def handover_us(self) -> float:
        """T_X: an exclusive lock in the switch hands over once per this (module doc)."""
        path = 2 * self.hop_us + HANDOVER_PASSES * self.pass_us + self.rx_us
        if self.tx_burst <= 1 or self.tx_drain_us <= 0:
            return path + self.tx_us
        deviation = self.jitter_us * math.sqrt(2.0)
        return self.tx_drain_us * ticks_after(np.array([path]), np.array([deviation]),
                                              self.tx_drain_us)[0]


@dataclass(frozen=True)
class OpenRates:
    """What the open loop gets (rps)."""

    total_rps: float
    switch_rps: float
    server_rps: float
    offered_rps: float


def open_loop_rates(clients: OpenLoopClients, exclusive_share: np.ndarray,
                    shared_share: np.ndarray, slots: np.ndarray, servers: int) -> OpenRates:
    """The module doc's rates: lock i (``exclusive_share[i]`` + ``shared_share[i]`` of the
    requests) has ``slots[i]`` switch slots (0: the lock servers'; the shares may include a
    last pool of never-seen locks with 0 slots), ``servers`` lock servers."""
    from scipy.special import gammaincc  # here, not with the module: as planner.closedloop

    offered = clients.offered_rps
    x = np.asarray(exclusive_share, dtype=np.float64) * offered
    y = np.asarray(shared_share, dtype=np.float64) * offered
    slots = np.asarray(slots, dtype=np.float64)
    held = slots > 0
    hand = clients.handover_us() * 1e-6
    cap = 1.0 / hand
    if clients.skip_held:
        x_held = x[held]
        carried = min(float(x_held.sum()), cap * int(np.count_nonzero(x_held > 0)))
        x_switch = x_held * (carried / x_held.sum()) if x_held.sum() > 0 else x_held
    else:
        x_switch = np.minimum(x[held], cap)
    occupancy = (x_switch + y[held]) * hand
    fits = np.where(np.isfinite(slots[held]),
                    gammaincc(np.maximum(slots[held], 1.0), np.maximum(occupancy, 1e-12)), 1.0)
    switch = float(np.sum((x_switch + y[held]) * fits))
    to_servers = float(np.sum((x_switch + y[held]) * (1 - fits)) + np.sum((x + y)[~held]))
    switch = min(switch, clients.switch_rps)
    if to_servers <= 0 or servers <= 0:
        server = 0.0
    else:
        packets = servers * clients.cores * 1e6 / clients.packet_us
        if 2 * to_servers <= packets:
            server = to_servers
        else:
            ratio = packets / to_servers
            server = to_servers * (math.sqrt(1 + 4 * ratio) - 1) / 2
    return OpenRates(total_rps=switch + server, switch_rps=switch, server_rps=server,
                     offered_rps=offered)


def open_loop_demand(clients: OpenLoopClients, sample: TxnSample, per_lock: np.ndarray,
                     servers: int) -> OpenRates:
    """What ``clients`` get with ``per_lock`` switch slots (per dense lock of a one-lock
    ``sample``) and ``servers`` lock servers (:func:`open_loop_rates`)."""
    x, y, held = future_shares(sample, per_lock)
    return open_loop_rates(clients, x, y, held, servers)


def future_shares(sample: TxnSample, slots: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per dense lock of a one-lock ``sample`` and a last pool of the locks it never drew:
    the exclusive and shared shares of future requests (each lock's sample share regressed
    to the mean, :meth:`TxnSample.repeat_weight`; the pool is shared, with what no seen lock
    draws) and the switch slots (the pool has none)."""
    weight = sample.repeat_weight() / len(sample.lock)
    locks = len(sample.lock_ids)
    x = np.bincount(sample.lock[sample.exclusive], weights=weight[sample.exclusive],
                    minlength=locks)
    y = np.bincount(sample.lock[~sample.exclusive], weights=weight[~sample.exclusive],
                    minlength=locks)
    unseen = max(1.0 - float(x.sum() + y.sum()), 0.0)
    norm = 1.0 / (float(x.sum() + y.sum()) + unseen)
    return np.r_[x, 0.0] * norm, np.r_[y, unseen] * norm, np.r_[np.asarray(slots, float), 0.0]
