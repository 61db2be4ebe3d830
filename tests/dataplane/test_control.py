"""Control-plane operations: installing, moving and removing regions, failure, snapshots."""

from __future__ import annotations

import numpy as np
import pytest

from netlock.dataplane import ControlPlaneError, SwitchDataPlane
from netlock.geometry import RegisterArray, SwitchGeometry
from netlock.packets import ActionKind

from .harness import S, X, acq, kinds, rel


@pytest.fixture
def switch() -> SwitchDataPlane:
    geometry = SwitchGeometry(tuple(RegisterArray(stage=s, size=5) for s in (2, 3, 4, 5)),
                              priorities=2)
    return SwitchDataPlane(geometry)


@pytest.mark.parametrize("args, message", [
    ((1, 0, 8, 12), "within class 0's slots"),
    ((1, 1, 4, 12), "within class 1's slots"),
    ((1, 2, 0, 1), "priority"),
    ((1, 0, 3, 2), "within"),
    ((-1, 0, 0, 1), "lock_id"),
])
def test_install_rejects_bad_regions(switch, args, message):
    with pytest.raises(ControlPlaneError, match=message):
        switch.install(*args)


def test_install_rejects_overlaps_and_duplicates(switch):
    switch.install(1, 0, 0, 3)
    with pytest.raises(ControlPlaneError, match="overlaps"):
        switch.install(2, 0, 3, 5)
    with pytest.raises(ControlPlaneError, match="already has a region"):
        switch.install(1, 0, 6, 7)
    switch.install(1, 1, 10, 11)
    assert [r["priority"] for r in switch.occupancy(1)] == [0, 1]


def test_install_with_a_server_backlog_asks_for_push_backs(switch):
    out = switch.install(4, 0, 2, 4, server_held=5)
    assert [(a.kind, a.count, a.request.lock_id) for a in out] == [
        (ActionKind.NOTIFY_SERVER, 3, 4)]
    assert kinds(switch.process(acq(4, 1, X), 0).actions) == [("OVERFLOW", 1)]


def test_remove_needs_a_drained_lock_and_frees_its_slots(switch):
    switch.install(1, 0, 0, 3)
    switch.process(acq(1, 1, X), 0)
    with pytest.raises(ControlPlaneError, match="not empty"):
        switch.remove(1)
    switch.process(rel(1, 1, X, switch=switch), 0)
    switch.remove(1)
    assert switch.resident_locks == [] and switch.lock_index(1) == -1
    assert kinds(switch.process(acq(1, 2, X), 0).actions) == [("TO_SERVER", 2)]
    switch.install(2, 0, 0, 3)
    with pytest.raises(ControlPlaneError, match="not in the switch"):
        switch.pause(1)


def test_pause_overflows_acquires_keeps_releases_and_defers_notify(switch):
    switch.install(1, 0, 0, 3)
    switch.process(acq(1, 1, S), 0)
    switch.pause(1)
    assert kinds(switch.process(acq(1, 2, S), 0).actions) == [("OVERFLOW", 2)]
    assert switch.process(rel(1, 1, S, switch=switch), 0).actions == [], "no NOTIFY while paused"
    assert switch.is_drained(1)
    out = switch.resume(1)
    assert [(a.kind, a.count) for a in out] == [(ActionKind.NOTIFY_SERVER, 4)]


def test_set_bounds_moves_an_empty_region(switch):
    switch.install(1, 0, 0, 3)
    switch.install(2, 0, 4, 5)
    switch.process(acq(1, 1, X), 0)
    with pytest.raises(ControlPlaneError, match="not empty"):
        switch.set_bounds(1, 0, 6, 9)
    switch.process(rel(1, 1, X, switch=switch), 0)
    with pytest.raises(ControlPlaneError, match="overlaps"):
        switch.set_bounds(1, 0, 3, 6)
    switch.set_bounds(1, 0, 6, 6)
    switch.process(acq(1, 2, X), 0)
    assert switch.slots[6, 1] == 2
    assert kinds(switch.process(acq(1, 3, X), 0).actions) == [("OVERFLOW", 3)]
    switch.install(3, 0, 0, 3)


def test_failure_loses_everything(switch):
    switch.install(1, 0, 0, 3)
    switch.set_tenant_quota(1, 5)
    switch.process(acq(1, 1, X), 0)
    switch.fail()
    assert switch.resident_locks == []
    assert not switch.slots[:, :6].any() and not switch.tenants.any()
    assert kinds(switch.process(acq(1, 2, X), 0).actions) == [("TO_SERVER", 2)]
    switch.install(1, 0, 0, 3)


def test_snapshot_restore_continues_identically(switch):
    switch.install(1, 0, 0, 3)
    switch.install(2, 1, 10, 12)
    for txn, lock, mode in ((1, 1, X), (2, 1, S), (3, 2, S), (4, 1, S)):
        switch.process(acq(lock, txn, mode, priority=lock - 1), 10 * txn)
    twin = SwitchDataPlane(switch.geometry)
    twin.restore(switch.snapshot())
    assert twin.resident_locks == [1, 2]
    for sw in (switch, twin):
        out = sw.process(rel(1, 1, X, switch=sw), 100)
        assert kinds(out.actions) == [("GRANT", 2), ("GRANT", 4)]
        with pytest.raises(ControlPlaneError, match="overlaps"):
            sw.install(3, 0, 2, 4)
    for name, array in switch.snapshot().items():
        assert np.array_equal(array, twin.snapshot()[name]), name


def test_restore_rejects_another_geometry(switch):
    small = SwitchDataPlane(SwitchGeometry.uniform(8, arrays=2))
    with pytest.raises(ControlPlaneError, match=r"snapshot\.locks"):
        small.restore(switch.snapshot())


def test_lock_index_array_is_the_dense_lock_table(switch):
    switch.install(5, 0, 0, 1)
    switch.install(2, 0, 2, 3)
    table = switch.lock_index_array(8)
    assert table[5] == switch.lock_index(5) and table[2] == switch.lock_index(2)
    assert (np.delete(table, [2, 5]) == -1).all()


def test_a_lock_is_quiet_only_without_queued_requests_or_announced_push_backs(switch):
    switch.install(1, 0, 0, 1)
    assert switch.is_quiet(1)
    switch.process(acq(1, 1, X), 0)
    assert not switch.is_quiet(1)
    switch.process(rel(1, 1, X, switch=switch), 0)
    assert switch.is_quiet(1)
    switch.install(4, 0, 2, 4, server_held=5)
    assert switch.is_drained(4) and not switch.is_quiet(4)
    assert switch.server_held(4, 0) == 5 and switch.server_held(1, 0) == 0


def test_set_counters_writes_what_counters_reads(switch):
    switch.install(1, 0, 0, 3)
    switch.install(2, 0, 4, 7)
    switch.set_counters(1, requests=7)
    switch.set_counters(2, peak_occupancy=3)
    read = switch.counters()
    assert read["requests"].tolist() == [7, 0] and read["peak_occupancy"].tolist() == [0, 3]
    with pytest.raises(ControlPlaneError, match="not in the switch"):
        switch.set_counters(9, requests=1)
