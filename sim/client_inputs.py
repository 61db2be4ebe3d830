"""What a simpy client (:class:`sim.clients.Client`) is given: its timing
(:class:`ClientParams`), its transactions (:class:`TxnSource`), the rest of the model
(:class:`SimpyRack`) and its share of its machine's NIC (:func:`client_machines`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from sim.core.parts import nic_shares_rps
from sim.core.rows import TXN_BATCH
from sim.engine import Engine
from sim.network import Machine, Network
from sim.recorder import Recorder
from sim.workloads.base import WorkloadGenerator


@dataclass(frozen=True)
class ClientParams:
    """Timing shared by all clients, in us; ``fetch_hops`` = 0 when no data read is
    modelled; ``tx_us`` / ``rx_us``: the client's own processing of each packet it sends /
    receives. ``timeout_us`` and ``lease_us`` make an attempt's timeout
    (:func:`netlock.client.attempt_timeout_us`); a retry waits
    ``backoff_slots(seed, client, n, slots) * slot_us``."""

    think_us: float
    lease_us: float
    timeout_us: float
    fetch_hops: int
    gap_per_lock_us: float
    seed: int
    backoff_slot_us: float
    backoff_slots: int
    tx_us: float
    rx_us: float


class TxnSource:
    """One client's transactions, drawn from the workload in vectorised batches.

    A batch is kept as flat lists, last transaction first, so taking one is a few pops. A
    timed trace replay (the workload's ``timed``) also says when the next transaction may
    start (:meth:`ready_us`) and how long the current one holds its locks (``hold_us``).
    """

    def __init__(self, workload: WorkloadGenerator, client_id: int,
                 rng: np.random.Generator) -> None:
        self.workload = workload
        self.client_id = client_id
        self.rng = rng
        self.sizes: list[int] = []
        self.locks: list[int] = []
        self.modes: list[int] = []
        self.timed = bool(getattr(workload, "timed", False))
        self.starts: list[float] = []
        self.holds: list[float] = []
        self.hold_us: float | None = None
        """The current transaction's hold after its last grant (us); None: the think time."""

    def _refill(self) -> None:
        batch = self.workload.sample_txns(TXN_BATCH, self.rng,
                                          np.full(TXN_BATCH, self.client_id, dtype=np.int64))
        self.sizes = batch.sizes[::-1].tolist()
        self.locks = batch.lock_ids[::-1].tolist()
        self.modes = batch.modes[::-1].tolist()
        if self.timed and batch.start_us is not None and batch.hold_us is not None:
            self.starts = batch.start_us[::-1].tolist()
            self.holds = batch.hold_us[::-1].tolist()

    def ready_us(self) -> float:
        """The earliest time the next transaction may start (us): 0 unless replayed timed,
        inf when none is left."""
        if not self.timed:
            return 0.0
        if not self.sizes:
            self._refill()
        return self.starts[-1]

    def next(self) -> tuple[list[int], list[int]]:
        """The next transaction as ``(lock ids, modes)``, lock ids ascending and distinct."""
        if not self.sizes:
            self._refill()
        if self.timed:
            self.starts.pop()
            self.hold_us = self.holds.pop()
        n = self.sizes.pop()
        if n == 1:
            return [self.locks.pop()], [self.modes.pop()]
        locks = self.locks[-n:]
        modes = self.modes[-n:]
        del self.locks[-n:], self.modes[-n:]
        locks.reverse()
        modes.reverse()
        return locks, modes


class SimpyRack:
    """What a client needs from the rest of the model: clock, network, recorder, and the
    lock manager's entry point (:class:`sim.managers.interface.LockManager`): its
    ``packet_handlers``, ``entry_hops`` (1: packets cross a hop to the ToR; 0: the manager
    runs in the client's own library) and, if it has one, its ``backoff_us(client)`` rule
    for the wait before an aborted transaction is retried (else the client's rule of
    :func:`netlock.client.backoff_slots`), and whether its clients take locks
    ``one_at_a_time`` (:class:`sim.clients.Client`)."""

    def __init__(self, engine: Engine, network: Network, recorder: Recorder,
                 manager: Any) -> None:
        self.engine = engine
        self.network = network
        self.recorder = recorder
        self.packet_handlers = manager.packet_handlers
        self.entry_hops = manager.entry_hops
        self.entry_hop = network.hop if manager.entry_hops else _no_hop
        self.backoff_us = getattr(manager, "backoff_us", None)
        self.one_at_a_time = bool(getattr(manager, "one_at_a_time", False))
        self.one_at_a_time_timeout_us = float(getattr(manager, "attempt_timeout_us", math.inf))
        self.next_rid = 0


def _no_hop() -> float:
    """The delay into a lock manager that runs in the client's library (us)."""
    return 0.0


def client_machines(n_clients: int, n_machines: int, rate_rps: float) -> list[Machine]:
    """Each client's NIC share (:func:`sim.core.parts.nic_shares_rps`)."""
    return [Machine(rate) for rate in nic_shares_rps(n_clients, n_machines, rate_rps)]
