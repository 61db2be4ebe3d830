"""The fast engine's event loop: pop the earliest event, run it, until a time or a refill.

Before each event the loop checks that the pre-drawn randomness and every growable array
have room for the worst case of one event (``room`` thresholds in ``r.pi``); when one has
not, it returns :data:`NEEDS_SERVICE` without taking the event, and the Python side
(:mod:`sim.fast.simulate_fast`) refills or grows and calls :func:`run` again, which continues
exactly where it stopped.
"""

from __future__ import annotations

from netlock.lockserver.server_state import CN_DENSE, CN_NFREE
from sim.fast import client_rows, client_txns, heap, open_loop_rows, rack_arrays
from sim.fast._fast_jit import fast_jit, fast_jit_inline, fast_jit_nogil
from sim.fast.heap import Q_NOW_KEY, Q_NOW_SEQ, Q_SIZE
from sim.fast.prefetch import warm_switch_slot
from sim.fast.state import (
    E_BEGIN,
    E_BURST,
    E_CL_DRAIN,
    E_COMMIT,
    E_DEFER,
    E_DRAIN,
    E_GRANT,
    E_NOTIFY,
    E_OPEN,
    E_PUSH,
    E_QUOTA,
    E_RESEND,
    E_RETRY,
    E_SERVER,
    E_SWEEP,
    E_TIMER,
    I_FAULTY,
    I_OPEN_LIMIT,
    I_ROOM_HOPS,
    I_ROOM_LOCKS,
    I_ROOM_REQUESTS,
    I_ROOM_ROWS,
    K_FAULT,
    K_FREE,
    K_HANDBACKS,
    K_HOP,
    K_NEED_TXN,
    K_TXNS,
    K_USES,
    P_QUOTA_WINDOW,
    P_SWEEP,
    RI_FOLLOW,
    RackArrays,
)

DONE = 0
WARM_PACKETS = 4
NEEDS_SERVICE = 1


@fast_jit
def needs_service(r: RackArrays) -> bool:
    """Whether some array might not have room for the next event. Open-loop clients have
    no bound on their requests in flight, and one event can answer every request waiting
    on a lock, so they keep room for as many more as are in flight."""
    requests = r.pi[I_ROOM_REQUESTS]
    if r.pi[I_OPEN_LIMIT]:
        requests += r.ri.shape[0] - r.cnt[K_FREE]
    rows = r.pi[I_ROOM_ROWS]
    h = r.heap
    srv = r.srv
    return (r.cnt[K_NEED_TXN] > 0
            or r.hops.shape[0] - r.cnt[K_HOP] < r.pi[I_ROOM_HOPS]
            or (r.pi[I_FAULTY] != 0
                and r.faults.shape[0] - r.cnt[K_FAULT] < r.pi[I_ROOM_HOPS])
            or r.cnt[K_FREE] < requests
            or h.t.shape[0] - h.cnt[Q_SIZE] < requests
            or r.uses.shape[0] - r.cnt[K_USES] < rows
            or r.txns.shape[0] - r.cnt[K_TXNS] < rows
            or r.handbacks.shape[0] - r.cnt[K_HANDBACKS] < rows
            or srv.cnt[CN_NFREE] < requests
            or srv.lk.shape[0] - srv.cnt[CN_DENSE] < r.pi[I_ROOM_LOCKS]
            or 4 * (srv.cnt[CN_DENSE] + r.pi[I_ROOM_LOCKS]) >= srv.keys.shape[0])


@fast_jit_inline
def _warm_burst(r: RackArrays, first: int) -> None:
    """The next event is a burst: fetch the queue slots of its first packets."""
    j = first
    for _ in range(WARM_PACKETS):
        if j < 0:
            return
        warm_switch_slot(r, j)
        j = r.ri[j, RI_FOLLOW]


@fast_jit_nogil
def run(r: RackArrays, until_us: float) -> int:
    """Run the events before ``until_us``; DONE, or NEEDS_SERVICE to be called again."""
    h = r.heap
    while h.cnt[Q_SIZE] > 0:
        if needs_service(r):
            return NEEDS_SERVICE
        now = h.t[0]
        if now >= until_us:
            return DONE
        h.cnt[Q_NOW_KEY] = h.key[0]
        h.cnt[Q_NOW_SEQ] = h.seq[0]
        slot = heap.pop(h)
        kind = h.ev_kind[slot]
        a = h.ev_a[slot]
        b = h.ev_b[slot]
        if h.cnt[Q_SIZE] > 0 and h.ev_kind[h.slot[0]] == E_BURST:
            _warm_burst(r, h.ev_a[h.slot[0]])
        if kind == E_BURST:
            rack_arrays.switch_packets(r, a, now)
        elif kind == E_GRANT:
            if r.pi[I_OPEN_LIMIT]:
                open_loop_rows.granted(r, a, now)
            else:
                client_rows.on_grant_inline(r, a, now)
        elif kind == E_SERVER:
            rack_arrays.server_request_inline(r, a, b, now)
        elif kind == E_NOTIFY:
            rack_arrays.server_notified(r, a, b, now)
        elif kind == E_PUSH:
            rack_arrays.push_back(r, a, now)
        elif kind == E_TIMER:
            client_txns.on_timer(r, a, now)
        elif kind == E_COMMIT:
            client_txns.commit_inline(r, a, b, now)
        elif kind == E_BEGIN:
            client_txns.begin_txn(r, a, now)
        elif kind == E_RETRY:
            client_txns.retry(r, a, b, now)
        elif kind == E_DEFER:
            client_rows.on_defer(r, a, now)
        elif kind == E_RESEND:
            client_rows.resend(r, a, now)
        elif kind == E_DRAIN:
            rack_arrays.server_drain_inline(r, a, b, now)
        elif kind == E_OPEN:
            open_loop_rows.send_next(r, a, b, now)
        elif kind == E_CL_DRAIN:
            open_loop_rows.drain(r, a, b, now)
        elif kind == E_SWEEP:
            rack_arrays.switch_expire(r, now)
            rack_arrays.servers_expire(r, now)
            heap.push(h, now + r.pf[P_SWEEP], E_SWEEP, 0, 0)
        elif kind == E_QUOTA:
            rack_arrays.reset_quota_window(r)
            heap.push(h, now + r.pf[P_QUOTA_WINDOW], E_QUOTA, 0, 0)
    return DONE
