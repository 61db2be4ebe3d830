"""The transaction context's kernels (:mod:`netlock.txn_context`) driven as an engine drives
them, against an independent oracle: a closed-form account of each attempt (its deadline,
its grants in arrival order, its commit or give-up) written from :mod:`netlock.client`'s
rules, not from the kernels. Also: the compiled kernels answer as the plain Python ones."""

from __future__ import annotations

import heapq
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netlock.client import HAND_BACK, IGNORE, NOT_HELD, USE, backoff_slots
from netlock.dataplane._kernel_jit import JIT_ENABLED, kernel
from netlock.txn_context import (
    AS_EVENT,
    BEGIN_LATER,
    BEGIN_NOW,
    COMMIT_LATER,
    COMMIT_NOW,
    FOLD_NOW,
    GIVE_UP,
    LEASE_OVER,
    MORE,
    N_X,
    N_XF,
    OPEN_EXPIRED,
    OPEN_IGNORE,
    OPEN_RELEASE,
    SETTLE_NOW,
    TAKE_NOW,
    TIMER_ABORT,
    TIMER_REARM,
    X_ATTEMPT,
    X_SENT,
    XF_DEADLINE,
    XF_TIMER_AT,
    XF_WINDOW,
    end_txn,
    give_up,
    grant_action,
    hands_back,
    is_current,
    lease_runs,
    new_row,
    next_send,
    on_arrival,
    open_grant,
    start_attempt,
    take_grant,
    timer_fires,
)

SEED, SLOTS, SLOT_US = 11, 10, 30.0
INF = math.inf

GRANT = st.tuples(st.one_of(st.none(), st.integers(0, 40)),  # arrival after the start, or lost
                  st.sampled_from([0, 3, 10**6]))  # lease left at arrival: over, short, long


def scenario():
    return st.integers(1, 4).flatmap(lambda n: st.tuples(
        st.just(n), st.sampled_from([0, 5]),  # hold (0: commit at once)
        st.sampled_from([0.0, 7.0]),  # rate cap: us per lock
        st.lists(st.lists(GRANT, min_size=n, max_size=n), min_size=1, max_size=12)))


def run_kernels(n, hold, gap, timeout, attempts):
    """One context driven through the kernels by a small event loop, as an engine does:
    each attempt's grants arrive per ``attempts`` (offset from its start, lease left)."""
    ci, cf = new_row()
    heap, seq = [], [0]
    log = {"commits": [], "give_ups": [], "retries": 0, "stale": 0}
    held: list[float] = []
    nxt = [0]

    def push(t, kind, *data):
        seq[0] += 1
        heapq.heappush(heap, (t, seq[0], kind, data))

    def attempt(now, new_locks=-1):
        if nxt[0] == len(attempts):
            return
        grants = attempts[nxt[0]]
        nxt[0] += 1
        held.clear()
        if start_attempt(ci, cf, now, timeout, new_locks, gap):
            push(cf[XF_TIMER_AT], "timer")
        for off, lease in grants:
            if off is not None:
                push(now + off, "grant", ci[X_ATTEMPT], now + off + lease)

    def begin(now):
        attempt(now, n)

    def abort(now):
        held.clear()
        drop(now)

    def drop(now):
        retries, wait = give_up(ci, cf, now, SEED, 0, SLOTS, SLOT_US, -1.0)
        log["retries"] += retries
        log["give_ups"].append(now)
        push(now + wait, "retry", ci[X_ATTEMPT])

    def commit(a, now):
        if not is_current(ci, a):
            return
        valid = all(lease_runs(now, end) for end in held)
        held.clear()
        if valid:
            log["commits"].append(now)
        action, at = end_txn(ci, cf, valid, now, -INF)
        if action == GIVE_UP:
            drop(now)
        elif action == BEGIN_LATER:
            push(at, "begin")
        else:
            begin(now)

    def grant(now, a, lease_end):
        verdict = grant_action(ci, a, True, NOT_HELD, 0)
        if verdict != USE:
            log["stale"] += 1
            assert verdict == HAND_BACK
            return
        action = take_grant(ci, cf, now, lease_end, hold == 0)
        if action == LEASE_OVER:
            abort(now)
            return
        held.append(lease_end)
        if action == COMMIT_NOW:
            commit(ci[X_ATTEMPT], now)
        elif action == COMMIT_LATER:
            push(now + hold, "commit", ci[X_ATTEMPT])

    def timer(now):
        action = timer_fires(ci, cf, now)
        if action == TIMER_ABORT:
            abort(now)
        elif action == TIMER_REARM:
            push(cf[XF_TIMER_AT], "timer")

    begin(0.0)
    for _ in range(10_000):
        if not heap:
            break
        t, _, kind, data = heapq.heappop(heap)
        if kind == "grant":
            grant(t, *data)
        elif kind == "commit":
            commit(data[0], t)
        elif kind == "timer":
            timer(t)
        elif kind == "retry":
            if is_current(ci, data[0]):
                attempt(t)
        else:
            begin(t)
    assert not heap, "a context that never settles"
    return log


def oracle(n, hold, gap, timeout, attempts):
    """Each attempt in closed form: it may take grants until ``timeout`` after its start;
    a grant whose lease is over on arrival gives it up then, and so does the deadline with
    a grant missing; with all in, it commits ``hold`` later if every lease still runs then,
    else it gives up then. A give-up counts a retry per lock and retries after the back-off;
    a commit starts the next transaction at once or when the rate cap allows. Grants that
    arrive for an attempt no longer waiting are stale."""
    log = {"commits": [], "give_ups": [], "retries": 0, "stale": 0}
    t, cap, aborts, new_txn = 0.0, 0.0, 0, True
    for grants in attempts:
        if new_txn and gap > 0:
            cap = max(cap, t) + gap * n
        deadline = t + timeout
        arrivals = sorted((t + off, k, t + off + lease) for k, (off, lease) in enumerate(grants)
                          if off is not None)
        on_time = [a for a in arrivals if a[0] < deadline]
        over = [i for i, (a, _, end) in enumerate(on_time) if a >= end]
        if over:
            end_at, taken = on_time[over[0]][0], over[0] + 1
        elif len(on_time) == n:
            end_at, taken = on_time[-1][0] + hold, n
        else:
            end_at, taken = deadline, len(on_time)
        log["stale"] += len(arrivals) - taken
        committed = not over and len(on_time) == n and all(end > end_at for _, _, end in on_time)
        if committed:
            log["commits"].append(end_at)
            t, new_txn = max(end_at, cap), True
        else:
            log["give_ups"].append(end_at)
            log["retries"] += n
            t = end_at + backoff_slots(SEED, 0, aborts, SLOTS) * SLOT_US
            aborts, new_txn = aborts + 1, False
    return log


@settings(max_examples=300, deadline=None)
@given(scenario())
def test_the_kernels_run_each_attempt_as_the_closed_form_rules_say(case):
    n, hold, gap, attempts = case
    timeout = 20.5  # never equal to an (integer) arrival: no ties with the deadline
    assert run_kernels(n, hold, gap, timeout, attempts) == oracle(n, hold, gap, timeout,
                                                                  attempts)


def test_a_lease_over_at_commit_gives_the_attempt_up():
    """Two grants at 1 and 2 us, the first with 3 us of lease left: a 5 us hold ends past
    it, so the attempt is given up at 7 us instead of committing (a check that the oracle's
    cases include what the property test is about)."""
    log = run_kernels(2, 5, 0.0, 20.5, [[(1, 3), (2, 10**6)]])
    assert log["commits"] == [] and log["give_ups"] == [7.0] and log["retries"] == 2
    assert run_kernels(1, 3, 0.0, 20.5, [[(1, 3)]])["give_ups"] == [4.0], "ends at commit"


def test_arrivals_are_handled_at_once_only_for_the_last_grant_in_time():
    ci, cf = new_row()
    start_attempt(ci, cf, 0.0, 10.0, 1, 0.0)
    a = ci[X_ATTEMPT]
    assert on_arrival(ci, cf, a, True, 5.0, 100.0, True, True) == SETTLE_NOW
    assert on_arrival(ci, cf, a, True, 5.0, 100.0, True, False) == TAKE_NOW
    assert on_arrival(ci, cf, a, True, 5.0, 3.0, True, True) == TAKE_NOW  # lease over
    assert on_arrival(ci, cf, a, True, 10.0, 100.0, True, True) == AS_EVENT  # past deadline
    assert on_arrival(ci, cf, a - 1, True, 5.0, 100.0, True, True) == AS_EVENT  # stale
    assert on_arrival(ci, cf, a, False, 5.0, 100.0, True, True) == AS_EVENT  # a release
    assert on_arrival(ci, cf, a, True, 5.0, 100.0, False, True) == AS_EVENT  # thinks first


def test_a_grant_before_the_last_may_be_folded_only_within_its_lease_and_deadline():
    ci, cf = new_row()
    start_attempt(ci, cf, 0.0, 10.0, 2, 0.0)
    a = ci[X_ATTEMPT]
    for instant in (True, False):
        assert on_arrival(ci, cf, a, True, 5.0, 100.0, instant, True) == FOLD_NOW
    assert on_arrival(ci, cf, a, True, 5.0, 5.0, True, True) == AS_EVENT  # lease over
    assert on_arrival(ci, cf, a, True, 10.0, 100.0, True, True) == AS_EVENT  # past deadline
    assert take_grant(ci, cf, 5.0, 100.0, True) == MORE
    assert on_arrival(ci, cf, a, True, 6.0, 100.0, True, True) == TAKE_NOW  # now the last


def test_a_duplicated_grant_is_ignored_and_a_late_one_handed_back_only_while_leased():
    ci, cf = new_row()
    start_attempt(ci, cf, 0.0, 10.0, 2, 0.0)
    a = ci[X_ATTEMPT]
    assert grant_action(ci, a, True, NOT_HELD, 4) == USE
    assert grant_action(ci, a, True, 4, 4) == IGNORE
    assert grant_action(ci, a - 1, True, NOT_HELD, 4) == HAND_BACK
    assert hands_back(True, 5.0, 6.0) and not hands_back(True, 6.0, 6.0)
    assert not hands_back(False, 5.0, 6.0)


@kernel
def _compiled(ci, cf, now, lease_end, ready):
    """A context's steps in compiled code, on numpy rows, as the fast engine runs them."""
    arm = start_attempt(ci, cf, now, 40.0, 3, 2.0)
    first = take_grant(ci, cf, now + 1.0, lease_end, False)
    second = timer_fires(ci, cf, now + 50.0)
    retries, wait = give_up(ci, cf, now + 50.0, SEED, 3, SLOTS, SLOT_US, -1.0)
    again = start_attempt(ci, cf, now + 60.0, 40.0, -1, 2.0)
    took = 0
    for _ in range(3):
        took = take_grant(ci, cf, now + 61.0, lease_end, True)
    action, at = end_txn(ci, cf, lease_runs(now + 61.0, lease_end), now + 61.0, ready)
    return arm, first, second, retries, wait, again, took, action, at


@pytest.mark.skipif(not JIT_ENABLED, reason="JIT disabled (NETLOCK_NOJIT=1)")
@given(st.floats(0, 1e6), st.floats(-1e3, 1e7), st.floats(-1e6, 1e7))
def test_compiled_kernels_answer_as_the_plain_python(now, lease_left, ready):
    ci = np.zeros(N_X + 2, dtype=np.int64)  # an engine's row may carry its own columns after
    cf = np.zeros(N_XF + 2)
    cf[XF_DEADLINE] = cf[XF_TIMER_AT] = INF
    pci, pcf = new_row()
    compiled = _compiled(ci, cf, now, now + lease_left, ready)
    plain = _compiled.py_func(pci, pcf, now, now + lease_left, ready)
    assert compiled == plain
    assert list(ci[:N_X]) == pci and list(cf[:N_XF]) == pcf
    assert plain[1] in (LEASE_OVER, MORE) and plain[6] in (LEASE_OVER, MORE, COMMIT_NOW)
    assert plain[7] in (GIVE_UP, BEGIN_NOW, BEGIN_LATER)


@pytest.mark.parametrize("acquire, now, lease_end, action", [
    (True, 5.0, 6.0, OPEN_RELEASE),
    (True, 6.0, 6.0, OPEN_EXPIRED),
    (False, 5.0, 6.0, OPEN_IGNORE),
])
def test_an_open_loop_grant_is_released_at_once_while_leased(acquire, now, lease_end, action):
    assert open_grant(acquire, now, lease_end) == action


def test_the_open_loop_send_slot_keeps_its_window_in_the_row():
    """At most ``limit`` sends per 1 ms window: the third of three ready at once waits for
    the next window, whose count then starts again."""
    ci, cf = new_row(window_us=-1000.0)
    assert [next_send(ci, cf, 10.0, 2) for _ in range(3)] == [10.0, 10.0, 1000.0]
    assert (cf[XF_WINDOW], ci[X_SENT]) == (1000.0, 1)
