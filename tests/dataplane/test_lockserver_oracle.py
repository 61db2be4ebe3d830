"""The lock server's request rules (:mod:`netlock.lockserver.kernels`) against an oracle.

:class:`Oracle` is the rules of paper section 4.3 written plainly here, independently of the
kernels: per lock, FIFO queues per priority class granted highest class first under the S/X
rule, stopping at the first request that must wait; releases must match a holder by
(txn, client) and mode; an acquire whose (txn, client) already waits or holds at its served
lock is a network copy and is dropped, while copies sent to ``q2`` are buffered like any
request; overflow is only buffered in ``q2``, a bounced push-back going back to its front;
NOTIFY_SERVER pushes back from the head; the lease sweep drops expired holders lock by lock
in the order the locks became served. Random scripts of acquires (served, overflow, bounced
push-backs, copies of acquires already sent), releases (held, stale, of locks never
served), notifications and sweeps go to the kernels (through
:class:`netlock.lockserver.LockServer`, and through one state holding two servers as the
fast engine uses it) and to the oracle; every step must give the same actions in the same
order.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from netlock.lockserver import LockServer, hashmap, kernels
from netlock.lockserver.action_rows import actions_of
from netlock.lockserver.server_state import (
    CN_FREE_LOCK,
    FLAG_OVERFLOW,
    FLAG_PUSH_BACK,
    LK_ID,
    LK_NEXT,
    new_server_state,
)
from netlock.packets import Action, ActionKind, DropReason, LockRequest, Mode, Op

PRIORITIES = 3
LOCKS = 4


class Oracle:
    """One lock server's request rules, in plain Python."""

    def __init__(self) -> None:
        self.served: list[int] = []
        self.queues: dict[int, dict[int, list[LockRequest]]] = {}
        self.holding: dict[int, dict[tuple[int, int], tuple[LockRequest, int]]] = {}
        self.grants: dict[int, list[int]] = {}  # lock -> [shared, exclusive] grants held
        self.q2: dict[tuple[int, int], list[LockRequest]] = {}
        self.expired = 0

    def process(self, req: LockRequest, now: int) -> list[Action]:
        if req.op == Op.RELEASE:
            return self._release(req, now)
        if req.overflow:
            buf = self.q2.setdefault((req.lock_id, req.priority), [])
            if req.push_back:
                buf.insert(0, replace(req, push_back=False))
            else:
                buf.append(req)
            return []
        key = (req.txn_id, req.client_id)
        if req.lock_id in self.served and (
                key in self.holding[req.lock_id]
                or any((r.txn_id, r.client_id) == key
                       for queue in self.queues[req.lock_id].values() for r in queue)):
            return [Action(ActionKind.DROP, req, reason=DropReason.DUPLICATE)]
        if req.lock_id not in self.served:
            self.served.append(req.lock_id)
            self.queues[req.lock_id], self.holding[req.lock_id] = {}, {}
            self.grants[req.lock_id] = [0, 0]
        self.queues[req.lock_id].setdefault(req.priority, []).append(req)
        return self._grant(req.lock_id, now)

    def notified(self, lock: int, priority: int, count: int) -> list[Action]:
        buf = self.q2.get((lock, priority), [])
        out = buf[:count]
        del buf[:count]
        return [Action(ActionKind.PUSH_BACK, replace(r, overflow=False, push_back=True))
                for r in out]

    def expire(self, now: int, lease: int) -> list[Action]:
        actions = []
        for lock in list(self.served):
            for key, (_, since) in list(self.holding[lock].items()):
                if now - since >= lease:
                    self._let_go(lock, key)
                    self.expired += 1
            actions += self._grant(lock, now)
        return actions

    def _release(self, req: LockRequest, now: int) -> list[Action]:
        if req.lock_id not in self.served:
            return [Action(ActionKind.DROP, req, reason=DropReason.NOT_HELD)]
        held = self.holding[req.lock_id].get((req.txn_id, req.client_id))
        if held is None or held[0].mode != req.mode:
            return [Action(ActionKind.DROP, req, reason=DropReason.STALE_RELEASE)]
        self._let_go(req.lock_id, (req.txn_id, req.client_id))
        return self._grant(req.lock_id, now)

    def _let_go(self, lock: int, key: tuple[int, int]) -> None:
        req, _ = self.holding[lock].pop(key)
        self.grants[lock][int(req.mode)] -= 1

    def _grant(self, lock: int, now: int) -> list[Action]:
        out = []
        shared_exclusive = self.grants[lock]
        for priority in sorted(self.queues[lock]):
            queue = self.queues[lock][priority]
            while queue:
                shared, exclusive = shared_exclusive
                head = queue[0]
                if exclusive or (head.mode == Mode.EXCLUSIVE and shared):
                    break
                queue.pop(0)
                self.holding[lock][(head.txn_id, head.client_id)] = (head, now)
                shared_exclusive[int(head.mode)] += 1
                out.append(Action(ActionKind.GRANT,
                                  replace(head, overflow=False, push_back=False)))
            if queue:
                break
        if not self.holding[lock] and not any(self.queues[lock].values()):
            self.served.remove(lock)
        return out


class TwoServers:
    """The kernels on one state holding two servers (lock ``i`` on server ``i % 2``), as the
    fast engine keeps its rack's servers; a sweep sweeps server 0 then server 1; ``recycle``:
    idle locks give their dense rows back, as in the fast engine."""

    def __init__(self, recycle: bool = False) -> None:
        self.state = new_server_state(2, PRIORITIES, locks=8, nodes=512, actions=512,
                                      recycle=recycle)

    def process(self, req: LockRequest, now: int) -> list[Action]:
        flags = FLAG_OVERFLOW * req.overflow + FLAG_PUSH_BACK * req.push_back
        return actions_of(self.state, kernels.process(
            self.state, req.lock_id % 2, now, int(req.op), req.lock_id, int(req.mode),
            req.txn_id, req.client_id, req.tenant, req.priority, req.timestamp_us, flags))

    def notified(self, lock: int, priority: int, count: int) -> list[Action]:
        return actions_of(self.state, kernels.notified(self.state, lock % 2, lock, priority,
                                                       count))

    def expire(self, now: int, lease: int) -> list[Action]:
        return [a for s in (0, 1)
                for a in actions_of(self.state, kernels.expire(self.state, s, now, lease))]


class TwoOracles:
    """Two :class:`Oracle` servers, lock ``i`` on ``i % 2``."""

    def __init__(self) -> None:
        self.servers = (Oracle(), Oracle())

    def process(self, req: LockRequest, now: int) -> list[Action]:
        return self.servers[req.lock_id % 2].process(req, now)

    def notified(self, lock: int, priority: int, count: int) -> list[Action]:
        return self.servers[lock % 2].notified(lock, priority, count)

    def expire(self, now: int, lease: int) -> list[Action]:
        return [a for s in self.servers for a in s.expire(now, lease)]


acquire = st.tuples(st.just("acquire"), st.integers(0, LOCKS - 1), st.sampled_from(Mode),
                    st.integers(0, 3), st.integers(0, PRIORITIES - 1),
                    st.sampled_from(["served", "overflow"]))
bounce = st.tuples(st.just("bounce"), st.integers(0, 40))
duplicate = st.tuples(st.just("duplicate"), st.integers(0, 40))
release = st.tuples(st.just("release"), st.integers(0, 40),
                    st.sampled_from(["held", "held", "sent", "other mode", "never served"]))
notify = st.tuples(st.just("notify"), st.integers(0, 40), st.integers(0, 3))
notify_any = st.tuples(st.just("notify any"), st.integers(0, LOCKS - 1),
                       st.integers(0, PRIORITIES - 1), st.integers(0, 3))
sweep = st.tuples(st.just("expire"), st.integers(1, 30))
tick = st.tuples(st.just("tick"), st.integers(1, 10))
scripts = st.lists(st.one_of(acquire, acquire, bounce, bounce, duplicate, release, notify,
                             notify, notify_any, sweep, tick), min_size=20, max_size=80)

one_lock_acquire = st.tuples(st.just("acquire"), st.just(0), st.sampled_from(Mode),
                             st.integers(0, 3), st.integers(0, PRIORITIES - 1),
                             st.just("served"))
one_lock_scripts = st.lists(st.one_of(one_lock_acquire, one_lock_acquire, one_lock_acquire,
                                      st.tuples(st.just("release"), st.integers(0, 40),
                                                st.just("held")), tick),
                            min_size=6, max_size=40)
"""Mixed S/X acquires across classes on one lock, with releases of held grants: where a lower
class's S compatible with the holders must still wait behind a higher class's X."""


def run(script: list[tuple], got_server, oracle) -> list[Action]:
    """Play ``script`` on both. A bounce returns a pushed-back request to ``q2``, as the
    switch does when its queue is full again; a notify names a (lock, class) that overflowed
    (``notify any``: any one). Every action, in order."""
    now = 0
    log: list[Action] = []
    sent: list[LockRequest] = []
    granted: list[LockRequest] = []
    pushed: list[LockRequest] = []
    overflowed: list[tuple[int, int]] = []
    for step in script:
        kind = step[0]
        if kind == "tick":
            now += step[1]
            continue
        if kind in ("acquire", "bounce", "duplicate", "release"):
            if kind == "acquire":
                _, lock, mode, client, priority, how = step
                req = LockRequest(Op.ACQUIRE, mode, lock, len(sent), client, client % 2,
                                  priority, now, overflow=how == "overflow")
                sent.append(req)
                if req.overflow:
                    overflowed.append((lock, priority))
            elif kind == "duplicate":
                if not sent:
                    continue
                req = sent[step[1] % len(sent)]
            elif kind == "bounce":
                if not pushed:
                    continue
                req = replace(pushed.pop(step[1] % len(pushed)), overflow=True)
            else:
                _, pick, which = step
                pool = granted if which == "held" else sent
                if not pool:
                    continue
                req = pool[pick % len(pool)].release()
                if which == "other mode":
                    req = replace(req, mode=Mode(1 - req.mode))
                elif which == "never served":
                    req = replace(req, lock_id=LOCKS + req.lock_id)
            got, want = got_server.process(req, now), oracle.process(req, now)
        elif kind in ("notify", "notify any"):
            if kind == "notify":
                if not overflowed:
                    continue
                step = ("notify any", *overflowed[step[1] % len(overflowed)], step[2])
            got, want = got_server.notified(*step[1:]), oracle.notified(*step[1:])
        else:
            got, want = got_server.expire(now, step[1]), oracle.expire(now, step[1])
        assert got == want, f"step {step} at {now} us"
        log += want
        granted += [a.request for a in want if a.kind == ActionKind.GRANT]
        pushed += [a.request for a in want if a.kind == ActionKind.PUSH_BACK]
    return log


@settings(max_examples=200, deadline=None)
@given(scripts)
def test_lock_server_follows_the_rules(script):
    server, oracle = LockServer(), Oracle()
    run(script, server, oracle)
    assert server.expired_total == oracle.expired


@settings(max_examples=200, deadline=None)
@given(one_lock_scripts)
def test_classes_sharing_one_lock_follow_the_rules(script):
    run(script, LockServer(), Oracle())


@settings(max_examples=100, deadline=None)
@given(scripts)
def test_one_state_for_two_servers_follows_the_rules(script):
    run(script, TwoServers(), TwoOracles())


@settings(max_examples=100, deadline=None)
@given(scripts)
def test_a_state_recycling_idle_locks_follows_the_rules(script):
    servers = TwoServers(recycle=True)
    run(script, servers, TwoOracles())
    st_ = servers.state
    rows = [hashmap.lookup(st_.keys, st_.values, lock) for lock in range(LOCKS)]
    assert all(st_.lk[d, LK_ID] == lock for lock, d in enumerate(rows) if d >= 0)
    free, d = set(), st_.cnt[CN_FREE_LOCK]
    while d >= 0:
        free.add(int(d))
        d = st_.lk[d, LK_NEXT]
    assert not free & set(rows)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 40)), max_size=200))
def test_the_hash_map_removes_as_a_dict_does(steps):
    keys, values = hashmap.new_map(64)
    expected: dict[int, int] = {}
    for put, key in steps:
        if put:
            hashmap.insert(keys, values, key, 7 * key)
            expected[key] = 7 * key
        else:
            hashmap.remove(keys, values, key)
            expected.pop(key, None)
        assert all(hashmap.lookup(keys, values, k) == expected.get(k, -1) for k in range(41))


def test_a_bounced_push_back_goes_to_the_front_of_q2():
    script = [("acquire", 0, Mode.SHARED, 0, 0, "overflow"),
              ("acquire", 0, Mode.SHARED, 1, 0, "overflow"),
              ("notify", 0, 1), ("bounce", 0), ("notify", 0, 2)]
    run(script, LockServer(), Oracle())


def test_a_copy_of_a_waiting_or_held_acquire_is_dropped_and_a_later_one_is_served():
    script = [("acquire", 1, Mode.EXCLUSIVE, 0, 0, "served"),
              ("acquire", 1, Mode.EXCLUSIVE, 1, 0, "served"),
              ("duplicate", 0), ("duplicate", 1), ("release", 0, "held"),
              ("duplicate", 0), ("acquire", 2, Mode.SHARED, 2, 0, "overflow"),
              ("duplicate", 2)]
    log = run(script, LockServer(), Oracle())
    assert [a.reason for a in log].count(DropReason.DUPLICATE) == 2


def test_lower_classes_wait_behind_a_blocked_higher_class_and_leases_run_out():
    script = [("acquire", 1, Mode.EXCLUSIVE, 0, 1, "served"),
              ("acquire", 1, Mode.EXCLUSIVE, 1, 0, "served"),
              ("acquire", 1, Mode.SHARED, 2, 2, "served"), ("tick", 5),
              ("release", 0, "other mode"), ("release", 0, "never served"),
              ("expire", 5), ("expire", 1), ("release", 1, "held")]
    run(script, LockServer(), Oracle())
