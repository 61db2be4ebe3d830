"""The microbenchmark: transactions of ``locks_per_txn`` distinct locks drawn by popularity.

Lock ``k`` is the ``k``-th most popular (lock 0 is the hottest); popularity follows Zipf
with exponent ``zipf`` (0 = uniform). A transaction's locks are distinct: a draw that
repeats a lock is redrawn, i.e. transactions are Zipf draws conditioned on distinctness
(a row still repeating after many redraws, possible only when ``locks_per_txn`` is close
to ``locks`` under strong skew, is drawn by weighted sampling without replacement).
Modes are all shared (``S``), all exclusive (``X``), or ``mixed``: each request is shared
with probability ``shared_fraction``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from sim.workloads.base import EXCLUSIVE, SHARED, TxnBatch, as_client_ids
from sim.workloads.zipf import ZipfSampler

MODES = ("S", "X", "mixed")
_MAX_REDRAWS = 64


@dataclass(frozen=True)
class MicroWorkload:
    """Microbenchmark generator over ``locks`` lock ids."""

    locks: int
    mode: str = "X"
    shared_fraction: float = 0.5
    zipf: float = 0.0
    locks_per_txn: int = 1
    _sampler: ZipfSampler = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.locks < 1:
            raise ValueError(f"workload.locks: must be >= 1, got {self.locks}")
        if self.mode not in MODES:
            raise ValueError(f"workload.mode: must be one of {', '.join(MODES)}, got {self.mode!r}")
        if not 0.0 <= self.shared_fraction <= 1.0:
            raise ValueError(f"workload.shared_fraction: must be in [0, 1], "
                             f"got {self.shared_fraction}")
        if not 1 <= self.locks_per_txn <= self.locks:
            raise ValueError(f"workload.locks_per_txn: must be in 1..{self.locks} (the lock "
                             f"count), got {self.locks_per_txn}")
        object.__setattr__(self, "_sampler", ZipfSampler(self.locks, self.zipf))

    @property
    def n_locks(self) -> int:
        return self.locks

    @property
    def clients_independent(self) -> bool:
        """A client's batches depend only on its stream (see :mod:`sim.workloads.base`)."""
        return True

    def pmf(self) -> np.ndarray:
        """Popularity of each lock for a single draw (float64, sums to 1)."""
        return self._sampler.pmf()

    def next_txn(self, client_id: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        locks = self._distinct_rows(1, rng)[0]
        return locks, self._modes((len(locks),), rng)

    def sample_txns(self, n: int, rng: np.random.Generator,
                    client_ids: np.ndarray | None = None) -> TxnBatch:
        clients = as_client_ids(n, client_ids)
        k = self.locks_per_txn
        locks = self._distinct_rows(n, rng).reshape(-1)
        modes = self._modes((n * k,), rng)
        offsets = np.arange(0, n * k + 1, k, dtype=np.int64)
        return TxnBatch(lock_ids=locks, modes=modes, offsets=offsets, client_ids=clients)

    def describe(self) -> str:
        skew = "uniform" if self.zipf == 0 else f"Zipf exponent {self.zipf:g} (lock 0 hottest)"
        mode = {"S": "all shared", "X": "all exclusive"}.get(
            self.mode, f"{self.shared_fraction:.0%} shared")
        return (f"microbenchmark: lock ids 0..{self.locks - 1}, {skew}; "
                f"{self.locks_per_txn} distinct lock(s) per transaction, {mode}")

    def _modes(self, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
        if self.mode == "S":
            return np.full(shape, SHARED, dtype=np.int8)
        if self.mode == "X":
            return np.full(shape, EXCLUSIVE, dtype=np.int8)
        return np.where(rng.random(shape) < self.shared_fraction, SHARED, EXCLUSIVE).astype(
            np.int8)

    def _distinct_rows(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``(n, locks_per_txn)`` sorted rows of distinct lock ids."""
        k = self.locks_per_txn
        rows = np.sort(self._sampler.sample(rng, (n, k)), axis=1)
        if k == 1:
            return rows
        for _ in range(_MAX_REDRAWS):
            dup = (rows[:, 1:] == rows[:, :-1]).any(axis=1)
            if not dup.any():
                return rows
            rows[dup] = np.sort(self._sampler.sample(rng, (int(dup.sum()), k)), axis=1)
        dup = np.flatnonzero((rows[:, 1:] == rows[:, :-1]).any(axis=1))
        pmf = self.pmf()
        for i in dup:
            rows[i] = np.sort(rng.choice(self.locks, size=k, replace=False, p=pmf))
        return rows
