"""The lock servers' state: int64 arrays with named columns, for :mod:`.kernels`.

One :class:`ServerState` holds every lock server of a rack at once (a lock belongs to one
server, ``lk[d, LK_SERVER]``): :class:`netlock.lockserver.LockServer` owns a state with one
server, the fast engine one with all of its rack's servers. Kernels never allocate; their
callers make room first (:func:`has_room`, :func:`ensure_room`).

- ``keys``/``values``: the hash map lock id -> dense index ``d`` (:mod:`.hashmap`);
- ``lk[d]``: the lock's server, whether it is *served* (queued and granted here: on its
  server's list of served locks, in the order it became served), its holder counts and
  holder list, its flags (``FROZEN``, ``RESIDENT``, ``LATE``) and the planner's counters;
- ``wq[d, p]``, ``bq[d, p]``: the waiting queue and ``q2`` of priority class ``p``;
  ``lq[d, 0]``: requests held aside until the switch maps the lock (``LATE``); each is a
  (head, tail, length) of a linked list of ``node`` rows;
- ``deferred[d, p]``: a NOTIFY_SERVER count held back while the lock arrives from another
  server (-1: none), and its arrival sequence number;
- ``node[k]``: one request (waiting, buffered, held aside or holding), linked by ``N_NEXT``;
- ``servers[s]``: server ``s``'s list of served locks (head and tail);
- ``moves[m]``: lock-id ranges a server must not grant (``LEAVING`` or ``ARRIVING``);
- ``cnt``: scalar counters; ``act``: the action rows a kernel call writes (``A_*``).

A lock keeps its dense index for the state's lifetime, with the planner's counters, unless
the state recycles idle locks (``cnt[CN_RECYCLE]``, :func:`new_server_state`): then a lock
that is left with nothing (not served, no flag, nothing buffered, held aside or deferred, no
range moving) leaves the hash map and its row goes on a free list (``CN_FREE_LOCK``, linked by
``LK_NEXT``) for the next new lock, so the state stays as large as the locks in use rather than
every lock ever seen (the fast engine, which never reads the counters, on TPC-C's millions).

The hash map (compiled kernels) is imported where a state is made or grown, so that reading
the column counts (the memory estimate of ``netlock config check``) does not import numba.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

# lk[d, :] -------------------------------------------------------------------------------------
LK_ID, LK_SERVER, LK_SERVED, LK_PREV, LK_NEXT = range(5)
LK_SHARED, LK_EXCL = 5, 6  # shared / exclusive grants held (as the switch counts them)
LK_HOLD = 7  # first node of the holder list, -1 = none
LK_HOLDERS = 8  # holders on that list (one per (txn, client))
LK_FLAGS = 9
LK_REQUESTS = 10  # acquires served here since the counters were reset, for r_i
LK_PEAK = 11  # most holders + waiting requests seen, for c_i
N_LK = 12
FROZEN = 1  # moving into the switch: requests queue but are not granted
RESIDENT = 2  # the switch owns the lock: requests are buffered (q2)
LATE = 4  # handed over until mapped: plain acquires are held aside in ``lq``

# wq / bq / lq [d, p, :] -------------------------------------------------------------------------
Q_HEAD, Q_TAIL, Q_LEN = range(3)
N_Q = 3
QK_WAITING, QK_BUFFER, QK_LATE = range(3)  # which queue (wq, bq, lq) a kernel works on

# deferred[d, p, :] ------------------------------------------------------------------------------
DF_COUNT, DF_SEQ = range(2)

# node[k, :] -----------------------------------------------------------------------------------
N_NEXT, N_MODE, N_TXN, N_CLIENT, N_TENANT, N_PRIORITY, N_TS = range(7)
N_SINCE = 7  # holders: the grant time (us), where the lease starts
N_FLAGS = 8  # FLAG_* as the request was kept (as it arrived, or marked overflow once in q2)
N_NODE = 9

# servers[s, :] --------------------------------------------------------------------------------
SV_HEAD, SV_TAIL = range(2)
N_SV = 2

# moves[m, :] ----------------------------------------------------------------------------------
MV_SERVER, MV_LO, MV_HI, MV_KIND = range(4)
N_MV = 4
LEAVING = 1  # the range moves to another server: grant nothing until it is handed off
ARRIVING = 2  # the range arrives from another server: grant nothing, defer NOTIFY_SERVER

# cnt[:] ---------------------------------------------------------------------------------------
CN_DENSE, CN_FREE, CN_NFREE, CN_EXPIRED, CN_MOVES, CN_SEQ, CN_RESENT = range(7)
CN_RECYCLE = 7  # 1: idle locks give their dense rows back (module docstring)
CN_FREE_LOCK = 8  # first recycled dense row, -1 = none
N_CNT = 9

# act[r, :]: one action about one request ------------------------------------------------------
A_KIND, A_REASON, A_LOCK, A_MODE, A_TXN, A_CLIENT, A_TENANT, A_PRIORITY, A_TS, A_FLAGS = range(10)
N_ACT = 10
FLAG_OVERFLOW = 1
FLAG_PUSH_BACK = 2


class ServerState(NamedTuple):
    """The lock servers' arrays (see the module docstring)."""

    keys: np.ndarray
    values: np.ndarray
    lk: np.ndarray
    wq: np.ndarray
    bq: np.ndarray
    lq: np.ndarray
    deferred: np.ndarray
    node: np.ndarray
    servers: np.ndarray
    moves: np.ndarray
    cnt: np.ndarray
    act: np.ndarray


def _queues(locks: int, classes: int) -> np.ndarray:
    q = np.full((locks, classes, N_Q), -1, dtype=np.int64)
    q[:, :, Q_LEN] = 0
    return q


def _deferred(locks: int, classes: int) -> np.ndarray:
    d = np.zeros((locks, classes, 2), dtype=np.int64)
    d[:, :, DF_COUNT] = -1
    return d


def _free_nodes(first: int, count: int, then: int) -> np.ndarray:
    """``count`` free node rows numbered from ``first``, the last linked to ``then``."""
    node = np.zeros((count, N_NODE), dtype=np.int64)
    node[:, N_NEXT] = np.arange(first + 1, first + count + 1)
    node[-1, N_NEXT] = then
    return node


def _servers(count: int) -> np.ndarray:
    servers = np.zeros((max(count, 1), N_SV), dtype=np.int64)
    servers[:, [SV_HEAD, SV_TAIL]] = -1
    return servers


def new_server_state(servers: int, classes: int, locks: int = 1024, nodes: int = 4096,
                     actions: int = 4096, recycle: bool = False) -> ServerState:
    """Empty state for ``servers`` servers and priority classes ``0 .. classes - 1``;
    ``recycle``: idle locks give their dense rows back, and their counters with them (module
    docstring)."""
    from netlock.lockserver import hashmap

    keys, values = hashmap.new_map(4 * locks)
    cnt = np.zeros(N_CNT, dtype=np.int64)
    cnt[CN_NFREE] = nodes
    cnt[CN_RECYCLE] = int(recycle)
    cnt[CN_FREE_LOCK] = -1
    return ServerState(keys=keys, values=values, lk=np.zeros((locks, N_LK), dtype=np.int64),
                       wq=_queues(locks, classes), bq=_queues(locks, classes),
                       lq=_queues(locks, 1), deferred=_deferred(locks, classes),
                       node=_free_nodes(0, nodes, -1), servers=_servers(servers),
                       moves=np.zeros((4, N_MV), dtype=np.int64), cnt=cnt,
                       act=np.zeros((max(actions, nodes), N_ACT), dtype=np.int64))


def has_room(st: ServerState, locks: int, nodes: int, classes: int) -> bool:
    """Whether ``st`` has room for ``locks`` more locks, ``nodes`` more requests and priority
    classes ``0 .. classes - 1`` (the check before every kernel call from Python)."""
    dense = int(st.cnt[CN_DENSE]) + locks
    return (st.cnt[CN_NFREE] >= nodes and dense <= len(st.lk) and 4 * dense < len(st.keys)
            and classes <= st.wq.shape[1])


def packets_with_room(st: ServerState) -> int:
    """How many packets ``st`` has room for, each taking at most one more lock and one more
    request (a request or notification reaching a server): :func:`has_room`, once for that
    many kernel calls, in the classes ``st`` has."""
    dense = int(st.cnt[CN_DENSE])
    return min(int(st.cnt[CN_NFREE]), len(st.lk) - dense, (len(st.keys) - 1) // 4 - dense)


def ensure_room(st: ServerState, locks: int, nodes: int, actions: int,
                classes: int = 0) -> ServerState:
    """``st``, or a grown copy with room for ``locks`` more locks, ``nodes`` more free
    request nodes, ``actions`` action rows (at least one per node: a call's actions are
    about distinct requests) and priority classes ``0 .. classes - 1``."""
    from netlock.lockserver import hashmap

    dense = int(st.cnt[CN_DENSE])
    keys, values = hashmap.grown(st.keys, st.values, dense + locks)
    lk, wq, bq, lq, deferred = st.lk, st.wq, st.bq, st.lq, st.deferred
    if classes > wq.shape[1]:
        more = classes - wq.shape[1]
        wq = np.concatenate([wq, _queues(len(lk), more)], axis=1)
        bq = np.concatenate([bq, _queues(len(lk), more)], axis=1)
        deferred = np.concatenate([deferred, _deferred(len(lk), more)], axis=1)
    if dense + locks > len(lk):
        size = max(2 * len(lk), dense + locks)
        lk = np.concatenate([lk, np.zeros((size - len(lk), N_LK), dtype=np.int64)])
        wq = np.concatenate([wq, _queues(size - len(wq), wq.shape[1])])
        bq = np.concatenate([bq, _queues(size - len(bq), bq.shape[1])])
        lq = np.concatenate([lq, _queues(size - len(lq), 1)])
        deferred = np.concatenate([deferred, _deferred(size - len(deferred),
                                                       deferred.shape[1])])
    node, cnt = st.node, st.cnt
    if cnt[CN_NFREE] < nodes:
        old = len(node)
        more = max(old, nodes)
        node = np.concatenate([node, _free_nodes(old, more, cnt[CN_FREE] if cnt[CN_NFREE] > 0
                                                 else -1)])
        cnt[CN_FREE] = old
        cnt[CN_NFREE] += more
    rows = max(actions, len(node))
    act = st.act if len(st.act) >= rows else np.zeros((rows, N_ACT), dtype=np.int64)
    return st._replace(keys=keys, values=values, lk=lk, wq=wq, bq=bq, lq=lq,
                       deferred=deferred, node=node, act=act)


def ensure_moves(st: ServerState, moves: int) -> ServerState:
    """``st``, or a copy with room for ``moves`` more moving ranges."""
    used = int(st.cnt[CN_MOVES])
    if used + moves <= len(st.moves):
        return st
    grown = np.zeros((max(2 * len(st.moves), used + moves), N_MV), dtype=np.int64)
    grown[:used] = st.moves[:used]
    return st._replace(moves=grown)


def forget_requests(st: ServerState) -> None:
    """Lose every request, flag and move (a failed server), keeping each lock's
    dense index and the planner's counters (acquires and peaks are measured across it)."""
    dense = int(st.cnt[CN_DENSE])
    st.lk[:, LK_SERVED:LK_REQUESTS] = 0
    st.lk[:dense, LK_HOLD] = -1
    for q in (st.wq, st.bq, st.lq):
        q[:] = -1
        q[:, :, Q_LEN] = 0
    st.deferred[:, :, DF_COUNT] = -1
    st.node[:] = _free_nodes(0, len(st.node), -1)
    st.servers[:] = _servers(len(st.servers))
    st.cnt[[CN_FREE, CN_NFREE, CN_MOVES]] = 0, len(st.node), 0
