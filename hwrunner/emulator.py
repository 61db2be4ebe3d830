"""The emulated switch: the ``netlock`` data-plane model behind the driver interface.

:class:`EmulatedSwitch` holds the profile's program as BFRuntime-style tables
(:class:`~hwrunner.emulated_program.EmulatedProgram`, every pipe) and one
:class:`~netlock.dataplane.SwitchDataPlane` that processes lock traffic -- pipe 0, the pipe
the locks live in. The two are bridged by the profile's names:

- adding a lock-table entry installs the lock in the data plane from its registers (which must
  describe an empty queue: head = tail = left, all slots free, no holders); deleting one removes
  the lock, which the data plane allows only once its queue has drained;
- writing a mapped lock's pause flag pauses or resumes it; its counters may be reset;
  rewriting the queue registers of a lock the switch is serving is refused (unmap it first);
- reading pipe 0 of a mapped lock's registers (or of the queue slots) returns the data plane's
  live values in the program's encoding; other pipes return what was written;
- reading the lock table returns the entries the data plane matches on: an entry whose lock
  the data plane does not serve at that index (a damaged saved state) is not there, so
  verification sees what traffic would see (:meth:`EmulatedSwitch.dataplane_problems`);
- :meth:`EmulatedSwitch.server_of` forwards locks it does not own as the partition table
  says (what routes the emulated rack's requests to its lock servers).

Control-plane operations can produce actions for the lock servers (NOTIFY_SERVER when a lock
arrives with requests buffered at its server); they collect in :attr:`EmulatedSwitch.outbox`.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator, Sequence

import numpy as np

from hwrunner.bfrt_info import MATCH_PRIORITY, Schema, Table
from hwrunner.emulated_program import EmulatedProgram, emulated_schema
from hwrunner.operations import EntryAdd, EntryDelete, EntryModify, Operation, RegisterWrite
from hwrunner.profile import SwitchProfile
from netlock.dataplane import ControlPlaneError, SwitchDataPlane
from netlock.dataplane.registers import (
    L_EXCLUSIVE,
    L_LOCK_ID,
    L_PAUSED,
    L_REQUESTS,
    L_SHARED,
    R_COUNT,
    R_HEAD,
    R_LEFT,
    R_PEAK,
    R_RIGHT,
    R_SERVER_HELD,
    R_TAIL,
    S_CLIENT,
    S_MODE,
    S_TIMESTAMP,
    S_TXN,
)
from netlock.errors import TargetError
from netlock.geometry import SwitchGeometry
from netlock.packets import Action

TARGET = "emulator"
_EMPTY_QUEUE = ("head", "tail", "free_slots", "exclusive_count", "shared_count")
LIVE_WRITABLE = ("paused", "requests", "peak_occupancy")
"""Registers the control plane may write while the switch serves the lock."""


def emulator_geometry(geometry: SwitchGeometry) -> SwitchGeometry:
    """The data plane's geometry: the plan's arrays, one queue per lock (no classes)."""
    return SwitchGeometry(geometry.arrays, geometry.stages, 1)


@contextlib.contextmanager
def _uninterrupted() -> Iterator[None]:
    """Hold SIGINT (Ctrl-C) until the block is done, then raise KeyboardInterrupt."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught:
        raise KeyboardInterrupt


class EmulatedSwitch:
    """An in-process switch running the profile's program on ``profile.pipes`` pipes."""

    target = TARGET

    def __init__(self, profile: SwitchProfile, geometry: SwitchGeometry,
                 schema: Schema | None = None) -> None:
        self.profile = profile
        self.geometry = emulator_geometry(geometry)
        self.schema = schema or emulated_schema(profile)
        self.pipes = profile.pipes
        self.program = EmulatedProgram(self.schema, self.pipes)
        self.dataplane = SwitchDataPlane(self.geometry)
        self.outbox: list[Action] = []
        self.batches_sent = 0
        self.window_s: float | None = None
        """Seconds of replayed traffic the per-lock counters hold (None: not known)."""
        self._concept: dict[tuple[str, str], str] = {}
        for concept, reg in profile.lock_registers.items():
            table = self.schema.table(reg.register)
            self._concept[(table.name, reg.field)] = concept
        self._slot_field: dict[tuple[str, str], str] = {}
        for concept, reg in profile.slot_registers.items():
            table = self.schema.table(reg.register)
            self._slot_field[(table.name, reg.field)] = concept
        self._lock_table = self.schema.table(profile.lock_table.table).name
        self._partition_table = self.schema.table(profile.partition.table).name
        self._routes: tuple[np.ndarray, ...] | None = None
        self._tenant_table = (self.schema.table(profile.tenant_table.table).name
                              if profile.tenant_table else None)
        size = min(self.schema.table(r.register).size for r in profile.lock_registers.values())
        self._lock_at = np.full(size, -1, dtype=np.int64)
        """Register index -> lock id of the mapped lock using it (-1: none)."""
        self._dp_index = np.full(size, -1, dtype=np.int64)
        """Register index -> the data plane's row for that lock (-1: none)."""

    # --- driver interface -------------------------------------------------------------------

    def write(self, op: Operation) -> None:
        """Apply one batch; Ctrl-C waits until it is applied (a switch applies a request
        whole, and the program's tables and the data plane must not part ways)."""
        with _uninterrupted():
            table = self.program.table(op.table)
            if table.name == self._partition_table:
                self._routes = None
            if table.name == self._lock_table:
                self._write_lock_table(op)
            elif isinstance(op, RegisterWrite):
                self._write_registers(table, op)
            else:
                quotas = (table.name == self._tenant_table and not isinstance(op, EntryDelete))
                if quotas:
                    self._check_tenants(op)
                self.program.apply(op)
                if quotas:
                    self._set_quotas(op)
            self.batches_sent += 1

    def read_registers(self, table: str, fields: Sequence[str],
                       index: np.ndarray) -> dict[str, np.ndarray]:
        out = self.program.read_registers(table, fields, index)
        full = self.program.table(table).name
        index = np.asarray(index, dtype=np.int64)
        for f in fields:
            if (full, f) in self._concept:
                self._overlay_lock(self._concept[(full, f)], index, out[f])
            elif (full, f) in self._slot_field:
                self._overlay_slot(self._slot_field[(full, f)], index, out[f])
        return out

    def read_entries(self, table: str, keys: Sequence[str], data: Sequence[str]) -> EntryAdd:
        entries = self.program.read_entries(table, keys, data)
        if self.program.table(table).name != self._lock_table:
            return entries
        lt = self.profile.lock_table
        full = self.program.read_entries(table, (lt.key,), (lt.index_param,))
        served = self._served(full.keys[0].value, full.data[0].value)
        return entries if served.all() else entries.take(np.flatnonzero(served))

    def _served(self, lock_ids: np.ndarray, index: np.ndarray) -> np.ndarray:
        """Which lock-table entries (lock id, register index) the data plane serves: it holds
        the lock, at the row the index map says, with the bounds the registers were given."""
        dp = self.dataplane
        rows = dp.lock_indices(lock_ids)
        ok = rows >= 0
        inside = (index >= 0) & (index < len(self._dp_index))
        ok &= inside
        ok[ok] &= self._dp_index[index[ok]] == rows[ok]
        if ok.any():
            bounds = self._registers_at(index[ok])
            region = dp.regions[0, rows[ok]]
            base = self.profile.slot_base
            ok[ok] = ((region[:, R_LEFT] == bounds["left"] - base)
                      & (region[:, R_RIGHT] == bounds["right"] - base))
        return ok

    def dataplane_problems(self) -> list[str]:
        """Where the data plane and the program's lock table disagree (a damaged saved state):
        entries it does not serve, and locks it serves that have no entry."""
        lt = self.profile.lock_table
        full = self.program.read_entries(self._lock_table, (lt.key,), (lt.index_param,))
        ids, index = full.keys[0].value, full.data[0].value
        problems = [f"lock {int(ids[i])} (index {int(index[i])}): in the lock table but not "
                    f"served by the data plane at its registers' bounds"
                    for i in np.flatnonzero(~self._served(ids, index))[:3]]
        held = self.dataplane.locks[:, L_LOCK_ID]
        extra = np.setdiff1d(held[held >= 0], ids)
        if len(extra):
            problems.append(f"lock {int(extra[0])}: served by the data plane without a "
                            f"lock-table entry ({len(extra)} such locks)")
        return problems

    def close(self) -> None:
        """Nothing to release: saving is :mod:`hwrunner.emulator_state`'s job."""

    # --- the lock table ---------------------------------------------------------------------

    def _write_lock_table(self, op: Operation) -> None:
        lt = self.profile.lock_table
        if isinstance(op, EntryModify):
            raise TargetError(f"{self._lock_table}: the emulated switch does not change a "
                              "lock's index in place (delete and add it)")
        lock_ids = op.key_value(lt.key).tolist()
        if isinstance(op, EntryDelete):
            busy = [x for x in lock_ids if self.dataplane.lock_index(x) >= 0
                    and not self.dataplane.is_drained(x)]
            if busy:
                raise TargetError(f"{self._lock_table}: lock {busy[0]} still has queued requests "
                                  "(pause it and wait until it drains before deleting it)")
            self.program.apply(op)
            for lock in lock_ids:
                if self.dataplane.lock_index(lock) >= 0:
                    self.dataplane.remove(lock)
            gone = np.isin(self._lock_at, lock_ids)
            self._lock_at[gone] = -1
            self._dp_index[gone] = -1
            return
        index = op.data_value(lt.index_param)
        inside = (index >= 0) & (index < len(self._lock_at))
        taken = np.zeros(len(index), dtype=bool)
        taken[inside] = self._lock_at[index[inside]] >= 0
        _, first = np.unique(index, return_index=True)
        if len(first) < len(index):
            row = int(np.setdiff1d(np.arange(len(index)), first)[0])
            raise TargetError(f"{self._lock_table}: the batch maps two locks to index "
                              f"{int(index[row])}")
        if taken.any():
            row = int(np.argmax(taken))
            raise TargetError(f"{self._lock_table}: index {int(index[row])} already belongs to "
                              f"lock {int(self._lock_at[index[row]])}")
        if not inside.all():
            row = int(np.argmax(~inside))
            raise TargetError(f"{self._lock_table}: index {int(index[row])} is outside the "
                              f"per-lock registers (0..{len(self._lock_at) - 1})")
        state = self._registers_at(index)
        self._check_empty(lock_ids, index, state)
        self.program.apply(op)
        base = self.profile.slot_base
        keys = op.key_value(lt.key)
        try:
            actions = self.dataplane.install_many(keys, 0, state["left"] - base,
                                                  state["right"] - base, state["server_held"])
        except ControlPlaneError as exc:
            self.program.apply(EntryDelete(op.table, op.keys))
            raise TargetError(f"{self._lock_table}: {exc}") from None
        for lock in keys[state["paused"] != 0].tolist():
            self.dataplane.pause(lock)
        self._lock_at[index] = keys
        self._dp_index[index] = self.dataplane.lock_indices(keys)
        self.outbox += actions

    def _registers_at(self, index: np.ndarray) -> dict[str, np.ndarray]:
        """Pipe 0 of every per-lock register at ``index``, by concept."""
        out = {}
        for concept, reg in self.profile.lock_registers.items():
            out[concept] = self.program.read_registers(reg.register, (reg.field,),
                                                       index)[reg.field][0]
        return out

    def _check_empty(self, lock_ids: list[int], index: np.ndarray,
                     state: dict[str, np.ndarray]) -> None:
        left, right = state["left"], state["right"]
        want = {"head": left, "tail": left, "free_slots": right - left + 1,
                "exclusive_count": 0, "shared_count": 0}
        base = self.profile.slot_base
        for concept in _EMPTY_QUEUE:
            bad = state[concept] != want[concept]
            if bad.any():
                row = int(np.argmax(bad))
                raise TargetError(f"{self._lock_table}: lock {lock_ids[row]} (index "
                                  f"{int(index[row])}): its {concept} register does not describe "
                                  f"an empty queue over [{int(left[row])}, {int(right[row])}]")
        outside = (left < base) | (right < left) | (right - base >= self.geometry.total_slots)
        if outside.any():
            row = int(np.argmax(outside))
            raise TargetError(f"{self._lock_table}: lock {lock_ids[row]}: bounds "
                              f"[{int(left[row])}, {int(right[row])}] are not a region")

    # --- registers ------------------------------------------------------------------------

    def _write_registers(self, table: Table, op: RegisterWrite) -> None:
        concepts = {c.name: self._concept.get((table.name, c.name)) for c in op.data}
        rows = np.zeros(0, dtype=np.int64)
        if any(c is not None for c in concepts.values()):
            idx = np.clip(op.index, 0, len(self._lock_at) - 1)
            rows = np.flatnonzero((self._lock_at[idx] >= 0) & (idx == op.index))
        live = [(int(r), int(self._lock_at[op.index[r]])) for r in rows]
        if live:
            fixed = [c for c in concepts.values() if c not in LIVE_WRITABLE]
            if fixed:
                row, lock = live[0]
                raise TargetError(f"{table.name}[{int(op.index[row])}]: lock {lock} is being "
                                  f"served; delete its lock-table entry before rewriting its "
                                  f"{fixed[0]} register")
        self.program.apply(op)
        for col in op.data:
            concept = concepts[col.name]
            for row, lock in live:
                value = int(col.value[row])
                if concept == "paused":
                    if value:
                        self.dataplane.pause(lock)
                    else:
                        self.outbox += self.dataplane.resume(lock)
                elif concept == "requests":
                    self.dataplane.set_counters(lock, requests=value)
                elif concept == "peak_occupancy":
                    self.dataplane.set_counters(lock, peak_occupancy=value)

    def _overlay_lock(self, concept: str, index: np.ndarray, values: np.ndarray) -> None:
        d = self._dp_index[index]
        rows = np.flatnonzero(d >= 0)
        if not len(rows):
            return
        d = d[rows]
        dp = self.dataplane
        region = dp.regions[0, d]
        base = self.profile.slot_base
        if concept in ("left", "right", "head", "tail"):
            col = {"left": R_LEFT, "right": R_RIGHT, "head": R_HEAD, "tail": R_TAIL}[concept]
            values[0, rows] = region[:, col] + base
        elif concept == "free_slots":
            values[0, rows] = region[:, R_RIGHT] - region[:, R_LEFT] + 1 - region[:, R_COUNT]
        elif concept == "server_held":
            values[0, rows] = region[:, R_SERVER_HELD]
        elif concept == "peak_occupancy":
            values[0, rows] = region[:, R_PEAK]
        else:
            col = {"exclusive_count": L_EXCLUSIVE, "shared_count": L_SHARED,
                   "paused": L_PAUSED, "requests": L_REQUESTS}[concept]
            values[0, rows] = dp.locks[d, col]

    def _overlay_slot(self, concept: str, index: np.ndarray, values: np.ndarray) -> None:
        k = index - self.profile.slot_base
        inside = (k >= 0) & (k < self.geometry.total_slots)
        slots = self.dataplane.slots[k[inside]]
        column = {"mode": slots[:, S_MODE], "tid": slots[:, S_TXN],
                  "client_id": slots[:, S_CLIENT],
                  "timestamp_hi": slots[:, S_TIMESTAMP] >> 32,
                  "timestamp_lo": slots[:, S_TIMESTAMP] & 0xFFFFFFFF}.get(concept)
        if column is not None:
            values[0, inside] = column

    def _check_tenants(self, op: Operation) -> None:
        tt = self.profile.tenant_table
        assert tt is not None
        tenants = op.data_value(tt.tenant_param)
        bad = (tenants < 0) | (tenants >= len(self.dataplane.tenants))
        if bad.any():
            raise TargetError(f"{self._tenant_table}: tenant {int(tenants[np.argmax(bad)])} "
                              f"outside 0..{len(self.dataplane.tenants) - 1}")

    def _set_quotas(self, op: Operation) -> None:
        tt = self.profile.tenant_table
        assert tt is not None
        for tenant, quota in zip(op.data_value(tt.tenant_param).tolist(),
                                 op.data_value(tt.quota_param).tolist(), strict=True):
            self.dataplane.set_tenant_quota(tenant, quota)

    # --- for the emulator's own users (tests, demo) -----------------------------------------

    def server_of(self, lock_ids: np.ndarray) -> np.ndarray:
        """The lock server (profile number) the partition table forwards each lock id to;
        -1 where no entry matches or the address is not in the profile. Of several matching
        entries the lowest ``$MATCH_PRIORITY`` wins, then the oldest."""
        if self._routes is None:
            self._routes = self._route_table()
        lo, hi, mask, value, server = self._routes
        ids = np.asarray(lock_ids, dtype=np.int64)
        flat = ids.reshape(-1, 1)
        if not len(server):
            return np.full(ids.shape, -1, dtype=np.int64)
        hit = (flat & mask == value) & (lo <= flat) & (flat <= hi)
        out = np.where(hit.any(axis=1), server[np.argmax(hit, axis=1)], -1)
        return out.reshape(ids.shape)

    def _route_table(self) -> tuple[np.ndarray, ...]:
        """Partition entries as (lo, hi, mask, value, server) columns in match order."""
        part = self.profile.partition
        entries = self.program.read_entries(part.table, (part.key, MATCH_PRIORITY),
                                            (part.server_param,))
        key, prio = entries.keys
        n = len(entries)
        if key.mask is not None:
            lo, hi = np.zeros(n, np.int64), np.full(n, np.iinfo(np.int64).max)
            mask, value = key.mask, key.value
        else:
            lo, hi = key.value, key.high if key.high is not None else key.value
            mask, value = np.zeros(n, np.int64), np.zeros(n, np.int64)
        index_of = {ip: i for i, ip in enumerate(part.servers)}
        server = np.array([index_of.get(int(ip), -1) for ip in entries.data[0].value.tolist()],
                          dtype=np.int64)
        order = np.argsort(prio.value, kind="stable")
        return tuple(np.asarray(c, dtype=np.int64)[order] for c in (lo, hi, mask, value, server))

    def take_outbox(self) -> list[Action]:
        """Actions the control plane produced for the lock servers since the last call."""
        actions, self.outbox = self.outbox, []
        return actions

    def rebuild_index(self) -> None:
        """Recompute the index maps from the lock table (after restoring a saved state)."""
        lt = self.profile.lock_table
        entries = self.program.read_entries(lt.table, (lt.key,), (lt.index_param,))
        self._lock_at[:] = -1
        self._dp_index[:] = -1
        index = entries.data[0].value
        self._lock_at[index] = entries.keys[0].value
        self._dp_index[index] = [self.dataplane.lock_index(x)
                                 for x in entries.keys[0].value.tolist()]

    def lock_of_index(self) -> dict[int, int]:
        """Register index -> lock id, for every lock the switch serves."""
        idx = np.flatnonzero(self._lock_at >= 0)
        return dict(zip(idx.tolist(), self._lock_at[idx].tolist(), strict=True))
