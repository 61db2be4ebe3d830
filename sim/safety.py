"""An independent lock-safety checker over what clients did, not what the lock manager did.

It sees only use intervals recorded at the clients: client ``c`` used lock ``l`` in mode
``m`` from the moment the grant reached it until it released the lock, aborted, or its lease
ended, whichever came first. It knows nothing of switches, servers or queues. A violation
is a use that begins while the lock is held incompatibly: two exclusive holders, or a shared
and an exclusive holder, at the same instant. Intervals are half-open ``[start, end)``, so a
hand-over at the very same microsecond is not a violation. A use of zero length (a client
that releases the moment it is granted) is an instant: it conflicts with any incompatible
use in progress at that instant, including one starting at the same instant.
"""

from __future__ import annotations

import numpy as np

_END, _START, _INSTANT_END = 0, 1, 2


def count_violations(lock: np.ndarray, mode: np.ndarray, start: np.ndarray,
                     end: np.ndarray) -> int:
    """Uses that start while an incompatible use of the same lock is in progress.

    ``mode`` is 0 (shared) or 1 (exclusive); times in any one unit. One sweep over all
    start and end points sorted by lock, then time, then kind (ends of real intervals,
    then starts, then the ends of zero-length uses), then row order, with running counts of
    shared and exclusive holders; every lock's points sum to zero, so one cumulative sum
    serves all locks.
    """
    n = len(lock)
    if n == 0:
        return 0
    lock = np.asarray(lock, dtype=np.int64)
    excl = np.asarray(mode, dtype=np.int64) == 1
    start = np.asarray(start, dtype=np.float64)
    end = np.maximum(np.asarray(end, dtype=np.float64), start)
    row = np.arange(n)
    locks = np.concatenate([lock, lock])
    times = np.concatenate([start, end])
    kind = np.concatenate([np.full(n, _START), np.where(end > start, _END, _INSTANT_END)])
    rows = np.concatenate([row, row])
    x = np.concatenate([excl, excl])
    order = np.lexsort((rows, kind, times, locks))
    kind, x = kind[order], x[order]
    sign = np.where(kind == _START, 1, -1)
    x_count = np.cumsum(np.where(x, sign, 0))
    s_count = np.cumsum(np.where(x, 0, sign))
    conflict = (x_count > 1) | ((x_count >= 1) & (s_count >= 1))
    return int(np.count_nonzero(conflict & (kind == _START)))
