"""The switch's lock table as the fast engine reads it, and the switch's arrays kept for the
next rack of the process when a rack is gone.

The table maps a lock id to its row of the switch's registers: an array for lock ids below
:data:`DENSE_TABLE` (a lock's row + 1, 0 when it is not resident), a hash map for the others
(:func:`netlock.lockserver.hashmap.build_map`). The engine only reads it.
"""

from __future__ import annotations

import numpy as np

from netlock.dataplane import registers
from netlock.dataplane.registers import C_LOCK_ROWS, L_LOCK_ID
from netlock.dataplane.spares import Spares
from netlock.geometry import SwitchGeometry
from netlock.lockserver.hashmap import build_map

DENSE_TABLE = 1 << 22
"""Lock ids below this (and below the workload's lock count) are looked up in an array,
when it is dense enough (:data:`DENSE_CELLS_PER_LOCK`)."""
DENSE_CELLS_PER_LOCK = 16
"""The array is used only when it has at most this many cells per resident lock; a sparser
one is mostly cache misses (TPC-C low: 4M cells, 4 bytes each, for 20K resident locks, a
miss at nearly every send), and the hash map of the resident locks is a few hundred KB
that stays in the cache: TPC-C low's loop CPU paired ratio 0.967 with every id in the map
(8 pairs, all below 1)."""
SPARES = Spares(kept=2)
"""Dense tables of gone racks, by length, with the ids they hold (:func:`give_back`): two, as
the switches' registers (:data:`netlock.dataplane.registers.SPARES`; 16 MB each at most)."""


def lock_table(locks: np.ndarray, ctl: np.ndarray,
               n_locks: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(dense, keys, values)``: the lock table of a switch's ``locks`` and ``ctl`` for a
    workload of ``n_locks`` lock ids. The dense array is zeros but for the resident locks
    below its length (none when it would be sparser than :data:`DENSE_CELLS_PER_LOCK`, as
    TPC-C's is): a gone rack's given back (:func:`give_back`) with its entries cleared, else
    fresh zeros (up to 16 MB, 0.3 ms of a setup; issue 32)."""
    rows = np.flatnonzero(locks[:ctl[C_LOCK_ROWS], L_LOCK_ID] >= 0)
    ids = locks[rows, L_LOCK_ID]
    by_id = np.argsort(ids)
    resident, index = ids[by_id], rows[by_id]
    size = min(n_locks, DENSE_TABLE)
    if size > DENSE_CELLS_PER_LOCK * len(resident):
        size = 0
    spare = SPARES.take(size)
    if spare is None:
        dense = np.zeros(size, dtype=np.int32)
    else:
        (dense,), held = spare
        dense[held] = 0
    low = resident < size
    dense[resident[low]] = index[low] + 1
    keys, values = build_map(resident[~low], index[~low])
    return dense, keys, values


def give_back(geometry: SwitchGeometry, locks: np.ndarray, regions: np.ndarray,
              slots: np.ndarray, ctl: np.ndarray, dense: np.ndarray) -> None:
    """Keep a gone rack's switch registers (:func:`netlock.dataplane.registers.give_back`) and
    dense lock table for the next rack. The fast engine writes no lock-table rows: its
    switch takes its plan before the run and keeps it."""
    registers.give_back(geometry, locks, regions, slots, ctl)
    ids = locks[:int(ctl[C_LOCK_ROWS]), L_LOCK_ID]
    SPARES.give_back(len(dense), (dense,), ids[(ids >= 0) & (ids < len(dense))])
