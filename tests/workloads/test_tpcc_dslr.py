"""DSLR's TPC-C generator against numbers derived by hand from DSLR's source.

Derivation (dongyoungy/rdma_2pc, src/new_proto4/tpcc_lock_gen.cc.no_tablelock, row indices
from tpcc_lock_gen.h, ``kTPCCNumObjects = 700000`` from constants.h; the NetLock client,
netx-repo/NetLock dpdk_code/client_code/include/new_order.h get_traces(), maps lock types
1/7/8 -> shared and 2/9 -> exclusive and uses ``target_obj_idx + 1`` as the lock id):

- mix: ``val = 1 + rand % 100`` against 45/88/92/96/100 -> NewOrder .45, Payment .43,
  OrderStatus .04, Delivery .04, StockLevel .04.
- locks (X incl. the new-order table's IX, type 9):
  NewOrder 9 (6 X: district, order, table IX, new-order, stock, order line);
  Payment 6 X if y <= 60 (p .6) else 4 X -> 5.2 locks, 5.2 X;
  OrderStatus 5 S if y <= 40 (p .4) else 3 S -> 3.8 locks, 0 X;
  Delivery 5 (5 X: table IX, new-order, order, order line, customer);
  StockLevel 3 S.
- mean locks = .45*9 + .43*5.2 + .04*3.8 + .04*5 + .04*3 = 6.758;
  mean X = .45*6 + .43*5.2 + .04*5 = 5.136; X share = 5.136 / 6.758 = 0.760.
- sizes: P(3) = .04 + .04*.6 = .064, P(4) = .43*.4 = .172, P(5) = .04*.4 + .04 = .056,
  P(6) = .43*.6 = .258, P(9) = .45.
- lock id = local_warehouse * 700000 + index + 1; the indices used are 5 (new-order table),
  10 (warehouse), 11..20 (district), 21..30020 (customer), 30021.. (order), 60021..
  (history), 90021.. (new-order), 120021..150020 (order line), 420021..520020 (stock),
  520021..620020 (item): ids modulo 700000 lie in 6..620021.
"""

from __future__ import annotations

import numpy as np
import pytest

from sim.workloads import workload_from_config
from sim.workloads.tpcc_dslr import OBJECTS_PER_WAREHOUSE, TpccDslr, _integers
from tests.sim.helpers import config

N = 200_000


@pytest.fixture(scope="module")
def batch():
    return TpccDslr(10).sample_txns(N, np.random.default_rng(7))


def within(value: float, expected: float, n: int, p: float | None = None) -> bool:
    """``value`` within 5 standard errors of ``expected`` (a proportion ``p`` or a mean)."""
    p = expected if p is None else p
    return abs(value - expected) <= 5 * np.sqrt(max(p * (1 - p), 1e-9) / n) + 1e-9


def test_size_distribution_is_dslrs_mix(batch):
    share = np.bincount(batch.sizes, minlength=10) / N
    for size, expected in {3: .064, 4: .172, 5: .056, 6: .258, 9: .45}.items():
        assert within(share[size], expected, N), (size, share[size])
    assert share[[0, 1, 2, 7, 8]].sum() == 0


def test_mean_locks_and_exclusive_share(batch):
    assert abs(batch.sizes.mean() - 6.758) < 0.02
    assert abs((batch.modes == 1).mean() - 5.136 / 6.758) < 0.005


def test_lock_id_layout(batch):
    index = batch.lock_ids % OBJECTS_PER_WAREHOUSE
    assert index.min() == 6 and index.max() <= 620_021
    warehouse = batch.lock_ids // OBJECTS_PER_WAREHOUSE
    assert set(np.unique(warehouse)) == set(range(10))
    per_txn = np.split(warehouse, batch.offsets[1:-1])
    assert all(len(np.unique(w)) == 1 for w in per_txn[:2000])
    # NewOrder: the warehouse row (index 10 -> id 11) shared, the new-order table (5 -> 6)
    # exclusive; Payment: the warehouse row exclusive.
    nine = np.flatnonzero(batch.sizes == 9)[0]
    ids, modes = batch.txn(nine)
    local = dict(zip((ids % OBJECTS_PER_WAREHOUSE).tolist(), modes.tolist(), strict=True))
    assert local[6] == 1 and local[11] == 0
    assert np.all(np.diff(ids) > 0)


def test_payment_takes_the_warehouse_row_exclusively(batch):
    index = batch.lock_ids % OBJECTS_PER_WAREHOUSE
    warehouse_row = index == 11
    # Shared by NewOrder (.45), exclusive by Payment (.43) per transaction.
    assert within(float(np.mean(batch.modes[warehouse_row] == 1)), .43 / .88,
                  int(warehouse_row.sum()))


def test_selected_by_the_config():
    cfg = config("tpcc-high", workload__generator="dslr", workload__warehouses=1)
    workload = workload_from_config(cfg)
    assert isinstance(workload, TpccDslr) and workload.n_locks == OBJECTS_PER_WAREHOUSE
    sketch = workload_from_config(config("tpcc-high", workload__generator="sketch"))
    assert not isinstance(sketch, TpccDslr)


def test_same_seed_same_transactions():
    a = TpccDslr(3).sample_txns(500, np.random.default_rng(1))
    b = TpccDslr(3).sample_txns(500, np.random.default_rng(1))
    assert np.array_equal(a.lock_ids, b.lock_ids) and np.array_equal(a.modes, b.modes)


def test_uniform_ids_keep_the_transactions_and_spread_the_ids():
    """new_order.h:156 TPCC_UNIFORMBENCHMARK: ids rand() % 7000000 + 1; sizes and modes as
    DSLR's (same derivation as above)."""
    batch = TpccDslr(10, uniform_ids=True).sample_txns(50_000, np.random.default_rng(3))
    assert batch.lock_ids.min() >= 1 and batch.lock_ids.max() <= 7_000_000
    assert abs(batch.sizes.mean() - 6.758) < 0.05
    assert abs((batch.modes == 1).mean() - 0.760) < 0.01
    for t in range(0, 50_000, 997):
        ids, _ = batch.txn(t)
        assert len(np.unique(ids)) == len(ids) and np.all(np.diff(ids) > 0)
    # Uniform: each of ten equal id ranges gets a tenth of the requests.
    share = np.bincount((batch.lock_ids - 1) // 700_000, minlength=10) / len(batch.lock_ids)
    assert np.all(np.abs(share - 0.1) < 0.01)


@pytest.mark.parametrize(("low", "high"), [(0, 10), (1, 101), (0, 3000), (0, 30_000),
                                           (0, 100_000)])
def test_compiled_draws_are_numpys(low, high):
    """The generator's compiled draws are NumPy's ``integers`` values, one after the other,
    and leave the stream where NumPy leaves it (the next draw, the warehouses, follows)."""
    for seed in range(5):
        for n in (1, 2, 7, 513):
            ours, numpys = np.random.default_rng(seed), np.random.default_rng(seed)
            out = np.zeros(n + 3, dtype=np.int64)
            _integers(ours, out, 3, n, low, high)
            assert np.array_equal(out[3:], numpys.integers(low, high, size=n))
            assert ours.bit_generator.state == numpys.bit_generator.state
