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
from netlock.dataplane._kernel_jit import JIT_ENABLED, kernel, kernel_inline
from sim.workloads.base import EXCLUSIVE, SHARED, TxnBatch, as_client_ids

OBJECTS_PER_WAREHOUSE = 700_000
"""DSLR's ``kTPCCNumObjects`` (constants.h), the lock-id stride of a warehouse."""
MIX_CUMULATIVE = (45, 88, 92, 96, 100)
"""``mix_`` of ``TPCCLockGen``: NewOrder, Payment, OrderStatus, Delivery, StockLevel."""
TXN_TYPES = ("new_order", "payment", "order_status", "delivery", "stock_level")
NEW_ORDER_TXN, PAYMENT_TXN, ORDER_STATUS_TXN, DELIVERY_TXN, STOCK_LEVEL_TXN = range(5)

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
TWO_PAYMENT = 60
"""Payment takes a second customer when its draw ``y`` in 1..100 is at most this."""
TWO_ORDER_STATUS = 40
"""OrderStatus takes a second customer when its draw ``y`` in 1..100 is at most this."""

UNIFORM_IDS = 7_000_000
"""new_order.h:156: ``rand() % 7000000 + 1``, ids 1 .. 7,000,000."""



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

    def sample_txns(self, n: int, rng: np.random.Generator,
                    client_ids: np.ndarray | None = None) -> TxnBatch:
        """``n`` transactions: their types, then each type's draws for its transactions in
        :data:`TXN_TYPES` order (:func:`_draw`), then each transaction's warehouse (or, with
        ``uniform_ids``, its ids). Drawn, laid out and sorted by compiled code from the
        stream's own bits, the values NumPy's ``integers`` gives: NumPy call by call, a batch
        of 512 took 0.16 ms, an eighth of TPC-C's event loop (issue 32)."""
        clients = as_client_ids(n, client_ids)
        kind = np.empty(n, dtype=np.int64)
        counts = np.zeros(len(TXN_TYPES), dtype=np.int64)
        draws = np.empty(4 * n, dtype=np.int64)
        _draw(rng, kind, counts, draws)
        idx = np.full((n, WIDTH), -1, dtype=np.int64)
        mode = np.zeros((n, WIDTH), dtype=np.int8)
        _fill_cells(kind, counts, draws, idx, mode)
        if self.uniform_ids:
            ids = _uniform_ids(rng, idx >= 0)
        else:
            home = rng.integers(0, self.warehouses, size=n)
            ids = home[:, None] * OBJECTS_PER_WAREHOUSE + idx + 1
        lock_ids = np.empty(n * WIDTH, dtype=np.int64)
        modes = np.empty(n * WIDTH, dtype=np.int8)
        offsets = np.zeros(n + 1, dtype=np.int64)
        used = _sorted_pairs(ids, idx, mode, lock_ids, modes, offsets)
        return TxnBatch(lock_ids=lock_ids[:used], modes=modes[:used], offsets=offsets,
                        client_ids=clients)

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


if JIT_ENABLED:
    from numba.np.random.random_methods import buffered_bounded_lemire_uint32

    @kernel_inline
    def _integer(rng: np.random.Generator, low: int, high: int) -> int:
        """The next of ``rng.integers(low, high, size)``'s values (``high - low`` in 2 ..
        2**32 - 1): NumPy's bounded 32-bit Lemire draw (``distributions.c``), as numba
        translates it (numba's own ``integers`` allocates its result even for one value)."""
        return low + np.int64(buffered_bounded_lemire_uint32(rng.bit_generator,
                                                             high - 1 - low))
else:
    def _integer(rng: np.random.Generator, low: int, high: int) -> int:
        """The next of ``rng.integers(low, high, size)``'s values, from NumPy (JIT off)."""
        return int(rng.integers(low, high))


@kernel_inline
def _integers(rng: np.random.Generator, out: np.ndarray, at: int, n: int, low: int,
              high: int) -> None:
    """``out[at:at + n]`` = ``rng.integers(low, high, size=n)``: NumPy draws the values one
    after the other from the stream, so these are its values and the stream ends where
    NumPy leaves it (tests/workloads/test_tpcc_dslr.py)."""
    for j in range(at, at + n):
        out[j] = _integer(rng, low, high)


@kernel_inline
def _distinct_pair(rng: np.random.Generator, out: np.ndarray, at: int, n: int) -> None:
    """Two customer ids ``c1 != c2`` per transaction (``out[at:at + n]``, then the next
    ``n``), c2 redrawn while equal (as DSLR's loop), pass by pass in transaction order."""
    _integers(rng, out, at, n, 0, CUSTOMERS)
    _integers(rng, out, at + n, n, 0, CUSTOMERS)
    again = True
    while again:
        again = False
        for j in range(at, at + n):
            if out[j] == out[j + n]:
                out[j + n] = _integer(rng, 0, CUSTOMERS)
                again = again or out[j] == out[j + n]


@kernel
def _draw(rng: np.random.Generator, kind: np.ndarray, counts: np.ndarray,
          draws: np.ndarray) -> None:
    """Each transaction's type (``1 + rand % 100`` against :data:`MIX_CUMULATIVE`), then each
    type's draws for its ``counts[k]`` transactions into ``draws``, one array after the
    other, in the order DSLR draws them: NewOrder district d, customer within it, item i;
    Payment d, y (1..100), customers c1 != c2; OrderStatus y, customers c != c2; Delivery
    d, order within it; StockLevel d, order o."""
    for t in range(kind.shape[0]):
        val = _integer(rng, 1, 101)
        k = 0
        while MIX_CUMULATIVE[k] < val:
            k += 1
        kind[t] = k
        counts[k] += 1
    at = 0
    n = counts[NEW_ORDER_TXN]
    _integers(rng, draws, at, n, 0, DISTRICTS)
    _integers(rng, draws, at + n, n, 0, CUSTOMERS_PER_DISTRICT)
    _integers(rng, draws, at + 2 * n, n, 0, ITEMS)
    at += 3 * n
    n = counts[PAYMENT_TXN]
    _integers(rng, draws, at, n, 0, DISTRICTS)
    _integers(rng, draws, at + n, n, 1, 101)
    _distinct_pair(rng, draws, at + 2 * n, n)
    at += 4 * n
    n = counts[ORDER_STATUS_TXN]
    _integers(rng, draws, at, n, 1, 101)
    _distinct_pair(rng, draws, at + n, n)
    at += 3 * n
    n = counts[DELIVERY_TXN]
    _integers(rng, draws, at, n, 0, DISTRICTS)
    _integers(rng, draws, at + n, n, 0, CUSTOMERS_PER_DISTRICT)
    at += 2 * n
    n = counts[STOCK_LEVEL_TXN]
    _integers(rng, draws, at, n, 0, DISTRICTS)
    _integers(rng, draws, at + n, n, 0, CUSTOMERS)


@kernel
def _fill_cells(kind: np.ndarray, counts: np.ndarray, draws: np.ndarray, idx: np.ndarray,
                mode: np.ndarray) -> None:
    """Each transaction's (row index, mode) cells, in DSLR's order (the module notes),
    from ``draws`` (:func:`_draw`'s arrays, each of ``counts[k]`` values for the
    transactions of type ``k`` in their order). Unused cells keep index -1."""
    s, x = SHARED, EXCLUSIVE
    at0 = 0
    at1 = at0 + 3 * counts[0]
    at2 = at1 + 4 * counts[1]
    at3 = at2 + 3 * counts[2]
    at4 = at3 + 2 * counts[3]
    j0 = j1 = j2 = j3 = j4 = 0
    for t in range(kind.shape[0]):
        k = kind[t]
        row = idx[t]
        m = mode[t]
        if k == NEW_ORDER_TXN:
            n = counts[0]
            d = draws[at0 + j0]
            c = d * CUSTOMERS_PER_DISTRICT + draws[at0 + n + j0]
            i = draws[at0 + 2 * n + j0]
            j0 += 1
            row[0], m[0] = WAREHOUSE, s
            row[1], m[1] = DISTRICT + d, x
            row[2], m[2] = CUSTOMER + c, s
            row[3], m[3] = ORDER + c, x
            row[4], m[4] = TABLE_NEW_ORDER, x
            row[5], m[5] = NEW_ORDER + c, x
            row[6], m[6] = ITEM + i, s
            row[7], m[7] = STOCK + i, x
            row[8], m[8] = ORDER_LINE + c, x
        elif k == PAYMENT_TXN:
            n = counts[1]
            d = draws[at1 + j1]
            two = draws[at1 + n + j1] <= TWO_PAYMENT
            c1 = draws[at1 + 2 * n + j1]
            c2 = draws[at1 + 3 * n + j1]
            j1 += 1
            row[0], m[0] = WAREHOUSE, x
            row[1], m[1] = DISTRICT + d, x
            row[2], m[2] = CUSTOMER + c1, x
            row[3], m[3] = HISTORY + c1, x
            if two:
                row[4], m[4] = CUSTOMER + c2, x
                row[5], m[5] = HISTORY + c2, x
        elif k == ORDER_STATUS_TXN:
            n = counts[2]
            two = draws[at2 + j2] <= TWO_ORDER_STATUS
            c = draws[at2 + n + j2]
            c2 = draws[at2 + 2 * n + j2]
            j2 += 1
            row[0], m[0] = CUSTOMER + c, s
            row[1], m[1] = ORDER + c, s
            row[2], m[2] = ORDER_LINE + c, s
            if two:
                row[3], m[3] = CUSTOMER + c2, s
                row[4], m[4] = ORDER + c2, s
        elif k == DELIVERY_TXN:
            n = counts[3]
            o = draws[at3 + j3] * CUSTOMERS_PER_DISTRICT + draws[at3 + n + j3]
            j3 += 1
            row[0], m[0] = TABLE_NEW_ORDER, x
            row[1], m[1] = NEW_ORDER + o, x
            row[2], m[2] = ORDER + o, x
            row[3], m[3] = ORDER_LINE + o, x
            row[4], m[4] = CUSTOMER + o, x
        else:
            n = counts[4]
            d = draws[at4 + j4]
            o = draws[at4 + n + j4]
            j4 += 1
            row[0], m[0] = DISTRICT + d, s
            row[1], m[1] = ORDER_LINE + o, s
            row[2], m[2] = STOCK, s


@kernel
def _sorted_pairs(ids: np.ndarray, idx: np.ndarray, mode: np.ndarray, lock_ids: np.ndarray,
                  modes: np.ndarray, offsets: np.ndarray) -> int:
    """Each row's used cells (index >= 0) as (id, mode) pairs sorted by id then mode, row
    after row, into ``lock_ids`` and ``modes``; ``offsets[t + 1]`` = where row ``t``'s
    end. How many pairs in all."""
    n = 0
    for t in range(ids.shape[0]):
        start = n
        for j in range(ids.shape[1]):
            if idx[t, j] < 0:
                continue
            key = 2 * ids[t, j] + mode[t, j]
            p = n
            while p > start and lock_ids[p - 1] > key:
                lock_ids[p] = lock_ids[p - 1]
                p -= 1
            lock_ids[p] = key
            n += 1
        offsets[t + 1] = n
    for p in range(n):
        modes[p] = lock_ids[p] & 1
        lock_ids[p] >>= 1
    return n
