"""An independent lock-safety checker over what clients did, not what the lock manager did.

Both engines' results count violations with it. It sees only the use intervals recorded at
the clients: client ``c`` used lock ``l`` in mode ``m`` from the moment the grant reached it
until it released the lock, aborted, or its lease ended, whichever came first. It knows
nothing of switches, servers or queues, and imports no lock code. A violation is a use that
begins while the lock is held incompatibly: two exclusive holders, or a shared and an
exclusive holder, at the same instant. Intervals are half-open ``[start, end)``, so a
hand-over at the very same microsecond is not a violation. A use of zero length (a client
that releases the moment it is granted) is an instant: it conflicts with any incompatible
use in progress at that instant, including one starting at the same instant.

Method: per lock, the uses in order of start time; an exclusive use conflicts when any
earlier-starting use of the lock is still in progress at its start (or starts at the same
instant), a shared use when an exclusive one is; the latest end among earlier starts, kept
per mode, answers that in one pass. The pass is compiled (a run records millions of uses).
"""

from __future__ import annotations

import numpy as np

from netlock.dataplane._jit import kernel


@kernel
def _count(lock: np.ndarray, excl: np.ndarray, start: np.ndarray, end: np.ndarray,
           order: np.ndarray) -> int:
    violations = 0
    n = order.shape[0]
    j = 0
    while j < n:
        current = lock[order[j]]
        x_end = -np.inf
        s_end = -np.inf
        x_last_start = -np.inf
        s_last_start = -np.inf
        while j < n and lock[order[j]] == current:
            k = order[j]
            t = start[k]
            busy_x = x_end > t or x_last_start == t
            busy_s = s_end > t or s_last_start == t
            if excl[k]:
                if busy_x or busy_s:
                    violations += 1
                x_end = max(x_end, end[k])
                x_last_start = t
            else:
                if busy_x:
                    violations += 1
                s_end = max(s_end, end[k])
                s_last_start = t
            j += 1
    return violations


def count_violations(lock: np.ndarray, mode: np.ndarray, start: np.ndarray,
                     end: np.ndarray) -> int:
    """Uses that start while an incompatible use of the same lock is in progress (``mode``
    0 shared, 1 exclusive; times in any one unit)."""
    if len(lock) == 0:
        return 0
    lock = np.asarray(lock, dtype=np.int64)
    start = np.asarray(start, dtype=np.float64)
    end = np.maximum(np.asarray(end, dtype=np.float64), start)
    order = np.lexsort((start, lock))
    return int(_count(lock, np.asarray(mode) == 1, start, end, order))
