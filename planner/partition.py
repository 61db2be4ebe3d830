"""Split the lock-id space over lock servers as contiguous ranges of balanced load.

Every lock has an owning server: locks outside the switch are queued and granted there,
and switch-resident locks send their overflow there. A server's load is the request rate
the switch does not guarantee for its locks, r_i (1 - s_i / c_i) (rps). Boundaries sit
at the lock whose cumulative load is closest to each k / n of the total, so no server
carries more than total / n plus one lock's load.
"""

from __future__ import annotations

import numpy as np

from netlock.plan import PartitionRange


def partition_locks(lock_id: np.ndarray, load_rps: np.ndarray,
                    servers: int) -> tuple[PartitionRange, ...]:
    """Ranges covering lock ids ``0 .. max(lock_id)`` for ``servers`` servers.

    ``lock_id`` is sorted ascending (repeats, e.g. one per priority, are summed).
    """
    if len(lock_id) == 0 or servers < 1:
        return ()
    starts = np.flatnonzero(np.r_[True, lock_id[1:] != lock_id[:-1]])
    locks = lock_id[starts]
    load = np.add.reduceat(np.asarray(load_rps, dtype=np.float64), starts)
    if load.sum() <= 0:
        load = np.ones(len(locks))
    n = min(servers, len(locks))
    cum = np.cumsum(load)
    targets = cum[-1] * np.arange(1, n) / n
    cut = np.searchsorted(cum, targets)
    below = np.maximum(cut - 1, 0)
    cut = np.where(np.abs(cum[below] - targets) < np.abs(cum[cut] - targets), below, cut)
    slack = np.maximum.accumulate(np.clip(cut - np.arange(n - 1), 0, len(locks) - n))
    cut = slack + np.arange(n - 1)
    his = [*locks[cut].tolist(), int(locks[-1])]
    ranges, lo = [], 0
    for server, hi in enumerate(his):
        ranges.append(PartitionRange(lo=lo, hi=int(hi), server=server))
        lo = int(hi) + 1
    return tuple(ranges)
