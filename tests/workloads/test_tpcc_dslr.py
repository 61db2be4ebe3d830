"""DSLR's TPC-C generator (:mod:`sim.workloads.tpcc_dslr`) against numbers derived by hand
from DSLR's source (dongyoungy/rdma_2pc ``src/new_proto4/tpcc_lock_gen.cc.no_tablelock``,
``tpcc_lock_gen.h``, ``tpcc_lock_simulator.cc``) and the NetLock client's replay
(netx-repo/NetLock ``dpdk_code/client_code/include/new_order.h``), not from the paper.

The derivation. The type is ``1 + rand % 100`` against 45 / 88 / 92 / 96 / 100, so the mix is
NewOrder 0.45, Payment 0.43, OrderStatus, Delivery and StockLevel 0.04 each. Locks (shared /
exclusive) per type, from the generator's request lists:

- NewOrder: warehouse S, district X, customer S, order X, NEW_ORDER table (TABLE_IX, read
  as X by the client), new-order X, item S, stock X, order line X: 9 (3 S, 6 X).
- Payment: warehouse X, district X, customer X, history X, and with ``y <= 60`` another
  customer and history: 6 with probability 0.6, else 4; all X. Mean 5.2.
- OrderStatus: customer S, order S, order line S, and with ``y <= 40`` another customer and
  order: 5 with probability 0.4, else 3; all S. Mean 3.8.
- Delivery: the NEW_ORDER table X, new-order, order, order line, customer X: 5, all X.
- StockLevel: district S, order line S, stock row 0 S: 3, all S.

Mean locks 0.45 * 9 + 0.43 * 5.2 + 0.04 * (3.8 + 5 + 3) = 6.758; exclusive 0.45 * 6 +
0.43 * 5.2 + 0.04 * 5 = 5.136 (76.0 %). Without the table lock: 6.268 and 4.646 (74.1 %).
Lock id = ``warehouse * 700000 + object index + 1`` (``kTPCCNumObjects`` = 700000, the
client's ``target_obj_idx + 1``); the object indexes start at warehouse 10, district 11,
customer 21, order 30021, history 60021, new-order 90021, order line 120021, stock 420021,
item 520021; the NEW_ORDER table's lock is object 5.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.workloads.base import EXCLUSIVE, SHARED
from sim.workloads.tpcc_dslr import OBJECTS_PER_WAREHOUSE, TpccDslr

N = 200_000
STARTS = {"table": 5, "warehouse": 10, "district": 11, "customer": 21, "order": 30_021,
          "history": 60_021, "new_order": 90_021, "order_line": 120_021, "stock": 420_021,
          "item": 520_021, "end": 620_021}


def table_of(objects: np.ndarray) -> np.ndarray:
    """The table name of each object index (by the start offsets above)."""
    names = [k for k in STARTS if k != "end"]
    bounds = np.array([STARTS[k] for k in names] + [STARTS["end"]])
    assert ((objects >= bounds[0]) & (objects < bounds[-1])).all()
    assert not ((objects > STARTS["table"]) & (objects < STARTS["warehouse"])).any()
    return np.array(names)[np.searchsorted(bounds, objects, side="right") - 1]


@pytest.fixture(scope="module")
def batch():
    return TpccDslr(warehouses=10).sample_txns(N, np.random.default_rng(7))


def signature(batch, t: int) -> tuple:
    ids, modes = batch.txn(t)
    tables = table_of((ids - 1) % OBJECTS_PER_WAREHOUSE)
    return tuple(sorted(zip(tables.tolist(), modes.tolist(), strict=True)))


def classify(batch) -> np.ndarray:
    """Each transaction's type, recognised by what it locks (the derivation above)."""
    objects = (batch.lock_ids - 1) % OBJECTS_PER_WAREHOUSE
    tables = table_of(objects)
    t = batch.txn_index()
    n = len(batch)

    def has(name: str, mode: int) -> np.ndarray:
        hit = np.zeros(n, dtype=bool)
        hit[t[(tables == name) & (batch.modes == mode)]] = True
        return hit

    kinds = np.full(n, "?", dtype=object)
    kinds[has("item", SHARED)] = "new_order"
    kinds[has("warehouse", EXCLUSIVE)] = "payment"
    kinds[has("customer", SHARED) & ~has("item", SHARED)] = "order_status"
    kinds[has("new_order", EXCLUSIVE) & ~has("item", SHARED)] = "delivery"
    kinds[has("stock", SHARED)] = "stock_level"
    return kinds


def test_mix_locks_per_transaction_and_exclusive_share(batch):
    kinds = classify(batch)
    assert (kinds != "?").all()
    for kind, share in {"new_order": 0.45, "payment": 0.43, "order_status": 0.04,
                        "delivery": 0.04, "stock_level": 0.04}.items():
        assert (kinds == kind).mean() == pytest.approx(share, abs=0.005), kind
    assert batch.sizes.mean() == pytest.approx(6.758, abs=0.02)
    assert (batch.modes == EXCLUSIVE).mean() == pytest.approx(5.136 / 6.758, abs=0.003)
    sizes = batch.sizes
    assert set(np.unique(sizes[kinds == "payment"]).tolist()) == {4, 6}
    assert (sizes[kinds == "payment"] == 6).mean() == pytest.approx(0.6, abs=0.01)
    assert (sizes[kinds == "order_status"] == 5).mean() == pytest.approx(0.4, abs=0.03)


def test_without_the_table_lock():
    b = TpccDslr(10, table_locks=False).sample_txns(N, np.random.default_rng(8))
    assert not ((b.lock_ids - 1) % OBJECTS_PER_WAREHOUSE == STARTS["table"]).any()
    assert b.sizes.mean() == pytest.approx(6.268, abs=0.02)
    assert (b.modes == EXCLUSIVE).mean() == pytest.approx(4.646 / 6.268, abs=0.003)


def test_each_type_locks_what_the_generator_lists(batch):
    x, s = EXCLUSIVE, SHARED
    expected = {
        "new_order": {(("customer", s), ("district", x), ("item", s), ("new_order", x),
                       ("order", x), ("order_line", x), ("stock", x), ("table", x),
                       ("warehouse", s))},
        "payment": {(("customer", x), ("district", x), ("history", x), ("warehouse", x)),
                    (("customer", x), ("customer", x), ("district", x), ("history", x),
                     ("history", x), ("warehouse", x))},
        "order_status": {(("customer", s), ("order", s), ("order_line", s)),
                         (("customer", s), ("customer", s), ("order", s), ("order", s),
                          ("order_line", s))},
        "delivery": {(("customer", x), ("new_order", x), ("order", x), ("order_line", x),
                      ("table", x))},
        "stock_level": {(("district", s), ("order_line", s), ("stock", s))},
    }
    kinds = classify(batch)
    for t in range(0, 20_000):
        assert signature(batch, t) in expected[kinds[t]], (kinds[t], signature(batch, t))


def test_rows_and_warehouses_follow_the_generator(batch):
    kinds = classify(batch)
    objects = (batch.lock_ids - 1) % OBJECTS_PER_WAREHOUSE
    warehouse = (batch.lock_ids - 1) // OBJECTS_PER_WAREHOUSE
    t = batch.txn_index()
    assert (warehouse[1:][t[1:] == t[:-1]] == warehouse[:-1][t[1:] == t[:-1]]).all()
    per_txn = warehouse[batch.offsets[:-1]]
    assert np.bincount(per_txn, minlength=10) / len(batch) == pytest.approx(
        np.full(10, 0.1), abs=0.005)
    stock_level = np.isin(t, np.flatnonzero(kinds == "stock_level"))
    assert set(objects[stock_level & (table_of(objects) == "stock")].tolist()) == {
        STARTS["stock"]}
    new_order = np.isin(t, np.flatnonzero(kinds == "new_order"))
    order = objects[new_order & (table_of(objects) == "order")] - STARTS["order"]
    line = objects[new_order & (table_of(objects) == "order_line")] - STARTS["order_line"]
    np.testing.assert_array_equal(order, line)
    assert order.max() < 30_000


@settings(max_examples=30, deadline=None)
@given(warehouses=st.integers(1, 12), n=st.integers(0, 300), seed=st.integers(0, 2**32 - 1))
def test_transactions_are_sorted_distinct_and_inside_the_lock_space(warehouses, n, seed):
    wl = TpccDslr(warehouses)
    b = wl.sample_txns(n, np.random.default_rng(seed), np.arange(n) % 7)
    assert len(b) == n and (b.client_ids == np.arange(n) % 7).all()
    assert ((b.lock_ids >= 1) & (b.lock_ids < wl.n_locks)).all()
    assert (b.sizes >= 3).all() and (b.sizes <= wl.most_locks).all()
    t = b.txn_index()
    same = t[1:] == t[:-1]
    assert (np.diff(b.lock_ids)[same] > 0).all()


def test_one_warehouse_is_shared_by_every_client():
    b = TpccDslr(1).sample_txns(1000, np.random.default_rng(1), np.arange(1000))
    assert b.lock_ids.max() < OBJECTS_PER_WAREHOUSE
    ids, modes = b.lock_ids, b.modes
    hot = ids == STARTS["warehouse"] + 1
    assert hot.sum() > 800 and set(modes[hot].tolist()) == {SHARED, EXCLUSIVE}


def test_same_seed_same_transactions():
    a = TpccDslr(3).sample_txns(500, np.random.default_rng(5))
    b = TpccDslr(3).sample_txns(500, np.random.default_rng(5))
    np.testing.assert_array_equal(a.lock_ids, b.lock_ids)
    np.testing.assert_array_equal(a.modes, b.modes)
