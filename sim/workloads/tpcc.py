"""TPC-C NewOrder lock sets, as the NetLock authors lock them (design notes, "Testbed").

Per NewOrder transaction, with ``ol_cnt`` uniform in ``ol_cnt_min..ol_cnt_max`` (5..15):

- warehouse row: 1 S (``w_tax``);
- district row: 1 S (``d_tax``) + 1 X (``d_next_o_id``);
- customer fields: 3 S (``c_discount``, ``c_last``, ``c_credit``);
- order and new-order inserts: 2 X, on fresh rows;
- per item: item fields 3 S, stock fields 2 S + 3 X, order-line fields 3 X.

So a transaction holds ``8 + 11 * ol_cnt`` locks, ``5 + 5 * ol_cnt`` of them shared.
Item ids follow TPC-C's NURand(8191, 1, 100000) and are distinct within a transaction;
customers NURand(1023, 1, 3000); each item is supplied by a remote warehouse with
probability ``remote_fraction`` (1 % in TPC-C).

Clients and warehouses: client ``c`` runs on node ``c % nodes``; node ``m`` owns warehouses
``m * warehouses_per_node ..`` and every transaction picks its home warehouse uniformly
among its node's (1 warehouse per node = high contention, 10 = low contention).

Fresh rows: order ids come from a per-district counter (TPC-C's ``d_next_o_id``) that
wraps after ``order_ring`` orders, so the id space stays finite while any row in use is
fresh. The counters are the generator's only state; a fixed seed and the same sequence
of calls give the same transactions.

Lock-id encoding (:class:`TpccLockSpace`): tables in the order of :class:`Table`, each a
contiguous block of ``rows * fields`` ids; ``lock_id = base[table] + row * fields + field``.
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
_FIXED_LOCKS = 8
_ITEM_LOCKS = 11


class Table(IntEnum):
    """TPC-C tables in lock-id order (also the global acquisition order)."""

    WAREHOUSE = 0
    DISTRICT = 1
    CUSTOMER = 2
    ORDER = 3
    NEW_ORDER = 4
    ITEM = 5
    STOCK = 6
    ORDER_LINE = 7


FIELDS: dict[Table, tuple[str, ...]] = {
    Table.WAREHOUSE: ("w_tax",),
    Table.DISTRICT: ("d_tax", "d_next_o_id"),
    Table.CUSTOMER: ("c_discount", "c_last", "c_credit"),
    Table.ORDER: ("o_row",),
    Table.NEW_ORDER: ("no_row",),
    Table.ITEM: ("i_price", "i_name", "i_data"),
    Table.STOCK: ("s_quantity", "s_ytd", "s_order_cnt", "s_dist_xx", "s_data"),
    Table.ORDER_LINE: ("ol_i_id", "ol_supply_w_id", "ol_amount"),
}


def nurand(rng: np.random.Generator, a: int, x: int, y: int, c: int,
           size: int | tuple[int, ...]) -> np.ndarray:
    """TPC-C NURand(A, x, y) with run-time constant ``c``: int64 values in ``x..y``."""
    r1 = rng.integers(0, a + 1, size=size, dtype=np.int64)
    r2 = rng.integers(x, y + 1, size=size, dtype=np.int64)
    return ((r1 | r2) + c) % (y - x + 1) + x


@dataclass(frozen=True)
class TpccLockSpace:
    """The (table, row, field) <-> lock id encoding for ``warehouses`` warehouses."""

    warehouses: int
    order_ring: int = 3000

    def rows(self, table: Table) -> int:
        w, ring = self.warehouses, self.order_ring
        return {
            Table.WAREHOUSE: w,
            Table.DISTRICT: w * DISTRICTS,
            Table.CUSTOMER: w * DISTRICTS * CUSTOMERS,
            Table.ORDER: w * DISTRICTS * ring,
            Table.NEW_ORDER: w * DISTRICTS * ring,
            Table.ITEM: ITEMS,
            Table.STOCK: w * ITEMS,
            Table.ORDER_LINE: w * DISTRICTS * ring * MAX_ORDER_LINES,
        }[table]

    @cached_property
    def bases(self) -> np.ndarray:
        """First lock id of every table, plus the total at the end (int64, len 9)."""
        sizes = [self.rows(t) * len(FIELDS[t]) for t in Table]
        return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)

    @property
    def n_locks(self) -> int:
        return int(self.bases[-1])

    def encode(self, table: Table, row: np.ndarray | int, field: int) -> np.ndarray:
        """Lock ids of ``(table, row, field)`` (vectorised over ``row``)."""
        return self.bases[table] + np.asarray(row, dtype=np.int64) * len(FIELDS[table]) + field

    def decode(self, lock_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(table, row, field)`` arrays of ``lock_ids``."""
        lock_ids = np.asarray(lock_ids, dtype=np.int64)
        table = np.searchsorted(self.bases, lock_ids, side="right") - 1
        nfields = np.array([len(FIELDS[t]) for t in Table], dtype=np.int64)[table]
        row, field = np.divmod(lock_ids - self.bases[table], nfields)
        return table, row, field


class TpccNewOrder:
    """NewOrder transactions for ``nodes`` client nodes of ``warehouses_per_node`` each."""

    def __init__(self, warehouses_per_node: int, nodes: int, ol_cnt_min: int = 5,
                 ol_cnt_max: int = 15, remote_fraction: float = 0.01, order_ring: int = 3000,
                 c_item: int = 7911, c_customer: int = 259) -> None:
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
        self.space = TpccLockSpace(warehouses_per_node * nodes, order_ring)
        self._next_order = np.zeros(self.space.warehouses * DISTRICTS, dtype=np.int64)

    @property
    def n_locks(self) -> int:
        return self.space.n_locks

    @property
    def warehouses(self) -> int:
        return self.space.warehouses

    def reset(self) -> None:
        """Restart every district's order counter."""
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
        order_row = district * self.space.order_ring + self._order_ids(district)

        sp = self.space
        fixed = np.stack([
            sp.encode(Table.WAREHOUSE, home, 0),
            sp.encode(Table.DISTRICT, district, 0),
            sp.encode(Table.DISTRICT, district, 1),
            *(sp.encode(Table.CUSTOMER, district * CUSTOMERS + customer, f) for f in range(3)),
            sp.encode(Table.ORDER, order_row, 0),
            sp.encode(Table.NEW_ORDER, order_row, 0),
        ], axis=1)
        fixed_modes = np.array([SHARED, SHARED, EXCLUSIVE, SHARED, SHARED, SHARED,
                                EXCLUSIVE, EXCLUSIVE], dtype=np.int8)

        stock_row = supply * ITEMS + items - 1
        line_row = order_row[:, None] * MAX_ORDER_LINES + np.arange(MAX_ORDER_LINES)[None, :]
        per_item = np.stack([
            *(sp.encode(Table.ITEM, items - 1, f) for f in range(3)),
            *(sp.encode(Table.STOCK, stock_row, f) for f in range(5)),
            *(sp.encode(Table.ORDER_LINE, line_row, f) for f in range(3)),
        ], axis=2)
        item_modes = np.array([SHARED] * 3 + [EXCLUSIVE] * 3 + [SHARED] * 2 + [EXCLUSIVE] * 3,
                              dtype=np.int8)

        ids = np.concatenate([fixed, per_item.reshape(n, -1)], axis=1)
        modes = np.concatenate([np.broadcast_to(fixed_modes, (n, _FIXED_LOCKS)),
                                np.broadcast_to(np.tile(item_modes, MAX_ORDER_LINES),
                                                (n, _ITEM_LOCKS * MAX_ORDER_LINES))], axis=1)
        keep = np.concatenate([np.ones((n, _FIXED_LOCKS), dtype=bool),
                               np.repeat(valid, _ITEM_LOCKS, axis=1)], axis=1)
        ids = np.where(keep, ids, np.iinfo(np.int64).max)
        order = np.argsort(ids, axis=1, kind="stable")
        ids = np.take_along_axis(ids, order, axis=1)
        modes = np.take_along_axis(modes, order, axis=1)
        keep = np.take_along_axis(keep, order, axis=1)
        sizes = _FIXED_LOCKS + _ITEM_LOCKS * ol_cnt
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        return TxnBatch(lock_ids=ids[keep], modes=modes[keep], offsets=offsets,
                        client_ids=clients)

    def describe(self) -> str:
        sp = self.space
        blocks = ", ".join(f"{t.name.lower()} {sp.bases[t]}..{sp.bases[t + 1] - 1} "
                           f"({len(FIELDS[t])} field(s)/row)" for t in Table)
        return (f"TPC-C NewOrder: {self.nodes} node(s) x {self.warehouses_per_node} "
                f"warehouse(s); {self.ol_cnt_min}..{self.ol_cnt_max} items per order; "
                f"{_FIXED_LOCKS} + {_ITEM_LOCKS} * ol_cnt locks per transaction; "
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
