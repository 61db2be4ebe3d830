"""Randomised exponential back-off, the retry rule of the RDMA lock managers' clients.

The DSLR authors' harness (``LockSimulator::PerformRandomBackoff``, used for DrTM and the
other fail-and-retry designs) waits uniformly over ``[0, min(max, base * 2^n))`` us after
the n-th failure of a transaction (n from 0). The draw reuses the client's back-off hash
(:func:`netlock.client.backoff_slots`) in 1-us slots, so the rule is deterministic per
(seed, client, abort) like the NetLock client's.
"""

from __future__ import annotations

from typing import Any

from netlock.client import backoff_slots


class ExponentialBackoff:
    """The back-off rule of one run: per client, the failures of its current transaction."""

    def __init__(self, seed: int, base_us: float, max_us: float) -> None:
        self.seed = seed
        self.base_us = base_us
        self.max_us = max_us
        self.failures: dict[int, tuple[float, int]] = {}

    def backoff_us(self, client: Any) -> float:
        """The wait before ``client`` retries its transaction after one more failure (us)."""
        txn, n = self.failures.get(client.cid, (-1.0, 0))
        if txn != client.txn_start:
            n = 0
        self.failures[client.cid] = (client.txn_start, n + 1)
        window = min(self.max_us, self.base_us * 2.0 ** min(n, 60))
        slots = max(1, int(window))
        return backoff_slots(self.seed, client.cid, client.aborts, slots) * (window / slots)
