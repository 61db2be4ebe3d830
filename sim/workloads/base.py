"""What every workload generator provides, and the batch value bulk generation returns.

A transaction is a set of lock requests: ``lock_ids`` (int64) with ``modes`` (int8,
0 = shared, 1 = exclusive, as :class:`netlock.packets.Mode`). Locks within a transaction
are distinct and sorted ascending: acquiring in one global order avoids deadlock between
transactions. Generators draw all randomness from the ``numpy.random.Generator`` they are
given, so a fixed seed gives the same transactions. A generator whose batches for one client
depend only on the stream it is given and on that client's earlier batches says so with a
true ``clients_independent`` attribute (optional; absent means false): engines may then draw
a client's next batch before the other clients' earlier ones (:mod:`sim.core.ahead`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from netlock.packets import EXCLUSIVE as EXCLUSIVE
from netlock.packets import SHARED as SHARED


@dataclass(frozen=True)
class TxnBatch:
    """Many transactions in flat arrays.

    Transaction ``t`` holds ``lock_ids[offsets[t]:offsets[t + 1]]`` (sorted, distinct) with
    the matching ``modes``; ``client_ids[t]`` is the client that issues it. A timed trace
    replay (:mod:`sim.workloads.replay`) also gives each transaction the earliest time it
    may start, ``start_us[t]`` (inf: the client has none left), and how long it holds its
    locks after its last grant, ``hold_us[t]`` (us); other workloads leave both None.
    """

    lock_ids: np.ndarray
    modes: np.ndarray
    offsets: np.ndarray
    client_ids: np.ndarray
    start_us: np.ndarray | None = None
    hold_us: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def sizes(self) -> np.ndarray:
        """Lock requests per transaction (int64)."""
        return np.diff(self.offsets)

    def txn(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        """Transaction ``t`` as ``(lock_ids, modes)``."""
        lo, hi = self.offsets[t], self.offsets[t + 1]
        return self.lock_ids[lo:hi], self.modes[lo:hi]

    def txn_index(self) -> np.ndarray:
        """For every lock request, the index of its transaction (int64)."""
        return np.repeat(np.arange(len(self), dtype=np.int64), self.sizes)


@runtime_checkable
class WorkloadGenerator(Protocol):
    """A generator of transactions over the lock ids ``0 .. n_locks - 1``."""

    @property
    def n_locks(self) -> int:
        """Size of the lock-id space (ids are ``0 .. n_locks - 1``; not all need be used)."""
        ...

    def next_txn(self, client_id: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """One transaction of ``client_id``: ``(lock_ids int64, modes int8)``, sorted."""
        ...

    def sample_txns(self, n: int, rng: np.random.Generator,
                    client_ids: np.ndarray | None = None) -> TxnBatch:
        """``n`` transactions at once (vectorised); ``client_ids`` default to 0."""
        ...

    def describe(self) -> str:
        """One paragraph on the lock-id space and what the transactions look like."""
        ...


def as_client_ids(n: int, client_ids: np.ndarray | None) -> np.ndarray:
    """``client_ids`` as int64 of length ``n`` (zeros when not given)."""
    if client_ids is None:
        return np.zeros(n, dtype=np.int64)
    out = np.asarray(client_ids, dtype=np.int64)
    if out.shape != (n,):
        raise ValueError(f"client_ids: expected {n} ids, got shape {out.shape}")
    return out

