"""TPC-C NewOrder lock sets: the NetLock authors' lock structure, with inserts locked as a
two-phase-locking (2PL) engine locks them.

A sketch (``workload.generator: sketch``): the authors' ``tpcc.py`` is an unused draft that
cannot run (``i_ids = i_ids.append(...)``, undefined helpers); the traces their client
replays come from DSLR's generator (:mod:`sim.workloads.tpcc_dslr`, ``generator: dslr``),
which the paper's experiments use.

What the authors' generator requests per NewOrder (netx-repo/NetLock,
``dpdk_code/client_code/tpcc.py``; its traces are loaded by ``include/new_order.h``), with
``ol_cnt`` uniform in ``ol_cnt_min..ol_cnt_max`` (TPC-C: 5..15):

- warehouse: 1 S (``w_tax``), one lock id per warehouse;
- district: 1 S (``d_tax``) + 1 X (``d_next_o_id``);
- customer: 3 S (``c_discount``, ``c_last``, ``c_credit``);
- order and new-order inserts: 2 X;
- per item: item 3 S (``i_price``, ``i_name``, ``i_data``; the item table is global),
  stock 2 S + 3 X (a row per (warehouse, item)), order-line insert 3 X.

Their "field" locks are per (row, field): ``get_lock_id('customer_t', w, d, c, i)`` for
field ``i``, so one row gives several ids that a transaction always takes together; this
module keeps that (:data:`FIELDS`). Their inserts name only the table:
``get_lock_id('order_t')`` for both the order and the new-order insert and
``get_lock_id('order_line_t', j)`` for order-line field ``j`` in every line, i.e.
table-level exclusive locks (lock type 9 in their traces), and their trace loader drops a
lock its transaction already requested, so each is taken once. Here the order and new-order
inserts lock their own tables. Item ids follow NURand(8191, 1, 100000) and are distinct
within a transaction; customers NURand(1023, 1, 3000); each item is supplied by a remote
warehouse with probability ``remote_fraction`` (TPC-C: 1 %).

Insert locks (``insert_locks``, config ``workload.insert_locks``), one of :data:`INSERT_LOCKS`:

- ``district`` (default): X on the district's insert point in ORDER and NEW_ORDER (1 each)
  and ORDER_LINE (its 3 fields), the same 5 locks for every NewOrder of that district.
  Why: TPC-C requires level-3 isolation (no phantoms) between NewOrder, Payment, Delivery
  and Order-Status (clause 3.4.1), so a 2PL engine guards the key range an insert goes into
  (key-range / next-key locking: ARIES/KVL, InnoDB's gap and insert-intention locks,
  SQL Server's RangeI_N). A new order's id is its district's ``d_next_o_id``, which only
  grows, so every insert of a district lands at one place: the end of that district's key
  range in each table. Every NewOrder of the district requests that lock (as would a
  phantom-free scan reaching the district's newest orders). The new row's own lock is
  not a lock-manager request in such an engine (InnoDB keeps it implicit in the row's
  transaction id) and nothing else asks for a row that does not exist yet. Mode X as in
  the authors' generator; it adds no conflict, because every holder also holds the
  district's ``d_next_o_id`` X.
- ``row``: X on the fresh rows (order, new-order: 1 each; order-line: 3 per line). Order
  ids come from per-district counters (``d_next_o_id``) that wrap after ``order_ring``
  orders, so the id space stays finite while a row in use is fresh; the counters are the
  generator's only state. Nobody else ever requests these locks: the toolkit's earlier
  model, kept for comparison.
- ``table``: X on one lock per table (order-line: per field), as the authors' earlier
  traces. It serialises every NewOrder of the rack; a 2PL engine takes an intention lock
  (IX) on the table for an insert, which never conflicts with another inserter's. Use it
  to reproduce those traces, not as a model of an engine.

A transaction holds ``8 + 11 * ol_cnt`` locks with ``row`` and ``11 + 8 * ol_cnt`` with
``district`` or ``table``; ``5 + 5 * ol_cnt`` of them are shared in all three. A fixed seed
and the same sequence of calls give the same transactions.

Lock-id encoding (:class:`TpccLockSpace`): tables in the order of :class:`TpccTable`, each a
contiguous block of ``rows * fields`` ids; ``lock_id = base[table] + row * fields + field``,
where an insert table's "row" is the insert lock's unit (order row or line, district, or 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from functools import cached_property

import numpy as np

from sim.workloads.base import EXCLUSIVE, SHARED, TxnBatch, as_client_ids

DISTRICTS = 10
CUSTOMERS = 3000
ITEMS = 100_000
MAX_ORDER_LINES = 15
INSERT_LOCKS = ("row", "district", "table")
"""Granularities of the inserts' locks, finest first (module docstring, "Insert locks")."""


class TpccTable(IntEnum):
    """TPC-C tables in lock-id order (also the global acquisition order)."""

    WAREHOUSE = 0
    DISTRICT = 1
    CUSTOMER = 2
    ORDER = 3
    NEW_ORDER = 4
    ITEM = 5
    STOCK = 6
    ORDER_LINE = 7


FIELDS: dict[TpccTable, tuple[str, ...]] = {
    TpccTable.WAREHOUSE: ("w_tax",),
    TpccTable.DISTRICT: ("d_tax", "d_next_o_id"),
    TpccTable.CUSTOMER: ("c_discount", "c_last", "c_credit"),
    TpccTable.ORDER: ("o_row",),
    TpccTable.NEW_ORDER: ("no_row",),
    TpccTable.ITEM: ("i_price", "i_name", "i_data"),
    TpccTable.STOCK: ("s_quantity", "s_ytd", "s_order_cnt", "s_dist_xx", "s_data"),
    TpccTable.ORDER_LINE: ("ol_i_id", "ol_supply_w_id", "ol_amount"),
}

DROPPED = np.iinfo(np.int64).max
"""Packed (id, mode) of an order line the transaction does not have (sorts last)."""


def nurand(rng: np.random.Generator, a: int, x: int, y: int, c: int,
           size: int | tuple[int, ...]) -> np.ndarray:
    """TPC-C NURand(A, x, y) with run-time constant ``c``: int64 values in ``x..y``."""
    r1 = rng.integers(0, a + 1, size=size, dtype=np.int64)
    r2 = rng.integers(x, y + 1, size=size, dtype=np.int64)
    return ((r1 | r2) + c) % (y - x + 1) + x


@dataclass(frozen=True)
class TpccLockSpace:
    """The (table, row, field) <-> lock id encoding for ``warehouses`` warehouses.

    The insert tables (ORDER, NEW_ORDER, ORDER_LINE) have one "row" per insert lock unit
    of ``insert_locks``: an order (a line for ORDER_LINE) of the ``order_ring`` per
    district, a district, or the one table.
    """

    warehouses: int
    order_ring: int = 3000
    insert_locks: str = "district"

    def __post_init__(self) -> None:
        if self.insert_locks not in INSERT_LOCKS:
            raise ValueError(f"workload.insert_locks: must be one of {', '.join(INSERT_LOCKS)}, "
                             f"got {self.insert_locks!r}")

    def rows(self, table: TpccTable) -> int:
        w = self.warehouses
        if table in (TpccTable.ORDER, TpccTable.NEW_ORDER, TpccTable.ORDER_LINE):
            return self.insert_units(table)
        return {
            TpccTable.WAREHOUSE: w,
            TpccTable.DISTRICT: w * DISTRICTS,
            TpccTable.CUSTOMER: w * DISTRICTS * CUSTOMERS,
            TpccTable.ITEM: ITEMS,
            TpccTable.STOCK: w * ITEMS,
        }[table]

    def insert_units(self, table: TpccTable) -> int:
        """Insert lock units ("rows") of an insert table under ``insert_locks``."""
        if self.insert_locks == "table":
            return 1
        districts = self.warehouses * DISTRICTS
        if self.insert_locks == "district":
            return districts
        lines = MAX_ORDER_LINES if table == TpccTable.ORDER_LINE else 1
        return districts * self.order_ring * lines

    @cached_property
    def bases(self) -> np.ndarray:
        """First lock id of every table, plus the total at the end (int64, len 9)."""
        sizes = [self.rows(t) * len(FIELDS[t]) for t in TpccTable]
        return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)

    @property
    def n_locks(self) -> int:
        return int(self.bases[-1])

    def encode(self, table: TpccTable, row: np.ndarray | int, field: int) -> np.ndarray:
        """Lock ids of ``(table, row, field)`` (vectorised over ``row``)."""
        return self.bases[table] + np.asarray(row, dtype=np.int64) * len(FIELDS[table]) + field

    def decode(self, lock_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(table, row, field)`` arrays of ``lock_ids``."""
        lock_ids = np.asarray(lock_ids, dtype=np.int64)
        table = np.searchsorted(self.bases, lock_ids, side="right") - 1
        nfields = np.array([len(FIELDS[t]) for t in TpccTable], dtype=np.int64)[table]
        row, field = np.divmod(lock_ids - self.bases[table], nfields)
        return table, row, field


class TpccNewOrder:
    """NewOrder transactions for ``nodes`` client nodes of ``warehouses_per_node`` each."""

    def __init__(self, warehouses_per_node: int, nodes: int, ol_cnt_min: int = 5,
                 ol_cnt_max: int = 15, remote_fraction: float = 0.01, order_ring: int = 3000,
                 c_item: int = 7911, c_customer: int = 259,
                 insert_locks: str = "district") -> None:
        if warehouses_per_node < 1 or nodes < 1:
            raise ValueError(f"workload.warehouses and the node count must be >= 1, got "
                             f"{warehouses_per_node} and {nodes}")
        if not 1 <= ol_cnt_min <= ol_cnt_max <= MAX_ORDER_LINES:
            raise ValueError(f"workload.ol_cnt_min/ol_cnt_max: need 1 <= min <= max <= "
                             f"{MAX_ORDER_LINES}, got {ol_cnt_min}..{ol_cnt_max}")
        if not 0.0 <= remote_fraction <= 1.0:
            raise ValueError(f"remote_fraction: must be in [0, 1], got {remote_fraction}")
        self.warehouses_per_node = warehouses_per_node
        self.nodes = nodes
        self.ol_cnt_min = ol_cnt_min
        self.ol_cnt_max = ol_cnt_max
        self.remote_fraction = remote_fraction
        self.c_item = c_item
        self.c_customer = c_customer
        self.space = TpccLockSpace(warehouses_per_node * nodes, order_ring, insert_locks)
        self._next_order = np.zeros(self.space.warehouses * DISTRICTS, dtype=np.int64)

    @property
    def n_locks(self) -> int:
        return self.space.n_locks

    @property
    def warehouses(self) -> int:
        return self.space.warehouses

    @property
    def insert_locks(self) -> str:
        return self.space.insert_locks

    @property
    def clients_independent(self) -> bool:
        """True unless inserts lock fresh order rows: their order ids come from counters
        the clients of a node share (see :mod:`sim.workloads.base`)."""
        return self.insert_locks != "row"

    @property
    def fixed_locks(self) -> int:
        """Locks per transaction that do not depend on ``ol_cnt``."""
        return 8 if self.insert_locks == "row" else 11

    @property
    def item_locks(self) -> int:
        """Locks per order line (item, stock and, for ``row`` inserts, the order line)."""
        return 11 if self.insert_locks == "row" else 8

    def reset(self) -> None:
        """Restart every district's order counter (used by ``row`` insert locks only)."""
        self._next_order[:] = 0

    def next_txn(self, client_id: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        return self.sample_txns(1, rng, np.array([client_id])).txn(0)

    def sample_txns(self, n: int, rng: np.random.Generator,
                    client_ids: np.ndarray | None = None) -> TxnBatch:
        clients = as_client_ids(n, client_ids)
        home = (clients % self.nodes) * self.warehouses_per_node + rng.integers(
            0, self.warehouses_per_node, size=n)
        district = home * DISTRICTS + rng.integers(0, DISTRICTS, size=n)
        customer = nurand(rng, 1023, 1, CUSTOMERS, self.c_customer, n) - 1
        ol_cnt = rng.integers(self.ol_cnt_min, self.ol_cnt_max + 1, size=n)
        valid = np.arange(MAX_ORDER_LINES)[None, :] < ol_cnt[:, None]
        items = self._distinct_items(rng, valid)
        supply = self._supply_warehouses(rng, home)
        unit = self._insert_units(district)

        sp = self.space
        x, sh = EXCLUSIVE, SHARED
        fixed = [sp.encode(TpccTable.WAREHOUSE, home, 0),
                 sp.encode(TpccTable.DISTRICT, district, 0),
                 sp.encode(TpccTable.DISTRICT, district, 1),
                 *(sp.encode(TpccTable.CUSTOMER, district * CUSTOMERS + customer, f)
                   for f in range(3)),
                 sp.encode(TpccTable.ORDER, unit, 0),
                 sp.encode(TpccTable.NEW_ORDER, unit, 0)]
        fixed_modes = [sh, sh, x, sh, sh, sh, x, x]
        stock_row = supply * ITEMS + items - 1
        per_item = [*(sp.encode(TpccTable.ITEM, items - 1, f) for f in range(3)),
                    *(sp.encode(TpccTable.STOCK, stock_row, f) for f in range(5))]
        item_modes = [sh] * 3 + [x] * 3 + [sh] * 2
        if self.insert_locks == "row":
            line = unit[:, None] * MAX_ORDER_LINES + np.arange(MAX_ORDER_LINES)[None, :]
            per_item += [sp.encode(TpccTable.ORDER_LINE, line, f) for f in range(3)]
            item_modes += [x] * 3
        else:
            fixed += [sp.encode(TpccTable.ORDER_LINE, unit, f) for f in range(3)]
            fixed_modes += [x] * 3

        nf, ni = self.fixed_locks, self.item_locks
        ids = np.concatenate([np.stack(fixed, axis=1),
                              np.stack(per_item, axis=2).reshape(n, -1)], axis=1)
        modes = np.concatenate([
            np.broadcast_to(np.array(fixed_modes, dtype=np.int8), (n, nf)),
            np.broadcast_to(np.tile(np.array(item_modes, dtype=np.int8), MAX_ORDER_LINES),
                            (n, ni * MAX_ORDER_LINES))], axis=1)
        keep = np.concatenate([np.ones((n, nf), dtype=bool), np.repeat(valid, ni, axis=1)],
                              axis=1)
        # A transaction's locks are distinct, so sorting (id, mode) pairs packed in one
        # integer orders them as a stable sort by id would, several times faster.
        packed = np.where(keep, 2 * ids + modes, DROPPED)
        packed.sort(axis=1)
        packed = packed[packed != DROPPED]
        sizes = nf + ni * ol_cnt
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        return TxnBatch(lock_ids=packed >> 1, modes=(packed & 1).astype(np.int8),
                        offsets=offsets, client_ids=clients)

    def describe(self) -> str:
        sp = self.space
        blocks = ", ".join(f"{t.name.lower()} {sp.bases[t]}..{sp.bases[t + 1] - 1} "
                           f"({len(FIELDS[t])} field(s)/row)" for t in TpccTable)
        return (f"TPC-C NewOrder: {self.nodes} node(s) x {self.warehouses_per_node} "
                f"warehouse(s); {self.ol_cnt_min}..{self.ol_cnt_max} items per order; "
                f"inserts lock per {self.insert_locks}; {self.fixed_locks} + "
                f"{self.item_locks} * ol_cnt locks per transaction; "
                f"lock id = table base + row * fields + field, tables: {blocks}")

    def _distinct_items(self, rng: np.random.Generator, valid: np.ndarray) -> np.ndarray:
        """Item ids (1..ITEMS) per order line, distinct within each transaction, sorted."""
        n = len(valid)
        pad = ITEMS + 1 + np.arange(MAX_ORDER_LINES)[None, :]

        def draw(rows: int, mask: np.ndarray) -> np.ndarray:
            raw = nurand(rng, 8191, 1, ITEMS, self.c_item, (rows, MAX_ORDER_LINES))
            return np.sort(np.where(mask, raw, pad), axis=1)

        items = draw(n, valid)
        while True:
            dup = (items[:, 1:] == items[:, :-1]).any(axis=1)
            if not dup.any():
                return np.where(valid, items, 1)
            items[dup] = draw(int(dup.sum()), valid[dup])

    def _supply_warehouses(self, rng: np.random.Generator, home: np.ndarray) -> np.ndarray:
        n = len(home)
        supply = np.repeat(home[:, None], MAX_ORDER_LINES, axis=1)
        w = self.space.warehouses
        if w == 1 or self.remote_fraction == 0:
            return supply
        remote = rng.random((n, MAX_ORDER_LINES)) < self.remote_fraction
        other = (supply + 1 + rng.integers(0, w - 1, size=(n, MAX_ORDER_LINES))) % w
        return np.where(remote, other, supply)

    def _insert_units(self, district: np.ndarray) -> np.ndarray:
        """Each transaction's insert lock unit: its fresh order row, district, or 0."""
        if self.insert_locks == "table":
            return np.zeros_like(district)
        if self.insert_locks == "district":
            return district
        return district * self.space.order_ring + self._order_ids(district)

    def _order_ids(self, district: np.ndarray) -> np.ndarray:
        """Next order id of each transaction's district, advancing the counters."""
        if len(district) == 0:
            return np.zeros(0, dtype=np.int64)
        order = np.argsort(district, kind="stable")
        sorted_d = district[order]
        starts = np.flatnonzero(np.r_[True, sorted_d[1:] != sorted_d[:-1]])
        rank_sorted = np.arange(len(district)) - np.repeat(starts, np.diff(np.r_[starts,
                                                                                len(district)]))
        rank = np.empty_like(rank_sorted)
        rank[order] = rank_sorted
        ids = (self._next_order[district] + rank) % self.space.order_ring
        np.add.at(self._next_order, district, 1)
        return ids
