"""Requests in flight and network draws, for the compiled engine.

A request row is taken from the pool when a client makes the request and given back when
nothing can refer to it any more: its release was handled (or lost), it was lost on the
way, dropped, or its client let it go (lease over, attempt given up). The switch's
``waiting`` and the manager's ``pending`` maps are flags on the row, looked up by ``rid``.

A copy the network makes (:func:`copy_request`) is a row of its own, with its own ``rid``
and the original's id on the wire (``RI_TXN``), chained after the original's row. The
original's row counts the live rows of its chain (``RI_REFS``) and is given back only with
the last of them (until then it is marked ``IN_DEAD``), so a lookup by wire id always
starts at the original's row and walks the chain to a copy with the flag wanted.

Hop delays are the :class:`sim.network.Network` model: drawn in blocks (half the round trip
plus normal jitter, clipped at zero; negative = lost with probability ``network.loss``),
consumed in order. Reliable hops (the overflow protocol, data reads) never lose a packet.
"""

from __future__ import annotations

from sim.fast._fast_jit import fast_jit, fast_jit_inline
from sim.fast.state import (
    IN_DEAD,
    K_BAD_FREE,
    K_FAULT,
    K_FREE,
    K_HOP,
    K_LOST,
    P_HALF_RTT,
    RF_CREATED,
    RI_ATTEMPT,
    RI_CLIENT,
    RI_COPY,
    RI_FOLLOW,
    RI_GEN,
    RI_LOCK,
    RI_MODE,
    RI_OP,
    RI_REFS,
    RI_RID,
    RI_SLOT,
    RI_SOURCE,
    RI_TXN,
    RI_WHERE,
    RID_BITS,
    RID_MASK,
    RackArrays,
)


@fast_jit_inline
def new_request(r: RackArrays, client: int, attempt: int, lock: int, mode: int, now: float) -> int:
    """A fresh acquire of ``client``'s ``attempt`` for ``lock`` made at ``now``; its row."""
    top = r.cnt[K_FREE] - 1
    r.cnt[K_FREE] = top
    h = r.free[top]
    ri = r.ri
    gen = ri[h, RI_GEN] + 1
    ri[h, RI_GEN] = gen
    rid = (gen << RID_BITS) | h
    ri[h, RI_RID] = rid
    ri[h, RI_TXN] = rid
    ri[h, RI_COPY] = -1
    ri[h, RI_REFS] = 1
    ri[h, RI_CLIENT] = client
    ri[h, RI_ATTEMPT] = attempt
    ri[h, RI_LOCK] = lock
    ri[h, RI_MODE] = mode
    ri[h, RI_OP] = 0
    ri[h, RI_SOURCE] = -1
    ri[h, RI_SLOT] = -1
    ri[h, RI_FOLLOW] = -1
    ri[h, RI_WHERE] = 0
    r.rf[h, RF_CREATED] = now
    return h


@fast_jit
def copy_request(r: RackArrays, h: int) -> int:
    """A copy of the packet in row ``h`` (same content and wire id, flags clear); its row."""
    top = r.cnt[K_FREE] - 1
    r.cnt[K_FREE] = top
    k = r.free[top]
    ri = r.ri
    gen = ri[k, RI_GEN] + 1
    for col in range(ri.shape[1]):
        ri[k, col] = ri[h, col]
    for col in range(r.rf.shape[1]):
        r.rf[k, col] = r.rf[h, col]
    ri[k, RI_GEN] = gen
    ri[k, RI_RID] = (gen << RID_BITS) | k
    ri[k, RI_WHERE] = 0
    ri[k, RI_FOLLOW] = -1
    o = ri[h, RI_TXN] & RID_MASK
    ri[k, RI_COPY] = ri[o, RI_COPY]
    ri[o, RI_COPY] = k
    ri[o, RI_REFS] += 1
    return k


@fast_jit_inline
def _give_back(r: RackArrays, h: int) -> None:
    r.ri[h, RI_RID] = -1
    r.ri[h, RI_WHERE] = 0
    top = r.cnt[K_FREE]
    r.free[top] = h
    r.cnt[K_FREE] = top + 1


@fast_jit
def _free_chained(r: RackArrays, h: int, o: int) -> None:
    """Let row ``h`` of original ``o``'s chain go (a copy, or an original with copies)."""
    ri = r.ri
    if h != o:
        p = o
        while ri[p, RI_COPY] != h:
            p = ri[p, RI_COPY]
        ri[p, RI_COPY] = ri[h, RI_COPY]
        _give_back(r, h)
    ri[o, RI_REFS] -= 1
    if ri[o, RI_REFS] == 0:
        _give_back(r, o)
    elif h == o:
        ri[o, RI_WHERE] = IN_DEAD


@fast_jit_inline
def free_request(r: RackArrays, h: int) -> None:
    """Let row ``h`` go (counted in ``K_BAD_FREE`` if it was not taken); rows of a chain
    of copies go back to the pool as the module notes say."""
    ri = r.ri
    if ri[h, RI_RID] < 0 or ri[h, RI_WHERE] & IN_DEAD:
        r.cnt[K_BAD_FREE] += 1
        return
    o = ri[h, RI_TXN] & RID_MASK
    if h == o and ri[h, RI_REFS] == 1:
        _give_back(r, h)
    else:
        _free_chained(r, h, o)


@fast_jit_inline
def take(r: RackArrays, rid: int, where: int) -> int:
    """Pop a row of wire id ``rid`` from the map flagged ``where`` (the original's row, else
    a copy's): the row, or -1 if none is there."""
    h = rid & RID_MASK
    if h >= r.ri.shape[0] or r.ri[h, RI_RID] != rid:
        return -1
    while h >= 0:
        if r.ri[h, RI_WHERE] & where:
            r.ri[h, RI_WHERE] &= ~where
            return h
        h = r.ri[h, RI_COPY]
    return -1


@fast_jit_inline
def fault(r: RackArrays) -> tuple[bool, float]:
    """The next packet's fault draw: whether the network copies it, and its extra delay
    (us; 0 = not held back)."""
    k = r.cnt[K_FAULT]
    r.cnt[K_FAULT] = k + 1
    return r.faults[k, 0] != 0.0, r.faults[k, 1]


@fast_jit_inline
def _next_draw(r: RackArrays) -> float:
    """The next pre-drawn hop delay (us; negative = lost)."""
    k = r.cnt[K_HOP]
    r.cnt[K_HOP] = k + 1
    return r.hops[k]


@fast_jit_inline
def hop(r: RackArrays) -> float:
    """Delay of one hop in us, negative when the packet is lost (counted)."""
    d = _next_draw(r)
    if d < 0:
        r.cnt[K_LOST] += 1
    return d


@fast_jit
def reliable_hop(r: RackArrays) -> float:
    d = _next_draw(r)
    return d if d >= 0 else r.pf[P_HALF_RTT]


@fast_jit
def path(r: RackArrays, hops: int) -> float:
    """Delay of ``hops`` hops, negative when any of them loses the packet."""
    total = 0.0
    for _ in range(hops):
        d = hop(r)
        if d < 0:
            return -1.0
        total += d
    return total


@fast_jit
def reliable_path(r: RackArrays, hops: int) -> float:
    total = 0.0
    for _ in range(hops):
        total += reliable_hop(r)
    return total
