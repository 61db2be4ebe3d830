"""The failover rules of :mod:`netlock.failover` and the switch's backlog reset, on cases
the state machine found (``test_stateful.py`` explores them at random)."""

from __future__ import annotations

from netlock.failover import Grace, SwitchTakeover, grace_end_us
from netlock.lockserver import LockServer
from netlock.packets import ActionKind, Mode

from .harness import S, X, acq, kinds, region_layout, small_geometry

LEASE_US = 1_000


def test_nothing_is_granted_before_a_lease_after_the_failure():
    assert grace_end_us(5_000, LEASE_US) > 5_000 + LEASE_US
    grace = Grace(lambda lock_id: 0)
    grace.adopt(grace_end_us(0, LEASE_US), parts=[0])
    server = LockServer()
    assert grace.hold(acq(4, 1, X))
    assert grace.end(server, LEASE_US) == []
    assert kinds(grace.end(server, LEASE_US + 1)) == [("GRANT", 1)]
    assert not grace.active and not grace.hold(acq(4, 2, X))


def test_the_held_acquires_go_highest_class_first():
    """A class-1 acquire held before a class-0 one must not be granted first."""
    grace = Grace(lambda lock_id: 0)
    grace.adopt(10, parts=[0])
    assert grace.hold(acq(4, 1, S, priority=1)) and grace.hold(acq(4, 2, X, priority=0))
    assert kinds(grace.end(LockServer(2), 10)) == [("GRANT", 2)]


def test_a_switch_taking_over_pushes_the_backlog_back_only_after_the_grace():
    from netlock.dataplane import SwitchDataPlane

    geometry = small_geometry(1)
    switch = SwitchDataPlane(geometry)
    takeover = SwitchTakeover(switch, 0, LEASE_US)
    takeover.install(0, [(0, *region_layout(geometry)[0][0])], lambda lock, c: 2)
    assert takeover.resume_due(LEASE_US) == []
    notes = takeover.resume_due(LEASE_US + 1)
    assert [a.kind for a in notes] == [ActionKind.NOTIFY_SERVER] and not takeover.pending


def test_a_lost_server_backlog_no_longer_blocks_the_lower_classes():
    """Class 0 waits for requests buffered at the server; class 1 waits behind it in the
    switch. The server fails: class 1 is granted at once."""
    from netlock.dataplane import SwitchDataPlane

    geometry = small_geometry(2)
    switch = SwitchDataPlane(geometry)
    for c, (left, right) in enumerate(region_layout(geometry)[1]):
        switch.install(1, c, left, right, server_held=3 if c == 0 else 0)
    assert kinds(switch.process(acq(1, 8, S, priority=1), 0).actions) == []
    granted = switch.forget_server_backlog(1, 5)
    assert kinds(granted) == [("GRANT", 8)] and granted[0].request.mode == Mode.SHARED
