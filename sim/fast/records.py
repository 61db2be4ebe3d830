"""Requests in flight and network draws, for the compiled engine.

A request row is taken from the pool when a client makes the request and given back when
nothing can refer to it any more: its release was handled (or lost), it was lost on the
way, dropped, or its client let it go (lease over, attempt given up). The switch's
``waiting`` and the manager's ``pending`` maps are flags on the row, looked up by ``rid``.

Hop delays are the :class:`sim.network.Network` model: drawn in blocks (half the round trip
plus normal jitter, clipped at zero; negative = lost with probability ``network.loss``),
consumed in order. Reliable hops (the overflow protocol, data reads) never lose a packet.
"""

from __future__ import annotations

from sim.fast._jit import fast_jit, fast_jit_inline
from sim.fast.state import (
    K_BAD_FREE,
    K_FREE,
    K_HOP,
    K_LOST,
    P_HALF_RTT,
    RF_CREATED,
    RI_ATTEMPT,
    RI_CLIENT,
    RI_FOLLOW,
    RI_GEN,
    RI_LOCK,
    RI_MODE,
    RI_OP,
    RI_RID,
    RI_SLOT,
    RI_SOURCE,
    RI_WHERE,
    RID_BITS,
    RID_MASK,
    Rack,
)


@fast_jit_inline
def new_request(r: Rack, client: int, attempt: int, lock: int, mode: int, now: float) -> int:
    """A fresh acquire of ``client``'s ``attempt`` for ``lock`` made at ``now``; its row."""
    top = r.cnt[K_FREE] - 1
    r.cnt[K_FREE] = top
    h = r.free[top]
    ri = r.ri
    gen = ri[h, RI_GEN] + 1
    ri[h, RI_GEN] = gen
    ri[h, RI_RID] = (gen << RID_BITS) | h
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


@fast_jit_inline
def free_request(r: Rack, h: int) -> None:
    """Give row ``h`` back to the pool (counted in ``K_BAD_FREE`` if it was not taken)."""
    if r.ri[h, RI_RID] < 0:
        r.cnt[K_BAD_FREE] += 1
        return
    r.ri[h, RI_RID] = -1
    r.ri[h, RI_WHERE] = 0
    top = r.cnt[K_FREE]
    r.free[top] = h
    r.cnt[K_FREE] = top + 1


@fast_jit_inline
def take(r: Rack, rid: int, where: int) -> int:
    """Pop request ``rid`` from the map flagged ``where``: its row, or -1 if not there."""
    h = rid & RID_MASK
    if h >= r.ri.shape[0] or r.ri[h, RI_RID] != rid or (r.ri[h, RI_WHERE] & where) == 0:
        return -1
    r.ri[h, RI_WHERE] &= ~where
    return h


@fast_jit_inline
def _next_draw(r: Rack) -> float:
    """The next pre-drawn hop delay (us; negative = lost)."""
    k = r.cnt[K_HOP]
    r.cnt[K_HOP] = k + 1
    return r.hops[k]


@fast_jit_inline
def hop(r: Rack) -> float:
    """Delay of one hop in us, negative when the packet is lost (counted)."""
    d = _next_draw(r)
    if d < 0:
        r.cnt[K_LOST] += 1
    return d


@fast_jit
def reliable_hop(r: Rack) -> float:
    d = _next_draw(r)
    return d if d >= 0 else r.pf[P_HALF_RTT]


@fast_jit
def path(r: Rack, hops: int) -> float:
    """Delay of ``hops`` hops, negative when any of them loses the packet."""
    total = 0.0
    for _ in range(hops):
        d = hop(r)
        if d < 0:
            return -1.0
        total += d
    return total


@fast_jit
def reliable_path(r: Rack, hops: int) -> float:
    total = 0.0
    for _ in range(hops):
        total += reliable_hop(r)
    return total
