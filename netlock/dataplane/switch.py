"""``SwitchDataPlane``: the switch's registers and lock table behind a readable API.

The packet rules live in :mod:`netlock.dataplane.kernels`; this class owns the arrays,
the ``check_lock_exist_table`` (lock id -> lock index) and the control-plane operations
(install, move, pause, lease sweep, quotas, failure, snapshots). Engines that need speed
call the kernels directly on :meth:`SwitchDataPlane.arrays` with :meth:`lock_index`.

Requests that a GRANT action returns carry the priority class whose queue held them;
a client's release must carry that priority (it is the request's own priority unless
the lock has no queue in that class, see :func:`netlock.dataplane.compatibility.effective_class`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from netlock.dataplane import batch_install, kernels
from netlock.dataplane.counters import SwitchCounters
from netlock.dataplane.registers import (
    C_EXPIRED,
    C_HEADER,
    C_LOCK_ROWS,
    C_PASSES,
    C_QUOTA_POLICY,
    C_RELEASE_CHECK,
    C_TRACE_ON,
    L_CLASSES,
    L_LOCK_ID,
    L_PAUSED,
    N_OUT_COLS,
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
    QUOTA_DROP,
    R_COUNT,
    R_HEAD,
    R_LEFT,
    R_NOTIFIED,
    R_PEAK,
    R_RIGHT,
    R_SERVER_HELD,
    R_TAIL,
    RELEASE_CHECK_NONE,
    RELEASE_CHECK_OWNER,
    T_COUNT,
    T_QUOTA,
    clear_state,
    new_state,
)
from netlock.errors import ControlPlaneError
from netlock.geometry import SwitchGeometry
from netlock.packets import Action, ActionKind, DropReason, LockRequest, Mode, Op

QUOTA_POLICIES = {"drop": QUOTA_DROP, "defer": QUOTA_DEFER}
RELEASE_CHECKS = {"none": RELEASE_CHECK_NONE, "owner": RELEASE_CHECK_OWNER}
STATE_ARRAYS = ("locks", "regions", "slots", "tenants")


@dataclass(frozen=True)
class Outcome:
    """What one packet caused: the actions in order and the pipeline passes it took."""

    actions: list[Action]
    passes: int


class SwitchDataPlane(SwitchCounters):
    """One NetLock switch: shared queue regions per (lock, priority), holders, quotas, leases.

    ``quota_policy`` is ``"drop"`` or ``"defer"`` (what over-quota acquires get);
    ``release_check`` is ``"owner"`` (a release must name the slot its grant came from and
    own it: duplicated and stale releases are dropped) or ``"none"`` (the paper's rule: a
    shared release dequeues the granted head, whoever holds it);
    ``trace_capacity`` > 0 records that many register accesses for pass checks (the
    kernels then get ``ctl`` as their ``trace``; otherwise None, and no tracing cost);
    ``locks_expected``, the locks the caller is about to install, only chooses how the
    empty registers are made (:func:`netlock.dataplane.registers.new_state`).
    """

    def __init__(self, geometry: SwitchGeometry, *, max_tenants: int = 64,
                 quota_policy: str = "drop", release_check: str = "owner",
                 trace_capacity: int = 0, locks_expected: int = 0) -> None:
        if quota_policy not in QUOTA_POLICIES:
            raise ValueError(f"quota_policy: must be drop or defer, got {quota_policy!r}")
        if release_check not in RELEASE_CHECKS:
            raise ValueError(f"release_check: must be owner or none, got {release_check!r}")
        self.geometry = geometry
        state = new_state(geometry, max_tenants, trace_capacity, locks_expected)
        self.locks: np.ndarray = state["locks"]
        self.regions: np.ndarray = state["regions"]
        self.slots: np.ndarray = state["slots"]
        self.tenants: np.ndarray = state["tenants"]
        self.ctl: np.ndarray = state["ctl"]
        self.ctl[C_QUOTA_POLICY] = QUOTA_POLICIES[quota_policy]
        self.ctl[C_RELEASE_CHECK] = RELEASE_CHECKS[release_check]
        self.trace: np.ndarray | None = self.ctl if self.ctl[C_TRACE_ON] else None
        # Not cleared: a kernel writes each action row it returns whole (kernels._emit) and
        # callers read only those rows. Clearing its 19 MB (the paper's geometry) was most of
        # a switch's construction in a process that had freed an earlier one (issue 32).
        self.out = np.empty((2 * geometry.total_slots + 2, N_OUT_COLS), dtype=np.int64)
        self.expired_total = 0
        self.last_expired = 0
        self._rows_of: dict[int, int] | None = None
        self._free = np.arange(geometry.total_slots - 1, -1, -1, dtype=np.int64)
        self._n_free = geometry.total_slots
        self._owner_of: np.ndarray | None = None

    # --- data plane ------------------------------------------------------------------------

    def arrays(self) -> tuple[np.ndarray, ...]:
        """``(locks, regions, slots, tenants, ctl, trace, out)``, the kernels' first
        arguments."""
        return self.locks, self.regions, self.slots, self.tenants, self.ctl, self.trace, self.out

    def lock_index(self, lock_id: int) -> int:
        """The lock table match: the lock's index, or -1 when the switch does not own it."""
        return self._table.get(lock_id, -1)

    def lock_indices_by_id(self) -> dict[int, int]:
        """The lock table as a dict (lock id -> index) of its own, for a caller that looks
        locks up from Python many times (the simpy engine's pipeline)."""
        return dict(self._table)

    def lock_index_array(self, size: int) -> np.ndarray:
        """Dense lock table for lock ids ``0..size-1`` (int64, -1 = not in the switch)."""
        table = np.full(size, -1, dtype=np.int64)
        for lock_id, i in self._table.items():
            if lock_id < size:
                table[lock_id] = i
        return table

    def process(self, req: LockRequest, now_us: int) -> Outcome:
        """Run one request packet through the pipeline at switch time ``now_us``."""
        n = kernels.process(self.locks, self.regions, self.slots, self.tenants, self.ctl,
                            self.trace, self.out, self._table.get(req.lock_id, -1), int(req.op),
                            req.lock_id, int(req.mode), req.txn_id, req.client_id, req.tenant,
                            req.priority, int(req.push_back), req.slot, now_us)
        return Outcome(self._actions(req, n), int(self.ctl[C_PASSES]))

    def _actions(self, req: LockRequest | None, n: int) -> list[Action]:
        actions = []
        for row in self.out[:n].tolist():
            kind = ActionKind(row[O_KIND])
            if row[O_SELF] and req is not None:
                request = self._self_request(req, kind, row[O_PRIORITY], row[O_SLOT])
            else:
                request = LockRequest(Op.ACQUIRE, Mode(row[O_MODE]), row[O_LOCK], row[O_TXN],
                                      row[O_CLIENT], row[O_TENANT], row[O_PRIORITY],
                                      row[O_TIMESTAMP], slot=row[O_SLOT])
            actions.append(Action(kind, request, row[O_COUNT], DropReason(row[O_REASON])))
        return actions

    @staticmethod
    def _self_request(req: LockRequest, kind: ActionKind, priority: int,
                      slot: int) -> LockRequest:
        if kind == ActionKind.OVERFLOW:
            return replace(req, overflow=True, priority=priority)
        if kind == ActionKind.GRANT:
            return replace(req, overflow=False, push_back=False, priority=priority, slot=slot)
        return req

    # --- control plane: regions and locks ----------------------------------------------------

    def install(self, lock_id: int, priority: int, left: int, right: int,
                server_held: int = 0, paused: bool = False) -> list[Action]:
        """Give ``lock_id`` the queue region ``[left, right]`` in class ``priority``.

        ``server_held`` is the length of the lock's queue already buffered at its server
        (a lock moving in); the returned NOTIFY_SERVER asks for the first push-backs,
        unless the lock is ``paused`` (then :meth:`resume` asks).
        """
        self._check_priority(priority)
        if lock_id < 0:
            raise ControlPlaneError(f"lock_id: must be >= 0, got {lock_id}")
        if server_held < 0:
            raise ControlPlaneError(f"server_held: must be >= 0, got {server_held}")
        i = self._table.get(lock_id)
        if i is not None and self.regions[priority, i, R_LEFT] >= 0:
            raise ControlPlaneError(f"lock {lock_id}: already has a region in class {priority}")
        if i is None and not self._n_free:
            raise ControlPlaneError(f"lock {lock_id}: the lock table is full")
        self._check_bounds(priority, left, right, owner=-1)
        if i is None:
            self._n_free -= 1
            i = int(self._free[self._n_free])
            self._use_rows(i + 1)
            self._table[lock_id] = i
            self.locks[i] = 0
            self.locks[i, L_LOCK_ID] = lock_id
        self.locks[i, L_CLASSES] |= 1 << priority
        if paused:
            self.locks[i, L_PAUSED] = 1
        region = self.regions[priority, i]
        region[:] = 0
        region[[R_LEFT, R_HEAD, R_TAIL]] = left
        region[R_RIGHT] = right
        region[R_SERVER_HELD] = region[R_PEAK] = server_held
        self._owner[left:right + 1] = self._region_id(priority, i)
        return self._notify(i)

    def install_many(self, lock_ids: np.ndarray, priority: np.ndarray | int, left: np.ndarray,
                     right: np.ndarray, server_held: np.ndarray | None = None) -> list[Action]:
        """:meth:`install` for a batch of regions, all or nothing, with numpy instead of a
        Python loop per lock (:mod:`netlock.dataplane.batch_install`: a 100K-lock table in
        milliseconds).

        The checks are install's; when any row fails, nothing changes and the ControlPlaneError
        names the first failing row (batch order), its lock and install's reason.
        Rows may add classes to locks already in the switch or to locks earlier in the batch.
        """
        ids = np.asarray(lock_ids, dtype=np.int64).reshape(-1)
        n = len(ids)
        pri = np.broadcast_to(np.asarray(priority, dtype=np.int64), (n,))
        lo = np.asarray(left, dtype=np.int64).reshape(-1)
        hi = np.asarray(right, dtype=np.int64).reshape(-1)
        held = (np.zeros(n, dtype=np.int64) if server_held is None
                else np.asarray(server_held, dtype=np.int64).reshape(-1))
        if not len(lo) == len(hi) == len(held) == n:
            raise ValueError("install_many: columns of unequal length")
        if n == 0:
            return []
        empty = self._n_free == len(self.locks)
        index, fresh, first_row = batch_install.batch_indices(self.locks, self.ctl, ids, empty)
        if not batch_install.plainly_valid(self.geometry, self._n_free, empty, ids, pri, lo, hi,
                                           held):
            batch_install.check_batch(self.geometry, self.regions, self._owner, self._n_free,
                                      ids, pri, lo, hi, held, index, fresh)
        new_ids = ids[fresh]
        taken = self._free[self._n_free - len(new_ids):self._n_free][::-1].copy()
        self._n_free -= len(new_ids)
        if len(taken):
            self._use_rows(int(taken.max()) + 1)
        if self._rows_of is not None:
            self._rows_of.update(zip(new_ids.tolist(), taken.tolist(), strict=True))
        rows = batch_install.as_slice(taken)
        self.locks[rows] = 0
        self.locks[rows, L_LOCK_ID] = new_ids
        bits = 1 << pri
        # Every lock new and its rows together (a plan's entries): its classes without a scatter.
        if first_row is None and (index < 0).all():
            row_index = taken[np.cumsum(fresh) - 1]
            self.locks[rows, L_CLASSES] = np.bitwise_or.reduceat(bits, np.flatnonzero(fresh))
        else:
            if first_row is None:
                first_row = batch_install.first_rows(ids)
            row_index = index.copy()
            joining = index < 0
            row_index[joining] = taken[(np.cumsum(fresh) - 1)[first_row[joining]]]
            np.bitwise_or.at(self.locks[:, L_CLASSES], row_index, bits)
        batch_install.write_regions(self.regions, pri, row_index, lo, hi, held)
        if self._owner_of is not None:
            batch_install.fill_owners(self._owner_of, lo, hi, pri * len(self.locks) + row_index)
        actions: list[Action] = []
        for i in row_index[held > 0].tolist():
            actions += self._notify(i)
        return actions

    def lock_indices(self, lock_ids: np.ndarray) -> np.ndarray:
        """:meth:`lock_index` of each lock id (int64, -1 = not in the switch)."""
        ids = np.asarray(lock_ids, dtype=np.int64)
        empty = self._n_free == len(self.locks)
        return batch_install.batch_indices(self.locks, self.ctl, ids.reshape(-1),
                                           empty)[0].reshape(ids.shape)

    def remove(self, lock_id: int) -> None:
        """Drop a drained lock from the switch (its server takes over its buffered requests)."""
        i = self._index(lock_id)
        if not self.is_drained(lock_id):
            raise ControlPlaneError(f"lock {lock_id}: cannot remove a lock whose queues are not "
                                    "empty (pause it and wait until it drains)")
        for c in self._classes(i):
            self._owner[self.regions[c, i, R_LEFT]:self.regions[c, i, R_RIGHT] + 1] = -1
        self.regions[:, i] = 0
        self.regions[:, i, R_LEFT] = -1
        self.regions[:, i, R_RIGHT] = -2
        self.locks[i] = 0
        self.locks[i, L_LOCK_ID] = -1
        del self._table[lock_id]
        self._free[self._n_free] = i
        self._n_free += 1

    def set_bounds(self, lock_id: int, priority: int, left: int, right: int) -> list[Action]:
        """Move or resize the EMPTY region of ``lock_id`` in class ``priority``."""
        i = self._index(lock_id)
        self._check_priority(priority)
        region = self.regions[priority, i]
        if region[R_LEFT] < 0:
            raise ControlPlaneError(f"lock {lock_id}: has no region in class {priority}")
        if region[R_COUNT] != 0:
            raise ControlPlaneError(f"lock {lock_id}: region in class {priority} is not empty")
        own = self._region_id(priority, i)
        self._check_bounds(priority, left, right, owner=own)
        self._owner[region[R_LEFT]:region[R_RIGHT] + 1] = -1
        self._owner[left:right + 1] = own
        region[[R_LEFT, R_HEAD, R_TAIL]] = left
        region[R_RIGHT] = right
        return self._notify(i)

    def pause(self, lock_id: int) -> None:
        """Stop enqueueing: new acquires overflow to the server; releases still proceed."""
        self.locks[self._index(lock_id), L_PAUSED] = 1

    def resume(self, lock_id: int) -> list[Action]:
        """Enqueue again; NOTIFY_SERVER for empty regions with a server backlog."""
        i = self._index(lock_id)
        self.locks[i, L_PAUSED] = 0
        return self._notify(i)

    def is_drained(self, lock_id: int) -> bool:
        """True when every switch queue of the lock is empty."""
        i = self._index(lock_id)
        return not self.regions[:, i, R_COUNT].any()

    def is_quiet(self, lock_id: int) -> bool:
        """True when no switch queue of the lock holds a request and none waits for a
        push-back it announced (NOTIFY_SERVER sent, no push-back seen since): the lock
        can move to another switch without a request in flight to it."""
        i = self._index(lock_id)
        return not self.regions[:, i, R_COUNT].any() and not self.regions[:, i, R_NOTIFIED].any()

    def server_held(self, lock_id: int, priority: int) -> int:
        """Requests of the lock's ``priority`` queue that its lock server buffers (q2)."""
        return int(self.regions[priority, self._index(lock_id), R_SERVER_HELD])

    @property
    def resident_locks(self) -> list[int]:
        return sorted(self._table)

    @property
    def free_rows(self) -> np.ndarray:
        """The lock-table rows not in use, the next one :meth:`install` takes last (a stack:
        an array rather than a list of 100K Python ints, built at every construction)."""
        return self._free[:self._n_free]

    # --- control plane: leases, quotas, failure -----------------------------------------------

    def expire(self, now_us: int, lease_us: int) -> list[Action]:
        """Release every queue head whose lease (``lease_us``) is over; grants follow.

        Adds the number of expired holders to ``expired_total`` (and ``last_expired``).
        """
        if lease_us <= 0:
            raise ValueError(f"lease_us: must be > 0, got {lease_us}")
        n = kernels.expire(self.locks, self.regions, self.slots, self.ctl, self.trace, self.out,
                           now_us, lease_us)
        self.last_expired = int(self.ctl[C_EXPIRED])
        self.expired_total += self.last_expired
        return self._actions(None, n)

    def set_tenant_quota(self, tenant: int, quota: int) -> None:
        """Admit at most ``quota`` acquires of ``tenant`` per window (0 = unlimited)."""
        if not 0 <= tenant < len(self.tenants):
            raise ControlPlaneError(f"tenant: must be in 0..{len(self.tenants) - 1}, got {tenant}")
        if quota < 0:
            raise ControlPlaneError(f"quota: must be >= 0, got {quota}")
        self.tenants[tenant, T_QUOTA] = quota

    def reset_quota_window(self) -> None:
        """Start a new quota window (the controller calls this periodically)."""
        self.tenants[:, T_COUNT] = 0

    def forget_server_backlog(self, lock_id: int, now_us: int) -> list[Action]:
        """The lock server that buffered ``lock_id``'s overflow failed: forget that backlog
        and grant what waited behind it (GRANT actions)."""
        n = kernels.forget_backlog(self.locks, self.regions, self.slots, self.ctl, self.trace,
                                   self.out, self._index(lock_id), int(now_us))
        return self._actions(None, n)

    def fail(self) -> None:
        """Lose all switch state: lock table, queues, holders, quotas."""
        clear_state(self.locks, self.regions, self.slots)
        self.tenants[:] = 0
        self._rebuild_table()

    def snapshot(self) -> dict[str, np.ndarray]:
        """A copy of the full switch state as plain arrays (for saving an emulated switch)."""
        snap = {name: getattr(self, name).copy() for name in STATE_ARRAYS}
        snap["ctl"] = self.ctl[:C_HEADER].copy()
        return snap

    def restore(self, snap: dict[str, np.ndarray]) -> None:
        """Load a :meth:`snapshot` taken from a switch of the same geometry."""
        for name in STATE_ARRAYS:
            have = getattr(self, name)
            given = np.asarray(snap[name])
            if given.shape != have.shape:
                raise ControlPlaneError(f"snapshot.{name}: shape {given.shape} does not match "
                                        f"this switch's {have.shape}")
            have[...] = given
        self.ctl[:C_HEADER] = np.asarray(snap["ctl"])[:C_HEADER]
        self._rebuild_table()

    # --- internals ------------------------------------------------------------------------------

    def _use_rows(self, rows: int) -> None:
        """Lock-table rows below ``rows`` may be in use (the lease sweep scans them)."""
        self.ctl[C_LOCK_ROWS] = max(int(self.ctl[C_LOCK_ROWS]), rows)

    @property
    def _table(self) -> dict[int, int]:
        """The lock table (lock id -> row) as a dict, made from the lock column when first
        used after a batch install or a rebuild: an engine that reads the arrays (the fast
        engine) never needs it, and a TPC-C plan's 33K locks took 1.7 ms of a run's 13 ms
        setup to enter (issue 32)."""
        if self._rows_of is None:
            ids = self.locks[:int(self.ctl[C_LOCK_ROWS]), L_LOCK_ID]
            rows = np.flatnonzero(ids >= 0)
            self._rows_of = dict(zip(ids[rows].tolist(), rows.tolist(), strict=True))
        return self._rows_of

    @property
    def _owner(self) -> np.ndarray:
        """Each slot's region (``priority * rows + lock row``, -1 when free), for the control
        plane's overlap checks; made from the regions when first used: an engine that only
        installs a plan never needs it, and filling it took about 0.2 ms of a TPC-C run's
        setup (issue 32)."""
        if self._owner_of is None:
            ids = self.locks[:int(self.ctl[C_LOCK_ROWS]), L_LOCK_ID]
            bits = self.locks[:len(ids), L_CLASSES, None] >> np.arange(self.geometry.priorities)
            i, c = np.nonzero((ids >= 0)[:, None] & (bits & 1 == 1))
            self._owner_of = np.full(self.geometry.total_slots, -1, dtype=np.int64)
            batch_install.fill_owners(self._owner_of, self.regions[c, i, R_LEFT],
                                      self.regions[c, i, R_RIGHT], c * len(self.locks) + i)
        return self._owner_of

    def _rebuild_table(self) -> None:
        ids = self.locks[:, L_LOCK_ID]
        self._rows_of = None
        free = np.flatnonzero(ids < 0)[::-1]
        self._free = np.empty(len(ids), dtype=np.int64)
        self._free[:len(free)] = free
        self._n_free = len(free)
        used = np.flatnonzero(ids >= 0)
        self._use_rows(int(used[-1]) + 1 if len(used) else 0)
        self._owner_of = None

    def _index(self, lock_id: int) -> int:
        i = self._table.get(lock_id)
        if i is None:
            raise ControlPlaneError(f"lock {lock_id}: not in the switch")
        return i

    def _classes(self, i: int) -> list[int]:
        mask = int(self.locks[i, L_CLASSES])
        return [c for c in range(self.geometry.priorities) if mask >> c & 1]

    def _region_id(self, priority: int, i: int) -> int:
        return priority * len(self.locks) + i

    def _check_priority(self, priority: int) -> None:
        if not 0 <= priority < self.geometry.priorities:
            raise ControlPlaneError(
                f"priority: must be in 0..{self.geometry.priorities - 1}, got {priority}")

    def _check_bounds(self, priority: int, left: int, right: int, owner: int) -> None:
        first, last = self.geometry.priority_ranges[priority]
        if not first <= left <= right <= last:
            raise ControlPlaneError(f"region [{left}, {right}]: must lie within class "
                                    f"{priority}'s slots [{first}, {last}]")
        used = self._owner[left:right + 1]
        if ((used != -1) & (used != owner)).any():
            raise ControlPlaneError(f"region [{left}, {right}]: overlaps another lock's region")

    def _notify(self, i: int) -> list[Action]:
        return self._actions(None, kernels.notify_idle(self.locks, self.regions, self.ctl,
                                                       self.trace, self.out, i))

