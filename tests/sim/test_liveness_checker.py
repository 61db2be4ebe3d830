"""The liveness checker against a brute-force oracle, and on hand-made cases."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.core.liveness import count_stalled
from sim.core.metrics import HANDBACK_DTYPE, USE_DTYPE
from sim.core.result import stalled_waits
from sim.core.run_spec import lease_guard_us, stall_bound_us
from tests.sim.helpers import config

HORIZON = 60


def oracle(uses, waits, lease):
    """Walk every unit step of every wait: the longest run of steps in which no use of
    its lock is in progress. A use of zero length (granted and handed back at once) is an
    instant of use: the idle run ends there."""
    stalled = 0
    for lock, a, b in waits:
        run = longest = 0
        for t in range(a, b):
            if any(u_lock == lock and s == e == t for u_lock, s, e in uses):
                run = 0
            busy = any(u_lock == lock and s <= t < e for u_lock, s, e in uses)
            run = 0 if busy else run + 1
            longest = max(longest, run)
        stalled += longest > lease
    return stalled


interval = st.tuples(st.integers(0, 2), st.integers(0, HORIZON), st.integers(0, 25))


@settings(max_examples=300, deadline=None)
@given(uses=st.lists(interval, max_size=12), waits=st.lists(interval, max_size=8),
       lease=st.integers(1, 12),
       outages=st.lists(st.tuples(st.integers(0, HORIZON), st.integers(0, 20)), max_size=2))
def test_count_stalled_matches_the_oracle(uses, waits, lease, outages):
    uses = [(lock, s, s + d) for lock, s, d in uses]
    waits = [(lock, s, s + d) for lock, s, d in waits]
    excused = tuple((s, s + d) for s, d in outages)
    u = np.array(uses, dtype=np.int64).reshape(-1, 3)
    w = np.array(waits, dtype=np.int64).reshape(-1, 3)
    got = count_stalled(u[:, 0], u[:, 1], u[:, 2], w[:, 0], w[:, 1], w[:, 2], lease, excused)
    every_lock = [(lock, s, e) for lock in range(3) for s, e in excused]
    assert got == oracle(uses + every_lock, waits, lease)


def test_a_wait_behind_a_busy_lock_is_not_stalled_but_one_on_an_idle_lock_is():
    uses = np.array([[7, 0, 100], [7, 100, 200], [8, 0, 10]])
    waits = np.array([[7, 0, 200], [8, 0, 200]])
    assert count_stalled(uses[:, 0], uses[:, 1], uses[:, 2], waits[:, 0], waits[:, 1],
                         waits[:, 2], bound_us=50) == 1


def requests(rows):
    """A requests table of ``(lock, t_us, end_us, asked_us)`` rows."""
    table = pd.DataFrame(np.zeros(len(rows), dtype=USE_DTYPE))
    for j, name in enumerate(("lock", "t_us", "end_us", "asked_us")):
        table[name] = [row[j] for row in rows]
    return table


def test_a_grant_handed_back_is_an_instant_of_use_and_a_wedge_still_stalls():
    """Lock 7 is used at 0..10 and 150..160, its wait runs 0..150: idle 10..150. A stale
    grant at 80 splits that stretch in two; lock 8, waited for until the end with no
    grant at all, stalls."""
    table = requests([(7, 0.0, 10.0, 0.0), (7, 150.0, 160.0, 0.0)])
    backs = pd.DataFrame(np.array([(80.0, 7)], dtype=HANDBACK_DTYPE))
    none = pd.DataFrame(np.zeros(0, dtype=HANDBACK_DTYPE))
    assert stalled_waits(table, [], none, 100.0) == 1
    assert stalled_waits(table, [], backs, 100.0) == 0
    assert stalled_waits(table, [(8, 20.0, 160.0)], backs, 100.0) == 1


def test_the_stall_bound_covers_a_lease_a_sweep_a_backoff_and_two_round_trips():
    cfg = config("micro-exclusive")
    longest_backoff = (cfg.clients.backoff_slots - 1) * cfg.clients.backoff_slot_us
    assert stall_bound_us(cfg) == pytest.approx(
        cfg.lease.us + cfg.lease.sweep_us + longest_backoff + 2 * lease_guard_us(cfg))
    assert stall_bound_us(config("micro-exclusive", lease__sweep_us=100)) == pytest.approx(
        stall_bound_us(cfg) - 400)


rows = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 40), st.integers(0, 15),
                          st.integers(0, 40)), max_size=25)
"""``(lock, asked, wait, hold)``: asked at ``asked``, granted ``wait`` later, held ``hold``."""


@settings(max_examples=200, deadline=None)
@given(rows, st.lists(st.tuples(st.integers(0, 5), st.integers(0, 40), st.integers(0, 40)),
                      max_size=4),
       st.lists(st.tuples(st.integers(0, 80), st.integers(0, 4)), max_size=4),
       st.sampled_from([0.0, 5.0, 12.0, 30.0]))
def test_picking_the_long_waits_first_changes_nothing(uses, open_waits, backs, bound):
    """:func:`stalled_waits` picks the long waits and their locks' uses before calling the
    checker; the count is the checker's over every request, open wait and hand-back."""
    table = requests([(lock, a + w, a + w + h, a) for lock, a, w, h in uses])
    waits = [(float(lock), float(a), float(a + d)) for lock, a, d in open_waits]
    handbacks = pd.DataFrame(np.array([(float(t), lock) for t, lock in backs],
                                      dtype=HANDBACK_DTYPE))
    lock, start = table["lock"].to_numpy(), table["t_us"].to_numpy()
    w = np.asarray(waits, dtype=np.float64).reshape(-1, 3)
    b_lock = handbacks["lock"].to_numpy().astype(np.int64)
    b_t = handbacks["t_us"].to_numpy().astype(np.float64)
    everything = count_stalled(np.concatenate([lock, b_lock]), np.concatenate([start, b_t]),
                               np.concatenate([table["end_us"].to_numpy(), b_t]),
                               np.concatenate([lock, w[:, 0].astype(np.int64)]),
                               np.concatenate([table["asked_us"].to_numpy(), w[:, 1]]),
                               np.concatenate([start, w[:, 2]]), bound)
    assert stalled_waits(table, waits, handbacks, bound) == everything
