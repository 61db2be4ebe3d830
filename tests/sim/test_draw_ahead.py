"""Draws made ahead on a worker thread (sim.core.ahead) are the draws made on demand."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sim.fast.fast_model as fmodel
import sim.fast.rack_build as rack_build
from sim.core.ahead import DrawAhead, Worker
from sim.core.draws import BLOCK, draw_hops
from sim.fast.simulate_fast import build
from sim.workloads.tpcc import TpccNewOrder
from tests.sim.helpers import config


class Counter:
    """Draws 0, 1, 2, ... slowly, noting the threads that drew."""

    def __init__(self, delay_s: float = 0.0) -> None:
        self.next = 0
        self.delay_s = delay_s
        self.threads: set[int] = set()

    def __call__(self) -> int:
        time.sleep(self.delay_s)
        self.threads.add(threading.get_ident())
        value = self.next
        self.next += 1
        return value


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 6), max_size=12), st.sampled_from([0.0, 0.0005]))
def test_takes_return_the_stream_in_order(counts, delay_s):
    worker = Worker()
    draw = Counter(delay_s)
    ahead = DrawAhead(draw, worker)
    got = [v for c in counts for v in ahead.take(c)]
    worker.close()
    assert got == list(range(sum(counts)))
    assert ahead.takes == len(counts)


def test_one_take_draws_nothing_more_and_later_ones_draw_on_the_worker():
    worker = Worker()
    draw = Counter()
    ahead = DrawAhead(draw, worker)
    assert ahead.take(3) == [0, 1, 2]
    time.sleep(0.05)
    assert draw.next == 3, "a single take draws nothing ahead"
    assert ahead.take(2) == [3, 4]
    assert ahead.take(2) == [5, 6]
    worker.close()
    assert threading.get_ident() in draw.threads
    assert len(draw.threads) == 2, "later draws ran on the worker thread"


def test_hop_blocks_drawn_one_by_one_are_the_blocks_drawn_at_once():
    rng_a, rng_b = np.random.default_rng(3), np.random.default_rng(3)
    whole = np.empty(4 * BLOCK)
    draw_hops(rng_a, 2.5, 0.4, 0.0, whole)
    blocks = [fmodel.hop_block(rng_b, 2.5, 0.4, 0.0) for _ in range(4)]
    np.testing.assert_array_equal(np.concatenate(blocks), whole)


def test_tpcc_clients_are_independent_unless_inserts_lock_fresh_rows():
    assert TpccNewOrder(2, 2, insert_locks="district").clients_independent
    assert not TpccNewOrder(2, 2, insert_locks="row").clients_independent


def run_tpcc(monkeypatch, ahead: bool):
    """A short TPC-C run (the NewOrder sketch, whose ~91 locks a transaction refill the hop
    stream often) with batches of 16 transactions, so that every client and the hop stream
    refill several times; ``ahead=False`` (the default, :data:`sim.fast.fast_model.DRAW_AHEAD`)
    draws every batch on demand."""
    monkeypatch.setattr(rack_build, "txn_batch", lambda longest: 16)
    monkeypatch.setattr(fmodel, "DRAW_AHEAD", ahead)
    cfg = config("tpcc-low", workload__generator="sketch", sim__duration_s=0.02,
                 sim__warmup_s=0.002)
    model = build(cfg)
    model.advance(cfg.sim.end_s * 1e6)
    model.close(cfg.sim.end_s * 1e6)
    return model


def test_a_run_drawing_ahead_is_the_run_drawing_on_demand():
    with pytest.MonkeyPatch.context() as mp:
        ahead = run_tpcc(mp, ahead=True)
    with pytest.MonkeyPatch.context() as mp:
        demand = run_tpcc(mp, ahead=False)
    assert all(d.takes >= 3 and d.ahead for d in ahead.txn_draws)
    assert ahead.hop_blocks.takes >= 3
    assert not demand.hop_blocks.ahead and not any(d.ahead for d in demand.txn_draws)
    assert len(ahead.requests_frame()) > 100_000
    assert ahead.requests_frame().equals(demand.requests_frame())
    assert ahead.txns_frame().equals(demand.txns_frame())


def test_without_a_worker_every_result_is_drawn_when_taken():
    draw = Counter()
    ahead = DrawAhead(draw, None)
    assert [v for _ in range(4) for v in ahead.take(2)] == list(range(8))
    assert draw.threads == {threading.get_ident()} and not ahead.ahead
