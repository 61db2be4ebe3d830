"""Priority classes (paper 4.4): one queue per class, higher classes granted first."""

from __future__ import annotations

import pytest

from netlock.dataplane import SwitchDataPlane
from netlock.geometry import RegisterArray, SwitchGeometry

from .harness import S, X, acq, kinds, rel

LOCK = 1


@pytest.fixture
def switch() -> SwitchDataPlane:
    geometry = SwitchGeometry(tuple(RegisterArray(stage=s, size=6) for s in (2, 3)),
                              priorities=2)
    switch = SwitchDataPlane(geometry)
    switch.install(LOCK, 0, 0, 3)
    switch.install(LOCK, 1, 6, 9)
    return switch


def send(switch: SwitchDataPlane, req):
    return kinds(switch.process(req, 0).actions)


def test_higher_class_is_granted_first_after_a_release(switch):
    assert send(switch, acq(LOCK, 1, S, 1)) == [("GRANT", 1)]
    assert send(switch, acq(LOCK, 2, X, 1)) == []
    assert send(switch, acq(LOCK, 3, X, 0)) == []
    assert send(switch, rel(LOCK, 1, S, 1, switch=switch)) == [("GRANT", 3)]
    assert send(switch, rel(LOCK, 3, X, 0, switch=switch)) == [("GRANT", 2)]


def test_shared_joins_unless_an_exclusive_waits_in_its_class_or_above(switch):
    send(switch, acq(LOCK, 1, S, 1))
    send(switch, acq(LOCK, 2, X, 1))
    assert send(switch, acq(LOCK, 3, S, 0)) == [("GRANT", 3)], "class 0 overtakes class 1's X"
    assert send(switch, acq(LOCK, 4, S, 1)) == [], "waits behind class 1's X"


def test_a_waiting_higher_class_blocks_lower_shared_requests(switch):
    send(switch, acq(LOCK, 1, S, 1))
    send(switch, acq(LOCK, 2, X, 0))
    assert send(switch, acq(LOCK, 3, S, 1)) == []
    assert send(switch, rel(LOCK, 1, S, 1, switch=switch)) == [("GRANT", 2)]
    assert send(switch, rel(LOCK, 2, X, 0, switch=switch)) == [("GRANT", 3)]


def test_release_grants_across_classes_in_one_resubmit_chain(switch):
    send(switch, acq(LOCK, 1, X, 1))
    for txn, cls in ((2, 0), (3, 1), (4, 1)):
        send(switch, acq(LOCK, txn, S, cls))
    out = switch.process(rel(LOCK, 1, X, 1, switch=switch), 0)
    assert kinds(out.actions) == [("GRANT", 2), ("GRANT", 3), ("GRANT", 4)]
    assert out.passes == 4


def test_a_class_without_a_region_uses_the_nearest_lower_one():
    geometry = SwitchGeometry(tuple(RegisterArray(stage=s, size=4) for s in (2, 3, 4)),
                              priorities=3)
    switch = SwitchDataPlane(geometry)
    switch.install(LOCK, 2, 8, 9)
    grant = switch.process(acq(LOCK, 1, X, 0), 0).actions[0]
    assert grant.request.priority == 2
    assert kinds(switch.process(grant.request.release(), 0).actions) == []
    assert switch.is_drained(LOCK)
    overflow = [switch.process(acq(LOCK, t, X, 1), 0).actions for t in (2, 3, 4)][-1]
    assert overflow[0].request.overflow and overflow[0].request.priority == 2
