"""The transaction model's max-plus recursion (planner/grant_recursion.py) against an oracle
that grants each request after every earlier conflicting request on its lock is released
(all of them, not the two numbers per lock the recursion keeps), and against hand-derived
rates."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.grant_recursion import ATTEMPTS_PER_TRANSACTION, WARMUP_SHARE, Timing, replay


def _oracle(lock, exclusive, offsets, path, handover, noise, timing: Timing,
            transactions: int) -> tuple[float, int, list[float]]:
    """The closed loop by brute force: every request kept with its release, each grant the
    latest of its arrival and the releases of all earlier requests on its lock that
    conflict with it (either exclusive) plus its hand-over."""
    n = timing.contexts
    start, first = [0.0] * n, [0.0] * n
    current, retrying = [0] * n, [False] * n
    history: dict[int, list[tuple[bool, float]]] = {}
    taken = done = given_up = 0
    warmup = int(transactions * WARMUP_SHARE)
    began, latency = 0.0, []
    while done < transactions and given_up < ATTEMPTS_PER_TRANSACTION * transactions:
        c = min(range(n), key=lambda i: (start[i], i))
        s = start[c]
        if not retrying[c]:
            current[c], taken, first[c] = taken % (len(offsets) - 1), taken + 1, s
        lo, hi = offsets[current[c]], offsets[current[c] + 1]
        grants = []
        for k in range(lo, hi):
            ready = s + (k - lo) * timing.gap_us + timing.one_way_us + timing.pass_us + path[k]
            before = [out + handover[k] for x, out in history.get(int(lock[k]), [])
                      if x or exclusive[k]]
            grants.append(max([ready, *before]) + noise[k])
        release = max(grants) + timing.hold_us
        late = max(grants) - s > timing.timeout_us
        for k, g in zip(range(lo, hi), grants, strict=True):
            out = release
            if late:
                out = (g + 2 * timing.one_way_us if g + timing.one_way_us > s + timing.timeout_us
                       else s + timing.timeout_us + timing.one_way_us)
            history.setdefault(int(lock[k]), []).append((bool(exclusive[k]), out))
        if late:
            given_up += 1
            retrying[c] = True
            start[c] = s + timing.timeout_us + timing.backoff_us
            continue
        retrying[c] = False
        start[c] = release - timing.one_way_us
        if done == warmup:
            began = s
        if done >= warmup:
            latency.append(release - timing.one_way_us - first[c])
        done += 1
    if done <= warmup:
        return done / min(start), given_up, latency
    return (done - warmup) / (min(start) - began), given_up, latency


@st.composite
def _cases(draw):
    txns = draw(st.lists(st.lists(st.tuples(st.integers(0, 7), st.booleans()), min_size=1,
                                  max_size=4, unique_by=lambda t: t[0]),
                         min_size=1, max_size=12))
    txns = [sorted(t) for t in txns]
    lock = np.array([lk for t in txns for lk, _ in t], dtype=np.int64)
    exclusive = np.array([x for t in txns for _, x in t], dtype=np.bool_)
    offsets = np.r_[0, np.cumsum([len(t) for t in txns])].astype(np.int64)
    m = len(lock)
    floats = st.floats(0.0, 20.0, allow_nan=False)
    path = np.array(draw(st.lists(floats, min_size=m, max_size=m)))
    handover = np.array(draw(st.lists(floats, min_size=m, max_size=m)))
    noise = np.array(draw(st.lists(st.floats(-1.0, 1.0), min_size=m, max_size=m)))
    timing = Timing(contexts=draw(st.integers(1, 5)), gap_us=draw(st.floats(0.0, 1.0)),
                    one_way_us=draw(st.floats(0.5, 5.0)), pass_us=0.3,
                    hold_us=draw(st.floats(1.0, 100.0)),
                    timeout_us=draw(st.sampled_from([math.inf, 60.0, 200.0])),
                    backoff_us=draw(st.floats(0.0, 50.0)))
    return lock, exclusive, offsets, path, handover, noise, timing


@settings(max_examples=60, deadline=None)
@given(_cases(), st.integers(10, 60))
def test_the_recursion_grants_as_the_brute_force_oracle(case, transactions):
    lock, exclusive, offsets, path, handover, noise, timing = case
    got = replay(lock, exclusive, offsets, path, handover, noise, 8, timing, transactions)
    rate, given_up, latency = _oracle(lock, exclusive, offsets, path, handover, noise, timing,
                                      transactions)
    assert got.given_up == given_up
    assert got.txn_per_us == pytest.approx(rate, rel=1e-9)
    assert got.latency_us == pytest.approx(latency, rel=1e-9, abs=1e-9)


def test_one_exclusive_lock_in_every_transaction_hands_over_once_per_hold():
    """Every transaction takes lock 0 exclusively: the lock is never idle, so one
    transaction completes per hold plus hand-over, whatever the contexts."""
    lock = np.zeros(50, dtype=np.int64)
    timing = Timing(contexts=8, gap_us=0.2, one_way_us=2.5, pass_us=0.3, hold_us=15.0,
                    timeout_us=math.inf, backoff_us=0.0)
    ones = np.ones(50)
    got = replay(lock, np.ones(50, dtype=np.bool_), np.arange(51, dtype=np.int64),
                 np.zeros(50), 0.6 * ones, np.zeros(50), 1, timing, 5000)
    assert got.txn_per_us == pytest.approx(1 / (15.0 + 0.6), rel=1e-9)
    assert got.occupancy[0] == pytest.approx(8.0, rel=0.01)  # every context on it
    assert got.given_up == 0


def test_shared_requests_never_wait():
    rng = np.random.default_rng(3)
    lock = rng.integers(0, 3, 400)
    offsets = np.arange(0, 401, 2, dtype=np.int64)
    lock[1::2] = 3 + lock[::2]  # two distinct locks per transaction
    timing = Timing(contexts=5, gap_us=0.2, one_way_us=2.5, pass_us=0.3, hold_us=15.0,
                    timeout_us=math.inf, backoff_us=0.0)  # the window: 320 whole rounds
    zeros = np.zeros(400)
    got = replay(lock, np.zeros(400, dtype=np.bool_), offsets, zeros, zeros + 0.6, zeros, 6,
                 timing, 2000)
    assert got.wait_us == 0.0
    assert got.txn_per_us == pytest.approx(5 / (0.2 + 0.3 + 15.0), rel=1e-9)


def test_attempts_that_never_finish_in_time_end_the_replay():
    """A path longer than the timeout: every attempt gives up, and the replay stops with a
    rate of 0 and no latencies instead of running for ever."""
    timing = Timing(contexts=2, gap_us=0.0, one_way_us=2.5, pass_us=0.3, hold_us=15.0,
                    timeout_us=10.0, backoff_us=5.0)
    got = replay(np.array([0, 1]), np.ones(2, dtype=np.bool_), np.array([0, 2]),
                 np.full(2, 50.0), np.zeros(2), np.zeros(2), 2, timing, 100)
    assert got.txn_per_us == 0.0 and len(got.latency_us) == 0 and got.given_up > 0
