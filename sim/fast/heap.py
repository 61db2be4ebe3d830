"""The fast engine's event queue: a 4-ary min-heap in numpy arrays.

An event is ``(t, seq, kind, a, b)``: its time in us, a sequence number (events at the
same time run in the order they were scheduled, as on simpy's heap), what it is and two
integer arguments. The heap orders ``(t, seq)`` pairs kept beside each heap position with
the event's slot; the event's other fields stay in its slot of the ``ev_*`` arrays (a
free-list pool), so sifting moves three numbers per level and never leaves the heap's own
arrays. Four children per node halve the levels of a binary heap and a pop's choice of the
smallest child compiles to conditional moves rather than mispredicted branches.
``cnt[Q_SIZE]`` is the heap's size, ``cnt[Q_SEQ]`` the next sequence number (also the
count of events ever scheduled) and ``cnt[Q_FREE]`` the free slots left.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from sim.fast._jit import fast_jit, fast_jit_inline

Q_SIZE = 0
Q_SEQ = 1
Q_FREE = 2


class Heap(NamedTuple):
    t: np.ndarray
    seq: np.ndarray
    slot: np.ndarray
    ev_kind: np.ndarray
    ev_a: np.ndarray
    ev_b: np.ndarray
    free: np.ndarray
    cnt: np.ndarray


ARITY = 4


def new_heap(capacity: int) -> Heap:
    cnt = np.zeros(3, dtype=np.int64)
    cnt[Q_FREE] = capacity
    return Heap(t=np.zeros(capacity), seq=np.zeros(capacity, dtype=np.int64),
                slot=np.zeros(capacity, dtype=np.int64),
                ev_kind=np.zeros(capacity, dtype=np.int64),
                ev_a=np.zeros(capacity, dtype=np.int64), ev_b=np.zeros(capacity, dtype=np.int64),
                free=np.arange(capacity - 1, -1, -1, dtype=np.int64), cnt=cnt)


def grown_heap(heap: Heap, room: int) -> Heap:
    """``heap``, or a copy with at least ``room`` free entries."""
    size = int(heap.cnt[Q_SIZE])
    old = len(heap.t)
    if old - size >= room:
        return heap
    capacity = max(2 * old, size + room)
    new = new_heap(capacity)
    for name in ("t", "seq", "slot", "ev_kind", "ev_a", "ev_b"):
        getattr(new, name)[:old] = getattr(heap, name)
    free = int(heap.cnt[Q_FREE])
    new.free[:free] = heap.free[:free]
    added = np.arange(capacity - 1, old - 1, -1, dtype=np.int64)
    new.free[free:free + len(added)] = added
    new.cnt[:] = heap.cnt
    new.cnt[Q_FREE] = free + len(added)
    return new


@fast_jit_inline
def _before(t1: float, q1: int, t2: float, q2: int) -> bool:
    """``(t1, q1) < (t2, q2)``, without branches (``&``/``|`` do not short-circuit)."""
    return (t1 < t2) | ((t1 == t2) & (q1 < q2))


@fast_jit_inline
def _least_child(ht: np.ndarray, hq: np.ndarray, first: int, n: int) -> int:
    """The position of the earliest of the children ``first ..`` of a node (``n`` = size).

    Both pairs of a full node are compared, then their winners: three comparisons whose
    outcomes pick values rather than branches (a pop's choices are unpredictable)."""
    if first + ARITY > n:
        best = first
        for j in range(first + 1, n):
            if _before(ht[j], hq[j], ht[best], hq[best]):
                best = j
        return best
    a = first
    b = first + 1
    c = first + 2
    d = first + 3
    ab = _before(ht[b], hq[b], ht[a], hq[a])
    cd = _before(ht[d], hq[d], ht[c], hq[c])
    x = b if ab else a
    y = d if cd else c
    return y if _before(ht[y], hq[y], ht[x], hq[x]) else x


@fast_jit
def push(h: Heap, t: float, kind: int, a: int, b: int) -> None:
    """Schedule event ``kind(a, b)`` at ``t`` us."""
    top = h.cnt[Q_FREE] - 1
    h.cnt[Q_FREE] = top
    s = h.free[top]
    q = h.cnt[Q_SEQ]
    h.cnt[Q_SEQ] = q + 1
    h.ev_kind[s] = kind
    h.ev_a[s] = a
    h.ev_b[s] = b
    i = h.cnt[Q_SIZE]
    h.cnt[Q_SIZE] = i + 1
    ht, hq, hs = h.t, h.seq, h.slot
    while i > 0:
        parent = (i - 1) >> 2
        if _before(ht[parent], hq[parent], t, q):
            break
        ht[i] = ht[parent]
        hq[i] = hq[parent]
        hs[i] = hs[parent]
        i = parent
    ht[i] = t
    hq[i] = q
    hs[i] = s


@fast_jit
def pop(h: Heap) -> int:
    """Remove the earliest event; its slot, whose ``ev_*`` fields stay readable until the
    next :func:`push`."""
    ht, hq, hs = h.t, h.seq, h.slot
    first = hs[0]
    h.free[h.cnt[Q_FREE]] = first
    h.cnt[Q_FREE] += 1
    n = h.cnt[Q_SIZE] - 1
    h.cnt[Q_SIZE] = n
    if n == 0:
        return first
    t, q, s = ht[n], hq[n], hs[n]
    i = 0
    while True:
        child = ARITY * i + 1
        if child >= n:
            break
        best = _least_child(ht, hq, child, n)
        if _before(t, q, ht[best], hq[best]):
            break
        ht[i] = ht[best]
        hq[i] = hq[best]
        hs[i] = hs[best]
        i = best
    ht[i] = t
    hq[i] = q
    hs[i] = s
    return first
