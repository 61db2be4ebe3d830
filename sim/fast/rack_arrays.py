"""The NetLock switch and lock servers of the rack, compiled: :mod:`sim.managers.netlock_rack`.

The switch runs :mod:`netlock.dataplane.kernels` on its arrays; this module adds the same
timing and routing as :class:`sim.managers.netlock_rack.switch_pipeline.SwitchNode` and
:class:`sim.managers.netlock_rack.manager.NetLockManager`: a packet's passes occupy the pipeline
for ``passes * P_PASS_GAP`` and take ``passes * P_PASS_US`` to come out; grants go one hop
to the client (plus the database server's two in the one-RTT mode); requests of locks the
switch does not own, and overflow, go to the lock server owning the lock's partition
(overflow and the notify/push-back protocol on reliable hops), whose answers travel
server -> switch -> client. A lock server runs :mod:`netlock.lockserver.kernels` on the rack's
server state, and :mod:`netlock.lockserver.request_path`'s steps on its rows (``srv_f``,
``srv_cores``: RSS, RX rings, cores that each take ``P_SERVICE_US`` per packet, TX bursts
with ``tx_buf`` and ``E_DRAIN`` events) behind FIFO links.
"""

from __future__ import annotations

from netlock.dataplane import kernels
from netlock.dataplane.registers import (
    C_EXPIRED,
    C_PASSES,
    O_COUNT,
    O_KIND,
    O_LOCK,
    O_PRIORITY,
    O_REASON,
    O_SELF,
    O_SLOT,
    O_TXN,
    T_COUNT,
)
from netlock.lockserver import hashmap, request_path, txburst
from netlock.lockserver import kernels as lockserver
from netlock.lockserver.rss import rss_core
from netlock.lockserver.server_state import A_KIND, A_REASON, A_TXN, FLAG_OVERFLOW
from netlock.packets import ActionKind
from netlock.server_lookup import owning_server
from sim.fast import heap
from sim.fast._fast_jit import fast_jit, fast_jit_inline, inlined
from sim.fast.client_rows import receive_inline
from sim.fast.prefetch import warm_server_cell
from sim.fast.records import free_request, hop, path, reliable_hop, take
from sim.fast.state import (
    CF_DOWN_LAST,
    CI_PRIORITY,
    CI_TENANT,
    E_DEFER,
    E_DRAIN,
    E_NOTIFY,
    E_PUSH,
    E_SERVER,
    I_CORES,
    I_EXTRA_HOPS,
    I_LEASE_MGR,
    I_RX_RING,
    I_SERVERS,
    I_TX_BURST,
    IN_PENDING,
    IN_WAITING,
    K_OL_DROPPED,
    K_SERVER_DROPS,
    K_SERVER_GRANTS,
    K_SWITCH_EXPIRED,
    P_OL_CUTOFF,
    P_PASS_GAP,
    P_PASS_US,
    P_SERVICE_US,
    P_TX_DRAIN,
    RELEASE,
    RF_CREATED,
    RI_CLIENT,
    RI_FOLLOW,
    RI_LOCK,
    RI_MODE,
    RI_OP,
    RI_SLOT,
    RI_SOURCE,
    RI_TXN,
    RI_WHERE,
    SERVER,
    SF_DOWN_LAST,
    SF_UP_LAST,
    SWITCH,
    RackArrays,
)

GRANT = int(ActionKind.GRANT)
TO_SERVER = int(ActionKind.TO_SERVER)
OVERFLOW = int(ActionKind.OVERFLOW)
NOTIFY_SERVER = int(ActionKind.NOTIFY_SERVER)
DEFER = int(ActionKind.DEFER)
COUNT_BITS = 32
TX_GRANT, TX_PUSH = 0, 1

acquire_kernel = inlined(kernels.acquire)
process_kernel = inlined(lockserver.process)
release_kernel = inlined(kernels.release)


# --- switch ------------------------------------------------------------------------------------

@fast_jit_inline
def _occupy(r: RackArrays, now: float, passes: int) -> float:
    """Put ``passes`` passes through the pipeline; the delay until they end (us)."""
    t = r.sw_f[0] if r.sw_f[0] > now else now
    r.sw_f[0] = t + passes * r.pf[P_PASS_GAP]
    return t - now + passes * r.pf[P_PASS_US]


@fast_jit_inline
def lock_index(r: RackArrays, lock: int) -> int:
    """The switch's lock table match: the lock's index, or -1 when it is not resident."""
    if lock < r.table_dense.shape[0]:
        return r.table_dense[lock] - 1
    return hashmap.lookup(r.table_keys, r.table_values, lock)


@fast_jit
def switch_grant(r: RackArrays, h: int, delay: float, now: float) -> None:
    """Send a grant to its client."""
    r.ri[h, RI_SOURCE] = SWITCH
    d = hop(r)
    if d < 0:
        free_request(r, h)
        return
    extra = r.pi[I_EXTRA_HOPS]
    if extra:
        more = path(r, extra)
        if more < 0:
            free_request(r, h)
            return
        d += more
    receive_inline(r, h, now + delay + d, now)


@fast_jit
def switch_acquire(r: RackArrays, h: int, push_back: int, now: float) -> None:
    """An acquire (or a server's push-back of one) enters the pipeline now."""
    lock = r.ri[h, RI_LOCK]
    c = r.ri[h, RI_CLIENT]
    i = lock_index(r, lock)
    n = acquire_kernel(r.sw_locks, r.sw_regions, r.sw_slots, r.sw_tenants, r.sw_ctl, None,
                        r.sw_out, i, lock, r.ri[h, RI_MODE], r.ri[h, RI_TXN], c, r.ci[c, CI_TENANT],
                        r.ci[c, CI_PRIORITY], push_back, int(now))
    delay = _occupy(r, now, r.sw_ctl[C_PASSES])
    if n == 0:
        r.ri[h, RI_WHERE] |= IN_WAITING
        return
    if i >= 0 and n == 1 and r.sw_out[0, O_KIND] == GRANT:
        r.ri[h, RI_SLOT] = r.sw_out[0, O_SLOT]
        switch_grant_inline(r, h, delay, now)
        return
    if not dispatch_inline(r, n, h, delay, now):
        free_request(r, h)


switch_grant_inline = inlined(switch_grant)
"""The same, inlined into its caller (for the per-request path)."""


switch_acquire_inline = inlined(switch_acquire)
"""The same, inlined into its caller (for the per-request path)."""


@fast_jit_inline
def switch_release(r: RackArrays, h: int, now: float) -> None:
    """A release enters the pipeline now."""
    lock = r.ri[h, RI_LOCK]
    c = r.ri[h, RI_CLIENT]
    i = lock_index(r, lock)
    n = release_kernel(r.sw_locks, r.sw_regions, r.sw_slots, r.sw_ctl, None, r.sw_out, i, lock,
                        r.ri[h, RI_MODE], r.ri[h, RI_TXN], c, r.ci[c, CI_TENANT],
                        r.ci[c, CI_PRIORITY], r.ri[h, RI_SLOT], int(now))
    delay = _occupy(r, now, r.sw_ctl[C_PASSES])
    if n == 0 or not dispatch_inline(r, n, h, delay, now):
        free_request(r, h)


@fast_jit_inline
def switch_packets(r: RackArrays, h: int, now: float) -> None:
    """Packets that arrived together: ``h`` and those chained on ``RI_FOLLOW``."""
    while h >= 0:
        nxt = r.ri[h, RI_FOLLOW]
        r.ri[h, RI_FOLLOW] = -1
        if r.ri[h, RI_OP] == RELEASE:
            switch_release(r, h, now)
        else:
            switch_acquire_inline(r, h, 0, now)
        h = nxt


@fast_jit
def _dispatch(r: RackArrays, n: int, h: int, delay: float, now: float) -> bool:
    """Route the switch's ``n`` action rows (``h`` = the packet that caused them, or -1);
    whether ``h`` went on somewhere (granted, forwarded or deferred)."""
    out = r.sw_out
    kept = False
    for row in range(n):
        kind = out[row, O_KIND]
        if kind == GRANT:
            g = h if out[row, O_SELF] else take(r, out[row, O_TXN], IN_WAITING)
            kept = kept or g == h
            if g >= 0:
                r.ri[g, RI_SLOT] = out[row, O_SLOT]
                switch_grant(r, g, delay, now)
        elif kind in (TO_SERVER, OVERFLOW):
            kept = True
            _to_server(r, h, kind == OVERFLOW, out[row, O_PRIORITY], delay, now)
        elif kind == NOTIFY_SERVER:
            _notify_server(r, out[row, O_LOCK], out[row, O_PRIORITY], out[row, O_COUNT],
                           delay, now)
        elif kind == DEFER:
            kept = True
            _defer(r, h, delay, now)
        else:
            r.sw_drops[out[row, O_REASON]] += 1
    return kept


dispatch_inline = inlined(_dispatch)
"""The same, inlined into its caller (for the per-request path)."""


@fast_jit
def switch_expire(r: RackArrays, now: float) -> None:
    """The control plane's lease sweep of the switch."""
    n = kernels.expire(r.sw_locks, r.sw_regions, r.sw_slots, r.sw_ctl, None, r.sw_out,
                       int(now), r.pi[I_LEASE_MGR])
    delay = _occupy(r, now, r.sw_ctl[C_PASSES])
    if n:
        _dispatch(r, n, -1, delay, now)
    r.cnt[K_SWITCH_EXPIRED] += r.sw_ctl[C_EXPIRED]


@fast_jit
def reset_quota_window(r: RackArrays) -> None:
    for t in range(r.sw_tenants.shape[0]):
        r.sw_tenants[t, T_COUNT] = 0


# --- manager routing ---------------------------------------------------------------------------

@fast_jit
def owner(r: RackArrays, lock: int) -> int:
    """The lock server owning ``lock``'s partition."""
    return owning_server(lock, r.part_his, r.part_owners, r.pi[I_SERVERS])


@fast_jit
def _link(r: RackArrays, s: int, col: int, t: float) -> float:
    if t < r.srv_f[s, col]:
        return r.srv_f[s, col]
    r.srv_f[s, col] = t
    return t


@fast_jit
def _to_server(r: RackArrays, h: int, overflow: bool, priority: int, delay: float,
               now: float) -> None:
    """Forward a packet to the lock server owning its lock (to serve, or to buffer), under
    class ``priority`` (for overflow, the class whose switch queue it overflowed; as
    :meth:`sim.managers.netlock_rack.manager.NetLockManager.to_server`)."""
    if r.pi[I_SERVERS] == 0:
        free_request(r, h)
        return
    s = owner(r, r.ri[h, RI_LOCK])
    op = r.ri[h, RI_OP]
    if op != RELEASE:
        r.ri[h, RI_WHERE] |= IN_PENDING
    d = reliable_hop(r) if overflow else hop(r)
    if d < 0:
        free_request(r, h)
        return
    warm_server_cell(r, r.ri[h, RI_LOCK])
    heap.push(r.heap, _link(r, s, SF_UP_LAST, now + delay + d), E_SERVER, h,
              op + 2 * int(overflow) + 4 * priority)


@fast_jit
def _notify_server(r: RackArrays, lock: int, priority: int, count: int, delay: float,
                   now: float) -> None:
    if r.pi[I_SERVERS] == 0:
        return
    s = owner(r, lock)
    at = _link(r, s, SF_UP_LAST, now + delay + reliable_hop(r))
    heap.push(r.heap, at, E_NOTIFY, lock, (priority << COUNT_BITS) | count)


@fast_jit
def _defer(r: RackArrays, h: int, delay: float, now: float) -> None:
    d = hop(r)
    if d < 0:
        free_request(r, h)
        return
    c = r.ri[h, RI_CLIENT]
    at = now + delay + d
    if at < r.cf[c, CF_DOWN_LAST]:
        at = r.cf[c, CF_DOWN_LAST]
    else:
        r.cf[c, CF_DOWN_LAST] = at
    heap.push(r.heap, at, E_DEFER, h, 0)


@fast_jit
def push_back(r: RackArrays, rid: int, now: float) -> None:
    """A request a server returns from its overflow buffer reaches the switch."""
    h = take(r, rid, IN_PENDING)
    if h >= 0:
        switch_acquire(r, h, 1, now)


# --- lock servers ------------------------------------------------------------------------------
# netlock.lockserver.request_path's steps on server s's rows r.srv_f[s] and r.srv_cores[s, core],
# as sim.managers.netlock_rack.servers.ServerNode takes them on its lists.

@fast_jit_inline
def core_of(r: RackArrays, lock: int) -> int:
    """The core RSS gives the packets of ``lock``."""
    return rss_core(lock, r.pi[I_CORES])


@fast_jit_inline
def _deliver(r: RackArrays, s: int, kind: int, value: int, depart: float,
             now: float) -> None:
    """A server's packet leaves it at ``depart`` (us): a grant (request row ``value``) goes
    to its client through the switch, a push-back (wire id ``value``) to the switch."""
    if kind == TX_GRANT:
        first = hop(r)
        second = hop(r)
        if first >= 0 and second >= 0:
            receive_inline(r, value, _link(r, s, SF_DOWN_LAST, depart + first) + second, now)
        else:
            free_request(r, value)
    else:
        at = _link(r, s, SF_DOWN_LAST, depart + reliable_hop(r))
        heap.push(r.heap, at, E_PUSH, value, 0)


_deliver_now = fast_jit(getattr(_deliver, "py_func", _deliver))
"""The same, compiled on its own (for what a server's control logic sends at once)."""


@fast_jit
def _flush(r: RackArrays, s: int, core: int, n: int, depart: float, now: float) -> None:
    """The first ``n`` packets of core ``core``'s TX buffer leave at ``depart``.

    Compiled on its own, with each grant's arrival (:func:`receive`) inlined into it: a
    call between compiled functions passes every array of the rack (some 500 machine
    words pushed: TPC-C's grants from the lock servers spent 9 % of the loop pushing
    them when each grant called ``receive``), so a burst pays that once rather than once
    per packet, and the event loop does not grow by a copy of ``receive`` (inlining it
    there took the compile from 2.5 to 11 minutes)."""
    for i in range(n):
        _deliver(r, s, r.tx_buf[s, core, i, 0], r.tx_buf[s, core, i, 1], depart, now)


@fast_jit_inline
def _send(r: RackArrays, s: int, core: int, kind: int, value: int, t: float,
          now: float) -> None:
    """Core ``core`` sends a packet when done with its cause at ``t`` (us): through its TX
    burst (:func:`netlock.lockserver.txburst.send`; ``core`` < 0: at once), as
    :meth:`sim.tx_bursts.TxBursts.add`."""
    if core < 0:
        _deliver_now(r, s, kind, value, t, now)
        return
    row = r.srv_cores[s, core]
    late, late_at, slot, outcome = txburst.send(row, t, r.pi[I_TX_BURST], r.pf[P_TX_DRAIN])
    if late:
        _flush(r, s, core, late, late_at, now)
    r.tx_buf[s, core, slot, 0] = kind
    r.tx_buf[s, core, slot, 1] = value
    if outcome == txburst.FULL:
        _flush(r, s, core, slot + 1, t, now)
    elif outcome == txburst.OPENED:
        heap.push(r.heap, row[txburst.TX_DUE], E_DRAIN, s * r.pi[I_CORES] + core,
                  int(row[txburst.TX_SEQ]))


@fast_jit
def server_drain(r: RackArrays, sc: int, seq: int, now: float) -> None:
    """A server core's drain timer fires for burst ``seq`` (``sc`` = server * cores +
    core)."""
    s = sc // r.pi[I_CORES]
    core = sc % r.pi[I_CORES]
    row = r.srv_cores[s, core]
    n = txburst.drain(row, seq)
    if n:
        _flush(r, s, core, n, row[txburst.TX_DUE], now)


server_drain_inline = inlined(server_drain)
"""The same, inlined into the event loop (a lock server core's TX drain timer)."""


@fast_jit
def _server_actions(r: RackArrays, s: int, n: int, t: float, now: float, core: int) -> None:
    """Server ``s``'s ``n`` action rows, from the packet its core ``core`` is done with at
    ``t`` (``core`` < 0: its control logic, sent at once): as
    :meth:`sim.managers.netlock_rack.manager.NetLockManager.server_answer`."""
    act = r.srv.act
    for row in range(n):
        what = request_path.answer(act[row, A_KIND], act[row, A_REASON])
        if what == request_path.SEND_GRANT:
            g = take(r, act[row, A_TXN], IN_PENDING)
            if g < 0:
                continue
            r.ri[g, RI_SOURCE] = SERVER
            r.cnt[K_SERVER_GRANTS] += 1
            _send(r, s, core, TX_GRANT, g, t, now)
        elif what == request_path.SEND_PUSH_BACK:
            _send(r, s, core, TX_PUSH, act[row, A_TXN], t, now)
        else:
            if what == request_path.FORGET_COPY:
                g = take(r, act[row, A_TXN], IN_PENDING)
                if g >= 0:
                    free_request(r, g)
            r.cnt[K_SERVER_DROPS] += 1


server_actions_inline = inlined(_server_actions)
"""The same, inlined into its caller (for the per-request path)."""


@fast_jit
def server_request(r: RackArrays, h: int, flags: int, now: float) -> None:
    """A request forwarded by the switch (served, overflow or release) reaches its server;
    ``flags`` = op + 2 * overflow + 4 * class."""
    lock = r.ri[h, RI_LOCK]
    c = r.ri[h, RI_CLIENT]
    op = flags & 1
    s = owner(r, lock)
    core = core_of(r, lock)
    delay = request_path.admit(r.srv_f[s], r.srv_cores[s, core], now, r.pf[P_SERVICE_US],
                               r.pi[I_RX_RING])
    if delay < 0:
        if op != RELEASE:
            g = take(r, r.ri[h, RI_TXN], IN_PENDING)
            if g >= 0:
                if r.rf[g, RF_CREATED] < r.pf[P_OL_CUTOFF]:
                    r.cnt[K_OL_DROPPED] += 1
                free_request(r, g)
        else:
            free_request(r, h)
        return
    n = process_kernel(r.srv, s, int(now), op, lock, r.ri[h, RI_MODE], r.ri[h, RI_TXN], c,
                       r.ci[c, CI_TENANT], flags >> 2, 0,
                       FLAG_OVERFLOW * ((flags >> 1) & 1))
    server_actions_inline(r, s, n, now + delay, now, core)
    if op == RELEASE:
        free_request(r, h)


server_request_inline = inlined(server_request)
"""The same, inlined into the event loop: with most locks on the lock servers (TPC-C), a
request and its release each reach a server."""


@fast_jit
def server_notified(r: RackArrays, lock: int, word: int, now: float) -> None:
    """The switch says the queue of (lock, priority) drained: push back up to ``count``."""
    s = owner(r, lock)
    core = core_of(r, lock)
    delay = request_path.serve(r.srv_f[s], r.srv_cores[s, core], now, r.pf[P_SERVICE_US])
    n = lockserver.notified(r.srv, s, lock, word >> COUNT_BITS,
                            word & ((1 << COUNT_BITS) - 1))
    _server_actions(r, s, n, now + delay, now, core)


@fast_jit
def servers_expire(r: RackArrays, now: float) -> None:
    for s in range(r.pi[I_SERVERS]):
        n = lockserver.expire(r.srv, s, int(now), r.pi[I_LEASE_MGR])
        if n:
            _server_actions(r, s, n, now, now, -1)
