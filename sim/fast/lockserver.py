"""The NetLock lock server of :mod:`netlock.lockserver`, in arrays, for the compiled engine.

Same rules, same order of outcomes, for what the simulated rack uses of a lock server:
serving locks the switch does not own (FIFO per priority class, highest class first, the
compatibility rule of :mod:`netlock.dataplane.rules`, stopping at the first request that
must wait), buffering overflow in ``q2`` (push-backs go back to the front), answering
NOTIFY_SERVER with up to ``count`` PUSH_BACKs, and the lease sweep. Lock moves, failures and
the planner's counters are not modelled here (the fast engine has no failures).
``tests/fast/test_lockserver_equivalence.py`` checks it against
:class:`netlock.lockserver.LockServer` on random request sequences.

State, for all servers of a rack at once (a lock belongs to one server):

- a hash map lock id -> dense index ``d`` (:mod:`sim.fast.hashmap`);
- ``lk[d]``: the lock's server, whether it is served (in its server's list of served locks,
  in insertion order as the Python dict keeps it), its holder counts and holder list;
- ``wq[d, p]`` / ``bq[d, p]``: head and tail of the waiting queue and of ``q2`` per class;
- ``node[k]``: one request (queued, buffered or holding), linked by ``N_NEXT``;
- ``served[s]``: head and tail of server ``s``'s list of served locks.

Outcomes are written as rows of ``act`` (``A_*`` columns); functions return the row count.
Times are integer microseconds.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from netlock.dataplane.rules import EXCLUSIVE, compatible
from netlock.packets import Action, ActionKind, DropReason, LockRequest, Mode, Op
from sim.fast import hashmap
from sim.fast._jit import fast_jit

GRANT = int(ActionKind.GRANT)
DROP = int(ActionKind.DROP)
PUSH_BACK = int(ActionKind.PUSH_BACK)
STALE_RELEASE = int(DropReason.STALE_RELEASE)
NOT_HELD = int(DropReason.NOT_HELD)
RELEASE = 1

LK_ID, LK_SERVER, LK_SERVED, LK_PREV, LK_NEXT, LK_SHARED, LK_EXCL, LK_HOLD = range(8)
N_LK = 8
N_NEXT, N_MODE, N_TXN, N_CLIENT, N_TENANT, N_PRIORITY, N_TS, N_SINCE = range(8)
N_NODE = 8
CN_DENSE, CN_FREE, CN_NFREE, CN_EXPIRED = range(4)
N_CNT = 4
A_KIND, A_REASON, A_LOCK, A_MODE, A_TXN, A_CLIENT, A_TENANT, A_PRIORITY, A_TS, A_FLAGS = range(10)
N_ACT = 10
FLAG_OVERFLOW = 1
FLAG_PUSH_BACK = 2
HEAD, TAIL = 0, 1


class ServerState(NamedTuple):
    """The lock servers' arrays (see the module docstring)."""

    keys: np.ndarray
    values: np.ndarray
    lk: np.ndarray
    wq: np.ndarray
    bq: np.ndarray
    node: np.ndarray
    served: np.ndarray
    cnt: np.ndarray
    act: np.ndarray


def new_server_state(servers: int, priorities: int, locks: int = 1024, nodes: int = 4096,
                     actions: int = 4096) -> ServerState:
    """Empty state for ``servers`` servers and priority classes ``0 .. priorities - 1``."""
    keys, values = hashmap.new_map(4 * locks)
    node = np.zeros((nodes, N_NODE), dtype=np.int64)
    node[:, N_NEXT] = np.arange(1, nodes + 1)
    node[-1, N_NEXT] = -1
    cnt = np.zeros(N_CNT, dtype=np.int64)
    cnt[CN_NFREE] = nodes
    return ServerState(keys=keys, values=values, lk=np.zeros((locks, N_LK), dtype=np.int64),
                       wq=np.full((locks, priorities, 2), -1, dtype=np.int64),
                       bq=np.full((locks, priorities, 2), -1, dtype=np.int64), node=node,
                       served=np.full((max(servers, 1), 2), -1, dtype=np.int64), cnt=cnt,
                       act=np.zeros((actions, N_ACT), dtype=np.int64))


def ensure_room(st: ServerState, locks: int, nodes: int, actions: int) -> ServerState:
    """``st``, or a grown copy with room for ``locks`` more locks, ``nodes`` more free
    request nodes and ``actions`` action rows (at least one per node: a call's actions are
    about distinct requests)."""
    dense = int(st.cnt[CN_DENSE])
    keys, values = hashmap.grown(st.keys, st.values, dense + locks)
    lk, wq, bq = st.lk, st.wq, st.bq
    if dense + locks > len(lk):
        size = max(2 * len(lk), dense + locks)
        lk = np.concatenate([lk, np.zeros((size - len(lk), N_LK), dtype=np.int64)])
        pad = np.full((size - len(wq), *wq.shape[1:]), -1, dtype=np.int64)
        wq = np.concatenate([wq, pad])
        bq = np.concatenate([bq, pad])
    node, cnt = st.node, st.cnt
    if cnt[CN_NFREE] < nodes:
        old = len(node)
        more = max(old, nodes)
        extra = np.zeros((more, N_NODE), dtype=np.int64)
        extra[:, N_NEXT] = np.arange(old + 1, old + more + 1)
        extra[-1, N_NEXT] = cnt[CN_FREE] if cnt[CN_NFREE] > 0 else -1
        node = np.concatenate([node, extra])
        cnt[CN_FREE] = old
        cnt[CN_NFREE] += more
    rows = max(actions, len(node))
    act = st.act if len(st.act) >= rows else np.zeros((rows, N_ACT), dtype=np.int64)
    return st._replace(keys=keys, values=values, lk=lk, wq=wq, bq=bq, node=node, act=act)


# --- storage ---------------------------------------------------------------------------------

@fast_jit
def dense_index(st: ServerState, lock: int, server: int) -> int:
    """The dense index of ``lock``, made on first sight (for ``server``)."""
    d = hashmap.lookup(st.keys, st.values, lock)
    if d >= 0:
        return d
    d = st.cnt[CN_DENSE]
    st.cnt[CN_DENSE] = d + 1
    hashmap.insert(st.keys, st.values, lock, d)
    st.lk[d, LK_ID] = lock
    st.lk[d, LK_SERVER] = server
    st.lk[d, LK_HOLD] = -1
    return d


@fast_jit
def _new_node(st: ServerState, mode: int, txn: int, client: int, tenant: int, priority: int,
              ts: int) -> int:
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
    return k


@fast_jit
def _free_node(st: ServerState, k: int) -> None:
    st.node[k, N_NEXT] = st.cnt[CN_FREE]
    st.cnt[CN_FREE] = k
    st.cnt[CN_NFREE] += 1


@fast_jit
def _push(q: np.ndarray, node: np.ndarray, d: int, p: int, k: int, front: bool) -> None:
    if q[d, p, HEAD] < 0:
        q[d, p, HEAD] = k
        q[d, p, TAIL] = k
        node[k, N_NEXT] = -1
    elif front:
        node[k, N_NEXT] = q[d, p, HEAD]
        q[d, p, HEAD] = k
    else:
        node[q[d, p, TAIL], N_NEXT] = k
        node[k, N_NEXT] = -1
        q[d, p, TAIL] = k


@fast_jit
def _pop(q: np.ndarray, node: np.ndarray, d: int, p: int) -> int:
    k = q[d, p, HEAD]
    nxt = node[k, N_NEXT]
    q[d, p, HEAD] = nxt
    if nxt < 0:
        q[d, p, TAIL] = -1
    return k


@fast_jit
def _emit(st: ServerState, n: int, kind: int, reason: int, lock: int, k: int,
          flags: int) -> int:
    """An action row about the request in node ``k``."""
    a = st.act
    a[n, A_KIND] = kind
    a[n, A_REASON] = reason
    a[n, A_LOCK] = lock
    a[n, A_MODE] = st.node[k, N_MODE]
    a[n, A_TXN] = st.node[k, N_TXN]
    a[n, A_CLIENT] = st.node[k, N_CLIENT]
    a[n, A_TENANT] = st.node[k, N_TENANT]
    a[n, A_PRIORITY] = st.node[k, N_PRIORITY]
    a[n, A_TS] = st.node[k, N_TS]
    a[n, A_FLAGS] = flags
    return n + 1


@fast_jit
def _emit_drop(st: ServerState, n: int, reason: int, lock: int, mode: int, txn: int,
               client: int, tenant: int, priority: int, ts: int, flags: int) -> int:
    a = st.act
    a[n, A_KIND] = DROP
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


# --- served locks ------------------------------------------------------------------------------

@fast_jit
def _serve(st: ServerState, d: int) -> None:
    """Append lock ``d`` to its server's served locks (dict insertion)."""
    lk = st.lk
    if lk[d, LK_SERVED]:
        return
    s = lk[d, LK_SERVER]
    lk[d, LK_SERVED] = 1
    lk[d, LK_NEXT] = -1
    tail = st.served[s, TAIL]
    lk[d, LK_PREV] = tail
    if tail < 0:
        st.served[s, HEAD] = d
    else:
        lk[tail, LK_NEXT] = d
    st.served[s, TAIL] = d


@fast_jit
def _unserve(st: ServerState, d: int) -> None:
    lk = st.lk
    s = lk[d, LK_SERVER]
    prev, nxt = lk[d, LK_PREV], lk[d, LK_NEXT]
    if prev < 0:
        st.served[s, HEAD] = nxt
    else:
        lk[prev, LK_NEXT] = nxt
    if nxt < 0:
        st.served[s, TAIL] = prev
    else:
        lk[nxt, LK_PREV] = prev
    lk[d, LK_SERVED] = 0
    lk[d, LK_SHARED] = 0
    lk[d, LK_EXCL] = 0
    lk[d, LK_HOLD] = -1


@fast_jit
def _find_holder(st: ServerState, d: int, txn: int, client: int) -> int:
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


@fast_jit
def _unlink_holder(st: ServerState, d: int, k: int, prev: int) -> None:
    nxt = st.node[k, N_NEXT]
    if prev < 0:
        st.lk[d, LK_HOLD] = nxt
    else:
        st.node[prev, N_NEXT] = nxt
    if st.node[k, N_MODE] == EXCLUSIVE:
        st.lk[d, LK_EXCL] -= 1
    else:
        st.lk[d, LK_SHARED] -= 1
    _free_node(st, k)


@fast_jit
def _grant(st: ServerState, d: int, now_us: int, n: int) -> int:
    """Grant in FIFO order, highest class first, until a request must wait; forget the
    lock when it is idle."""
    lk, node, wq = st.lk, st.node, st.wq
    lock = lk[d, LK_ID]
    for p in range(wq.shape[1]):
        while wq[d, p, HEAD] >= 0 and compatible(node[wq[d, p, HEAD], N_MODE],
                                                 lk[d, LK_SHARED], lk[d, LK_EXCL]):
            k = _pop(wq, node, d, p)
            if node[k, N_MODE] == EXCLUSIVE:
                lk[d, LK_EXCL] += 1
            else:
                lk[d, LK_SHARED] += 1
            n = _emit(st, n, GRANT, 0, lock, k, 0)
            node[k, N_SINCE] = now_us
            found = _find_holder(st, d, node[k, N_TXN], node[k, N_CLIENT])
            if found >= 0:
                old = found >> 32
                for col in range(1, N_NODE):
                    node[old, col] = node[k, col]
                _free_node(st, k)
            else:
                node[k, N_NEXT] = lk[d, LK_HOLD]
                lk[d, LK_HOLD] = k
        if wq[d, p, HEAD] >= 0:
            break
    if lk[d, LK_HOLD] < 0:
        for p in range(wq.shape[1]):
            if wq[d, p, HEAD] >= 0:
                return n
        _unserve(st, d)
    return n


# --- requests ----------------------------------------------------------------------------------

@fast_jit
def process(st: ServerState, server: int, now_us: int, op: int, lock: int, mode: int,
            txn: int, client: int, tenant: int, priority: int, ts: int, flags: int) -> int:
    """A request forwarded by the switch (``flags``: overflow, push-back); action rows."""
    if op == RELEASE:
        d = hashmap.lookup(st.keys, st.values, lock)
        if d < 0 or st.lk[d, LK_SERVED] == 0:
            return _emit_drop(st, 0, NOT_HELD, lock, mode, txn, client, tenant, priority, ts,
                              flags)
        found = _find_holder(st, d, txn, client)
        if found < 0 or st.node[found >> 32, N_MODE] != mode:
            return _emit_drop(st, 0, STALE_RELEASE, lock, mode, txn, client, tenant, priority,
                              ts, flags)
        _unlink_holder(st, d, found >> 32, (found & 0xFFFFFFFF) - 1)
        return _grant(st, d, now_us, 0)
    d = dense_index(st, lock, server)
    k = _new_node(st, mode, txn, client, tenant, priority, ts)
    if flags & FLAG_OVERFLOW:
        _push(st.bq, st.node, d, priority, k, (flags & FLAG_PUSH_BACK) != 0)
        return 0
    _serve(st, d)
    _push(st.wq, st.node, d, priority, k, False)
    return _grant(st, d, now_us, 0)


@fast_jit
def notified(st: ServerState, lock: int, priority: int, count: int) -> int:
    """The switch queue of (lock, priority) drained: up to ``count`` PUSH_BACK rows."""
    d = hashmap.lookup(st.keys, st.values, lock)
    n = 0
    if d < 0:
        return 0
    while n < count and st.bq[d, priority, HEAD] >= 0:
        k = _pop(st.bq, st.node, d, priority)
        n = _emit(st, n, PUSH_BACK, 0, lock, k, FLAG_PUSH_BACK)
        _free_node(st, k)
    return n


@fast_jit
def expire(st: ServerState, server: int, now_us: int, lease_us: int) -> int:
    """Drop holders whose lease is over and grant what follows, lock by lock in the order
    the locks became served; ``cnt[CN_EXPIRED]`` counts the expired holders."""
    n = 0
    d = st.served[server, HEAD]
    while d >= 0:
        nxt = st.lk[d, LK_NEXT]
        prev = -1
        k = st.lk[d, LK_HOLD]
        while k >= 0:
            after = st.node[k, N_NEXT]
            if now_us - st.node[k, N_SINCE] >= lease_us:
                _unlink_holder(st, d, k, prev)
                st.cnt[CN_EXPIRED] += 1
            else:
                prev = k
            k = after
        n = _grant(st, d, now_us, n)
        d = nxt
    return n


class ArrayLockServer:
    """One server over :class:`ServerState`, with :class:`netlock.lockserver.LockServer`'s
    request API (for tests and tools; the engine calls the compiled functions)."""

    def __init__(self, priorities: int) -> None:
        self.state = new_server_state(1, priorities)

    @property
    def expired_total(self) -> int:
        return int(self.state.cnt[CN_EXPIRED])

    def _room(self) -> None:
        self.state = ensure_room(self.state, 2, 2, 0)

    def process(self, req: LockRequest, now_us: int) -> list[Action]:
        self._room()
        flags = FLAG_OVERFLOW * bool(req.overflow) + FLAG_PUSH_BACK * bool(req.push_back)
        n = process(self.state, 0, now_us, int(req.op), req.lock_id, int(req.mode), req.txn_id,
                    req.client_id, req.tenant, req.priority, req.timestamp_us, flags)
        return self._actions(n, Op(req.op))

    def notified(self, lock_id: int, priority: int, count: int) -> list[Action]:
        return self._actions(notified(self.state, lock_id, priority, count), Op.ACQUIRE)

    def expire(self, now_us: int, lease_us: int) -> list[Action]:
        self._room()
        return self._actions(expire(self.state, 0, now_us, lease_us), Op.ACQUIRE)

    def _actions(self, n: int, op: Op) -> list[Action]:
        out = []
        for row in self.state.act[:n].tolist():
            kind = ActionKind(row[A_KIND])
            req = LockRequest(op if kind == ActionKind.DROP else Op.ACQUIRE, Mode(row[A_MODE]),
                              row[A_LOCK], row[A_TXN], row[A_CLIENT], row[A_TENANT],
                              row[A_PRIORITY], row[A_TS],
                              overflow=bool(row[A_FLAGS] & FLAG_OVERFLOW),
                              push_back=bool(row[A_FLAGS] & FLAG_PUSH_BACK))
            out.append(Action(kind, req, reason=DropReason(row[A_REASON])))
        return out
