"""``LockServer``: one lock server's state behind a readable API and its control plane.

The request rules live in :mod:`netlock.lockserver.kernels`; this class owns a
:class:`netlock.lockserver.server_state.ServerState` for one server, calls the kernels for every
request and turns their action rows into :class:`netlock.packets.Action` values. Its
control-plane operations (moving locks into and out of the switch and between servers,
failure, the planner's counters, inspection) work on the same arrays.

A server plays two roles (paper section 4.3):

- for locks **not in the switch** it queues and grants requests itself, FIFO per priority
  class, highest class first, with the same compatibility rule as the switch
  (:mod:`netlock.dataplane.compatibility`); its memory is unbounded (the arrays grow);
- for **switch-resident** locks it only buffers overflowed requests in ``q2`` per
  (lock, priority) and never grants them; a NOTIFY_SERVER(count) from the switch gets up
  to ``count`` PUSH_BACK actions from the head of ``q2``.

Moving a lock keeps one FIFO order across switch and server. Out of the switch: the switch
pauses and drains the lock, removes it, and :meth:`LockServer.take_over` turns ``q2`` into
the lock's served queue. Into the switch: :meth:`LockServer.begin_move_in` stops granting,
:meth:`LockServer.ready_to_move_in` says when the holders are gone, and
:meth:`LockServer.hand_over` keeps the waiting requests as ``q2`` and returns their counts,
which the switch installs as ``server_held``. Times are integer microseconds (us).

On a real switch the lock-table entry is added some time after :meth:`LockServer.hand_over`,
and requests the switch forwards meanwhile (not marked overflow) reach the server uncounted by
``server_held``. ``hand_over(..., until_mapped=True)`` holds them aside, and
:meth:`LockServer.mapped` returns them once the entry exists, as PUSH_BACK actions whose request
is *not* marked push-back: the switch takes each as a new acquire and counts it (it is charged
to its tenant's quota a second time).

Moving a range of lock ids to another server (a new partition) follows the same pattern:
the old server stops granting the range (:meth:`LockServer.begin_move_out`) until its holders
are gone (:meth:`LockServer.holders_in`), the new one queues without granting
(:meth:`LockServer.begin_arrival`, deferring NOTIFY_SERVER), the partition changes, and
:meth:`LockServer.hand_off` / :meth:`LockServer.adopt` move queues, buffers and resident
locks, the old server's requests first. The old server must get nothing for the range after
``hand_off``: the control plane waits longer than a switch-to-server delivery before it.

For the planner's r_i / c_i a server counts, per lock it serves, the acquires it receives
and the peak of holders plus waiting requests (:meth:`LockServer.counters`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache

import numpy as np

from netlock.lockserver import kernels, store
from netlock.lockserver._server_jit import entry_point
from netlock.lockserver.action_rows import actions_of, request_flags
from netlock.lockserver.hashmap import lookup
from netlock.lockserver.server_state import (
    ARRIVING,
    CN_DENSE,
    CN_EXPIRED,
    CN_MOVES,
    CN_RESENT,
    DF_COUNT,
    DF_SEQ,
    FROZEN,
    LATE,
    LEAVING,
    LK_FLAGS,
    LK_HOLD,
    LK_HOLDERS,
    LK_ID,
    LK_NEXT,
    LK_PEAK,
    LK_REQUESTS,
    LK_SERVED,
    MV_HI,
    MV_KIND,
    MV_LO,
    MV_SERVER,
    Q_HEAD,
    Q_LEN,
    QK_BUFFER,
    QK_LATE,
    QK_WAITING,
    RESIDENT,
    SV_HEAD,
    ensure_moves,
    ensure_room,
    forget_requests,
    has_room,
    new_server_state,
    packets_with_room,
)
from netlock.packets import Action, ActionKind, LockRequest

SERVER = 0
"""A :class:`LockServer` is server 0 of its own state."""

Range = tuple[int, int]


@dataclass
class Handoff:
    """A server's state for a range of lock ids, on its way to the range's new server:
    waiting requests per lock (in served order) and class, ``q2`` per (lock, class), the
    switch-resident locks and the requests held aside until mapped."""

    waiting: dict[int, dict[int, deque[LockRequest]]] = field(default_factory=dict)
    buffers: dict[tuple[int, int], deque[LockRequest]] = field(default_factory=dict)
    resident: set[int] = field(default_factory=set)
    late: dict[int, list[LockRequest]] = field(default_factory=dict)


class LockServer:
    """One lock server: its request rules are :mod:`netlock.lockserver.kernels`.

    ``priorities`` only sizes the arrays at first: they grow to any class a request names.
    """

    def __init__(self, priorities: int = 1) -> None:
        self.state = new_server_state(1, max(priorities, 1), locks=64, nodes=256, actions=256)
        self._spare = 0
        """Packets the state still has room for (:meth:`_room_per_packet`)."""

    # --- requests ----------------------------------------------------------------------------

    def process(self, req: LockRequest, now_us: int) -> list[Action]:
        """Handle a request forwarded by the switch (TO_SERVER, OVERFLOW or a bounce)."""
        return self._actions(self.process_rows(
            int(now_us), int(req.op), req.lock_id, int(req.mode), req.txn_id, req.client_id,
            req.tenant, req.priority, req.timestamp_us, request_flags(req)))

    def process_rows(self, now_us: int, op: int, lock_id: int, mode: int, txn_id: int,
                     client_id: int, tenant: int, priority: int, timestamp_us: int,
                     flags: int) -> int:
        """:meth:`process` of a request given as ints (``flags``: ``FLAG_*``), for callers
        that read its action rows themselves: their count, in ``state.act``."""
        self._room_per_packet(priority + 1)
        return _per_packet("process", 11)(self.state, SERVER, now_us, op, lock_id, mode,
                                          txn_id, client_id, tenant, priority, timestamp_us,
                                          flags)

    def notified(self, lock_id: int, priority: int, count: int) -> list[Action]:
        """The switch queue of (lock, priority) drained: push back up to ``count`` requests."""
        return self._actions(self.notified_rows(lock_id, priority, count))

    def notified_rows(self, lock_id: int, priority: int, count: int) -> int:
        """:meth:`notified`, as the count of action rows it wrote to ``state.act``."""
        self._room_per_packet(priority + 1)
        return _per_packet("notified", 4)(self.state, SERVER, lock_id, priority, count)

    def handle(self, action: Action, now_us: int) -> list[Action]:
        """Dispatch a switch action addressed to this server."""
        if action.kind == ActionKind.NOTIFY_SERVER:
            return self.notified(action.request.lock_id, action.request.priority, action.count)
        if action.kind in (ActionKind.TO_SERVER, ActionKind.OVERFLOW):
            return self.process(action.request, now_us)
        raise ValueError(f"action {action.kind.name} is not addressed to a lock server")

    def expire(self, now_us: int, lease_us: int) -> list[Action]:
        """Drop holders whose lease (``lease_us``) is over and grant what follows."""
        return self._actions(kernels.expire(self.state, SERVER, int(now_us), int(lease_us)))

    # --- moving locks --------------------------------------------------------------------------

    def take_over(self, lock_id: int, now_us: int) -> list[Action]:
        """The switch gave ``lock_id`` up (drained and removed): serve its buffered requests."""
        self._room()
        return self._actions(kernels.take_over(self.state, SERVER, lock_id, int(now_us)))

    def begin_move_in(self, lock_id: int) -> None:
        """Stop granting ``lock_id``: it is about to move into the switch."""
        self._room()
        d = store.dense_index(self.state, lock_id, SERVER)
        store.serve(self.state, d)
        self.state.lk[d, LK_FLAGS] |= FROZEN

    def ready_to_move_in(self, lock_id: int) -> bool:
        """Whether ``lock_id`` has no holders here (it may move into the switch)."""
        return self._holders_of(lock_id) < 0

    def hand_over(self, lock_id: int, classes: Iterable[int], priorities: int, *,
                  until_mapped: bool = False) -> dict[int, int]:
        """Keep ``lock_id``'s waiting requests as ``q2`` for the switch; q2 length per class.

        ``classes`` are the priority classes the switch gives the lock (of ``priorities``);
        requests of other classes go to the class the switch would use for them.
        ``until_mapped``: the switch's table entry comes later; hold aside what arrives
        meanwhile (see the module docstring) until :meth:`mapped`.
        """
        classes = list(classes)
        if self._holders_of(lock_id) >= 0:
            raise ValueError(f"lock {lock_id}: cannot hand over while it has holders")
        mask = sum(1 << c for c in classes)
        if mask == 0:
            raise ValueError(f"lock {lock_id}: hand_over needs at least one class")
        self._room(classes=max(classes) + 1)
        st = self.state
        d = kernels.hand_over(st, SERVER, lock_id, mask, priorities)
        if until_mapped:
            st.lk[d, LK_FLAGS] |= LATE
        return {c: int(st.bq[d, c, Q_LEN]) for c in classes}

    def mapped(self, lock_id: int) -> list[Action]:
        """The switch's table entry for ``lock_id`` exists: re-send what was held aside."""
        return self._actions(kernels.mapped(self.state, lock_id))

    # --- moving lock ranges between servers ---------------------------------------------------

    def begin_move_out(self, lo: int, hi: int) -> None:
        """Stop granting locks ``lo..hi``: they are moving to another server."""
        self._add_move(lo, hi, LEAVING)

    def holders_in(self, lo: int, hi: int) -> int:
        """Holders of locks ``lo..hi`` at this server."""
        lk = self._locks()
        inside = (lk[:, LK_ID] >= lo) & (lk[:, LK_ID] <= hi) & (lk[:, LK_SERVED] == 1)
        return int(lk[inside, LK_HOLDERS].sum())

    def cancel_move_out(self, lo: int, hi: int, now_us: int) -> list[Action]:
        """The move of ``lo..hi`` is called off: grant them again."""
        self._remove_move(lo, hi, LEAVING)
        return self._actions(kernels.grant_range(self.state, SERVER, lo, hi, int(now_us), 0))

    def hand_off(self, lo: int, hi: int) -> Handoff:
        """Give up locks ``lo..hi`` (no holders left): their state, to :meth:`adopt`."""
        st = self.state
        served = [d for d in self._served() if lo <= st.lk[d, LK_ID] <= hi]
        for d in served:
            if st.lk[d, LK_HOLD] >= 0:
                raise ValueError(f"lock {st.lk[d, LK_ID]}: cannot hand off while it has holders")
        out = Handoff()
        for d in served:
            out.waiting[int(st.lk[d, LK_ID])] = {
                p: deque(self._take(QK_WAITING, d, p)) for p in range(st.wq.shape[1])
                if st.wq[d, p, Q_LEN]}
            store.unserve(st, d)
        lk = self._locks()
        for d in np.flatnonzero((lk[:, LK_ID] >= lo) & (lk[:, LK_ID] <= hi)).tolist():
            lock_id = int(lk[d, LK_ID])
            for p in np.flatnonzero(st.bq[d, :, Q_LEN]).tolist():
                out.buffers[(lock_id, p)] = deque(self._take(QK_BUFFER, d, p))
            if lk[d, LK_FLAGS] & RESIDENT:
                out.resident.add(lock_id)
            if lk[d, LK_FLAGS] & LATE:
                out.late[lock_id] = self._take(QK_LATE, d, 0)
            lk[d, LK_FLAGS] &= ~(RESIDENT | LATE)
        self._remove_move(lo, hi, LEAVING)
        return out

    def begin_arrival(self, lo: int, hi: int) -> None:
        """Locks ``lo..hi`` are moving here: queue their requests, grant nothing, defer
        NOTIFY_SERVER, until :meth:`adopt` brings the old server's state."""
        self._add_move(lo, hi, ARRIVING)

    def adopt(self, handoff: Handoff, lo: int, hi: int, now_us: int) -> list[Action]:
        """Take over locks ``lo..hi`` with the old server's ``handoff`` ahead of what arrived
        here meanwhile; grant and answer deferred NOTIFY_SERVER."""
        for lock_id, queues in handoff.waiting.items():
            d = self._dense(lock_id)
            store.serve(self.state, d)
            for priority, queue in queues.items():
                self._put_ahead(QK_WAITING, lock_id, priority, queue)
        for (lock_id, priority), buf in handoff.buffers.items():
            self._put_ahead(QK_BUFFER, lock_id, priority, buf)
        for lock_id in handoff.resident:
            d = self._dense(lock_id)
            self.state.lk[d, LK_FLAGS] |= RESIDENT
        for lock_id, late in handoff.late.items():
            self._put_ahead(QK_LATE, lock_id, 0, late)
            d = self._dense(lock_id)
            self.state.lk[d, LK_FLAGS] |= LATE
        return self.cancel_arrival(lo, hi, now_us)

    def cancel_arrival(self, lo: int, hi: int, now_us: int) -> list[Action]:
        """Stop holding back locks ``lo..hi`` (adopted, or the move was called off)."""
        self._remove_move(lo, hi, ARRIVING)
        lk = self._locks()
        deferred = self.state.deferred[:len(lk)]
        inside = (lk[:, LK_ID] >= lo) & (lk[:, LK_ID] <= hi)
        ds, ps = np.nonzero((deferred[:, :, DF_COUNT] >= 0) & inside[:, None])
        order = np.argsort(deferred[ds, ps, DF_SEQ], kind="stable")
        actions: list[Action] = []
        for d, p in zip(ds[order].tolist(), ps[order].tolist(), strict=True):
            deferred = self.state.deferred  # answering one may grow the arrays
            count = int(deferred[d, p, DF_COUNT])
            deferred[d, p, DF_COUNT] = -1
            actions += self.notified(int(self.state.lk[d, LK_ID]), p, count)
        return actions + self._actions(kernels.grant_range(self.state, SERVER, lo, hi,
                                                           int(now_us), 0))

    # --- failure recovery ----------------------------------------------------------------------

    def fail(self) -> None:
        """Lose all state (the lock's partition is reassigned to another server)."""
        forget_requests(self.state)

    def surrender(self, lock_ids: Iterable[int]) -> list[LockRequest]:
        """The switch that owned ``lock_ids`` is gone: they are no longer resident; their
        ``q2`` (by lock, then class) and then what was held aside (by lock) come back as
        plain acquires, oldest first, for whoever serves the locks now."""
        st = self.state
        wanted = set(lock_ids)
        lk = self._locks()
        mine = sorted((int(lk[d, LK_ID]), d) for d in range(len(lk)) if lk[d, LK_ID] in wanted)
        out = [LockRequest(r.op, r.mode, r.lock_id, r.txn_id, r.client_id, r.tenant,
                           r.priority, r.timestamp_us)
               for _, d in mine for p in np.flatnonzero(st.bq[d, :, Q_LEN]).tolist()
               for r in self._take(QK_BUFFER, d, p)]
        for _, d in mine:
            if lk[d, LK_FLAGS] & LATE:
                out += self._take(QK_LATE, d, 0)
            lk[d, LK_FLAGS] &= ~(RESIDENT | LATE)
        return out

    # --- inspection ----------------------------------------------------------------------------

    @property
    def expired_total(self) -> int:
        """Holders dropped by lease sweeps, ever."""
        return int(self.state.cnt[CN_EXPIRED])

    @property
    def resent_total(self) -> int:
        """Requests held aside and re-sent by :meth:`mapped`, ever."""
        return int(self.state.cnt[CN_RESENT])

    @property
    def resident(self) -> frozenset[int]:
        """The locks this server knows the switch owns (it buffers their requests)."""
        lk = self._locks()
        return frozenset(lk[(lk[:, LK_FLAGS] & RESIDENT) != 0, LK_ID].tolist())

    def is_resident(self, lock_id: int) -> bool:
        """Whether the switch owns ``lock_id`` (one lookup, unlike :attr:`resident`)."""
        d = lookup(self.state.keys, self.state.values, lock_id)
        return d >= 0 and bool(self.state.lk[d, LK_FLAGS] & RESIDENT)

    @property
    def leaving(self) -> list[Range]:
        """Ranges moving out (:meth:`begin_move_out`), in the order they began."""
        return self._moves(LEAVING)

    @property
    def arriving(self) -> list[Range]:
        """Ranges moving in (:meth:`begin_arrival`), in the order they began."""
        return self._moves(ARRIVING)

    def served_locks(self) -> list[int]:
        """The locks this server queues and grants itself, in the order they became served."""
        return [int(self.state.lk[d, LK_ID]) for d in self._served()]

    def buffer_keys(self) -> list[tuple[int, int]]:
        """The (lock, class) pairs with a non-empty ``q2``, sorted."""
        lk = self._locks()
        ds, ps = np.nonzero(self.state.bq[:len(lk), :, Q_LEN])
        return sorted(zip(lk[ds, LK_ID].tolist(), ps.tolist(), strict=True))

    def buffered(self, lock_id: int, priority: int) -> list[LockRequest]:
        """``q2`` of (lock, priority), head first."""
        d = lookup(self.state.keys, self.state.values, lock_id)
        if d < 0 or priority >= self.state.bq.shape[1]:
            return []
        return self._list(self.state.bq[d, priority, Q_HEAD], lock_id)

    def waiting(self, lock_id: int) -> dict[int, list[LockRequest]]:
        """The requests waiting at a served lock, per class, head first."""
        d = lookup(self.state.keys, self.state.values, lock_id)
        if d < 0:
            return {}
        wq = self.state.wq
        return {p: self._list(wq[d, p, Q_HEAD], lock_id) for p in range(wq.shape[1])
                if wq[d, p, Q_LEN]}

    def holders(self, lock_id: int) -> list[LockRequest]:
        """The requests holding ``lock_id`` here, in the order they were first granted."""
        return self._list(self._holders_of(lock_id), lock_id)[::-1]

    def is_frozen(self, lock_id: int) -> bool:
        """Whether ``lock_id`` is held back for a move into the switch."""
        d = lookup(self.state.keys, self.state.values, lock_id)
        return d >= 0 and bool(self.state.lk[d, LK_FLAGS] & FROZEN)

    def counters(self) -> dict[str, np.ndarray]:
        """Per lock served here (sorted by id): acquires received, peak holders + waiting."""
        lk = self._locks()
        rows = lk[lk[:, LK_REQUESTS] > 0]
        rows = rows[np.argsort(rows[:, LK_ID], kind="stable")]
        return {"lock_id": rows[:, LK_ID].copy(), "requests": rows[:, LK_REQUESTS].copy(),
                "peak_occupancy": rows[:, LK_PEAK].copy()}

    def reset_counters(self) -> None:
        """Start a new measurement window (peaks restart from the current occupancy)."""
        lk = self._locks()
        waiting = self.state.wq[:len(lk), :, Q_LEN].sum(axis=1)
        lk[:, LK_REQUESTS] = 0
        lk[:, LK_PEAK] = np.where(lk[:, LK_SERVED] == 1, lk[:, LK_HOLDERS] + waiting, 0)

    # --- internals -----------------------------------------------------------------------------

    def _room(self, locks: int = 1, nodes: int = 1, classes: int = 1) -> None:
        if classes < 1:
            raise ValueError(f"priority class {classes - 1}: must be >= 0")
        if not has_room(self.state, locks, nodes, classes):
            self.state = ensure_room(self.state, locks, nodes, 0, classes)
        self._spare = 0

    def _room_per_packet(self, classes: int) -> None:
        """:meth:`_room` for one packet (:func:`packets_with_room`), checked once for as
        many packets as there is room for: the simulator calls it per request."""
        if self._spare > 0 and classes <= self.state.wq.shape[1]:
            self._spare -= 1
            return
        self._room(classes=classes)
        self._spare = packets_with_room(self.state) - 1

    def _dense(self, lock_id: int) -> int:
        self._room()
        return store.dense_index(self.state, lock_id, SERVER)

    def _locks(self) -> np.ndarray:
        """The rows of ``lk`` in use (a view)."""
        return self.state.lk[:int(self.state.cnt[CN_DENSE])]

    def _served(self) -> list[int]:
        out = []
        d = int(self.state.servers[SERVER, SV_HEAD])
        while d >= 0:
            out.append(d)
            d = int(self.state.lk[d, LK_NEXT])
        return out

    def _holders_of(self, lock_id: int) -> int:
        """The first holder node of ``lock_id``, -1 when none."""
        d = lookup(self.state.keys, self.state.values, lock_id)
        return int(self.state.lk[d, LK_HOLD]) if d >= 0 else -1

    def _moves(self, kind: int) -> list[Range]:
        mv = self.state.moves[:int(self.state.cnt[CN_MOVES])]
        return [(lo, hi) for _, lo, hi, k in mv.tolist() if k == kind]

    def _add_move(self, lo: int, hi: int, kind: int) -> None:
        if (lo, hi) not in self._moves(kind):
            self.state = ensure_moves(self.state, 1)
            m = int(self.state.cnt[CN_MOVES])
            self.state.moves[m, [MV_SERVER, MV_LO, MV_HI, MV_KIND]] = SERVER, lo, hi, kind
            self.state.cnt[CN_MOVES] = m + 1

    def _remove_move(self, lo: int, hi: int, kind: int) -> None:
        used = int(self.state.cnt[CN_MOVES])
        mv = self.state.moves
        rows = mv[:used].tolist()
        if [SERVER, lo, hi, kind] in rows:
            kept = [row for row in rows if row != [SERVER, lo, hi, kind]]
            if kept:
                mv[:len(kept)] = kept
            self.state.cnt[CN_MOVES] = len(kept)

    def _put_ahead(self, which: int, lock_id: int, priority: int,
                   requests: Iterable[LockRequest]) -> None:
        """Put ``requests`` ahead of queue ``which`` of (lock, priority), in their order."""
        requests = list(requests)
        self._room(nodes=len(requests), classes=priority + 1)
        st = self.state
        d = store.dense_index(st, lock_id, SERVER)
        q = (st.wq, st.bq, st.lq)[which]
        for r in reversed(requests):
            k = store.new_node(st, int(r.mode), r.txn_id, r.client_id, r.tenant, r.priority,
                               r.timestamp_us, request_flags(r))
            store.push(q, st.node, d, priority, k, True)

    def _take(self, which: int, d: int, p: int) -> list[LockRequest]:
        """Empty queue ``which`` of (d, p) into requests, head first."""
        return self._requests(store.take_queue(self.state, which, d, p, 0))

    def _list(self, k: int, lock_id: int) -> list[LockRequest]:
        """The requests of the node list from ``k`` (the state is unchanged)."""
        return self._requests(store.emit_chain(self.state, k, lock_id, 0, False))

    def _requests(self, n: int) -> list[LockRequest]:
        return [a.request for a in self._actions(n)]

    def _actions(self, n: int) -> list[Action]:
        return actions_of(self.state, n)


@cache
def _per_packet(name: str, ints: int) -> Callable[..., int]:
    """The kernel ``name`` (:func:`kernels.process`, :func:`kernels.notified`) for a
    ``ServerState`` and ``ints`` ints, without type dispatch (every packet a server takes
    passes through one: :func:`entry_point` says why)."""
    return entry_point(getattr(kernels, name),
                       new_server_state(1, 1, locks=1, nodes=1, actions=1), *([0] * ints))
