"""Shared and node-private data, as Concordia's microbenchmark varies it (FAST'21, 7.2).

Each transaction locks one cache block. With probability ``sharing_ratio`` the block is
drawn uniformly from the shared data (lock ids ``0 .. shared_locks - 1``, which every node
accesses); otherwise from the private data of the client's node (client ``c`` runs on
machine ``c mod machines``, :func:`sim.core.parts.nic_shares_rps`), whose
``private_locks`` blocks follow the shared ones. Modes are shared with probability
``shared_fraction`` (the seed's read ratio).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.workloads.base import EXCLUSIVE, SHARED, TxnBatch, as_client_ids


@dataclass(frozen=True)
class SharingWorkload:
    """One-lock transactions over shared and per-node private cache blocks."""

    shared_locks: int
    private_locks: int
    machines: int
    sharing_ratio: float
    shared_fraction: float = 0.5

    def __post_init__(self) -> None:
        if not 0.0 <= self.sharing_ratio <= 1.0:
            raise ValueError(f"workload.sharing_ratio: must be in [0, 1], "
                             f"got {self.sharing_ratio}")
        if min(self.shared_locks, self.private_locks, self.machines) < 1:
            raise ValueError("workload.shared_locks, workload.locks and clients.machines "
                             "must be >= 1")

    @property
    def n_locks(self) -> int:
        return self.shared_locks + self.machines * self.private_locks

    @property
    def clients_independent(self) -> bool:
        """A client's batches depend only on its stream (see :mod:`sim.workloads.base`)."""
        return True

    def next_txn(self, client_id: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        batch = self.sample_txns(1, rng, np.array([client_id]))
        return batch.lock_ids, batch.modes

    def sample_txns(self, n: int, rng: np.random.Generator,
                    client_ids: np.ndarray | None = None) -> TxnBatch:
        clients = as_client_ids(n, client_ids)
        shared = rng.random(n) < self.sharing_ratio
        pick = rng.random(n)
        private = (self.shared_locks + (clients % self.machines) * self.private_locks
                   + (pick * self.private_locks).astype(np.int64))
        locks = np.where(shared, (pick * self.shared_locks).astype(np.int64), private)
        modes = np.where(rng.random(n) < self.shared_fraction, SHARED, EXCLUSIVE).astype(
            np.int8)
        return TxnBatch(lock_ids=locks.astype(np.int64), modes=modes,
                        offsets=np.arange(n + 1, dtype=np.int64), client_ids=clients)

    def describe(self) -> str:
        return (f"sharing: {self.sharing_ratio:.0%} of one-lock transactions on "
                f"{self.shared_locks} shared blocks, the rest on {self.private_locks} "
                f"private blocks of the client's machine ({self.machines} machines); "
                f"{self.shared_fraction:.0%} shared mode")
