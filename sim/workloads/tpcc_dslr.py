"""TPC-C lock sets as DSLR's generator makes them and the NetLock client replays them.

The NetLock authors' TPC-C runs replay recorded traces (netx-repo/NetLock,
``dpdk_code/client_code/include/new_order.h`` ``get_traces()``, lines 65-208:
``traces/tpcc_traces/10_14_2019/noTableLock_10v2_w%d_60s/trace_%d.csv``, rows ``txn_id,
action_type, target_lm_id, target_obj_idx, lock_type``). Those traces come from DSLR's lock
generator (dongyoungy/rdma_2pc): their lock-type codes are DSLR's ``LockType`` enum
(``src/new_proto4/constants.h`` lines 20-31: NONE 0, SHARED 1, EXCLUSIVE 2, ..., TABLE_S 7,
TABLE_IS 8, TABLE_IX 9), ``lock_num = 700000 * warehouse`` in ``console.py`` is DSLR's
``kTPCCNumObjects`` (``constants.h`` line 66), and the paper takes its TPC-C settings from DSLR.

What one transaction locks (``src/new_proto4/tpcc_lock_gen.cc.no_tablelock``; row offsets
from ``tpcc_lock_gen.h`` lines 49-72). The type is ``1 + rand % 100`` against the mix
45 / 88 / 92 / 96 / 100 (lines 15-20, 38-52):

- NewOrder (45 %, lines 126-234): warehouse S; district ``d`` X; customer ``c = d * 3000 +
  rand % 3000`` S; order ``c`` X; the NEW_ORDER table lock (TABLE_IX, line 176); new-order
  ``c`` X; item ``i = rand % 100000`` S; stock ``i`` X; one order line (``c``) X
  (NUM_ORDER_LINE_PER_ORDER = 1). 9 locks, 3 shared.
- Payment (43 %, lines 236-342): warehouse X; district X; customer ``c1 = rand % 30000`` X
  and history ``c1`` X; with ``y <= 60`` (60 %) also a second customer ``c2 != c1`` X and
  history ``c2`` X. 4 or 6 locks, all exclusive.
- OrderStatus (4 %, lines 344-434): customer ``c = rand % 30000`` S and order ``c`` S; with
  ``y <= 40`` (40 %) also customer and order ``c2 != c`` S; order line ``c`` S. 3 or 5
  locks, all shared.
- Delivery (4 %, lines 436-509): the NEW_ORDER table lock (TABLE_IX, line 450); new-order,
  order, order line and customer ``n = d * 3000 + rand % 3000`` X. 5 locks, all exclusive.
- StockLevel (4 %, lines 511-582): district S; order line ``rand % 30000`` S; stock row 0 S
  (the loop's ``STOCK_START_IDX + i`` with one order line). 3 locks, all shared.

The transaction's warehouse is ``rand % num_warehouse`` of *all* warehouses
(``tpcc_lock_simulator.cc`` lines 25 and 35: ``obj_index += local_warehouse *
kTPCCNumObjects``), and the NetLock client reads ``target_obj_idx + 1`` as the lock id and
ignores ``target_lm_id`` (``new_order.h`` lines 155-161), so every context of every client
machine shares the same warehouses: lock id = ``warehouse * 700000 + obj_index + 1``. The
client maps types 1, 7 and 8 to shared and 2 and 9 to exclusive (``new_order.h`` lines
189-194), so the table-level intention lock TABLE_IX is an exclusive lock on id
``warehouse * 700000 + 6`` (``TABLE_NEWORDER = 5``): every NewOrder and Delivery of a
warehouse takes it. ``table_locks=False`` leaves it out (the generator's row locks only).

Per transaction, on average: 0.45 x 9 + 0.43 x 5.2 + 0.04 x 3.8 + 0.04 x 5 + 0.04 x 3 =
6.758 locks, 0.45 x 6 + 0.43 x 5.2 + 0.04 x 5 = 5.136 of them exclusive (76 %); without the
table lock 6.268 and 4.646 (74 %). Transactions draw independently of each other and of
their client (the generator keeps no state), so the batches of different clients may be
drawn in any order.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np

from sim.workloads.base import EXCLUSIVE, SHARED, TxnBatch, as_client_ids

OBJECTS_PER_WAREHOUSE = 700_000
"""DSLR's ``kTPCCNumObjects`` (``constants.h`` line 66): lock ids per warehouse."""
MIX = (45, 88, 92, 96, 100)
"""Cumulative percentages of NewOrder, Payment, OrderStatus, Delivery, StockLevel."""
DISTRICTS = 10
CUSTOMERS_PER_DISTRICT = 3000
CUSTOMERS = 30_000
ITEMS = 100_000
TABLE_NEW_ORDER = 5
"""Object index of the NEW_ORDER table's lock (``tpcc_lock_gen.h`` line 44)."""
WAREHOUSE_ROW = 10
DISTRICT_ROW = 11
CUSTOMER_ROW = 21
ORDER_ROW = 30_021
HISTORY_ROW = 60_021
NEW_ORDER_ROW = 90_021
ORDER_LINE_ROW = 120_021
STOCK_ROW = 420_021
ITEM_ROW = 520_021
"""First object index of each table (``tpcc_lock_gen.h`` lines 49-57)."""
WIDTH = 9
"""The most locks one transaction takes (a NewOrder with the table lock)."""
DROPPED = np.iinfo(np.int64).max


class TxnType(IntEnum):
    """DSLR's transaction types in the order of the mix."""

    NEW_ORDER = 0
    PAYMENT = 1
    ORDER_STATUS = 2
    DELIVERY = 3
    STOCK_LEVEL = 4


def txn_types(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` transaction types drawn as ``1 + rand % 100`` against :data:`MIX` (int64)."""
    roll = rng.integers(1, 101, size=n)
    return np.searchsorted(np.asarray(MIX), roll, side="left").astype(np.int64)


def other_than(rng: np.random.Generator, first: np.ndarray, size: int) -> np.ndarray:
    """A uniform draw from ``0 .. size - 1`` different from ``first`` (DSLR redraws until it
    differs, which is the same distribution)."""
    return (first + 1 + rng.integers(0, size - 1, size=len(first))) % size


class TpccDslr:
    """DSLR's TPC-C transactions over ``warehouses`` warehouses shared by every client."""

    clients_independent = True

    def __init__(self, warehouses: int, table_locks: bool = True) -> None:
        if warehouses < 1:
            raise ValueError(f"workload.warehouses: must be >= 1, got {warehouses}")
        self.warehouses = warehouses
        self.table_locks = table_locks

    @property
    def n_locks(self) -> int:
        return self.warehouses * OBJECTS_PER_WAREHOUSE

    @property
    def most_locks(self) -> int:
        """The most locks one transaction takes."""
        return WIDTH if self.table_locks else WIDTH - 1

    def next_txn(self, client_id: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        return self.sample_txns(1, rng, np.array([client_id])).txn(0)

    def sample_txns(self, n: int, rng: np.random.Generator,
                    client_ids: np.ndarray | None = None) -> TxnBatch:
        clients = as_client_ids(n, client_ids)
        kind = txn_types(rng, n)
        warehouse = rng.integers(0, self.warehouses, size=n)
        district = rng.integers(0, DISTRICTS, size=n)
        customer = rng.integers(0, CUSTOMERS, size=n)
        second = other_than(rng, customer, CUSTOMERS)
        pair = rng.integers(1, 101, size=n)
        item = rng.integers(0, ITEMS, size=n)
        in_district = district * CUSTOMERS_PER_DISTRICT + rng.integers(
            0, CUSTOMERS_PER_DISTRICT, size=n)

        objs = np.full((n, WIDTH), -1, dtype=np.int64)
        modes = np.zeros((n, WIDTH), dtype=np.int64)
        self._new_order(objs, modes, kind == TxnType.NEW_ORDER, district, in_district, item)
        self._payment(objs, modes, kind == TxnType.PAYMENT, district, customer, second,
                      pair <= 60)
        self._order_status(objs, modes, kind == TxnType.ORDER_STATUS, customer, second,
                           pair <= 40)
        self._delivery(objs, modes, kind == TxnType.DELIVERY, in_district)
        self._stock_level(objs, modes, kind == TxnType.STOCK_LEVEL, district, customer)
        if not self.table_locks:
            objs[objs == TABLE_NEW_ORDER] = -1

        ids = warehouse[:, None] * OBJECTS_PER_WAREHOUSE + objs + 1
        packed = np.where(objs >= 0, 2 * ids + modes, DROPPED)
        packed.sort(axis=1)
        sizes = (packed != DROPPED).sum(axis=1)
        packed = packed[packed != DROPPED]
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        return TxnBatch(lock_ids=packed >> 1, modes=(packed & 1).astype(np.int8),
                        offsets=offsets, client_ids=clients)

    def describe(self) -> str:
        table = "with" if self.table_locks else "without"
        return (f"TPC-C as DSLR's generator makes it (dongyoungy/rdma_2pc "
                f"tpcc_lock_gen.cc.no_tablelock): NewOrder 45 %, Payment 43 %, OrderStatus, "
                f"Delivery and StockLevel 4 % each, row locks {table} the NEW_ORDER table "
                f"lock, up to {self.most_locks} per transaction; {self.warehouses} "
                f"warehouse(s) shared by every client; lock id = warehouse * "
                f"{OBJECTS_PER_WAREHOUSE} + DSLR's object index + 1")

    @staticmethod
    def _put(objs: np.ndarray, modes: np.ndarray, rows: np.ndarray,
             columns: list[tuple[np.ndarray | int, int]]) -> None:
        """Write ``(object index, mode)`` columns into the selected ``rows``."""
        for col, (obj, mode) in enumerate(columns):
            objs[rows, col] = obj[rows] if isinstance(obj, np.ndarray) else obj
            modes[rows, col] = mode

    def _new_order(self, objs: np.ndarray, modes: np.ndarray, rows: np.ndarray,
                   district: np.ndarray, order: np.ndarray, item: np.ndarray) -> None:
        x, s = EXCLUSIVE, SHARED
        self._put(objs, modes, rows, [
            (WAREHOUSE_ROW, s), (DISTRICT_ROW + district, x), (CUSTOMER_ROW + order, s),
            (ORDER_ROW + order, x), (TABLE_NEW_ORDER, x), (NEW_ORDER_ROW + order, x),
            (ITEM_ROW + item, s), (STOCK_ROW + item, x), (ORDER_LINE_ROW + order, x)])

    def _payment(self, objs: np.ndarray, modes: np.ndarray, rows: np.ndarray,
                 district: np.ndarray, c1: np.ndarray, c2: np.ndarray,
                 two: np.ndarray) -> None:
        x = EXCLUSIVE
        self._put(objs, modes, rows, [
            (WAREHOUSE_ROW, x), (DISTRICT_ROW + district, x), (CUSTOMER_ROW + c1, x),
            (HISTORY_ROW + c1, x)])
        self._put(objs[:, 4:], modes[:, 4:], rows & two, [
            (CUSTOMER_ROW + c2, x), (HISTORY_ROW + c2, x)])

    def _order_status(self, objs: np.ndarray, modes: np.ndarray, rows: np.ndarray,
                      c1: np.ndarray, c2: np.ndarray, two: np.ndarray) -> None:
        s = SHARED
        self._put(objs, modes, rows, [
            (CUSTOMER_ROW + c1, s), (ORDER_ROW + c1, s), (ORDER_LINE_ROW + c1, s)])
        self._put(objs[:, 3:], modes[:, 3:], rows & two, [
            (CUSTOMER_ROW + c2, s), (ORDER_ROW + c2, s)])

    def _delivery(self, objs: np.ndarray, modes: np.ndarray, rows: np.ndarray,
                  order: np.ndarray) -> None:
        x = EXCLUSIVE
        self._put(objs, modes, rows, [
            (TABLE_NEW_ORDER, x), (NEW_ORDER_ROW + order, x), (ORDER_ROW + order, x),
            (ORDER_LINE_ROW + order, x), (CUSTOMER_ROW + order, x)])

    def _stock_level(self, objs: np.ndarray, modes: np.ndarray, rows: np.ndarray,
                     district: np.ndarray, order: np.ndarray) -> None:
        s = SHARED
        self._put(objs, modes, rows, [
            (DISTRICT_ROW + district, s), (ORDER_LINE_ROW + order, s), (STOCK_ROW, s)])
