"""An independent liveness checker over what clients did: requests stalled on idle locks.

Like :mod:`sim.core.safety`, it sees only what the clients recorded and knows nothing of
switches, servers or queues. A transaction *waits* for a lock from the moment it first
asked for it (its first attempt's start: attempts given up and retried still wait for the
same lock) until the grant that its client used, or the end of the run. A client that takes
locks one at a time (DSLR's and DrTM's, :mod:`sim.clients`) asks for a lock only when it
sends that acquire, and stops when its attempt is given up: each such acquire is a wait of
its own. The lock is *idle*
while no client uses it and no grant of it arrives (a grant that reaches a client no longer
waiting for it, handed back at once, is an instant of use: the lock manager is working
through the requests of attempts given up). A wait is **stalled** when, inside it, the
lock stayed idle for longer than a bound (:func:`sim.core.run_spec.stall_bound_us`: a lease, the
lease sweep's period, a back-off and two round trips): one lost packet and the lease that
recovers it cannot explain that, only a lock manager that lost track of a waiting request
(a wedged lock). Times in us.
"""

from __future__ import annotations

import numpy as np


def count_stalled(use_lock: np.ndarray, use_start: np.ndarray, use_end: np.ndarray,
                  wait_lock: np.ndarray, wait_from: np.ndarray, wait_to: np.ndarray,
                  bound_us: float, excused: tuple[tuple[float, float], ...] = ()) -> int:
    """Waits ``[wait_from, wait_to)`` of ``wait_lock`` that contain an idle stretch of
    their lock (no use ``[use_start, use_end)`` of it in progress) longer than ``bound_us``.
    ``excused`` intervals count as busy for every lock: an outage the run injected, during
    which no lock can be granted (a failure, not a lost request).

    Only waits longer than the bound can stall, and there are few of them, so the busy
    intervals are merged only for their locks.
    """
    wait_lock = np.asarray(wait_lock, dtype=np.int64)
    wait_from = np.asarray(wait_from, dtype=np.float64)
    wait_to = np.asarray(wait_to, dtype=np.float64)
    long = np.flatnonzero(wait_to - wait_from > bound_us)
    if len(long) == 0:
        return 0
    use_lock = np.asarray(use_lock, dtype=np.int64)
    keep = np.isin(use_lock, wait_lock[long])
    lock = use_lock[keep]
    start = np.asarray(use_start, dtype=np.float64)[keep]
    end = np.maximum(np.asarray(use_end, dtype=np.float64)[keep], start)
    order = np.lexsort((start, lock))
    lock, start, end = lock[order], start[order], end[order]
    busy: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    outage = np.asarray(excused, dtype=np.float64).reshape(-1, 2)
    for value in np.unique(wait_lock[long]).tolist():
        lo, hi = np.searchsorted(lock, [value, value + 1])
        starts = np.concatenate([start[lo:hi], outage[:, 0]])
        ends = np.concatenate([end[lo:hi], outage[:, 1]])
        order = np.argsort(starts, kind="stable")
        busy[value] = _merged(starts[order], ends[order])
    stalled = 0
    for k in long.tolist():
        starts, ends = busy[int(wait_lock[k])]
        if _longest_idle(starts, ends, wait_from[k], wait_to[k]) > bound_us:
            stalled += 1
    return stalled


def _merged(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The union of intervals sorted by start, as disjoint sorted intervals."""
    if len(start) == 0:
        return start, end
    reach = np.maximum.accumulate(end)
    new = np.ones(len(start), dtype=bool)
    new[1:] = start[1:] > reach[:-1]
    first = np.flatnonzero(new)
    last = np.append(first[1:], len(start)) - 1
    return start[first], reach[last]


def _longest_idle(starts: np.ndarray, ends: np.ndarray, a: float, b: float) -> float:
    """The longest sub-interval of ``[a, b)`` covered by none of the disjoint, sorted
    intervals ``[starts, ends)``."""
    lo = np.searchsorted(ends, a, side="right")
    hi = np.searchsorted(starts, b, side="left")
    cursor, longest = a, 0.0
    for s, e in zip(starts[lo:hi].tolist(), ends[lo:hi].tolist(), strict=True):
        longest = max(longest, s - cursor)
        cursor = max(cursor, e)
    return max(longest, b - cursor)
