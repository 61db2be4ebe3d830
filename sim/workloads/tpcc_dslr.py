"""DSLR's TPC-C lock generator, as the NetLock authors' client replays it.

The paper's TPC-C runs replay traces recorded from DSLR's generator (dongyoungy/rdma_2pc,
``src/new_proto4/tpcc_lock_gen.cc.no_tablelock`` and ``tpcc_lock_simulator.cc``; the
replaying client is netx-repo/NetLock ``dpdk_code/client_code/include/new_order.h``
``get_traces()``). This module draws the same transactions directly.

Transaction mix (``Generate``, ``1 + rand % 100`` against cumulative 45/88/92/96/100):
NewOrder 45 %, Payment 43 %, OrderStatus 4 %, Delivery 4 %, StockLevel 4 %. Row indices
within a warehouse (``tpcc_lock_gen.h``): warehouse 10, district 11 + d (d < 10), customer
21 + c, order 30021 + o, history 60021 + c, new-order 90021 + o, order line 120021 + o (one
line per order), stock 420021 + i, item 520021 + i (c, o < 30000; i < 100000); the
new-order *table* lock is index 5. Per transaction (S shared, X exclusive):

- NewOrder (9): warehouse S, district X, customer S, order X, new-order table IX,
  new-order row X, item S, stock X (same i as the item), order line X; o = c = d * 3000 +
  U[0, 3000), i = U[0, 100000).
- Payment (6 when ``y <= 60``, else 4): warehouse X, district X, customer c1 X (and c2 != c1
  X), history c1 X (and c2 X); c1, c2 = U[0, 30000).
- OrderStatus (5 when ``y <= 40``, else 3): customer c S (and c2 != c S), order c S (and
  c2 S), order line c S.
- Delivery (5): new-order table IX, new-order row n X, order n X, order line n X,
  customer n X; n = d * 3000 + U[0, 3000).
- StockLevel (3): district S, order line o S (o = U[0, 30000)), stock index 420021 S (the
  generator's stock loop runs ``NUM_ORDER_LINE_PER_ORDER = 1`` times with ``i = 0``).

``TPCCLockSimulator::CreateRequest`` adds ``local_warehouse * kTPCCNumObjects`` (700000,
``constants.h``) to every index of a transaction, ``local_warehouse = rand % num_warehouse``
drawn once per transaction; the NetLock client ignores ``target_lm_id``, reads
``target_obj_idx + 1`` as the lock id and maps lock types 1/7/8 to shared and 2/9 to
exclusive, so the table IX (type 9) is an exclusive lock. Hence every client of every
machine shares the same ``warehouses`` warehouses and the lock id is
``local_warehouse * 700000 + index + 1``. Lock ids are returned sorted (the toolkit's
acquisition order, :mod:`sim.workloads.base`); DSLR's own order is the listing above.

With ``uniform_ids`` (``workload.generator: dslr_uniform``) every request's lock id is
instead drawn uniformly from ``1 .. 7,000,000`` whatever the warehouses, keeping the
transactions' sizes and modes: the client's ``TPCC_UNIFORMBENCHMARK`` (new_order.h:155-156,
``c_target_obj_idx = (rand() % 7000000) + 1``), which console.py's ``mem_size`` (Figure 14b)
runs. A transaction drawing one id twice redraws it (the client would drop the repeat; at
most 9 of 7 M ids this is rare either way).

The generator is stateless: a client's transactions depend only on its random stream.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from netlock.config.derived import TPCC_DSLR_LOCKS
from sim.workloads.base import EXCLUSIVE, SHARED, TxnBatch, as_client_ids

OBJECTS_PER_WAREHOUSE = 700_000
"""DSLR's ``kTPCCNumObjects`` (constants.h), the lock-id stride of a warehouse."""
MIX_CUMULATIVE = (45, 88, 92, 96, 100)
"""``mix_`` of ``TPCCLockGen``: NewOrder, Payment, OrderStatus, Delivery, StockLevel."""
TXN_TYPES = ("new_order", "payment", "order_status", "delivery", "stock_level")

TABLE_NEW_ORDER = 5
WAREHOUSE = 10
DISTRICT = 11
CUSTOMER = 21
ORDER = 30_021
HISTORY = 60_021
NEW_ORDER = 90_021
ORDER_LINE = 120_021
STOCK = 420_021
ITEM = 520_021
DISTRICTS = 10
CUSTOMERS_PER_DISTRICT = 3000
CUSTOMERS = 30_000
ITEMS = 100_000
WIDTH = TPCC_DSLR_LOCKS
"""The most locks a transaction takes (NewOrder)."""

UNIFORM_IDS = 7_000_000
"""new_order.h:156: ``rand() % 7000000 + 1``, ids 1 .. 7,000,000."""

_PAD = np.iinfo(np.int64).max


@dataclass(frozen=True)
class TpccDslr:
    """DSLR's TPC-C over ``warehouses`` warehouses shared by all clients."""

    warehouses: int
    uniform_ids: bool = False

    def __post_init__(self) -> None:
        if self.warehouses < 1:
            raise ValueError(f"workload.warehouses: must be >= 1, got {self.warehouses}")

    @property
    def n_locks(self) -> int:
        if self.uniform_ids:
            return UNIFORM_IDS + 1
        return self.warehouses * OBJECTS_PER_WAREHOUSE

    @property
    def max_locks_per_txn(self) -> int:
        """The most locks one transaction takes (NewOrder's 9)."""
        return WIDTH

    @property
    def clients_independent(self) -> bool:
        """Stateless: a client's batches depend only on its stream."""
        return True

    def next_txn(self, client_id: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        return self.sample_txns(1, rng, np.array([client_id])).txn(0)

    def txn_types(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` transaction types (indices into :data:`TXN_TYPES`) drawn as DSLR does."""
        val = rng.integers(1, 101, size=n)
        return np.searchsorted(np.array(MIX_CUMULATIVE), val, side="left")

    def sample_txns(self, n: int, rng: np.random.Generator,
                    client_ids: np.ndarray | None = None) -> TxnBatch:
        clients = as_client_ids(n, client_ids)
        kind = self.txn_types(n, rng)
        idx = np.full((n, WIDTH), -1, dtype=np.int64)
        mode = np.zeros((n, WIDTH), dtype=np.int8)
        for k, fill in enumerate((_new_order, _payment, _order_status, _delivery,
                                  _stock_level)):
            rows = np.flatnonzero(kind == k)
            if len(rows):
                cols_idx, cols_mode = fill(len(rows), rng)
                idx[rows, :cols_idx.shape[1]] = cols_idx
                mode[rows, :len(cols_mode)] = cols_mode
        used = idx >= 0
        if self.uniform_ids:
            ids = _uniform_ids(rng, used)
        else:
            home = rng.integers(0, self.warehouses, size=n)
            ids = home[:, None] * OBJECTS_PER_WAREHOUSE + idx + 1
        packed = np.where(used, 2 * ids + mode, _PAD)
        packed.sort(axis=1)
        packed = packed[packed != _PAD]
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(used.sum(axis=1), out=offsets[1:])
        return TxnBatch(lock_ids=packed >> 1, modes=(packed & 1).astype(np.int8),
                        offsets=offsets, client_ids=clients)

    def describe(self) -> str:
        if self.uniform_ids:
            return ("TPC-C as DSLR generates it, each lock id replaced by a uniform draw "
                    f"from 1..{UNIFORM_IDS:,} (the client's TPCC_UNIFORMBENCHMARK): 3..9 "
                    "locks per transaction (~6.76, ~76 % exclusive)")
        return (f"TPC-C as DSLR generates it (dongyoungy/rdma_2pc tpcc_lock_gen.cc."
                f"no_tablelock): NewOrder/Payment/OrderStatus/Delivery/StockLevel "
                f"45/43/4/4/4 %, 3..9 row locks per transaction (~6.76, ~76 % exclusive); "
                f"{self.warehouses} warehouse(s) shared by all clients, lock id = "
                f"warehouse * {OBJECTS_PER_WAREHOUSE} + row index + 1")


def _uniform_ids(rng: np.random.Generator, used: np.ndarray) -> np.ndarray:
    """Uniform ids in ``1 .. UNIFORM_IDS`` per used cell, distinct within each row."""
    width = used.shape[1]
    pad = UNIFORM_IDS + 1 + np.arange(width)[None, :]
    ids = np.where(used, rng.integers(1, UNIFORM_IDS + 1, size=used.shape), pad)
    while True:
        order = np.sort(ids, axis=1)
        dup = (order[:, 1:] == order[:, :-1]).any(axis=1)
        if not dup.any():
            return ids
        ids[dup] = np.where(used[dup], rng.integers(1, UNIFORM_IDS + 1,
                                                    size=(int(dup.sum()), width)), pad)


def _distinct_pair(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Two customer ids ``c1 != c2`` per row, c2 redrawn while equal (as DSLR's loop)."""
    c1 = rng.integers(0, CUSTOMERS, size=n)
    c2 = rng.integers(0, CUSTOMERS, size=n)
    same = c1 == c2
    while same.any():
        c2[same] = rng.integers(0, CUSTOMERS, size=int(same.sum()))
        same = c1 == c2
    return c1, c2


def _cols(*pairs: tuple[np.ndarray | int, int], n: int) -> tuple[np.ndarray, np.ndarray]:
    """The index of each pair's column (an array of ``n`` or one value for every row) and
    the pairs' modes (one row, broadcast where written)."""
    idx = np.empty((n, len(pairs)), dtype=np.int64)
    for j, (p, _) in enumerate(pairs):
        idx[:, j] = p
    return idx, np.array([m for _, m in pairs], dtype=np.int8)


def _new_order(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    d = rng.integers(0, DISTRICTS, size=n)
    c = d * CUSTOMERS_PER_DISTRICT + rng.integers(0, CUSTOMERS_PER_DISTRICT, size=n)
    i = rng.integers(0, ITEMS, size=n)
    s, x = SHARED, EXCLUSIVE
    return _cols((WAREHOUSE, s), (DISTRICT + d, x), (CUSTOMER + c, s), (ORDER + c, x),
                 (TABLE_NEW_ORDER, x), (NEW_ORDER + c, x), (ITEM + i, s), (STOCK + i, x),
                 (ORDER_LINE + c, x), n=n)


def _payment(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    d = rng.integers(0, DISTRICTS, size=n)
    two = rng.integers(1, 101, size=n) <= 60
    c1, c2 = _distinct_pair(n, rng)
    x = EXCLUSIVE
    idx, mode = _cols((WAREHOUSE, x), (DISTRICT + d, x), (CUSTOMER + c1, x),
                      (HISTORY + c1, x), (CUSTOMER + c2, x), (HISTORY + c2, x), n=n)
    idx[~two, 4:] = -1
    return idx, mode


def _order_status(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    two = rng.integers(1, 101, size=n) <= 40
    c, c2 = _distinct_pair(n, rng)
    s = SHARED
    idx, mode = _cols((CUSTOMER + c, s), (ORDER + c, s), (ORDER_LINE + c, s),
                      (CUSTOMER + c2, s), (ORDER + c2, s), n=n)
    idx[~two, 3:] = -1
    return idx, mode


def _delivery(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    d = rng.integers(0, DISTRICTS, size=n)
    o = d * CUSTOMERS_PER_DISTRICT + rng.integers(0, CUSTOMERS_PER_DISTRICT, size=n)
    x = EXCLUSIVE
    return _cols((TABLE_NEW_ORDER, x), (NEW_ORDER + o, x), (ORDER + o, x),
                 (ORDER_LINE + o, x), (CUSTOMER + o, x), n=n)


def _stock_level(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    d = rng.integers(0, DISTRICTS, size=n)
    o = rng.integers(0, CUSTOMERS, size=n)
    s = SHARED
    return _cols((DISTRICT + d, s), (ORDER_LINE + o, s), (STOCK, s), n=n)
