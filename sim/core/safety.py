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
per mode, answers that in one pass. The passes are compiled (a run records millions of
uses, TPC-C's simulated second 42 M).

The uses are put in that order by moving the uses themselves, not indices to them: a
counting pass scatters each use into the bucket of its lock id's high bits, each bucket
(small enough for the CPU's cache) is sorted by the low bits, and each lock's uses, recorded
about in time order, are put in order of start. Every later pass then reads memory front
to back; sorting indices and then reading the uses through them cost a cache miss per use
and read (TPC-C's 42 M uses: 4.4-6.0 s against 1.6-2.5 s).
"""

from __future__ import annotations

import numpy as np

from netlock.dataplane._kernel_jit import kernel, kernel_nogil

DIGIT_BITS = 16
"""The most bits of the lock id one counting pass sorts by."""
SHORT_RUN = 32
"""Runs of a lock's uses put in order of start by insertion before they are merged."""


def count_violations(lock: np.ndarray, mode: np.ndarray, start: np.ndarray,
                     end: np.ndarray) -> int:
    """Uses that start while an incompatible use of the same lock is in progress (``mode``
    0 shared, 1 exclusive; times in any one unit)."""
    if len(lock) == 0:
        return 0
    return int(_count(*uses_by_lock_and_start(lock, mode, start, end)))


def uses_by_lock_and_start(lock: np.ndarray, mode: np.ndarray, start: np.ndarray,
                           end: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The uses in order of lock, each lock's in order of start, ties in record order (the
    order ``np.lexsort((start, lock))`` gives), as three columns: ``key`` = twice the
    lock's rank among the ids plus 1 when exclusive, ``start``, and ``end`` (never before
    ``start``). The rank is the id less the lowest id, or the id's place among the distinct
    ids when their spread needs more than 62 bits."""
    lock = np.asarray(lock, dtype=np.int64)
    excl = np.asarray(mode) == 1
    start = np.asarray(start, dtype=np.float64)
    end = np.asarray(end, dtype=np.float64)
    n = len(lock)
    lowest = int(lock.min()) if n else 0
    spread = int(lock.max()) - lowest if n else 0
    if spread >= 1 << 62:
        lock = np.unique(lock, return_inverse=True)[1].astype(np.int64)
        lowest, spread = 0, int(lock.max())
    bits = spread.bit_length()
    high = min((bits + 1) // 2, DIGIT_BITS)
    low = bits - high
    counts = np.zeros((1 << high) + 1, dtype=np.int64)
    _count_buckets(lock, lowest, low, counts)
    key, at, until = np.empty(n, dtype=np.int64), np.empty(n), np.empty(n)
    _scatter(lock, excl, start, end, lowest, low, counts.copy(), key, at, until)
    room = int(np.diff(counts).max()) if n else 0
    spare_key, spare_at, spare_until = (np.empty(room, dtype=np.int64), np.empty(room),
                                        np.empty(room))
    if low:
        digits = np.zeros((1 << min(low, DIGIT_BITS)) + 1, dtype=np.int64)
        _sort_buckets(counts, low, key, at, until, spare_key, spare_at, spare_until, digits)
    _order_by_start(key, at, until, spare_key, spare_at, spare_until)
    return key, at, until


@kernel_nogil
def _count_buckets(lock: np.ndarray, lowest: int, low: int, counts: np.ndarray) -> None:
    """``counts[b + 1]`` = the uses whose rank's bits above ``low`` are ``b``; then the
    running sum, so that bucket ``b`` is ``counts[b]:counts[b + 1]``."""
    for j in range(lock.shape[0]):
        counts[((lock[j] - lowest) >> low) + 1] += 1
    for b in range(counts.shape[0] - 1):
        counts[b + 1] += counts[b]


@kernel_nogil
def _scatter(lock: np.ndarray, excl: np.ndarray, start: np.ndarray, end: np.ndarray,
             lowest: int, low: int, next_at: np.ndarray, key: np.ndarray, at: np.ndarray,
             until: np.ndarray) -> None:
    """Each use into its bucket (``next_at``: the buckets' starts), in record order."""
    for j in range(lock.shape[0]):
        rank = lock[j] - lowest
        b = rank >> low
        p = next_at[b]
        next_at[b] = p + 1
        key[p] = 2 * rank + excl[j]
        s = start[j]
        at[p] = s
        until[p] = end[j] if end[j] > s else s


@kernel_nogil
def _sort_buckets(bounds: np.ndarray, low: int, key: np.ndarray, at: np.ndarray,
                  until: np.ndarray, spare_key: np.ndarray, spare_at: np.ndarray,
                  spare_until: np.ndarray, digits: np.ndarray) -> None:
    """Each bucket stably by the ``low`` low bits of its ranks, ``DIGIT_BITS`` at a time
    (least significant first), through the spare columns."""
    for b in range(bounds.shape[0] - 1):
        first, last = bounds[b], bounds[b + 1]
        if last - first < 2:
            continue
        shift = 0
        while shift < low:
            width = min(low - shift, DIGIT_BITS)
            mask = (1 << width) - 1
            for d in range((1 << width) + 1):
                digits[d] = 0
            for j in range(first, last):
                digits[((key[j] >> (shift + 1)) & mask) + 1] += 1
            for d in range(1 << width):
                digits[d + 1] += digits[d]
            for j in range(first, last):
                d = (key[j] >> (shift + 1)) & mask
                p = digits[d]
                digits[d] = p + 1
                spare_key[p] = key[j]
                spare_at[p] = at[j]
                spare_until[p] = until[j]
            for p in range(last - first):
                key[first + p] = spare_key[p]
                at[first + p] = spare_at[p]
                until[first + p] = spare_until[p]
            shift += width


@kernel_nogil
def _order_by_start(key: np.ndarray, at: np.ndarray, until: np.ndarray, spare_key: np.ndarray,
                    spare_at: np.ndarray, spare_until: np.ndarray) -> None:
    """Each lock's uses (a run of equal ``key >> 1``) stably in order of start, when they
    are not already (:func:`_merge_sort`: a short run is one insertion sort)."""
    n = key.shape[0]
    j = 0
    while j < n:
        first = j
        lock = key[j] >> 1
        j += 1
        ordered = True
        while j < n and key[j] >> 1 == lock:
            ordered = ordered and at[j] >= at[j - 1]
            j += 1
        if not ordered:
            _merge_sort(key, at, until, first, j, spare_key, spare_at, spare_until)


@kernel
def _insertion_sort(key: np.ndarray, at: np.ndarray, until: np.ndarray, first: int,
                    last: int) -> None:
    for q in range(first + 1, last):
        k, t, e = key[q], at[q], until[q]
        p = q - 1
        while p >= first and at[p] > t:
            key[p + 1], at[p + 1], until[p + 1] = key[p], at[p], until[p]
            p -= 1
        key[p + 1], at[p + 1], until[p + 1] = k, t, e


@kernel
def _merge_sort(key: np.ndarray, at: np.ndarray, until: np.ndarray, first: int, last: int,
                spare_key: np.ndarray, spare_at: np.ndarray, spare_until: np.ndarray) -> None:
    """Rows ``first:last`` stably by ``at``: runs of ``SHORT_RUN`` by insertion, then
    merged pairwise, each merge through the spare columns and back."""
    for run in range(first, last, SHORT_RUN):
        _insertion_sort(key, at, until, run, min(run + SHORT_RUN, last))
    width = SHORT_RUN
    while first + width < last:
        for left in range(first, last - width, 2 * width):
            mid = left + width
            right = min(mid + width, last)
            a, b, p = left, mid, 0
            while a < mid or b < right:
                if b >= right or (a < mid and at[a] <= at[b]):
                    spare_key[p], spare_at[p], spare_until[p] = key[a], at[a], until[a]
                    a += 1
                else:
                    spare_key[p], spare_at[p], spare_until[p] = key[b], at[b], until[b]
                    b += 1
                p += 1
            for q in range(right - left):
                key[left + q], at[left + q], until[left + q] = (spare_key[q], spare_at[q],
                                                                spare_until[q])
        width *= 2


@kernel_nogil
def _count(key: np.ndarray, at: np.ndarray, until: np.ndarray) -> int:
    """Violations among uses in :func:`uses_by_lock_and_start`'s order."""
    violations = 0
    n = key.shape[0]
    j = 0
    while j < n:
        lock = key[j] >> 1
        x_end = -np.inf
        s_end = -np.inf
        x_last_start = -np.inf
        s_last_start = -np.inf
        while j < n and key[j] >> 1 == lock:
            t = at[j]
            busy_x = x_end > t or x_last_start == t
            busy_s = s_end > t or s_last_start == t
            if key[j] & 1:
                if busy_x or busy_s:
                    violations += 1
                x_end = max(x_end, until[j])
                x_last_start = t
            else:
                if busy_x:
                    violations += 1
                s_end = max(s_end, until[j])
                s_last_start = t
            j += 1
    return violations
