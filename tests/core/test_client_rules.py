"""The client's transaction rules (:mod:`netlock.client`) on their own, as plain Python (how
the simpy engine and ``config check`` run them) and compiled into numba code (how the fast
engine's loop runs them): the same answers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from netlock.client import (
    HAND_BACK,
    IGNORE,
    NOT_HELD,
    SEND_WINDOW_US,
    USE,
    attempt_timeout_us,
    backoff_slots,
    grant_verdict,
    longest_hold_us,
    open_loop_send_at,
    open_loop_skips,
)
from netlock.dataplane._kernel_jit import JIT_ENABLED, kernel


def test_an_attempt_of_several_locks_times_out_after_the_timeout_or_two_think_times():
    assert attempt_timeout_us(2, 400.0, 10.0, 2000.0) == 400.0
    assert attempt_timeout_us(5, 400.0, 300.0, 2000.0) == 600.0


def test_a_one_lock_attempt_waits_a_lease():
    assert attempt_timeout_us(1, 400.0, 300.0, 2000.0) == 2000.0


def test_the_longest_hold_is_the_attempt_timeout_then_the_read_and_the_think_time():
    assert longest_hold_us(3, 400.0, 10.0, 5.0) == 400.0 + 5.0 + 10.0
    assert longest_hold_us(1, 400.0, 10.0, 5.0) == 0.0 + 5.0 + 10.0


@given(st.integers(0, 2**40), st.integers(0, 10_000), st.integers(0, 10_000),
       st.integers(1, 64))
def test_a_backoff_is_a_whole_number_of_slots_below_the_count(seed, client, abort, slots):
    drawn = backoff_slots(seed, client, abort, slots)
    assert 0 <= drawn < slots
    assert drawn == backoff_slots(seed, client, abort, slots), "the same draw in both engines"


@pytest.mark.parametrize("slots", [2, 10])
def test_backoffs_are_uniform_over_the_slots(slots):
    """Over many retries every slot is drawn about equally often (a chi-square test at a
    one-in-a-million false-alarm rate), so a back-off stuck at 0 slots, or at any one value,
    fails; so do draws that ignore the client or the retry."""
    n = 20_000
    by_abort = np.bincount([backoff_slots(7, 3, a, slots) for a in range(n)], minlength=slots)
    by_client = np.bincount([backoff_slots(7, c, 1, slots) for c in range(n)], minlength=slots)
    for counts in (by_abort, by_client):
        expected = n / slots
        chi2 = float(((counts - expected) ** 2 / expected).sum())
        assert chi2 < 30 + 3 * slots, counts
    mean = float(np.dot(np.arange(slots), by_abort) / n)
    assert mean == pytest.approx((slots - 1) / 2, abs=0.05 * slots)


def test_contexts_draw_different_backoffs():
    draws = {tuple(backoff_slots(1, client, a, 10) for a in range(8)) for client in range(50)}
    assert len(draws) == 50


@pytest.mark.parametrize("waiting, held_slot, slot, verdict", [
    (True, NOT_HELD, 5, USE),
    (True, NOT_HELD, -1, USE),
    (False, NOT_HELD, 5, HAND_BACK),
    (True, 5, 5, IGNORE),
    (False, 5, 5, IGNORE),
    (True, -1, -1, IGNORE),
    (True, 5, 6, HAND_BACK),
    (True, -1, 6, HAND_BACK),
    (False, 5, 6, HAND_BACK),
])
def test_grant_verdicts(waiting, held_slot, slot, verdict):
    """A grant for the request a waiting context lacks is used; a copy of a grant it holds
    (same slot) is ignored; a grant under another slot (a duplicated acquire) or for an
    attempt given up is handed back."""
    assert grant_verdict(waiting, held_slot, slot) == verdict


# --- open loop ------------------------------------------------------------------------------

W = SEND_WINDOW_US


def c_tx_loop(start: float, phase: float, gap: float, limit: int, n: int) -> list[float]:
    """An oracle written from client.c's TX loop (lines 389-408, 642), not from the kernel:
    the core's ms counter restarts whenever the clock passes the window's end; it sends one
    packet per ``gap`` while the counter is under the limit, else idles to the window's
    end. Windows end at ``phase + k * W``."""
    times: list[float] = []
    t = start
    end = phase
    while end <= t:
        end += W
    count = 0
    while len(times) < n:
        while t >= end:
            end += W
            count = 0
        if count < limit:
            times.append(t)
            count += 1
            t += gap
        else:
            t = end
    return times


@given(st.integers(0, 16_000), st.integers(0, 7_999), st.integers(1, 4_000),
       st.integers(1, 50), st.integers(1, 300))
def test_the_open_loop_schedule_is_the_authors_tx_loop(start8, phase8, gap8, limit, n):
    start, phase, gap = start8 / 8, phase8 / 8, gap8 / 8
    window, sent, ready = phase - W, 0, start
    times = []
    for _ in range(n):
        t, window, sent = open_loop_send_at(ready, window, sent, limit)
        times.append(t)
        ready = t + gap
    assert times == pytest.approx(c_tx_loop(start, phase, gap, limit, n))


@given(st.integers(0, 7_999), st.integers(1, 20), st.integers(1, 2_000))
def test_no_window_carries_more_than_the_limit(phase8, limit, n):
    phase = phase8 / 8
    window, sent, ready = phase - W, 0, 0.0
    per_window: dict[int, int] = {}
    for _ in range(n):
        t, window, sent = open_loop_send_at(ready, window, sent, limit)
        assert window <= t < window + W
        k = round((window - phase) / W)
        per_window[k] = per_window.get(k, 0) + 1
        ready = t + 0.125
    assert max(per_window.values()) <= limit


def test_a_synchronous_context_skips_only_locks_it_waits_for():
    assert open_loop_skips(True, 1)
    assert not open_loop_skips(True, 0)
    assert not open_loop_skips(False, 1)
    assert not open_loop_skips(False, 0)


@kernel
def _compiled_rules(locks: int, timeout_us: float, think_us: float, lease_us: float,
                    seed: int, client: int, abort: int, slots: int, waiting: bool,
                    held_slot: int, slot: int) -> tuple[float, float, int, int]:
    """Every rule called from compiled code, as the fast engine calls them."""
    return (attempt_timeout_us(locks, timeout_us, think_us, lease_us),
            longest_hold_us(locks, timeout_us, think_us, lease_us),
            backoff_slots(seed, client, abort, slots), grant_verdict(waiting, held_slot, slot))


@pytest.mark.skipif(not JIT_ENABLED, reason="JIT disabled (NETLOCK_NOJIT=1)")
@given(st.integers(1, 100), st.floats(0, 1e6), st.floats(0, 1e6), st.floats(0, 1e6),
       st.integers(0, 2**40), st.integers(0, 10_000), st.integers(0, 10_000),
       st.integers(1, 64), st.booleans(), st.sampled_from([NOT_HELD, -1, 0, 5]),
       st.sampled_from([-1, 0, 5]))
def test_compiled_rules_answer_as_the_plain_python(locks, timeout_us, think_us, lease_us, seed,
                                                   client, abort, slots, waiting, held_slot,
                                                   slot):
    assert _compiled_rules.py_func is not _compiled_rules, "a compiled dispatcher"
    plain = (attempt_timeout_us(locks, timeout_us, think_us, lease_us),
             longest_hold_us(locks, timeout_us, think_us, lease_us),
             backoff_slots(seed, client, abort, slots), grant_verdict(waiting, held_slot, slot))
    assert _compiled_rules(locks, timeout_us, think_us, lease_us, seed, client, abort, slots,
                           waiting, held_slot, slot) == plain
