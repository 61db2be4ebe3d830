"""The array lock server of the fast engine against :class:`netlock.lockserver.LockServer`.

Random sequences of requests (acquires served or buffered as overflow, push-back bounces,
releases of held, stale or unknown requests), NOTIFY_SERVERs and lease sweeps go through
both; every call must give the same actions, in the same order.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from netlock.lockserver import LockServer
from netlock.packets import LockRequest, Mode, Op
from sim.fast.lockserver import ArrayLockServer

PRIORITIES = 3
LOCKS = 4

acquire = st.tuples(st.just("acquire"), st.integers(0, LOCKS - 1), st.sampled_from([0, 1]),
                    st.integers(0, 5), st.integers(0, 3), st.integers(0, PRIORITIES - 1),
                    st.sampled_from(["served", "served", "overflow", "bounce"]))
release = st.tuples(st.just("release"), st.integers(0, 40), st.sampled_from(["held", "any"]))
notify = st.tuples(st.just("notify"), st.integers(0, LOCKS - 1),
                   st.integers(0, PRIORITIES - 1), st.integers(0, 4))
sweep = st.tuples(st.just("expire"), st.integers(1, 30))
tick = st.tuples(st.just("tick"), st.integers(1, 10))
steps = st.lists(st.one_of(acquire, acquire, release, notify, sweep, tick), max_size=120)


def run_both(script: list[tuple]) -> None:
    ref = LockServer()
    fast = ArrayLockServer(PRIORITIES)
    now = 0
    sent: list[LockRequest] = []
    granted: list[LockRequest] = []
    for step in script:
        kind = step[0]
        if kind == "tick":
            now += step[1]
            continue
        if kind == "acquire":
            _, lock, mode, txn_low, client, priority, how = step
            txn = len(sent) if txn_low == 5 else txn_low
            req = LockRequest(Op.ACQUIRE, Mode(mode), lock, txn, client, tenant=client % 2,
                              priority=priority, timestamp_us=now,
                              overflow=how != "served", push_back=how == "bounce")
            sent.append(req)
            got, want = fast.process(req, now), ref.process(req, now)
        elif kind == "release":
            _, pick, which = step
            pool = granted if which == "held" else sent
            if not pool:
                continue
            req = pool[pick % len(pool)].release()
            got, want = fast.process(req, now), ref.process(req, now)
        elif kind == "notify":
            _, lock, priority, count = step
            got, want = fast.notified(lock, priority, count), ref.notified(lock, priority, count)
        else:
            got, want = fast.expire(now, step[1]), ref.expire(now, step[1])
        assert got == want, f"step {step} at {now} us"
        granted += [a.request for a in want if a.kind.name == "GRANT"]
    assert fast.expired_total == ref.expired_total


@settings(max_examples=300, deadline=None)
@given(steps)
def test_same_actions_in_the_same_order(script):
    run_both(script)


def test_grants_fifo_per_class_and_pushes_back_in_order():
    script = [("acquire", 0, 1, 1, 0, 1, "served"), ("acquire", 0, 0, 2, 1, 1, "served"),
              ("acquire", 0, 0, 3, 2, 0, "served"), ("acquire", 1, 1, 4, 0, 0, "overflow"),
              ("acquire", 1, 1, 0, 1, 0, "bounce"), ("notify", 1, 0, 1), ("tick", 5),
              ("release", 0, "held"), ("expire", 3), ("notify", 1, 0, 3)]
    run_both(script)
