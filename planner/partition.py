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


def _range_loads(ranges: list[PartitionRange], locks: np.ndarray,
                 load: np.ndarray) -> np.ndarray:
    """Load of each range (the last one reaches every larger lock id)."""
    his = np.array([p.hi for p in ranges[:-1]] + [np.iinfo(np.int64).max], dtype=np.int64)
    owner = np.searchsorted(his, locks, side="left")
    return np.bincount(owner, weights=load, minlength=len(ranges))


def keep_partition(live: tuple[PartitionRange, ...], lock_id: np.ndarray, load_rps: np.ndarray,
                   servers: int) -> tuple[PartitionRange, ...]:
    """The live partition, changed only as far as ``servers`` differs from its server count:
    each added server takes the upper half (by load) of the most loaded range; each removed
    server (the highest-numbered ones) hands its ranges to the least loaded server left. Every
    other lock keeps its server, so the push moves the fewest lock-id ranges between servers.
    """
    ranges = sorted(live, key=lambda p: p.lo)
    if not ranges or servers < 1:
        return partition_locks(lock_id, load_rps, servers)
    have = 1 + max(p.server for p in ranges)
    locks = np.asarray(lock_id, dtype=np.int64)
    load = np.asarray(load_rps, dtype=np.float64)
    if load.sum() <= 0:
        load = np.ones(len(locks))
    for new in range(have, servers):
        loads = _range_loads(ranges, locks, load)
        order = np.argsort(-loads, kind="stable")
        for r in order.tolist():
            p = ranges[r]
            hi = p.hi if r < len(ranges) - 1 else np.iinfo(np.int64).max
            inside = np.flatnonzero((locks >= p.lo) & (locks <= hi))
            if len(np.unique(locks[inside])) < 2:
                continue
            cum = np.cumsum(load[inside])
            cut = int(locks[inside][min(np.searchsorted(cum, cum[-1] / 2), len(inside) - 2)])
            if cut >= int(locks[inside][-1]):
                cut = int(np.unique(locks[inside])[-2])
            ranges[r:r + 1] = [PartitionRange(p.lo, cut, p.server),
                               PartitionRange(cut + 1, p.hi, new)]
            break
        else:
            break
    if servers < have:
        loads = _range_loads(ranges, locks, load)
        per_server = np.bincount([p.server for p in ranges], weights=loads, minlength=have)
        for i, p in enumerate(ranges):
            if p.server >= servers:
                dest = int(np.argmin(per_server[:servers]))
                per_server[dest] += loads[i]
                ranges[i] = PartitionRange(p.lo, p.hi, dest)
    merged: list[PartitionRange] = []
    for p in ranges:
        if merged and merged[-1].server == p.server and merged[-1].hi + 1 == p.lo:
            merged[-1] = PartitionRange(merged[-1].lo, p.hi, p.server)
        else:
            merged.append(p)
    return tuple(merged)
