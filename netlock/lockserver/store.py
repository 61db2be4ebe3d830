"""Storage kernels under the lock server's rules: dense lock indices, request nodes, queues,
holder lists, the served-lock lists and action rows (the arrays of :mod:`.layout`).

They keep the arrays consistent and decide nothing: which request is granted, buffered or
pushed back is :mod:`.kernels`' business.
"""

from __future__ import annotations

import numpy as np

from netlock.lockserver import hashmap
from netlock.lockserver._server_jit import step_kernel
from netlock.lockserver.server_state import (
    A_CLIENT,
    A_FLAGS,
    A_KIND,
    A_LOCK,
    A_MODE,
    A_PRIORITY,
    A_REASON,
    A_TENANT,
    A_TS,
    A_TXN,
    CN_DENSE,
    CN_FREE,
    CN_FREE_LOCK,
    CN_MOVES,
    CN_NFREE,
    CN_RECYCLE,
    DF_COUNT,
    FROZEN,
    LK_EXCL,
    LK_FLAGS,
    LK_HOLD,
    LK_HOLDERS,
    LK_ID,
    LK_NEXT,
    LK_PEAK,
    LK_PREV,
    LK_REQUESTS,
    LK_SERVED,
    LK_SERVER,
    LK_SHARED,
    N_CLIENT,
    N_FLAGS,
    N_MODE,
    N_NEXT,
    N_PRIORITY,
    N_SINCE,
    N_TENANT,
    N_TS,
    N_TXN,
    Q_HEAD,
    Q_LEN,
    Q_TAIL,
    QK_BUFFER,
    QK_WAITING,
    SV_HEAD,
    SV_TAIL,
    ServerState,
)
from netlock.packets import EXCLUSIVE


@step_kernel
def dense_index(st: ServerState, lock: int, server: int) -> int:
    """The dense index of ``lock``, made on first sight (for ``server``): a recycled row if
    there is one, else the next fresh row."""
    d = hashmap.lookup(st.keys, st.values, lock)
    if d >= 0:
        return d
    d = st.cnt[CN_FREE_LOCK]
    if d >= 0:
        st.cnt[CN_FREE_LOCK] = st.lk[d, LK_NEXT]
        st.lk[d, LK_NEXT] = 0
        st.lk[d, LK_REQUESTS] = 0
        st.lk[d, LK_PEAK] = 0
    else:
        d = st.cnt[CN_DENSE]
        st.cnt[CN_DENSE] = d + 1
    hashmap.insert(st.keys, st.values, lock, d)
    st.lk[d, LK_ID] = lock
    st.lk[d, LK_SERVER] = server
    st.lk[d, LK_HOLD] = -1
    return d


@step_kernel
def recycle_idle(st: ServerState, d: int) -> None:
    """In a state that recycles (``cnt[CN_RECYCLE]``), give lock ``d``'s dense row back
    when it has just been unserved and keeps nothing else: no flag, nothing buffered, held
    aside or deferred, no range moving. Its row is then as a fresh row is, apart from
    ``LK_ID``, ``LK_SERVER`` and the counters (reset when it is reused)."""
    if st.cnt[CN_RECYCLE] == 0 or st.cnt[CN_MOVES] or st.lk[d, LK_FLAGS] or st.lq[d, 0, Q_LEN]:
        return
    for p in range(st.bq.shape[1]):
        if st.bq[d, p, Q_LEN] or st.deferred[d, p, DF_COUNT] >= 0:
            return
    hashmap.remove(st.keys, st.values, st.lk[d, LK_ID])
    st.lk[d, LK_NEXT] = st.cnt[CN_FREE_LOCK]
    st.cnt[CN_FREE_LOCK] = d


@step_kernel
def new_node(st: ServerState, mode: int, txn: int, client: int, tenant: int, priority: int,
             ts: int, flags: int) -> int:
    """A node from the free list holding one request."""
    k = st.cnt[CN_FREE]
    st.cnt[CN_FREE] = st.node[k, N_NEXT]
    st.cnt[CN_NFREE] -= 1
    node = st.node
    node[k, N_NEXT] = -1
    node[k, N_MODE] = mode
    node[k, N_TXN] = txn
    node[k, N_CLIENT] = client
    node[k, N_TENANT] = tenant
    node[k, N_PRIORITY] = priority
    node[k, N_TS] = ts
    node[k, N_SINCE] = 0
    node[k, N_FLAGS] = flags
    return k


@step_kernel
def free_node(st: ServerState, k: int) -> None:
    st.node[k, N_NEXT] = st.cnt[CN_FREE]
    st.cnt[CN_FREE] = k
    st.cnt[CN_NFREE] += 1


@step_kernel
def push(q: np.ndarray, node: np.ndarray, d: int, p: int, k: int, front: bool) -> None:
    """Put node ``k`` at the back (or the ``front``) of queue ``q[d, p]``."""
    if q[d, p, Q_HEAD] < 0:
        q[d, p, Q_HEAD] = k
        q[d, p, Q_TAIL] = k
        node[k, N_NEXT] = -1
    elif front:
        node[k, N_NEXT] = q[d, p, Q_HEAD]
        q[d, p, Q_HEAD] = k
    else:
        node[q[d, p, Q_TAIL], N_NEXT] = k
        node[k, N_NEXT] = -1
        q[d, p, Q_TAIL] = k
    q[d, p, Q_LEN] += 1


@step_kernel
def pop(q: np.ndarray, node: np.ndarray, d: int, p: int) -> int:
    """Take the head node of the non-empty queue ``q[d, p]``."""
    k = q[d, p, Q_HEAD]
    nxt = node[k, N_NEXT]
    q[d, p, Q_HEAD] = nxt
    if nxt < 0:
        q[d, p, Q_TAIL] = -1
    q[d, p, Q_LEN] -= 1
    return k


@step_kernel
def append_queue(src: np.ndarray, dst: np.ndarray, node: np.ndarray, d: int, p: int) -> None:
    """Move all of queue ``src[d, p]`` to the back of ``dst[d, p]``, in order."""
    head = src[d, p, Q_HEAD]
    if head < 0:
        return
    if dst[d, p, Q_HEAD] < 0:
        dst[d, p, Q_HEAD] = head
    else:
        node[dst[d, p, Q_TAIL], N_NEXT] = head
    dst[d, p, Q_TAIL] = src[d, p, Q_TAIL]
    dst[d, p, Q_LEN] += src[d, p, Q_LEN]
    src[d, p, Q_HEAD] = -1
    src[d, p, Q_TAIL] = -1
    src[d, p, Q_LEN] = 0


@step_kernel
def waiting_count(st: ServerState, d: int) -> int:
    """Requests waiting at lock ``d``, over all classes."""
    total = 0
    for p in range(st.wq.shape[1]):
        total += st.wq[d, p, Q_LEN]
    return total


@step_kernel
def emit_request(st: ServerState, n: int, kind: int, reason: int, lock: int, mode: int,
                 txn: int, client: int, tenant: int, priority: int, ts: int,
                 flags: int) -> int:
    """Action row ``n`` about a request; the next row."""
    a = st.act
    a[n, A_KIND] = kind
    a[n, A_REASON] = reason
    a[n, A_LOCK] = lock
    a[n, A_MODE] = mode
    a[n, A_TXN] = txn
    a[n, A_CLIENT] = client
    a[n, A_TENANT] = tenant
    a[n, A_PRIORITY] = priority
    a[n, A_TS] = ts
    a[n, A_FLAGS] = flags
    return n + 1


@step_kernel
def emit(st: ServerState, n: int, kind: int, reason: int, lock: int, k: int,
         flags: int) -> int:
    """Action row ``n`` about the request in node ``k``; the next row."""
    node = st.node
    return emit_request(st, n, kind, reason, lock, node[k, N_MODE], node[k, N_TXN],
                        node[k, N_CLIENT], node[k, N_TENANT], node[k, N_PRIORITY],
                        node[k, N_TS], flags)


@step_kernel
def emit_chain(st: ServerState, k: int, lock: int, n: int, take: bool) -> int:
    """A row per node of the list starting at node ``k`` (its kept flags, kind 0); with
    ``take`` the nodes are freed (the caller has detached the list)."""
    while k >= 0:
        after = st.node[k, N_NEXT]
        n = emit(st, n, 0, 0, lock, k, st.node[k, N_FLAGS])
        if take:
            free_node(st, k)
        k = after
    return n


@step_kernel
def detach(q: np.ndarray, d: int, p: int) -> int:
    """Empty queue ``q[d, p]``; its former head node (-1 when it was empty)."""
    k = q[d, p, Q_HEAD]
    q[d, p, Q_HEAD] = -1
    q[d, p, Q_TAIL] = -1
    q[d, p, Q_LEN] = 0
    return k


@step_kernel
def take_queue(st: ServerState, which: int, d: int, p: int, n: int) -> int:
    """Empty queue ``which`` (``QK_*``) of ``(d, p)`` into action rows from ``n``, head
    first; the next row."""
    if which == QK_WAITING:
        k = detach(st.wq, d, p)
    elif which == QK_BUFFER:
        k = detach(st.bq, d, p)
    else:
        k = detach(st.lq, d, p)
    return emit_chain(st, k, st.lk[d, LK_ID], n, True)


# --- served locks and their holders ---------------------------------------------------------

@step_kernel
def serve(st: ServerState, d: int) -> None:
    """Append lock ``d`` to its server's served locks, unless it is on them."""
    lk = st.lk
    if lk[d, LK_SERVED]:
        return
    s = lk[d, LK_SERVER]
    lk[d, LK_SERVED] = 1
    lk[d, LK_NEXT] = -1
    tail = st.servers[s, SV_TAIL]
    lk[d, LK_PREV] = tail
    if tail < 0:
        st.servers[s, SV_HEAD] = d
    else:
        lk[tail, LK_NEXT] = d
    st.servers[s, SV_TAIL] = d


@step_kernel
def unserve(st: ServerState, d: int) -> None:
    """Forget served lock ``d`` (no holders, no waiting requests): off the list, unfrozen."""
    lk = st.lk
    s = lk[d, LK_SERVER]
    prev, nxt = lk[d, LK_PREV], lk[d, LK_NEXT]
    if prev < 0:
        st.servers[s, SV_HEAD] = nxt
    else:
        lk[prev, LK_NEXT] = nxt
    if nxt < 0:
        st.servers[s, SV_TAIL] = prev
    else:
        lk[nxt, LK_PREV] = prev
    lk[d, LK_SERVED] = 0
    lk[d, LK_SHARED] = 0
    lk[d, LK_EXCL] = 0
    lk[d, LK_HOLD] = -1
    lk[d, LK_HOLDERS] = 0
    lk[d, LK_FLAGS] &= ~FROZEN


@step_kernel
def find_holder(st: ServerState, d: int, txn: int, client: int) -> int:
    """The holder node of key ``(txn, client)`` and its predecessor in the list (as
    ``k * 2**32 + prev + 1``), or -1."""
    prev = -1
    k = st.lk[d, LK_HOLD]
    while k >= 0:
        if st.node[k, N_TXN] == txn and st.node[k, N_CLIENT] == client:
            return k * (1 << 32) + prev + 1
        prev = k
        k = st.node[k, N_NEXT]
    return -1


@step_kernel
def add_holder(st: ServerState, d: int, k: int, now_us: int) -> None:
    """Node ``k`` holds lock ``d`` from ``now_us``. A holder of the same (txn, client) is
    replaced in place (its list position kept), but both grants stay counted."""
    lk, node = st.lk, st.node
    if node[k, N_MODE] == EXCLUSIVE:
        lk[d, LK_EXCL] += 1
    else:
        lk[d, LK_SHARED] += 1
    node[k, N_SINCE] = now_us
    found = find_holder(st, d, node[k, N_TXN], node[k, N_CLIENT])
    if found >= 0:
        old = found >> 32
        for col in range(1, node.shape[1]):
            node[old, col] = node[k, col]
        free_node(st, k)
    else:
        node[k, N_NEXT] = lk[d, LK_HOLD]
        lk[d, LK_HOLD] = k
        lk[d, LK_HOLDERS] += 1


@step_kernel
def drop_holder(st: ServerState, d: int, k: int, prev: int) -> None:
    """Holder node ``k`` (after ``prev`` in the list, -1 = first) lets lock ``d`` go."""
    nxt = st.node[k, N_NEXT]
    if prev < 0:
        st.lk[d, LK_HOLD] = nxt
    else:
        st.node[prev, N_NEXT] = nxt
    if st.node[k, N_MODE] == EXCLUSIVE:
        st.lk[d, LK_EXCL] -= 1
    else:
        st.lk[d, LK_SHARED] -= 1
    st.lk[d, LK_HOLDERS] -= 1
    free_node(st, k)
