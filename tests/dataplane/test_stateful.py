"""The Hypothesis state machine over :class:`tests.dataplane.faulty.FaultyClients`: random
interleavings of acquires, releases, faults (lost, duplicated, late packets), partial lease
expiry, lock moves, and switch and lock-server failures with their failovers, every step
checked against the independent oracle (see ``faulty.py`` for what is checked)."""

from __future__ import annotations

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from .faulty import CONTROL_OPS, LEASE_US, LOCKS, MOVABLE, FaultyClients


class SwitchAndServer(RuleBasedStateMachine):
    priorities = 1

    def __init__(self) -> None:
        super().__init__()
        self.c = FaultyClients(self.priorities)
        self.classes = st.integers(0, self.priorities - 1)

    def _holder(self, data: st.DataObject) -> int:
        return data.draw(st.sampled_from(sorted(self.c.held)), label="holder")

    @rule(lock=st.sampled_from(LOCKS), exclusive=st.booleans(), data=st.data())
    def acquire(self, lock: int, exclusive: bool, data: st.DataObject) -> None:
        self.c.acquire(lock, exclusive, data.draw(self.classes, label="priority"))

    @rule(lock=st.sampled_from(LOCKS), data=st.data(),
          modes=st.lists(st.booleans(), min_size=2, max_size=6))
    def acquire_burst(self, lock: int, data: st.DataObject, modes: list[bool]) -> None:
        """Several requests for one lock back to back: builds queues and overflow."""
        for exclusive in modes:
            self.c.acquire(lock, exclusive, data.draw(self.classes, label="priority"))

    @precondition(lambda self: self.c.held)
    @rule(data=st.data(), count=st.integers(1, 3))
    def release(self, data: st.DataObject, count: int) -> None:
        for _ in range(min(count, len(self.c.held))):
            self.c.release(self._holder(data))

    @rule(lock=st.sampled_from(LOCKS), exclusive=st.booleans(), data=st.data())
    def stale_release(self, lock: int, exclusive: bool, data: st.DataObject) -> None:
        self.c.stale_release(lock, exclusive, data.draw(self.classes, label="priority"))

    @precondition(lambda self: self.c.held)
    @rule(data=st.data(), later=st.booleans())
    def release_duplicated(self, data: st.DataObject, later: bool) -> None:
        self.c.release_duplicated(self._holder(data), later)

    @precondition(lambda self: self.c.held)
    @rule(data=st.data())
    def lost(self, data: st.DataObject) -> None:
        self.c.lose(self._holder(data))

    @precondition(lambda self: self.c.in_flight)
    @rule(data=st.data())
    def deliver_late(self, data: st.DataObject) -> None:
        self.c.deliver(data.draw(st.integers(0, len(self.c.in_flight) - 1), label="copy"))

    @rule(dt=st.integers(1, 50))
    def tick(self, dt: int) -> None:
        self.c.tick(dt)

    @rule()
    def expire_all(self) -> None:
        self.c.expire(self.c.sys.now + LEASE_US)

    @rule(dt=st.integers(1, LEASE_US))
    def expire_some(self, dt: int) -> None:
        self.c.expire(self.c.sys.now + dt)

    @rule()
    def switch_fails(self) -> None:
        self.c.fail_switch()

    @rule()
    def server_fails(self) -> None:
        self.c.fail_server()

    @rule(op=st.sampled_from(CONTROL_OPS), lock=st.sampled_from(MOVABLE))
    def control(self, op: str, lock: int) -> None:
        self.c.control(op, lock)

    @invariant()
    def checked(self) -> None:
        self.c.check()

    def teardown(self) -> None:
        self.c.drain()


def _machine(priorities: int) -> type[SwitchAndServer]:
    return type(f"SwitchAndServer{priorities}", (SwitchAndServer,), {"priorities": priorities})


SETTINGS = settings(max_examples=80, stateful_step_count=50, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

TestOnePriority = _machine(1).TestCase
TestOnePriority.settings = SETTINGS
TestTwoPriorities = _machine(2).TestCase
TestTwoPriorities.settings = SETTINGS
TestThreePriorities = _machine(3).TestCase
TestThreePriorities.settings = SETTINGS
