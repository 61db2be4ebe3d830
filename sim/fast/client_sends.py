"""A client's packets onto the network, compiled: :meth:`sim.clients.Client.send` and
:meth:`sim.clients.Client.send_faulty` step for step (:mod:`sim.fast.client_rows` says
what a client does; this module how its packets leave).

Each client sends through its own NIC share (one acquire per ``CF_GAP`` us, releases ride
free) and FIFO link to the switch; packets leaving within ``P_BURST`` us, and an attempt's
acquires however many (:func:`netlock.client.starts_burst`), travel as one burst with one
delay draw (each still lost on its own). On a network that duplicates or reorders
(``I_FAULTY``) each packet draws its own delay and faults, in the order the simpy engine
draws them.
"""

from __future__ import annotations

from netlock.client import starts_burst
from sim.fast import heap
from sim.fast._fast_jit import fast_jit, fast_jit_inline, inlined
from sim.fast.prefetch import warm_switch_rows
from sim.fast.records import copy_request, fault, free_request, hop
from sim.fast.state import (
    CF_FREE_AT,
    CF_GAP,
    CF_UP_LAST,
    E_BURST,
    I_FAULTY,
    I_LOSSY,
    K_COPIES,
    K_REORDERED,
    P_BURST,
    P_TX,
    RI_FOLLOW,
    RI_OP,
    RackArrays,
)

# --- sending -------------------------------------------------------------------------------

@fast_jit_inline
def _deliver(r: RackArrays, c: int, first: int, at: float) -> None:
    """The burst led by ``first`` reaches the switch at ``at`` over the client's FIFO link."""
    if at < r.cf[c, CF_UP_LAST]:
        at = r.cf[c, CF_UP_LAST]
    else:
        r.cf[c, CF_UP_LAST] = at
    heap.push_inline(r.heap, at, E_BURST, first, 0)


@fast_jit_inline
def _acquires(r: RackArrays, count: int) -> int:
    """Acquires among ``r.burst[:count]`` (one attempt's)."""
    n = 0
    for j in range(count):
        if r.ri[r.burst[j], RI_OP] == 0:
            n += 1
    return n


@fast_jit
def send_copy(r: RackArrays, h: int, after: float, kind: int) -> None:
    """The network's copy of row ``h`` (whose own arrival is ``after``) as event ``kind``,
    one more hop delay later, outside the link's order
    (:meth:`sim.clients.Client.send_copy`)."""
    d = hop(r)
    if d < 0:
        return
    _, extra = fault(r)
    r.cnt[K_COPIES] += 1
    if extra > 0:
        r.cnt[K_REORDERED] += 1
    heap.push(r.heap, after + d + extra, kind, copy_request(r, h), 0)


@fast_jit
def send_faulty(r: RackArrays, c: int, count: int, now: float) -> None:
    """:func:`send_burst` over a duplicating or reordering network
    (:meth:`sim.clients.Client.send_faulty`)."""
    gap = r.cf[c, CF_GAP]
    t = r.cf[c, CF_FREE_AT]
    if t < now + r.pf[P_TX]:
        t = now + r.pf[P_TX]
    burst_us = r.pf[P_BURST]
    first = -1
    prev = -1
    start = 0.0
    last = 0.0
    delay = 0.0
    run = (_acquires(r, count) - 1) * gap
    sent = 0
    for j in range(count):
        h = r.burst[j]
        acquire = r.ri[h, RI_OP] == 0
        if first >= 0 and starts_burst(start, t, acquire, sent, run, burst_us):
            _deliver(r, c, first, last + delay)
            first = -1
        d = hop(r)
        if d >= 0:
            copy, extra = fault(r)
            if copy:
                send_copy(r, h, t + d, E_BURST)
            r.ri[h, RI_FOLLOW] = -1
            if extra > 0:
                r.cnt[K_REORDERED] += 1
                heap.push(r.heap, t + d + extra, E_BURST, h, 0)
            else:
                if first < 0:
                    first = h
                    start = t
                    delay = d
                else:
                    r.ri[prev, RI_FOLLOW] = h
                prev = h
                last = t
        else:
            free_request(r, h)
        if acquire:
            t += gap
            sent += 1
    r.cf[c, CF_FREE_AT] = t
    if first >= 0:
        _deliver(r, c, first, last + delay)


@fast_jit
def send_burst(r: RackArrays, c: int, count: int, now: float) -> None:
    """Send ``r.burst[:count]`` back to back from client ``c`` at client time ``now``."""
    if r.pi[I_FAULTY]:
        send_faulty(r, c, count, now)
        return
    gap = r.cf[c, CF_GAP]
    t = r.cf[c, CF_FREE_AT]
    if t < now + r.pf[P_TX]:
        t = now + r.pf[P_TX]
    lossy = r.pi[I_LOSSY] != 0
    burst_us = r.pf[P_BURST]
    first = -1
    prev = -1
    start = 0.0
    last = 0.0
    delay = 0.0
    run = (_acquires(r, count) - 1) * gap
    sent = 0
    for j in range(count):
        h = r.burst[j]
        acquire = r.ri[h, RI_OP] == 0
        if first >= 0 and starts_burst(start, t, acquire, sent, run, burst_us):
            _deliver(r, c, first, last + delay)
            first = -1
        d = hop(r) if lossy or first < 0 else delay
        if d >= 0:
            warm_switch_rows(r, h)
            r.ri[h, RI_FOLLOW] = -1
            if first < 0:
                first = h
                start = t
                delay = d
            else:
                r.ri[prev, RI_FOLLOW] = h
            prev = h
            last = t
        else:
            free_request(r, h)
        if acquire:
            t += gap
            sent += 1
    r.cf[c, CF_FREE_AT] = t
    if first >= 0:
        _deliver(r, c, first, last + delay)


send_burst_inline = inlined(send_burst)
"""The same, inlined into its caller (for the per-request path)."""
