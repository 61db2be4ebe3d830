"""The lock server's rules, written once, as kernels over :mod:`.layout`'s arrays.

:class:`netlock.lockserver.LockServer` calls them for every request and control-plane step;
the fast engine calls them directly on its rack's state. A kernel writes its outcomes as
rows of ``st.act`` (``A_*`` columns) and returns the row count. Times are integer
microseconds (us).

The rules (paper section 4.3):

- a lock **not in the switch** is served here: its requests wait FIFO per priority class
  and are granted highest class first under the switch's compatibility rule
  (:func:`netlock.dataplane.compatibility.compatible`), stopping at the first request that must
  wait (it blocks everything behind it, in its class and every lower one); nothing is
  granted while the lock is frozen (moving into the switch) or while the lock's range
  moves between servers (a failed server's heir holds acquires aside itself:
  :class:`netlock.failover.Grace`);
- a release must match a holder by (txn, client) and mode, else it is dropped
  (``STALE_RELEASE``; ``NOT_HELD`` when the lock is not served here);
- an acquire of a served lock whose (txn, client) already waits or holds there is a copy
  the network made and is dropped (``DUPLICATE``): queued, it would be granted as a second
  holder the client never releases. Copies a server only buffers (``q2``, and requests held
  aside until the switch maps a lock) are kept: the switch counts what a server buffers for
  it, and the switch hands a grant of a copy to the client, which releases it at once;
- overflow, and any acquire of a lock the switch owns, is only buffered in ``q2`` per
  (lock, class), a push-back bounced by the switch going back to the *front*, so that q1 + q2
  stay one FIFO; NOTIFY_SERVER(count) pushes back up to ``count`` from the head of ``q2``
  (deferred while the lock arrives from another server);
- the lease sweep drops holders whose lease is over and grants what follows, lock by lock
  in the order the locks became served.
"""

from __future__ import annotations

from netlock.dataplane.compatibility import compatible, effective_class
from netlock.lockserver._server_jit import kernel, step_kernel
from netlock.lockserver.hashmap import lookup
from netlock.lockserver.server_state import (
    ARRIVING,
    CN_EXPIRED,
    CN_MOVES,
    CN_RESENT,
    CN_SEQ,
    DF_COUNT,
    DF_SEQ,
    FLAG_OVERFLOW,
    FLAG_PUSH_BACK,
    FROZEN,
    LATE,
    LEAVING,
    LK_EXCL,
    LK_FLAGS,
    LK_HOLD,
    LK_HOLDERS,
    LK_ID,
    LK_NEXT,
    LK_PEAK,
    LK_REQUESTS,
    LK_SERVED,
    LK_SERVER,
    LK_SHARED,
    MV_HI,
    MV_KIND,
    MV_LO,
    MV_SERVER,
    N_CLIENT,
    N_FLAGS,
    N_MODE,
    N_NEXT,
    N_PRIORITY,
    N_SINCE,
    N_TXN,
    Q_HEAD,
    RESIDENT,
    SV_HEAD,
    ServerState,
)
from netlock.lockserver.store import (
    add_holder,
    append_queue,
    dense_index,
    drop_holder,
    emit,
    emit_request,
    find_holder,
    free_node,
    new_node,
    pop,
    push,
    recycle_idle,
    serve,
    unserve,
    waiting_count,
)
from netlock.packets import RELEASE, ActionKind, DropReason

GRANT = int(ActionKind.GRANT)
DROP = int(ActionKind.DROP)
PUSH_BACK = int(ActionKind.PUSH_BACK)
STALE_RELEASE = int(DropReason.STALE_RELEASE)
NOT_HELD = int(DropReason.NOT_HELD)
DUPLICATE = int(DropReason.DUPLICATE)


@step_kernel
def held_back(st: ServerState, server: int, lock: int, kinds: int) -> bool:
    """Whether ``lock`` is in a range of ``server`` moving as one of ``kinds`` (bits)."""
    mv = st.moves
    for m in range(st.cnt[CN_MOVES]):
        if (mv[m, MV_SERVER] == server and mv[m, MV_KIND] & kinds
                and mv[m, MV_LO] <= lock <= mv[m, MV_HI]):
            return True
    return False


@step_kernel
def is_waiting(st: ServerState, d: int, txn: int, client: int) -> bool:
    """Whether a request of key ``(txn, client)`` waits at served lock ``d`` (any class)."""
    node = st.node
    for p in range(st.wq.shape[1]):
        k = st.wq[d, p, Q_HEAD]
        while k >= 0:
            if node[k, N_TXN] == txn and node[k, N_CLIENT] == client:
                return True
            k = node[k, N_NEXT]
    return False


@step_kernel
def grant(st: ServerState, d: int, now_us: int, n: int) -> int:
    """Grant served lock ``d``'s waiting requests in FIFO order, highest class first, until
    one must wait; forget the lock when it is idle. Action rows from ``n``; the next row."""
    lk, node, wq = st.lk, st.node, st.wq
    s = lk[d, LK_SERVER]
    if ((lk[d, LK_FLAGS] & FROZEN) == 0
            and (st.cnt[CN_MOVES] == 0
                 or not held_back(st, s, lk[d, LK_ID], LEAVING | ARRIVING))):
        for p in range(wq.shape[1]):
            while wq[d, p, Q_HEAD] >= 0 and compatible(node[wq[d, p, Q_HEAD], N_MODE],
                                                       lk[d, LK_SHARED], lk[d, LK_EXCL]):
                k = pop(wq, node, d, p)
                n = emit(st, n, GRANT, 0, lk[d, LK_ID], k, 0)
                add_holder(st, d, k, now_us)
            if wq[d, p, Q_HEAD] >= 0:
                break
    if lk[d, LK_HOLD] < 0 and (lk[d, LK_FLAGS] & FROZEN) == 0 and waiting_count(st, d) == 0:
        unserve(st, d)
        recycle_idle(st, d)
    return n


@kernel
def process(st: ServerState, server: int, now_us: int, op: int, lock: int, mode: int,
            txn: int, client: int, tenant: int, priority: int, ts: int, flags: int) -> int:
    """A request the switch forwarded to ``server`` (``flags``: ``FLAG_OVERFLOW``,
    ``FLAG_PUSH_BACK``); the action row count."""
    if op == RELEASE:
        d = lookup(st.keys, st.values, lock)
        if d < 0 or st.lk[d, LK_SERVED] == 0:
            return emit_request(st, 0, DROP, NOT_HELD, lock, mode, txn, client, tenant,
                                priority, ts, flags)
        found = find_holder(st, d, txn, client)
        if found < 0 or st.node[found >> 32, N_MODE] != mode:
            return emit_request(st, 0, DROP, STALE_RELEASE, lock, mode, txn, client, tenant,
                                priority, ts, flags)
        drop_holder(st, d, found >> 32, (found & 0xFFFFFFFF) - 1)
        return grant(st, d, now_us, 0)
    d = dense_index(st, lock, server)
    held = st.lk[d, LK_FLAGS]
    if held & LATE and flags == 0:
        push(st.lq, st.node, d, 0, new_node(st, mode, txn, client, tenant, priority, ts, 0),
             False)
        return 0
    if flags & FLAG_OVERFLOW or held & RESIDENT:
        k = new_node(st, mode, txn, client, tenant, priority, ts, flags & FLAG_OVERFLOW)
        push(st.bq, st.node, d, priority, k, (flags & FLAG_PUSH_BACK) != 0)
        return 0
    if st.lk[d, LK_SERVED] and (find_holder(st, d, txn, client) >= 0
                                or is_waiting(st, d, txn, client)):
        return emit_request(st, 0, DROP, DUPLICATE, lock, mode, txn, client, tenant,
                            priority, ts, flags)
    serve(st, d)
    push(st.wq, st.node, d, priority,
         new_node(st, mode, txn, client, tenant, priority, ts, flags), False)
    st.lk[d, LK_REQUESTS] += 1
    occupancy = st.lk[d, LK_HOLDERS] + waiting_count(st, d)
    if occupancy > st.lk[d, LK_PEAK]:
        st.lk[d, LK_PEAK] = occupancy
    return grant(st, d, now_us, 0)


@kernel
def notified(st: ServerState, server: int, lock: int, priority: int, count: int) -> int:
    """The switch queue of (lock, priority) drained: up to ``count`` PUSH_BACK rows from the
    head of ``q2``. While the lock arrives from another server the count is kept instead
    (the latest one per (lock, class), in the order first deferred) and answered when the
    arrival ends (:meth:`netlock.lockserver.LockServer.cancel_arrival`)."""
    if st.cnt[CN_MOVES] and held_back(st, server, lock, ARRIVING):
        d = dense_index(st, lock, server)
        if st.deferred[d, priority, DF_COUNT] < 0:
            st.deferred[d, priority, DF_SEQ] = st.cnt[CN_SEQ]
            st.cnt[CN_SEQ] += 1
        st.deferred[d, priority, DF_COUNT] = count
        return 0
    d = lookup(st.keys, st.values, lock)
    n = 0
    if d < 0 or priority >= st.bq.shape[1]:
        return 0
    while n < count and st.bq[d, priority, Q_HEAD] >= 0:
        k = pop(st.bq, st.node, d, priority)
        n = emit(st, n, PUSH_BACK, 0, lock, k, FLAG_PUSH_BACK)
        free_node(st, k)
    return n


@kernel
def expire(st: ServerState, server: int, now_us: int, lease_us: int) -> int:
    """Drop ``server``'s holders whose lease is over and grant what follows, lock by lock in
    the order the locks became served; ``cnt[CN_EXPIRED]`` counts the expired holders."""
    n = 0
    d = st.servers[server, SV_HEAD]
    while d >= 0:
        nxt = st.lk[d, LK_NEXT]
        prev = -1
        k = st.lk[d, LK_HOLD]
        while k >= 0:
            after = st.node[k, N_NEXT]
            if now_us - st.node[k, N_SINCE] >= lease_us:
                drop_holder(st, d, k, prev)
                st.cnt[CN_EXPIRED] += 1
            else:
                prev = k
            k = after
        n = grant(st, d, now_us, n)
        d = nxt
    return n


@kernel
def grant_range(st: ServerState, server: int, lo: int, hi: int, now_us: int, n: int) -> int:
    """Grant what ``server``'s served locks ``lo..hi`` can, in served order (after a grace
    period or a move ends). Action rows from ``n``; the next row."""
    d = st.servers[server, SV_HEAD]
    while d >= 0:
        nxt = st.lk[d, LK_NEXT]
        if lo <= st.lk[d, LK_ID] <= hi:
            n = grant(st, d, now_us, n)
        d = nxt
    return n


# --- moving a lock between the switch and its server --------------------------------------------

@kernel
def take_over(st: ServerState, server: int, lock: int, now_us: int) -> int:
    """The switch gave ``lock`` up: serve its ``q2`` (class by class, each behind what waits)
    and then what was held aside, and grant."""
    d = dense_index(st, lock, server)
    st.lk[d, LK_FLAGS] &= ~RESIDENT
    serve(st, d)
    for p in range(st.wq.shape[1]):
        append_queue(st.bq, st.wq, st.node, d, p)
    while st.lq[d, 0, Q_HEAD] >= 0:
        k = pop(st.lq, st.node, d, 0)
        push(st.wq, st.node, d, st.node[k, N_PRIORITY], k, False)
    st.lk[d, LK_FLAGS] &= ~LATE
    return grant(st, d, now_us, 0)


@kernel
def hand_over(st: ServerState, server: int, lock: int, class_mask: int, classes: int) -> int:
    """``lock`` (no holders) moves into the switch, which gives it the classes of
    ``class_mask`` (of ``classes``): its waiting requests become ``q2`` of the class the
    switch uses for each (:func:`netlock.dataplane.compatibility.effective_class`), marked overflow;
    the lock is resident from now on. The lock's dense index."""
    d = dense_index(st, lock, server)
    node = st.node
    if st.lk[d, LK_SERVED]:
        for p in range(st.wq.shape[1]):
            target = effective_class(class_mask, p, classes)
            while st.wq[d, p, Q_HEAD] >= 0:
                k = pop(st.wq, node, d, p)
                front = (node[k, N_FLAGS] & FLAG_PUSH_BACK) != 0
                node[k, N_PRIORITY] = target
                node[k, N_FLAGS] = FLAG_OVERFLOW
                push(st.bq, node, d, target, k, front)
        unserve(st, d)
    st.lk[d, LK_FLAGS] |= RESIDENT
    return d


@kernel
def mapped(st: ServerState, lock: int) -> int:
    """The switch maps ``lock`` now: what was held aside goes back to it as PUSH_BACK rows
    of the requests as they came (new acquires there, not push-backs)."""
    d = lookup(st.keys, st.values, lock)
    if d < 0:
        return 0
    n = 0
    while st.lq[d, 0, Q_HEAD] >= 0:
        k = pop(st.lq, st.node, d, 0)
        n = emit(st, n, PUSH_BACK, 0, lock, k, st.node[k, N_FLAGS])
        free_node(st, k)
    st.lk[d, LK_FLAGS] &= ~LATE
    st.cnt[CN_RESENT] += n
    return n
