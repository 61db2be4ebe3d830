"""Coarse-grained locks (``policy.coarse_group``): clients lock workload lock id // K."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.core.allocation import CoarseWorkload
from sim.simulate_simpy import simulate
from sim.workloads.base import TxnBatch
from tests.sim.helpers import config


class FixedTxns:
    """A workload that returns the same batch of transactions every time."""

    def __init__(self, batch: TxnBatch, n_locks: int) -> None:
        self.batch = batch
        self.n_locks = n_locks

    def sample_txns(self, n, rng, client_ids=None):
        return self.batch

    def next_txn(self, client_id, rng):
        return self.batch.txn(0)

    def describe(self) -> str:
        return "fixed"


txns = st.lists(st.dictionaries(st.integers(0, 199), st.integers(0, 1), min_size=1,
                                max_size=12), min_size=1, max_size=20)


@settings(max_examples=60, deadline=None)
@given(txns=txns, group=st.integers(1, 50))
def test_each_transaction_takes_each_coarse_lock_once_exclusive_if_any_part_was(txns, group):
    locks = np.array([x for txn in txns for x in sorted(txn)], dtype=np.int64)
    modes = np.array([txn[x] for txn in txns for x in sorted(txn)], dtype=np.int8)
    offsets = np.r_[0, np.cumsum([len(txn) for txn in txns])].astype(np.int64)
    inner = FixedTxns(TxnBatch(locks, modes, offsets, np.zeros(len(txns), np.int64)), 200)
    coarse = CoarseWorkload(inner, group)
    batch = coarse.sample_txns(len(txns), np.random.default_rng(0))
    assert len(batch) == len(txns)
    assert coarse.n_locks == -(-200 // group)
    for t, txn in enumerate(txns):
        want: dict[int, int] = {}
        for lock, mode in txn.items():
            want[lock // group] = max(want.get(lock // group, 0), mode)
        got_locks, got_modes = batch.txn(t)
        assert got_locks.tolist() == sorted(want)
        assert got_modes.tolist() == [want[g] for g in sorted(want)]
    first_locks, first_modes = coarse.next_txn(0, np.random.default_rng(0))
    assert first_locks.tolist() == batch.txn(0)[0].tolist()
    assert first_modes.tolist() == batch.txn(0)[1].tolist()


def test_coarse_locks_raise_the_switch_share_of_a_uniform_workload_with_few_slots():
    def run(group: int):
        return simulate(config("micro-exclusive", switch__slots=100, workload__locks=2000,
                               workload__clients=16, clients__machines=4,
                               policy__coarse_group=group, sim__duration_s=0.002,
                               sim__warmup_s=0.0005))

    fine, coarse = run(1), run(8)
    assert coarse.requests["lock"].max() < 2000 // 8
    assert coarse.summary["switch_share"] > 3 * fine.summary["switch_share"]
    assert fine.summary["violations"] == 0
    assert coarse.summary["violations"] == 0
