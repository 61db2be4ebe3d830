"""Closed-loop rates of a rack running transactions: what ``netlock plan`` predicts.

Why: a demand trace (``netlock trace gen``) never waits for a lock, so its rates are what the
clients would send if nothing conflicted. In the rack each of N transaction contexts sends
all its acquires at once (one per NIC gap g), waits for every grant, reads its data, thinks,
releases everything and starts the next transaction; a lock held exclusively queues the
others, and a transaction holds its early grants while it waits for its late ones, so
contention on one hot row lengthens the holds of every lock in the same transactions. Lock
requests the switch does not hold go through a lock server (one more round trip and the
server's CPU: ``cores`` cores of ``packet_us`` per packet, an acquire and a release each a
packet, :class:`netlock.config.schema.Servers`).

The model is a fixed point of two parts; all times us, rates per us inside.

- **Lock waits**: the max-plus recursion of :mod:`planner.grant_recursion` replays the
  sample's transactions (from the trace's ``txn_id`` or a generator) on N contexts: each
  request is granted when it reaches its lock (after the NIC gaps, the client's one way
  and the switch's pass P, plus the lock servers' path E_j for a request the switch does
  not hold) or when what it queues behind is released, whichever is later. It gives the
  transactions' rate X, each lock's occupancy and the latencies; the waits of one
  transaction's locks come out correlated as they are in the rack.
- **Where requests go and the servers' load**: request k of transaction j goes to the lock
  servers with probability s_k (a lock without slots, the overflow of a lock with too few,
  and the requests to locks the sample did not see that a sampled one stands for:
  :func:`_to_servers`); a lock's share in its switch slots is the chance that fewer than
  its slots of the other contexts hold or wait for it, from its occupancy (:func:`_fits`).
  Which requests go is drawn once per sample (a fixed uniform u_k < s_k), so the recursion
  sees whole requests on one path or the other. The servers' path is

      E_k = server_rtt + packet_us + P + tx_wait + own_j + queue_k

  with the TX burst's wait (:meth:`RackTiming.tx_wait_us`: a grant waits for the core's
  drain tick, 5 us on average at ``tx_drain_us`` 10), the wait behind the transaction's
  own batch at its fullest core (own_j) and the other transactions' work at the
  request's core (queue_k), both at utilisation
  U = X x server requests per transaction x 2 packet_us / (servers x cores)
  (:func:`_server_wait_us`); a server lock's hand-over is the release's and the grant's
  way through the switch and to and from the server, two packets and the TX wait
  (server_rtt + 2 packet_us + 2 P + tx_wait), a switch lock's two passes. The servers'
  CPU bounds X (U < 1).

The two parts are iterated, damped, until X and the shares settle (a few tens of replays).
An attempt still waiting at its timeout T (``clients.timeout_us``, or two think times)
gives up and is retried after the mean back-off, inside the recursion.

The hops' jitter (``network.jitter_us``, two hops each way on the servers' path), the TX
burst's phase (uniform over twice its mean wait) and queue_k (none with probability 1 - U,
else exponential of mean W / U, W the mean M^X/D/1 wait) are drawn once per sampled
request, as u_k is: a transaction's last grant is the latest of its requests', and with
about 70 of a sketch NewOrder's requests on the lock servers, taking the jitter and phase at
their means made the model 8-13 % high, and the queue at its mean put the fifth lock server
of tpcc-low's sketch at think 0 under the 5 % rule (+4.8 %) where the simulation gains
6.0 %.

Measured against the fast engine on issue 30's grid (tests/sim/test_capacity.py: DSLR's and
the sketch generator's TPC-C at one and ten warehouses, think 0/10/100 us, 1K-100K slots,
``servers_needed`` servers; 20 ms after a 5 ms warm-up): the total within -4 % to +5 % at
all 48 points, the switch's rate within -6 % to +13 %. The mean-value analysis it replaces
took a transaction's waits as independent and was 23-31 % low at think 0 on DSLR's TPC-C,
26-28 % low at one warehouse and think 100 us, and 43-55 % off on the sketch. The grants
that attempts given up had taken count too: at one warehouse and think 100 us most
attempts time out (1,500 retries in 25 ms), and without them the replay was 45 % low
there.

What it leaves out: bursts that interleave at the switch, leases, the release's own jitter;
an overflowed request is taken as queued in order behind its lock's holders, where the lock
server pushes it back only once the switch's queue is empty (later requests that find a
free slot overtake it); and the lock servers' load is taken as even over their cores, where
the plan's lock-id ranges balance only the locks it saw. Both matter near the servers' CPU
limit, below the count the model asks for: the sketch generator at tpcc-low, think 0, two
servers, 30K slots carries 395,300 tps (its servers 98 % and 65 % busy) where the model
predicts 435,600 (+10 %; 100K slots: 488,400 against 479,200). The plan says ``rates:
closed-loop (approx)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from netlock.config import Config
from planner.future_counts import expected_counts, smoother_for
from planner.grant_recursion import Timing, replay

DAMPING = 0.5
ITERATIONS = 60
TOLERANCE = 1e-3
SHARE_TOLERANCE = 1e-3
REPLAY_ROUNDS = 4
"""How many times the recursion takes each sampled transaction (at least
:data:`REPLAY_LEAST` transactions in all)."""
REPLAY_LEAST = 20_000
QUANTILE = 0.99
HANDOVER_PASSES = 2
SERVER_GAIN = 0.05
"""``servers_needed``: one more lock server would add less than this share of throughput."""


@dataclass(frozen=True)
class RackTiming:
    """The rack's numbers the model needs, from a config (times us)."""

    clients: int
    client_rtt_us: float
    server_rtt_us: float
    read_us: float
    think_us: float
    acquire_gap_us: float
    pass_us: float
    servers: int
    cores: int
    packet_us: float
    timeout_us: float
    backoff_us: float
    tx_burst: int = 1
    tx_drain_us: float = 0.0
    client_tx_us: float = 0.0
    client_rx_us: float = 0.0
    jitter_us: float = 0.0

    @classmethod
    def of(cls, config: Config) -> RackTiming:
        """The same numbers the simulator uses: round trips and client processing
        (``network``, ``clients``), the data read (:attr:`Config.fetch_hops`), the lock
        servers' cores, per-packet cost and TX bursts (:class:`netlock.config.schema.Servers`),
        the hops' jitter (the one-lock server path, :mod:`planner.serverpath`)."""
        cl, wl = config.clients, config.workload
        per_machine = math.ceil(wl.clients / cl.machines)
        return cls(clients=wl.clients, client_rtt_us=config.client_rtt_us,
                   server_rtt_us=config.network.rtt_us,
                   read_us=config.read_us(config.fetch_hops), think_us=wl.think_time_us,
                   acquire_gap_us=per_machine * 1e6 / cl.rate_rps,
                   pass_us=config.switch.pass_us, servers=config.servers.count,
                   cores=config.servers.cores, packet_us=config.servers.packet_us,
                   timeout_us=max(cl.timeout_us, 2.0 * wl.think_time_us),
                   backoff_us=(cl.backoff_slots - 1) / 2.0 * cl.backoff_slot_us,
                   tx_burst=config.servers.tx_burst, tx_drain_us=config.servers.tx_drain_us,
                   client_tx_us=cl.tx_us, client_rx_us=cl.rx_us,
                   jitter_us=config.network.jitter_us)

    def tx_wait_us(self, packets_per_core_us: float) -> float:
        """The mean time a packet a lock server sends waits in its core's TX burst (us,
        :mod:`netlock.lockserver.txburst`): the burst leaves at the next drain tick (a
        uniform phase: drain / 2 on average) unless ``tx_burst`` packets fill it first
        (at ``packets_per_core_us`` per us, about (burst - 1) / (2 rate) on average)."""
        if self.tx_burst <= 1 or self.tx_drain_us <= 0:
            return 0.0
        fill = (self.tx_burst - 1) / (2 * packets_per_core_us) if packets_per_core_us > 0 \
            else math.inf
        return min(self.tx_drain_us / 2, fill)

    def capacity_rps(self, servers: int) -> float:
        """Requests per second ``servers`` lock servers' cores serve (an acquire and a
        release each ``packet_us``)."""
        return servers * self.cores / (2.0 * self.packet_us) * 1e6

    def hold_us(self) -> float:
        """A lock's hold without waiting: grant to client, read, think, release back."""
        return self.client_rtt_us + self.read_us + self.think_us


@dataclass(frozen=True)
class TxnSample:
    """The workload's transactions: request k is on dense lock ``lock[k]`` (``lock_ids``
    maps it back), exclusive or not; transaction j holds requests
    ``offsets[j]:offsets[j + 1]``."""

    lock: np.ndarray
    exclusive: np.ndarray
    offsets: np.ndarray
    lock_ids: np.ndarray

    @classmethod
    def of(cls, lock_id: np.ndarray, mode: np.ndarray, txn: np.ndarray) -> TxnSample:
        """From per-request arrays; ``txn`` names each request's transaction."""
        order = np.lexsort((lock_id, txn))
        t = txn[order]
        starts = np.flatnonzero(np.r_[True, t[1:] != t[:-1]])
        ids, dense = np.unique(lock_id[order], return_inverse=True)
        return cls(lock=dense.astype(np.int64), exclusive=mode[order] == 1,
                   offsets=np.r_[starts, len(t)].astype(np.int64), lock_ids=ids)

    @property
    def transactions(self) -> int:
        return len(self.offsets) - 1

    @property
    def sizes(self) -> np.ndarray:
        return np.diff(self.offsets)

    def repeat_weight(self) -> np.ndarray:
        """Per request, how many future requests (per sampled request) its lock is
        expected to get. A plan gives slots to the locks the sample saw most often, and a
        count drawn high by chance regresses to the mean
        (:func:`planner.future_counts.expected_counts`)."""
        return self.lock_weight()[self.lock]

    def lock_weight(self) -> np.ndarray:
        """Per dense lock, :meth:`repeat_weight`: its expected future requests per sampled
        one."""
        counts = np.bincount(self.lock, minlength=len(self.lock_ids)).astype(np.float64)
        txn_of = np.repeat(np.arange(self.transactions), self.sizes)
        half = np.random.default_rng(0).integers(0, 2, self.transactions)[txn_of] == 1
        halves = (np.bincount(self.lock[~half], minlength=len(counts)).astype(np.float64),
                  np.bincount(self.lock[half], minlength=len(counts)).astype(np.float64))
        expected = expected_counts(counts, smoother_for(*halves))
        weight = np.ones(len(counts))
        seen = counts >= 1
        weight[seen] = expected[seen] / counts[seen]
        return weight

    def per_txn(self, exclusive: bool) -> np.ndarray:
        """Requests per transaction of each lock in one mode."""
        chosen = self.lock[self.exclusive == exclusive]
        return np.bincount(chosen, minlength=len(self.lock_ids)) / self.transactions


@dataclass(frozen=True)
class Rates:
    """The model's equilibrium (rates rps, times us)."""

    txn_rps: float
    total_rps: float
    switch_rps: float
    """Grants the switch makes: the requests for locks it holds, those that overflowed to
    a lock server included (the server only buffers them and pushes them back when the
    lock's queue empties; the switch grants them, paper section 4.3)."""
    server_rps: float
    """Grants the lock servers make (their locks'); their CPU and the server path also
    carry the overflow (``server_utilisation``)."""
    cycle_us: float
    wait_us: float
    server_utilisation: float
    bound: str
    """What limits the rack: ``clients`` (no waiting to speak of), ``contention`` (lock
    waits), ``servers`` (their CPU)."""
    p99_us: float = math.nan
    """The 99th percentile of transaction latency (:mod:`planner.latency`)."""
    occupancy: np.ndarray = field(default_factory=lambda: np.zeros(0), compare=False,
                                  repr=False)
    """Per dense lock of the sample, the mean requests holding or waiting for it (the
    mean whose tail overflows its slots, :func:`_fits`)."""


def solve(sample: TxnSample, rack: RackTiming, slots: np.ndarray,
          servers: int | None = None) -> Rates:
    """The fixed point of the module doc. ``slots[i]`` is the switch's queue slots for
    dense lock i (0: the lock servers hold it; ``inf``: unbounded); ``servers`` overrides
    ``rack.servers``."""
    count = rack.servers if servers is None else servers
    queues = count * rack.cores
    capacity = queues / (2.0 * rack.packet_us) if count > 0 else 0.0
    starts = sample.offsets[:-1]
    repeat = sample.repeat_weight()
    noise = _RequestDraws.of(len(sample.lock), rack.jitter_us)
    txn_of = np.repeat(np.arange(sample.transactions), sample.sizes)
    slots = np.asarray(slots, dtype=np.float64)
    timing = Timing(contexts=rack.clients, gap_us=rack.acquire_gap_us,
                    one_way_us=rack.client_rtt_us / 2, pass_us=rack.pass_us,
                    hold_us=rack.hold_us(), timeout_us=rack.timeout_us,
                    backoff_us=rack.backoff_us)
    replays = max(REPLAY_ROUNDS * sample.transactions, REPLAY_LEAST)
    share = np.where(slots > 0, 1.0, 0.0)
    x = util = 0.0
    for _ in range(ITERATIONS):
        req_server = _to_servers(share[sample.lock], repeat)
        batch = np.add.reduceat(req_server, starts)
        server_per_txn = float(batch.mean())
        tx_wait = rack.tx_wait_us(x * server_per_txn / queues) if queues else 0.0
        to_server = noise.server < req_server
        backlog, own = _server_wait_us(util, batch, queues, rack.packet_us)
        server_us = (rack.server_rtt_us + rack.packet_us + rack.pass_us + tx_wait + own) \
            if queues else np.full(len(batch), math.inf)
        handover = np.where(
            to_server, rack.server_rtt_us + 2 * rack.packet_us + HANDOVER_PASSES * rack.pass_us
            + tx_wait, HANDOVER_PASSES * rack.pass_us)
        hops = np.where(to_server, math.sqrt(2.0), 1.0)
        run = replay(sample.lock, sample.exclusive, sample.offsets,
                     np.where(to_server, server_us[txn_of] + noise.core_wait(util, backlog), 0.0)
                     + hops * noise.hop_there, handover,
                     np.where(to_server, noise.phase * tx_wait, 0.0) + hops * noise.hop_back,
                     len(sample.lock_ids), timing, replays)
        x_new = run.txn_per_us
        if server_per_txn > 0:
            x_new = min(x_new, 0.999 * capacity / server_per_txn) if capacity > 0 else 0.0
        settled = x > 0 and abs(x_new - x) <= TOLERANCE * x
        x = x_new if x == 0.0 else (1 - DAMPING) * x + DAMPING * x_new
        util = x * server_per_txn / capacity if capacity > 0 else 0.0
        fits = _fits(slots, run.occupancy, rack.clients)
        settled = settled and float(np.max(np.abs(fits - share), initial=0.0)) <= SHARE_TOLERANCE
        share = (1 - DAMPING) * share + DAMPING * fits
        if settled:
            break
    per_txn = float(sample.sizes.mean())
    in_vain = 1.0 + run.used_in_vain_per_us / (x * per_txn) if x > 0 else 1.0
    granted_by_servers = float(_to_servers(np.where(slots > 0, 1.0, 0.0)[sample.lock],
                                           repeat).sum()) / sample.transactions * in_vain
    per_txn *= in_vain
    cycle = rack.clients / x if x > 0 else math.inf
    limit = ("servers" if server_per_txn > 0 and util > 0.9 else
             "contention" if run.wait_us > 0.1 * cycle else "clients")
    return Rates(txn_rps=x * 1e6, total_rps=x * per_txn * 1e6,
                 switch_rps=x * (per_txn - granted_by_servers) * 1e6,
                 server_rps=x * granted_by_servers * 1e6, cycle_us=cycle,
                 wait_us=run.wait_us, server_utilisation=util, bound=limit,
                 p99_us=float(np.quantile(run.latency_us, QUANTILE)) if len(run.latency_us)
                 else math.inf,
                 occupancy=run.occupancy)


@dataclass(frozen=True)
class _RequestDraws:
    """The draws fixed once per sampled request (module doc): whether it goes to the lock
    servers (``server`` < s_k), its TX burst's phase (-1..1, times the mean TX wait), its
    hops' jitter there and back (us), whether it finds its core busy (``queued`` < U) and
    the exponential draw of that queue's wait."""

    server: np.ndarray
    phase: np.ndarray
    hop_there: np.ndarray
    hop_back: np.ndarray
    queued: np.ndarray
    queue_draw: np.ndarray

    @classmethod
    def of(cls, requests: int, jitter_us: float) -> _RequestDraws:
        rng = np.random.default_rng(0)
        server, phase = rng.random(requests), rng.random(requests) * 2 - 1
        hop_there, hop_back = (rng.standard_normal(requests) * jitter_us for _ in range(2))
        return cls(server, phase, hop_there, hop_back, rng.random(requests),
                   rng.exponential(1.0, requests))

    def core_wait(self, util: float, mean_us: float) -> np.ndarray:
        """queue_k (us): none with probability 1 - U, else exponential of mean W / U."""
        rho = min(util, 0.999)
        return np.where(self.queued < rho, self.queue_draw * mean_us / max(rho, 1e-12), 0.0)


def _to_servers(share: np.ndarray, repeat: np.ndarray) -> np.ndarray:
    """Per request, the probability that a future request like it goes to the lock
    servers. A sampled request stands for its lock's expected future requests, ``repeat``
    per sampled one (:meth:`TxnSample.repeat_weight`: a hot lock's about 1, a lock seen
    once or twice by chance much less), and for requests to locks the sample did not see
    for the rest; of those on its lock, ``share`` find a free slot in the switch. So
    1 - min(share x repeat, 1): the switch's share of future requests is their sum, and a
    hot lock keeps its whole share."""
    return 1.0 - np.minimum(share * repeat, 1.0)


def _fits(slots: np.ndarray, occupancy: np.ndarray, contexts: int) -> np.ndarray:
    """The share of a lock's requests that find a free one of its ``slots`` queue slots:
    each of the other ``contexts`` - 1 contexts has a request holding or waiting for the
    lock with probability occupancy / contexts (a context has at most one request on a
    lock in flight; the arrival theorem), so a request fits when at most slots - 1 others
    are there, P(Bin(contexts - 1, occupancy / contexts) <= slots - 1); the rest overflow
    to the lock servers. ``contexts`` slots always fit. (scipy is imported here, not with
    the module: a run that does not use the closed-loop estimate, as most do not, spares its
    0.2 CPU s of import.)"""
    from scipy.special import bdtr

    others = max(contexts - 1, 0)
    out = np.zeros(len(slots))
    out[slots >= contexts] = 1.0
    some = (slots > 0) & (slots < contexts)
    p = np.clip(occupancy[some] / max(contexts, 1), 0.0, 1.0)
    out[some] = bdtr(np.floor(slots[some]) - 1, others, p)
    return out


def _server_wait_us(util: float, batch: np.ndarray, queues: int,
                    packet_us: float) -> tuple[float, np.ndarray]:
    """The lock servers' queueing (us): the mean wait an acquire finds at its core from the
    work other transactions' batches left, and per transaction the wait behind its own
    batch. A transaction's ``batch`` of acquires spreads over ``queues`` cores (RSS hashes
    each lock to one core); per core the queue is M^X/D/1 at utilisation ``util``,
    S (rho + rho mu) / (2 (1 - rho)) with mu the mean batch per core; its own last acquire
    waits for the fullest core's share of its batch, about mu_j + sqrt(2 mu_j ln queues)
    acquires."""
    rho = min(util, 0.999)
    per_core = batch / queues
    backlog = packet_us * rho * (1 + float(per_core.mean())) / (2 * (1 - rho))
    fullest = np.minimum(batch, per_core + np.sqrt(2 * per_core * math.log(max(queues, 2))))
    return backlog, np.maximum(fullest - 1, 0.0) * packet_us


def adds_little(rate_rps: float, one_more_rps: float, gain: float = SERVER_GAIN) -> bool:
    """Issue 30's rule at one count: one more lock server (``one_more_rps`` against
    ``rate_rps``, requests/s) adds less than ``gain`` of throughput."""
    return one_more_rps < (1 + gain) * rate_rps


def fewest_servers(rate_rps: Callable[[int], float], gain: float = SERVER_GAIN,
                   most: int = 64) -> int:
    """Issue 30's rule, for every rate model: the smallest lock-server count at which one
    more server adds less than ``gain`` of ``rate_rps(count)`` (requests/s); ``most`` when
    none does up to there."""
    previous = rate_rps(1)
    for count in range(1, most):
        following = rate_rps(count + 1)
        if adds_little(previous, following, gain):
            return count
        previous = following
    return most


def settle_servers(rate_rps: Callable[[int], float], start: int,
                   gain: float = SERVER_GAIN, most: int = 64) -> int:
    """The rule searched from a proposed count (``netlock servers``: the model proposes,
    the simulator's ``rate_rps`` decides): up while one more server adds at least
    ``gain``, then down while one server fewer already meets the rule; so the answer k
    meets it on both sides (k + 1 adds less than ``gain`` over k, and k adds at least
    ``gain`` over k - 1, or k is 1). It asks ``rate_rps`` only near ``start`` (each
    count once, if the caller caches), where :func:`fewest_servers` asks from 1 up;
    ``most`` caps the walk up."""
    count = min(max(start, 1), most)
    while count < most and not adds_little(rate_rps(count), rate_rps(count + 1), gain):
        count += 1
    while count > 1 and adds_little(rate_rps(count - 1), rate_rps(count), gain):
        count -= 1
    return count


def servers_needed(sample: TxnSample, rack: RackTiming, slots: np.ndarray,
                   gain: float = SERVER_GAIN, most: int = 64) -> int:
    """The smallest lock-server count at which one more server adds less than ``gain``
    of the rack's throughput, with this allocation (0 when the servers get nothing)."""
    if solve(sample, rack, slots, 1).server_utilisation <= 0:
        return 0
    return fewest_servers(lambda count: solve(sample, rack, slots, count).total_rps, gain, most)
