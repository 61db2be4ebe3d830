"""Tenant quotas and leases."""

from __future__ import annotations

from dataclasses import replace

import pytest

from netlock.dataplane import ControlPlaneError, SwitchDataPlane
from netlock.geometry import SwitchGeometry
from netlock.packets import ActionKind, DropReason

from .harness import S, X, acq, kinds

LOCK = 2


def make_switch(**kwargs) -> SwitchDataPlane:
    switch = SwitchDataPlane(SwitchGeometry.uniform(12, arrays=2), max_tenants=4, **kwargs)
    switch.install(LOCK, 0, 0, 5)
    return switch


@pytest.mark.parametrize("policy, kind", [("drop", ActionKind.DROP),
                                          ("defer", ActionKind.DEFER)])
def test_over_quota_acquires_are_dropped_or_deferred(policy, kind):
    switch = make_switch(quota_policy=policy)
    switch.set_tenant_quota(1, 2)
    outcomes = [switch.process(acq(LOCK, t, S, tenant=1), 0) for t in (1, 2, 3)]
    assert [o.actions[0].kind for o in outcomes] == [ActionKind.GRANT, ActionKind.GRANT, kind]
    assert outcomes[2].actions[0].reason == DropReason.QUOTA and outcomes[2].passes == 1
    assert switch.occupancy(LOCK)[0]["count"] == 2, "the refused request took no slot"
    assert kinds(switch.process(acq(LOCK, 4, S, tenant=2), 0).actions) == [("GRANT", 4)]
    assert kinds(switch.process(acq(9, 5, S, tenant=1), 0).actions) == [(kind.name, 5)]
    switch.reset_quota_window()
    assert kinds(switch.process(acq(LOCK, 6, S, tenant=1), 0).actions) == [("GRANT", 6)]


def test_push_backs_and_unknown_tenants_are_not_charged():
    switch = make_switch()
    switch.set_tenant_quota(1, 1)
    switch.process(acq(LOCK, 1, X, tenant=1), 0)
    switch.pause(LOCK)
    switch.process(acq(LOCK, 9, X, tenant=0), 0)
    switch.resume(LOCK)
    push = replace(acq(LOCK, 9, X, tenant=1), push_back=True)
    assert switch.process(push, 0).actions == []
    assert kinds(switch.process(acq(LOCK, 3, X, tenant=7), 0).actions) == []
    with pytest.raises(ControlPlaneError, match="tenant"):
        switch.set_tenant_quota(7, 1)


def test_expiry_releases_only_expired_heads_and_refreshes_the_next_lease():
    switch = make_switch()
    switch.process(acq(LOCK, 1, X), 0)
    switch.process(acq(LOCK, 2, X), 10)
    assert switch.expire(now_us=99, lease_us=100) == []
    out = switch.expire(now_us=100, lease_us=100)
    assert kinds(out) == [("GRANT", 2)] and out[0].request.timestamp_us == 100
    assert switch.last_expired == 1
    assert switch.expire(now_us=150, lease_us=100) == [], "the lease restarted at the grant"
    assert kinds(switch.expire(now_us=200, lease_us=100)) == []
    assert switch.is_drained(LOCK) and switch.expired_total == 2


def test_expiry_stops_at_a_live_shared_head():
    switch = make_switch()
    switch.process(acq(LOCK, 1, S), 0)
    switch.process(acq(LOCK, 2, S), 50)
    switch.process(acq(LOCK, 3, X), 60)
    assert switch.expire(now_us=120, lease_us=100) == []
    assert switch.last_expired == 1 and switch.occupancy(LOCK)[0]["count"] == 2
    assert kinds(switch.expire(now_us=150, lease_us=100)) == [("GRANT", 3)]


def test_expiry_of_the_last_holder_notifies_the_server():
    switch = make_switch()
    switch.process(acq(LOCK, 1, X), 0)
    switch.pause(LOCK)
    switch.process(acq(LOCK, 2, X), 0)
    switch.resume(LOCK)
    out = switch.expire(now_us=100, lease_us=100)
    assert [(a.kind, a.count) for a in out] == [(ActionKind.NOTIFY_SERVER, 6)]
