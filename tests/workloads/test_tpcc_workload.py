"""TPC-C NewOrder lock sets: sizes and modes per the authors' spec, NURand, encoding, seeds.

The insert locks' granularity has its own tests (``test_tpcc_insert_locks.py``).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from sim.workloads import EXCLUSIVE, SHARED, TpccLockSpace, TpccNewOrder, TpccTable, nurand
from sim.workloads.tpcc import INSERT_LOCKS, ITEMS


@pytest.mark.parametrize("insert_locks", INSERT_LOCKS)
def test_lock_set_sizes_and_modes_match_the_spec(insert_locks: str) -> None:
    """The authors' per-NewOrder structure; with district or table insert locks the
    order-line insert's 3 locks are one lock per field for the whole order (their trace
    loader likewise drops a lock the transaction already requested)."""
    wl = TpccNewOrder(warehouses_per_node=2, nodes=3, insert_locks=insert_locks)
    per_line = insert_locks == "row"
    batch = wl.sample_txns(2000, np.random.default_rng(5), np.arange(2000) % 3)
    for t in range(len(batch)):
        locks, modes = batch.txn(t)
        table, _, field = wl.space.decode(locks)
        ol_cnt = int(np.count_nonzero(table == TpccTable.ITEM)) // 3
        assert 5 <= ol_cnt <= 15
        lines = 3 * ol_cnt if per_line else 3
        assert len(locks) == 8 + 8 * ol_cnt + lines
        assert np.count_nonzero(modes == SHARED) == 5 + 5 * ol_cnt
        assert np.count_nonzero(modes == EXCLUSIVE) == 3 + 3 * ol_cnt + lines
        assert (np.diff(locks) > 0).all()
        per_table = {TpccTable(k): int(np.count_nonzero(table == k)) for k in TpccTable}
        assert per_table == {TpccTable.WAREHOUSE: 1, TpccTable.DISTRICT: 2, TpccTable.CUSTOMER: 3,
                             TpccTable.ORDER: 1, TpccTable.NEW_ORDER: 1, TpccTable.ITEM: 3 * ol_cnt,
                             TpccTable.STOCK: 5 * ol_cnt, TpccTable.ORDER_LINE: lines}
        stock_x = modes[(table == TpccTable.STOCK) & (field < 3)]
        assert (stock_x == EXCLUSIVE).all()
        for insert in (TpccTable.ORDER, TpccTable.NEW_ORDER, TpccTable.ORDER_LINE):
            assert (modes[table == insert] == EXCLUSIVE).all()
        assert (modes[table == TpccTable.ITEM] == SHARED).all()
    ol = (batch.sizes - wl.fixed_locks) // wl.item_locks
    assert set(np.unique(ol)) == set(range(5, 16))
    assert (batch.sizes == wl.fixed_locks + wl.item_locks * ol).all()


def test_home_warehouse_belongs_to_the_clients_node() -> None:
    wl = TpccNewOrder(warehouses_per_node=4, nodes=3, remote_fraction=0.0)
    clients = np.arange(600) % 5
    batch = wl.sample_txns(600, np.random.default_rng(2), clients)
    for t in range(len(batch)):
        locks, _ = batch.txn(t)
        table, row, _ = wl.space.decode(locks)
        home = int(row[table == TpccTable.WAREHOUSE][0])
        assert home // 4 == clients[t] % 3
        stock_rows = row[table == TpccTable.STOCK]
        assert (stock_rows // ITEMS == home).all()


def test_remote_supply_is_about_one_percent() -> None:
    wl = TpccNewOrder(warehouses_per_node=10, nodes=10)
    batch = wl.sample_txns(20_000, np.random.default_rng(9), np.arange(20_000) % 10)
    table, row, _ = wl.space.decode(batch.lock_ids)
    home = np.repeat(row[table == TpccTable.WAREHOUSE], batch.sizes)
    stock = (table == TpccTable.STOCK)
    remote = (row[stock] // ITEMS) != home[stock]
    assert 0.007 < remote.mean() < 0.013


def test_fresh_order_rows_come_from_district_counters() -> None:
    wl = TpccNewOrder(warehouses_per_node=1, nodes=1, insert_locks="row")
    batch = wl.sample_txns(300, np.random.default_rng(4))
    table, row, _ = wl.space.decode(batch.lock_ids)
    orders = row[table == TpccTable.ORDER]
    assert len(np.unique(orders)) == 300
    more = wl.sample_txns(1, np.random.default_rng(4))
    t2, r2, _ = wl.space.decode(more.lock_ids)
    assert r2[t2 == TpccTable.ORDER][0] not in set(orders.tolist())


def nurand_pmf(a: int, x: int, y: int, c: int) -> np.ndarray:
    r1 = np.arange(a + 1)[:, None]
    r2 = np.arange(x, y + 1)[None, :]
    values = ((r1 | r2) + c) % (y - x + 1) + x
    return np.bincount((values - x).ravel(), minlength=y - x + 1) / values.size


def test_nurand_matches_its_exact_distribution() -> None:
    pmf = nurand_pmf(255, 1, 3000, 123)
    draws = nurand(np.random.default_rng(8), 255, 1, 3000, 123, 300_000)
    assert draws.min() >= 1 and draws.max() <= 3000
    counts = np.bincount(draws - 1, minlength=3000)
    support = pmf > 0
    assert counts[~support].sum() == 0
    p = stats.chisquare(counts[support], pmf[support] * counts.sum()).pvalue
    assert p > 1e-4


def test_item_ids_follow_nurand_8191() -> None:
    wl = TpccNewOrder(warehouses_per_node=1, nodes=1)
    batch = wl.sample_txns(5000, np.random.default_rng(1))
    table, row, field = wl.space.decode(batch.lock_ids)
    items = row[(table == TpccTable.ITEM) & (field == 0)] + 1
    assert items.min() >= 1 and items.max() <= ITEMS
    counts = np.bincount(items, minlength=ITEMS + 1)
    top = np.sort(counts)[::-1]
    assert top[:1000].sum() > 3 * 1000 * len(items) / ITEMS


@pytest.mark.parametrize("insert_locks", INSERT_LOCKS)
def test_encoding_round_trips_and_is_dense(insert_locks: str) -> None:
    space = TpccLockSpace(warehouses=3, order_ring=50, insert_locks=insert_locks)
    ids = []
    for tbl in TpccTable:
        rows = np.array([0, space.rows(tbl) - 1])
        for f in range(int(np.diff(space.bases)[tbl] // space.rows(tbl))):
            enc = space.encode(tbl, rows, f)
            table, row, field = space.decode(enc)
            assert (table == tbl).all() and (row == rows).all() and (field == f).all()
            ids.append(enc)
    ids = np.concatenate(ids)
    assert ids.min() == 0 and ids.max() == space.n_locks - 1


@pytest.mark.parametrize("insert_locks", INSERT_LOCKS)
def test_same_seed_same_transactions(insert_locks: str) -> None:
    def run(seed: int) -> np.ndarray:
        wl = TpccNewOrder(warehouses_per_node=1, nodes=2, insert_locks=insert_locks)
        return wl.sample_txns(200, np.random.default_rng(seed), np.arange(200) % 2).lock_ids

    assert np.array_equal(run(3), run(3))
    assert not np.array_equal(run(3), run(4))
    one = TpccNewOrder(1, 1)
    locks, modes = one.next_txn(0, np.random.default_rng(0))
    assert (np.diff(locks) > 0).all() and len(locks) == len(modes)


def test_rejects_bad_parameters() -> None:
    with pytest.raises(ValueError, match="ol_cnt"):
        TpccNewOrder(1, 1, ol_cnt_min=6, ol_cnt_max=5)
    with pytest.raises(ValueError, match="warehouses"):
        TpccNewOrder(0, 1)
    with pytest.raises(ValueError, match="insert_locks"):
        TpccNewOrder(1, 1, insert_locks="page")
