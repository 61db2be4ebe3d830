"""NetLock's switch data plane (Algorithm 2 with overflow, priorities, quotas, leases).

The rules are written once here, as kernels over the arrays of :mod:`netlock.dataplane.registers`.
A kernel processes one packet, writes its outcomes as rows of ``out`` (columns ``O_*``) and
returns the row count; ``ctl[C_PASSES]`` then holds the pipeline passes it took.

Passes. Every register access goes through the accessors below, which record
``(pass, register array, index)`` in the access trace when the caller passes one
(``trace``, see :data:`Trace`). A pass may touch each
register array at one index only (a read-modify-write of one cell); more work resubmits
the packet, which starts a new pass:

- acquire: one pass (enqueue, and grant when nothing waits ahead and the holders allow);
- release: one pass dequeues the head; if a request then waits and no exclusive holder
  remains, each resubmit pass reads the first waiting request and grants it, until one
  cannot be granted (that read costs its pass) or nothing waits. If nothing waits but the
  queue is not empty, one resubmit pass reads the new head, as Algorithm 2 does. So a
  release that empties the queue takes 1 pass, S->S, S->X and X->X take 2, and X->S
  granting a run of k shared requests takes k + 1, plus 1 when a waiting exclusive ends it;
- a push-back that clears a class's server backlog may let lower classes proceed, so it
  resubmits the same way.

Queues. Lock ``i`` owns, per priority class ``c``, the circular region
``[left, right]`` of the shared queue. The granted requests of a region are always its
first ``R_GRANTED`` entries. A region with a waiting (ungranted) request, or with requests
buffered at the server (``R_SERVER_HELD`` > 0), blocks every lower class of the lock.
"""

from __future__ import annotations

import numpy as np

from netlock.dataplane._kernel_jit import kernel, kernel_inline
from netlock.dataplane.compatibility import compatible, effective_class
from netlock.dataplane.registers import (
    C_EXPIRED,
    C_HEADER,
    C_LOCK_ROWS,
    C_PASS,
    C_PASSES,
    C_QUOTA_POLICY,
    C_RELEASE_CHECK,
    C_TRACE_FULL,
    C_TRACE_LEN,
    L_CLASSES,
    L_EXCLUSIVE,
    L_LOCK_ID,
    L_PAUSED,
    L_REQUESTS,
    L_SHARED,
    LOCK_COL_REGISTER,
    N_GLOBAL_REGISTERS,
    N_REGION_REGISTERS,
    O_CLIENT,
    O_COUNT,
    O_KIND,
    O_LOCK,
    O_MODE,
    O_PRIORITY,
    O_REASON,
    O_SELF,
    O_SLOT,
    O_TENANT,
    O_TIMESTAMP,
    O_TXN,
    QUOTA_DEFER,
    R_COUNT,
    R_GRANTED,
    R_HEAD,
    R_LEFT,
    R_NOTIFIED,
    R_PEAK,
    R_RELEASED,
    R_RIGHT,
    R_SERVER_HELD,
    R_TAIL,
    REG_TENANT_COUNTER,
    REGION_COL_REGISTER,
    RELEASE_CHECK_OWNER,
    S_ARRAY,
    S_CLIENT,
    S_GRANTED,
    S_MODE,
    S_TENANT,
    S_TIMESTAMP,
    S_TXN,
    SLOT_GRANTED,
    SLOT_RELEASED,
    SLOT_STATE_COLS,
    SLOT_WAITING,
    T_COUNT,
    T_QUOTA,
)
from netlock.packets import ACQUIRE, EXCLUSIVE, SHARED, ActionKind, DropReason

GRANT = int(ActionKind.GRANT)
TO_SERVER = int(ActionKind.TO_SERVER)
OVERFLOW = int(ActionKind.OVERFLOW)
NOTIFY_SERVER = int(ActionKind.NOTIFY_SERVER)
DROP = int(ActionKind.DROP)
DEFER = int(ActionKind.DEFER)
NO_REASON = int(DropReason.NONE)
STALE_RELEASE = int(DropReason.STALE_RELEASE)
QUOTA = int(DropReason.QUOTA)
MARKED = -2
""":func:`_dequeue_head`: a shared release behind the head, marked released."""

Trace = np.ndarray | None
"""A kernel's ``trace`` argument: ``ctl`` again, to record every register access in its
trace, or None. The trace costs a check per access, so callers that never read it pass
None: numba compiles a separate version for that type with the checks pruned away."""


# --- register accessors (each records its access in the trace) ------------------------------

@kernel
def _touch(trace: Trace, reg: int, index: int) -> None:
    if trace is None:
        return
    n = trace[C_TRACE_LEN]
    at = C_HEADER + 3 * n
    if at + 3 > trace.shape[0]:
        trace[C_TRACE_FULL] = 1
        return
    trace[at] = trace[C_PASS]
    trace[at + 1] = reg
    trace[at + 2] = index
    trace[C_TRACE_LEN] = n + 1


@kernel
def _new_pass(ctl: np.ndarray) -> None:
    ctl[C_PASS] += 1
    ctl[C_PASSES] += 1


@kernel
def _lget(locks: np.ndarray, trace: Trace, i: int, col: int) -> int:
    reg = LOCK_COL_REGISTER[col]
    if reg >= 0:
        _touch(trace, reg, i)
    return locks[i, col]


@kernel
def _lset(locks: np.ndarray, trace: Trace, i: int, col: int, value: int) -> None:
    reg = LOCK_COL_REGISTER[col]
    if reg >= 0:
        _touch(trace, reg, i)
    locks[i, col] = value


@kernel
def _rget(regions: np.ndarray, trace: Trace, c: int, i: int, col: int) -> int:
    _touch(trace, N_GLOBAL_REGISTERS + c * N_REGION_REGISTERS + REGION_COL_REGISTER[col], i)
    return regions[c, i, col]


@kernel
def _rset(regions: np.ndarray, trace: Trace, c: int, i: int, col: int, value: int) -> None:
    _touch(trace, N_GLOBAL_REGISTERS + c * N_REGION_REGISTERS + REGION_COL_REGISTER[col], i)
    regions[c, i, col] = value


@kernel
def _sget(slots: np.ndarray, trace: Trace, k: int, col: int) -> int:
    _touch(trace, -1 - slots[k, S_ARRAY], k)
    return slots[k, col]


@kernel
def _sset(slots: np.ndarray, trace: Trace, k: int, col: int, value: int) -> None:
    _touch(trace, -1 - slots[k, S_ARRAY], k)
    slots[k, col] = value


# --- helpers ---------------------------------------------------------------------------------

@kernel
def _emit(out: np.ndarray, n: int, kind: int, reason: int, count: int, is_self: int,
          lock_id: int, mode: int, txn: int, client: int, tenant: int, priority: int,
          timestamp_us: int) -> int:
    out[n, O_KIND] = kind
    out[n, O_REASON] = reason
    out[n, O_COUNT] = count
    out[n, O_SELF] = is_self
    out[n, O_LOCK] = lock_id
    out[n, O_MODE] = mode
    out[n, O_TXN] = txn
    out[n, O_CLIENT] = client
    out[n, O_TENANT] = tenant
    out[n, O_PRIORITY] = priority
    out[n, O_TIMESTAMP] = timestamp_us
    out[n, O_SLOT] = -1
    return n + 1


@kernel
def _emit_slot_grant(out: np.ndarray, n: int, slots: np.ndarray, trace: Trace, k: int,
                     lock_id: int, c: int) -> int:
    n = _emit(out, n, GRANT, NO_REASON, 0, 0, lock_id, _sget(slots, trace, k, S_MODE),
              _sget(slots, trace, k, S_TXN), _sget(slots, trace, k, S_CLIENT),
              _sget(slots, trace, k, S_TENANT), c, _sget(slots, trace, k, S_TIMESTAMP))
    out[n - 1, O_SLOT] = k
    return n


@kernel
def _advance(pos: int, left: int, right: int) -> int:
    return left if pos >= right else pos + 1


@kernel
def _hold(locks: np.ndarray, trace: Trace, i: int, mode: int, delta: int) -> None:
    col = L_EXCLUSIVE if mode == EXCLUSIVE else L_SHARED
    _lset(locks, trace, i, col, _lget(locks, trace, i, col) + delta)


@kernel
def _raise_peak(regions: np.ndarray, trace: Trace, c: int, i: int, occupancy: int) -> None:
    if occupancy > _rget(regions, trace, c, i, R_PEAK):
        _rset(regions, trace, c, i, R_PEAK, occupancy)


@kernel
def _admit_tenant(tenants: np.ndarray, trace: Trace, tenant: int) -> bool:
    """Charge one acquire to ``tenant``; False when over quota (tenants outside the table
    have no quota)."""
    if tenant < 0 or tenant >= tenants.shape[0]:
        return True
    _touch(trace, REG_TENANT_COUNTER, tenant)
    used = tenants[tenant, T_COUNT]
    quota = tenants[tenant, T_QUOTA]
    if quota > 0 and used >= quota:
        return False
    tenants[tenant, T_COUNT] = used + 1
    return True


@kernel
def _blocked_above(locks: np.ndarray, regions: np.ndarray, trace: Trace, i: int,
                   c: int) -> bool:
    """Whether a class higher than ``c`` has a waiting request or a server backlog."""
    mask = locks[i, L_CLASSES]
    for q in range(c):
        if (mask >> q) & 1 == 0:
            continue
        if (_rget(regions, trace, q, i, R_COUNT) > _rget(regions, trace, q, i, R_GRANTED)
                or _rget(regions, trace, q, i, R_SERVER_HELD) > 0):
            return True
    return False


@kernel
def _next_waiting_class(locks: np.ndarray, regions: np.ndarray, trace: Trace, i: int) -> int:
    """The class whose first waiting request is next in line, or -1 (none, or blocked by
    a server backlog in a higher class)."""
    mask = locks[i, L_CLASSES]
    for c in range(regions.shape[0]):
        if (mask >> c) & 1 == 0:
            continue
        if _rget(regions, trace, c, i, R_COUNT) > _rget(regions, trace, c, i, R_GRANTED):
            return c
        if _rget(regions, trace, c, i, R_SERVER_HELD) > 0:
            return -1
    return -1


@kernel
def _notify_if_idle(locks: np.ndarray, regions: np.ndarray, trace: Trace, out: np.ndarray,
                    n: int, i: int, lock_id: int, c: int) -> int:
    """NOTIFY_SERVER once when region (i, c) is empty, unpaused and has a server backlog."""
    if (_rget(regions, trace, c, i, R_COUNT) == 0 and _rget(regions, trace, c, i, R_SERVER_HELD) > 0
            and _rget(regions, trace, c, i, R_NOTIFIED) == 0
            and _lget(locks, trace, i, L_PAUSED) == 0):
        _rset(regions, trace, c, i, R_NOTIFIED, 1)
        free = _rget(regions, trace, c, i, R_RIGHT) - _rget(regions, trace, c, i, R_LEFT) + 1
        n = _emit(out, n, NOTIFY_SERVER, NO_REASON, free, 0, lock_id, SHARED, 0, 0, 0, c, 0)
    return n


# --- pipeline passes ---------------------------------------------------------------------------

@kernel_inline
def _grant_waiting(locks: np.ndarray, regions: np.ndarray, slots: np.ndarray, ctl: np.ndarray,
                   trace: Trace, out: np.ndarray, n: int, i: int, lock_id: int,
                   now_us: int) -> int:
    """Resubmit passes: grant waiting requests in order until one cannot be granted."""
    c = _next_waiting_class(locks, regions, trace, i)
    while c >= 0 and _lget(locks, trace, i, L_EXCLUSIVE) == 0:
        _new_pass(ctl)
        left = _rget(regions, trace, c, i, R_LEFT)
        width = _rget(regions, trace, c, i, R_RIGHT) - left + 1
        granted = _rget(regions, trace, c, i, R_GRANTED)
        k = left + (_rget(regions, trace, c, i, R_HEAD) - left + granted) % width
        mode = _sget(slots, trace, k, S_MODE)
        if not compatible(mode, _lget(locks, trace, i, L_SHARED),
                          _lget(locks, trace, i, L_EXCLUSIVE)):
            break
        _sset(slots, trace, k, S_GRANTED, SLOT_GRANTED)
        _sset(slots, trace, k, S_TIMESTAMP, now_us)
        _rset(regions, trace, c, i, R_GRANTED, granted + 1)
        _hold(locks, trace, i, mode, 1)
        n = _emit_slot_grant(out, n, slots, trace, k, lock_id, c)
        if mode == EXCLUSIVE:
            break
        c = _next_waiting_class(locks, regions, trace, i)
    return n


@kernel
def _owner_release(locks: np.ndarray, regions: np.ndarray, slots: np.ndarray, trace: Trace,
                   i: int, c: int, mode: int, txn: int, client: int, slot: int) -> int:
    """The owner check of a release that names its grant's ``slot``: ``slot`` when it is
    the region's head (to dequeue), MARKED when it was a shared holder behind the head (now
    marked released and its holder count dropped; it is dequeued when it reaches the
    head), -1 when the slot holds no grant of this (transaction, client, mode): a stale or
    duplicated release. One access to the slot's array: it fits the release's first pass.
    """
    if (slot < 0 or slot >= slots.shape[0] or slot < _rget(regions, trace, c, i, R_LEFT)
            or slot > _rget(regions, trace, c, i, R_RIGHT)):
        return -1
    if (_sget(slots, trace, slot, S_GRANTED) != SLOT_GRANTED
            or slots[slot, S_MODE] != mode or slots[slot, S_TXN] != txn
            or slots[slot, S_CLIENT] != client):
        return -1
    if slot == _rget(regions, trace, c, i, R_HEAD):
        return slot
    slots[slot, S_GRANTED] = SLOT_RELEASED
    _rset(regions, trace, c, i, R_RELEASED, _rget(regions, trace, c, i, R_RELEASED) + 1)
    _hold(locks, trace, i, mode, -1)
    return MARKED


@kernel
def _pop_head(locks: np.ndarray, regions: np.ndarray, slots: np.ndarray, trace: Trace, i: int,
              c: int, head: int) -> None:
    """Dequeue region (i, c)'s granted head slot ``head`` and release its holder (a slot
    marked released gave its holder up already)."""
    state = _sget(slots, trace, head, S_GRANTED)
    mode = slots[head, S_MODE]
    for col in range(SLOT_STATE_COLS):
        slots[head, col] = 0
    _rset(regions, trace, c, i, R_HEAD,
          _advance(head, _rget(regions, trace, c, i, R_LEFT), _rget(regions, trace, c, i, R_RIGHT)))
    _rset(regions, trace, c, i, R_COUNT, _rget(regions, trace, c, i, R_COUNT) - 1)
    _rset(regions, trace, c, i, R_GRANTED, _rget(regions, trace, c, i, R_GRANTED) - 1)
    if state == SLOT_RELEASED:
        _rset(regions, trace, c, i, R_RELEASED, _rget(regions, trace, c, i, R_RELEASED) - 1)
    else:
        _hold(locks, trace, i, mode, -1)


@kernel_inline
def _dequeue_head(locks: np.ndarray, regions: np.ndarray, slots: np.ndarray, ctl: np.ndarray,
                  trace: Trace, i: int, c: int, mode: int, txn: int, client: int,
                  slot: int) -> int:
    """The release's first pass: dequeue the granted head of region (i, c). Returns the
    dequeued slot, MARKED (owner check: a shared holder behind the head, see
    :func:`_owner_release`) or -1 when the release is stale.

    With ``ctl[C_RELEASE_CHECK]`` = RELEASE_CHECK_OWNER the release must own ``slot``.
    With RELEASE_CHECK_NONE (the paper's rule) an exclusive release must match the head's
    transaction and a shared release dequeues a granted shared head blindly: shared
    releases commute, but a duplicated or stale one frees another holder's lock.
    """
    if _rget(regions, trace, c, i, R_GRANTED) == 0:
        return -1
    if ctl[C_RELEASE_CHECK] == RELEASE_CHECK_OWNER:
        head = _owner_release(locks, regions, slots, trace, i, c, mode, txn, client, slot)
        if head < 0:
            return head
    else:
        head = _rget(regions, trace, c, i, R_HEAD)
        if _sget(slots, trace, head, S_GRANTED) != SLOT_GRANTED or slots[head, S_MODE] != mode:
            return -1
        if mode == EXCLUSIVE and slots[head, S_TXN] != txn:
            return -1
    _pop_head(locks, regions, slots, trace, i, c, head)
    return head


@kernel_inline
def _release_head(locks: np.ndarray, regions: np.ndarray, slots: np.ndarray, ctl: np.ndarray,
                  trace: Trace, out: np.ndarray, n: int, i: int, lock_id: int, c: int,
                  mode: int, txn: int, client: int, slot: int, now_us: int) -> int:
    """A release from its dequeue pass on; -1 if stale.

    After the dequeue, while the region has slots marked released (owner check), resubmit
    passes read the new head and dequeue it if it is marked (the pass that finds a live
    head is the one Algorithm 2 spends reading the new head). Then resubmit passes grant
    what waits. Without marks the passes are Algorithm 2's.
    """
    head = _dequeue_head(locks, regions, slots, ctl, trace, i, c, mode, txn, client, slot)
    if head == MARKED:
        return n
    if head < 0:
        return -1
    read_head = False
    while (_rget(regions, trace, c, i, R_RELEASED) > 0
           and _rget(regions, trace, c, i, R_GRANTED) > 0):
        _new_pass(ctl)
        head = _rget(regions, trace, c, i, R_HEAD)
        if _sget(slots, trace, head, S_GRANTED) != SLOT_RELEASED:
            read_head = True
            break
        _pop_head(locks, regions, slots, trace, i, c, head)
    n = _notify_if_idle(locks, regions, trace, out, n, i, lock_id, c)
    passes = ctl[C_PASSES]
    n = _grant_waiting(locks, regions, slots, ctl, trace, out, n, i, lock_id, now_us)
    if ctl[C_PASSES] == passes and not read_head and _rget(regions, trace, c, i, R_COUNT) > 0:
        _new_pass(ctl)
        _sget(slots, trace, _rget(regions, trace, c, i, R_HEAD), S_MODE)
    return n


@kernel
def acquire(locks: np.ndarray, regions: np.ndarray, slots: np.ndarray, tenants: np.ndarray,
            ctl: np.ndarray, trace: Trace, out: np.ndarray, i: int, lock_id: int, mode: int,
            txn: int, client: int, tenant: int, priority: int, push_back: int,
            now_us: int) -> int:
    """An acquire packet for lock index ``i`` (-1 = not in the lock table)."""
    ctl[C_PASSES] = 0
    _new_pass(ctl)
    if push_back == 0 and not _admit_tenant(tenants, trace, tenant):
        if ctl[C_QUOTA_POLICY] == QUOTA_DEFER:
            return _emit(out, 0, DEFER, QUOTA, 0, 1, lock_id, mode, txn, client, tenant,
                         priority, now_us)
        return _emit(out, 0, DROP, QUOTA, 0, 1, lock_id, mode, txn, client, tenant, priority,
                     now_us)
    if i < 0:
        return _emit(out, 0, TO_SERVER, NO_REASON, 0, 1, lock_id, mode, txn, client, tenant,
                     priority, now_us)
    c = effective_class(locks[i, L_CLASSES], priority, regions.shape[0])
    if push_back == 0:
        _lset(locks, trace, i, L_REQUESTS, _lget(locks, trace, i, L_REQUESTS) + 1)
    left = _rget(regions, trace, c, i, R_LEFT)
    right = _rget(regions, trace, c, i, R_RIGHT)
    count = _rget(regions, trace, c, i, R_COUNT)
    held = _rget(regions, trace, c, i, R_SERVER_HELD)
    full = count > right - left
    if push_back != 0:
        if full:
            return _emit(out, 0, OVERFLOW, NO_REASON, 0, 1, lock_id, mode, txn, client, tenant,
                         c, now_us)
        held -= 1
        _rset(regions, trace, c, i, R_SERVER_HELD, held)
        _rset(regions, trace, c, i, R_NOTIFIED, 0)
    elif full or held > 0 or _lget(locks, trace, i, L_PAUSED) != 0:
        _rset(regions, trace, c, i, R_SERVER_HELD, held + 1)
        _raise_peak(regions, trace, c, i, count + held + 1)
        return _emit(out, 0, OVERFLOW, NO_REASON, 0, 1, lock_id, mode, txn, client, tenant, c,
                     now_us)
    granted = _rget(regions, trace, c, i, R_GRANTED)
    grant = (granted == count and not _blocked_above(locks, regions, trace, i, c)
             and compatible(mode, _lget(locks, trace, i, L_SHARED),
                            _lget(locks, trace, i, L_EXCLUSIVE)))
    tail = _rget(regions, trace, c, i, R_TAIL)
    _sset(slots, trace, tail, S_MODE, mode)
    _sset(slots, trace, tail, S_TXN, txn)
    _sset(slots, trace, tail, S_CLIENT, client)
    _sset(slots, trace, tail, S_TENANT, tenant)
    _sset(slots, trace, tail, S_TIMESTAMP, now_us)
    _sset(slots, trace, tail, S_GRANTED, SLOT_GRANTED if grant else SLOT_WAITING)
    _rset(regions, trace, c, i, R_TAIL, _advance(tail, left, right))
    _rset(regions, trace, c, i, R_COUNT, count + 1)
    _raise_peak(regions, trace, c, i, count + 1 + held)
    if not grant:
        return 0
    _rset(regions, trace, c, i, R_GRANTED, granted + 1)
    _hold(locks, trace, i, mode, 1)
    n = _emit(out, 0, GRANT, NO_REASON, 0, 1, lock_id, mode, txn, client, tenant, c, now_us)
    out[0, O_SLOT] = tail
    if push_back != 0 and held == 0:
        n = _grant_waiting(locks, regions, slots, ctl, trace, out, n, i, lock_id, now_us)
    return n


@kernel
def release(locks: np.ndarray, regions: np.ndarray, slots: np.ndarray, ctl: np.ndarray,
            trace: Trace, out: np.ndarray, i: int, lock_id: int, mode: int, txn: int, client: int,
            tenant: int, priority: int, slot: int, now_us: int) -> int:
    """A release packet naming the slot its grant came from (-1: none known): dequeue
    pass, then resubmit passes granting what waits."""
    ctl[C_PASSES] = 0
    _new_pass(ctl)
    if i < 0:
        return _emit(out, 0, TO_SERVER, NO_REASON, 0, 1, lock_id, mode, txn, client, tenant,
                     priority, now_us)
    c = effective_class(locks[i, L_CLASSES], priority, regions.shape[0])
    n = _release_head(locks, regions, slots, ctl, trace, out, 0, i, lock_id, c, mode, txn,
                      client, slot, now_us)
    if n < 0:
        return _emit(out, 0, DROP, STALE_RELEASE, 0, 1, lock_id, mode, txn, client, tenant, c,
                     now_us)
    return n


@kernel
def process(locks: np.ndarray, regions: np.ndarray, slots: np.ndarray, tenants: np.ndarray,
            ctl: np.ndarray, trace: Trace, out: np.ndarray, i: int, op: int, lock_id: int,
            mode: int, txn: int, client: int, tenant: int, priority: int, push_back: int,
            slot: int, now_us: int) -> int:
    """One packet of either kind (``op`` is :class:`netlock.packets.Op`; ``push_back``
    is an acquire's, ``slot`` a release's)."""
    if op == ACQUIRE:
        return acquire(locks, regions, slots, tenants, ctl, trace, out, i, lock_id, mode, txn,
                       client, tenant, priority, push_back, now_us)
    return release(locks, regions, slots, ctl, trace, out, i, lock_id, mode, txn, client, tenant,
                   priority, slot, now_us)


# --- control-plane operations ------------------------------------------------------------------

@kernel
def expire(locks: np.ndarray, regions: np.ndarray, slots: np.ndarray, ctl: np.ndarray,
           trace: Trace, out: np.ndarray, now_us: int, lease_us: int) -> int:
    """The lease sweep: while a region's head is granted and its lease is over, release it.

    The control plane reads heads directly and injects a release packet per expired
    holder (its passes are counted). ``ctl[C_EXPIRED]`` gets the number expired. Only the
    lock-table rows ever used (below ``ctl[C_LOCK_ROWS]``) are scanned, and a row's table
    data only when one of its regions has a holder: the sweep reads every row each period
    (the fast engine's TPC-C: 100K rows every 500 us), so it reads as little as it can.
    """
    ctl[C_PASSES] = 0
    n = 0
    expired = 0
    for i in range(min(ctl[C_LOCK_ROWS], locks.shape[0])):
        mask = -1
        lock_id = -1
        for c in range(regions.shape[0]):
            if regions[c, i, R_GRANTED] <= 0:
                continue
            if mask < 0:
                mask = locks[i, L_CLASSES]
                lock_id = locks[i, L_LOCK_ID]
            if (mask >> c) & 1 == 0:
                continue
            while regions[c, i, R_GRANTED] > 0:
                k = regions[c, i, R_HEAD]
                if now_us - slots[k, S_TIMESTAMP] < lease_us:
                    break
                _new_pass(ctl)
                m = _release_head(locks, regions, slots, ctl, trace, out, n, i, lock_id, c,
                                  slots[k, S_MODE], slots[k, S_TXN], slots[k, S_CLIENT], k,
                                  now_us)
                if m < 0:
                    break
                n = m
                expired += 1
    ctl[C_EXPIRED] = expired
    return n


@kernel
def notify_idle(locks: np.ndarray, regions: np.ndarray, ctl: np.ndarray,
                trace: Trace, out: np.ndarray,
                i: int) -> int:
    """NOTIFY_SERVER for every empty region of lock ``i`` with a server backlog (used by
    the control plane after install and resume)."""
    ctl[C_PASS] += 1
    n = 0
    mask = locks[i, L_CLASSES]
    for c in range(regions.shape[0]):
        if (mask >> c) & 1:
            n = _notify_if_idle(locks, regions, trace, out, n, i, locks[i, L_LOCK_ID], c)
    return n


@kernel
def forget_backlog(locks: np.ndarray, regions: np.ndarray, slots: np.ndarray, ctl: np.ndarray,
                   trace: Trace, out: np.ndarray, i: int, now_us: int) -> int:
    """The lock server buffering lock ``i``'s overflow failed, and its backlog with it: the
    control plane clears the backlog counts, then the requests they held back in the switch
    (in lower classes) are granted in order."""
    ctl[C_PASSES] = 0
    for c in range(regions.shape[0]):
        regions[c, i, R_SERVER_HELD] = 0
        regions[c, i, R_NOTIFIED] = 0
    _new_pass(ctl)
    return _grant_waiting(locks, regions, slots, ctl, trace, out, 0, i, locks[i, L_LOCK_ID],
                          now_us)
