"""The switch data plane's state: a few int64 arrays with named columns.

The arrays model the NetLock P4 program's registers (names in ``REGISTER_NAMES`` follow
the public program where one exists). Each row of ``locks`` is indexed by the lock's
index from the ``check_lock_exist_table`` match; ``regions[c, i]`` is lock ``i``'s queue
region in priority class ``c``; ``slots[k]`` is global shared-queue slot ``k``.

Register arrays, for the one-access-per-array-per-pass rule:

- every per-lock register is its own array (``REG_HOLDERS``, ``REG_PAUSED``, ...);
- every per-region register exists once per priority class, because each class's queue
  lives in its own stages (``region_register(c, col)``);
- slot ``k``'s fields live in the slot register array ``slots[k, S_ARRAY]`` (all fields of
  one slot are read and written together, so one slot access is one array access);
- the per-tenant acquire counter is one array.

Columns marked *table data* are the match-action table's action data, not registers.
"""

from __future__ import annotations

from functools import partial
from itertools import pairwise
from typing import NamedTuple

import numpy as np

from netlock.dataplane.blank_pages import blank_copy
from netlock.dataplane.spares import Spares
from netlock.geometry import SwitchGeometry

# locks[i, :] ------------------------------------------------------------------------------
L_LOCK_ID = 0  # table data: the lock id at this index, -1 when the index is free
L_CLASSES = 1  # table data: bit c set when the lock has a region in priority class c
L_SHARED = 2  # shared_and_exclusive_count_register.hi: shared holders (all classes)
L_EXCLUSIVE = 3  # shared_and_exclusive_count_register.lo: exclusive holders (all classes)
L_PAUSED = 4  # enqueue paused (lock being moved): new acquires overflow to the server
L_REQUESTS = 5  # acquire counter, for r_i
N_LOCK_COLS = 6

# regions[c, i, :] -------------------------------------------------------------------------
R_LEFT = 0  # left_bound_register: first global slot of the region, -1 = no region
R_RIGHT = 1  # right_bound_register: last global slot (inclusive)
R_HEAD = 2  # head_register: slot of the oldest queued request
R_TAIL = 3  # tail_register: slot the next request is written to
R_COUNT = 4  # slots_two_sides_register: occupied slots in the switch (q1 length)
R_SERVER_HELD = 5  # slots_two_sides_register: requests buffered at the server (q2 length)
R_NOTIFIED = 6  # slots_two_sides_register: NOTIFY_SERVER sent, no push-back seen since
R_GRANTED = 7  # granted entries; they are always the first R_GRANTED from the head
R_PEAK = 8  # highest q1 + q2 occupancy seen, for c_i
R_RELEASED = 9  # slots_two_sides_register: granted slots marked SLOT_RELEASED (owner check)
N_REGION_COLS = 10

# slots[k, :] ------------------------------------------------------------------------------
S_MODE = 0
S_TXN = 1
S_CLIENT = 2
S_TENANT = 3
S_TIMESTAMP = 4  # us; set at enqueue, refreshed at grant (lease start)
S_GRANTED = 5  # SLOT_WAITING, SLOT_GRANTED or SLOT_RELEASED
S_ARRAY = 6  # static: which slot register array holds this slot
N_SLOT_COLS = 7
SLOT_STATE_COLS = 6  # the columns a failure or restore clears (all but S_ARRAY)

SLOT_WAITING = 0
SLOT_GRANTED = 1
SLOT_RELEASED = 2  # a shared holder behind the head released (owner check): dequeued with it

# tenants[t, :] ----------------------------------------------------------------------------
T_COUNT = 0  # tenant_acq_counter_register: admitted acquires this quota window
T_QUOTA = 1  # table data (get_tenant_inf_table): acquires per window, 0 = unlimited
N_TENANT_COLS = 2

# ctl[:]: control words, then the access trace as (pass, register, index) triples ---------
C_QUOTA_POLICY = 0  # QUOTA_DROP or QUOTA_DEFER
C_TRACE_ON = 1
C_PASS = 2  # pass sequence number, increases across calls (trace key)
C_TRACE_LEN = 3  # triples recorded
C_TRACE_FULL = 4  # set when the trace buffer ran out
C_PASSES = 5  # passes used by the last kernel call
C_EXPIRED = 6  # holders expired by the last expire sweep
C_LOCK_ROWS = 7  # lock-table rows ever used end before this; the lease sweep scans no further
C_RELEASE_CHECK = 8  # RELEASE_CHECK_NONE or RELEASE_CHECK_OWNER
C_HEADER = 9

QUOTA_DROP = 0
QUOTA_DEFER = 1

RELEASE_CHECK_NONE = 0  # the paper's rule: a shared release dequeues the granted head blindly
RELEASE_CHECK_OWNER = 1  # a release names its grant's slot; the slot's owner must match

# out[r, :]: one action row ----------------------------------------------------------------
O_KIND = 0  # netlock.packets.ActionKind
O_REASON = 1  # netlock.packets.DropReason
O_COUNT = 2  # NOTIFY_SERVER: free slots the server may push back
O_SELF = 3  # 1 when the row is about the packet being processed
O_LOCK = 4
O_MODE = 5
O_TXN = 6
O_CLIENT = 7
O_TENANT = 8
O_PRIORITY = 9  # the class whose queue holds the request
O_TIMESTAMP = 10  # us
O_SLOT = 11  # GRANT from the switch queue: the granted slot (the release names it), else -1
N_OUT_COLS = 12

# register array ids (trace) ----------------------------------------------------------------
REG_HOLDERS = 0
REG_PAUSED = 1
REG_REQUESTS = 2
REG_TENANT_COUNTER = 3
N_GLOBAL_REGISTERS = 4

LOCK_COL_REGISTER = np.array([-1, -1, REG_HOLDERS, REG_HOLDERS, REG_PAUSED, REG_REQUESTS],
                             dtype=np.int64)
REGION_COL_REGISTER = np.array([0, 1, 2, 3, 4, 4, 4, 5, 6, 4], dtype=np.int64)
N_REGION_REGISTERS = 7

REGISTER_NAMES = (
    "shared_and_exclusive_count_register",
    "paused_register",
    "lock_acq_counter_register",
    "tenant_acq_counter_register",
)
REGION_REGISTER_NAMES = (
    "left_bound_register",
    "right_bound_register",
    "head_register",
    "tail_register",
    "slots_two_sides_register",
    "granted_count_register",
    "occupancy_peak_register",
)


def register_name(reg: int) -> str:
    """Human name of register array id ``reg`` as recorded in the access trace: per-lock
    registers, then each class's region registers; slot array ``a`` is recorded as ``-1 - a``."""
    if reg < 0:
        return f"slot_array[{-1 - reg}]"
    if reg < N_GLOBAL_REGISTERS:
        return REGISTER_NAMES[reg]
    c, r = divmod(reg - N_GLOBAL_REGISTERS, N_REGION_REGISTERS)
    return f"{REGION_REGISTER_NAMES[r]}[class {c}]"


WRITTEN_SHARE = 1 / 8
"""A copy-on-write page costs several times what writing it afresh does
(:mod:`netlock.dataplane.blank_pages`)."""
CLEAR_PER_COPIED_BYTE = 4
"""A switch below :data:`WRITTEN_SHARE` takes a spare when clearing it writes at most this
many bytes per byte of the rows its locks take: those rows' pages would otherwise be copied
on first write, several times the cost of writing a page already the process's. TPC-C high
(8.4K locks): cached setup 0.3-0.4 ms shorter, its loop no longer copying the slots' pages
(issue 32)."""


SPARES = Spares(kept=2)
"""Register rows of gone switches (:func:`give_back`), for the next switch of their geometry
(:mod:`netlock.dataplane.spares`): two sets, so that runs alternating between two geometries
keep theirs (at most 52 MB for the paper's two-class geometry)."""


class Used(NamedTuple):
    """What a gone switch may have written in its rows: the lock-table rows before ``rows``
    and the slots before ``slots``; ``mapped``: its rows are copy-on-write copies
    (:mod:`netlock.dataplane.blank_pages`), their pages the process's only where written."""

    rows: int
    slots: int
    mapped: bool


def new_state(geometry: SwitchGeometry, max_tenants: int, trace_capacity: int,
              locks_expected: int = 0) -> dict[str, np.ndarray]:
    """Fresh, empty ``locks``, ``regions``, ``slots``, ``tenants`` and ``ctl`` arrays: the
    state :func:`clear_state` leaves. The register rows (tens of MB for the paper's 100K
    slots) are copy-on-write copies of one written set per geometry
    (:mod:`netlock.dataplane.blank_pages`): a page costs only when first written.

    A lock needs at least one slot, so the lock index space has ``total_slots`` entries.
    ``trace_capacity`` is the number of register accesses the trace can hold (0 = off).
    ``locks_expected``: locks about to be installed; from :data:`WRITTEN_SHARE` of the rows
    on, the rows are written (most of their pages would be copied anyway). A gone switch's
    rows given back (:func:`give_back`) are taken instead, with what it used cleared, when
    the rows would be written or clearing them is cheap (:data:`CLEAR_PER_COPIED_BYTE`).
    """
    written = locks_expected >= WRITTEN_SHARE * geometry.total_slots
    tenants = np.zeros((max_tenants, N_TENANT_COLS), dtype=np.int64)
    ctl = np.zeros(C_HEADER + 3 * trace_capacity, dtype=np.int64)
    ctl[C_TRACE_ON] = int(trace_capacity > 0)
    spare = SPARES.take(geometry, partial(_cheap_to_clear, geometry, locks_expected, written))
    if spare is not None:
        (locks, regions, slots), used = spare
        clear_state(locks, regions, slots, used.rows, used.slots)
        return {"locks": locks, "regions": regions, "slots": slots, "tenants": tenants,
                "ctl": ctl}
    rows = {name: blank_copy((name, geometry), partial(make, geometry), written)
            for name, make in (("locks", _empty_locks), ("regions", _empty_regions),
                               ("slots", _empty_slots))}
    return {**rows, "tenants": tenants, "ctl": ctl}


def _cheap_to_clear(geometry: SwitchGeometry, locks_expected: int, written: bool,
                    used: Used) -> tuple[bool, int] | None:
    """How good a spare that ``used`` says what to clear of is for a switch about to take
    ``locks_expected`` locks (higher is better; None: fresh rows are better). Rows that
    would be written afresh (``written``) take any written spare, the cheapest to clear
    first: not a mapped one, whose pages the switch would mostly copy on first write.
    Others take any whose clearing is cheap, written ones first, then the one whose rows
    were used most (its used pages are the process's already)."""
    lock_bytes = 8 * (N_LOCK_COLS + geometry.priorities * N_REGION_COLS)
    cleared = used.rows * lock_bytes + used.slots * 8 * N_SLOT_COLS
    if written:
        return None if used.mapped else (True, -cleared)
    if cleared > CLEAR_PER_COPIED_BYTE * locks_expected * lock_bytes:
        return None
    return not used.mapped, cleared


def give_back(geometry: SwitchGeometry, locks: np.ndarray, regions: np.ndarray,
              slots: np.ndarray, ctl: np.ndarray) -> None:
    """Keep a gone switch's register rows for the next switch of ``geometry`` that
    :func:`new_state` makes; taken only when nothing else refers to them by then. The
    caller vouches that nothing wrote lock-table rows from ``ctl[C_LOCK_ROWS]`` on (only
    :meth:`netlock.dataplane.SwitchDataPlane.restore` does), nor slots outside the regions
    of the rows before it (a region moved or removed may have): neither is cleared."""
    rows = int(ctl[C_LOCK_ROWS])
    slots_used = int(regions[:, :rows, R_RIGHT].max(initial=-1)) + 1
    mapped = any(array.base is not None for array in (locks, regions, slots))
    SPARES.give_back(geometry, (locks, regions, slots), Used(rows, slots_used, mapped))


def _empty_locks(geometry: SwitchGeometry) -> np.ndarray:
    locks = np.empty((geometry.total_slots, N_LOCK_COLS), dtype=np.int64)
    _fill_rows(locks, EMPTY_LOCK_ROW)
    return locks


def _empty_regions(geometry: SwitchGeometry) -> np.ndarray:
    regions = np.empty((geometry.priorities, geometry.total_slots, N_REGION_COLS),
                       dtype=np.int64)
    _fill_rows(regions.reshape(-1, N_REGION_COLS), EMPTY_REGION_ROW)
    return regions


def _empty_slots(geometry: SwitchGeometry) -> np.ndarray:
    slots = np.empty((geometry.total_slots, N_SLOT_COLS), dtype=np.int64)
    for a, (first, end) in enumerate(pairwise(geometry.array_starts.tolist())):
        _fill_rows(slots[first:end], _row(N_SLOT_COLS, {S_ARRAY: a}))
    return slots


FILL_BLOCK_BYTES = 1 << 18
"""Rows written one by one before the rest are copies of them: a block a core's cache holds."""


def _row(width: int, values: dict[int, int]) -> np.ndarray:
    """A row of ``width`` zeros but ``values`` (column -> value)."""
    row = np.zeros(width, dtype=np.int64)
    for col, value in values.items():
        row[col] = value
    row.flags.writeable = False
    return row


EMPTY_LOCK_ROW = _row(N_LOCK_COLS, {L_LOCK_ID: -1})
"""A free lock-table row."""
EMPTY_REGION_ROW = _row(N_REGION_COLS, {R_LEFT: -1, R_RIGHT: -2})
"""A lock's region row in a class where it has none."""


def _fill_rows(rows: np.ndarray, row: np.ndarray) -> None:
    """Write ``row`` into every row of the C-contiguous 2-D ``rows`` in one pass: a block of
    rows, then copies of the block. Zeroed rows then each column written were two passes over
    the 26 MB of the paper's two-class switch, 1.5 ms of a TPC-C run's cached setup against
    1.0 (issue 32)."""
    n = len(rows)
    block = max(1, min(n, FILL_BLOCK_BYTES // row.nbytes))
    rows[:block] = row
    for at in range(block, n, block):
        rows[at:at + block] = rows[:min(block, n - at)]


def clear_state(locks: np.ndarray, regions: np.ndarray, slots: np.ndarray,
                rows: int | None = None, slots_used: int | None = None) -> None:
    """Forget every lock and queued request, in place (a switch failure). ``rows`` and
    ``slots_used``: the lock-table rows and the slots in use before, when those from there
    on are known to be empty (a gone switch's :class:`Used`): only the ones before them are
    written. Clearing all 100K slots was 0.3-0.4 ms of a TPC-C run's cached setup whose plan
    used 9K of them (issue 32)."""
    used = len(locks) if rows is None else rows
    _fill_rows(locks[:used], EMPTY_LOCK_ROW)
    for regions_of_class in regions:
        _fill_rows(regions_of_class[:used], EMPTY_REGION_ROW)
    slots[:len(slots) if slots_used is None else slots_used, :SLOT_STATE_COLS] = 0
