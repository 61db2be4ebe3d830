"""The fast engine's own lock-safety checker, compiled, independent of any lock code.

It sees only the use intervals the clients recorded (lock, mode, start, end) and counts the
uses that begin while an incompatible use of the same lock is in progress: two exclusive
holders, or a shared and an exclusive holder, at the same instant. Intervals are half-open
``[start, end)``; a zero-length use is an instant that conflicts with any incompatible use
in progress then, including one starting at the same instant (the convention of
:mod:`sim.safety`). Method: per lock, the uses in order of start time; an exclusive use
conflicts when any earlier-starting use of the lock is still in progress at its start (or
starts at the same instant), a shared use when an exclusive one is; the latest end among
earlier starts, kept per mode, answers that in one pass.
"""

from __future__ import annotations

import numpy as np

from sim.fast._jit import fast_jit


@fast_jit
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
    """Uses that start while an incompatible use of the same lock is in progress."""
    if len(lock) == 0:
        return 0
    lock = np.asarray(lock, dtype=np.int64)
    start = np.asarray(start, dtype=np.float64)
    end = np.maximum(np.asarray(end, dtype=np.float64), start)
    order = np.lexsort((start, lock))
    return int(_count(lock, np.asarray(mode) == 1, start, end, order))
