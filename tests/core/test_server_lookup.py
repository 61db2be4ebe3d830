"""The one lock-to-server rule (:mod:`netlock.server_lookup`): hash without ranges, the
range holding the id with ranges, servers folded onto a smaller rack; the plan, the simpy
engine's partition, the timeless rack and the fast engine's lookup all answer with it."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from netlock.plan import PartitionRange
from netlock.server_lookup import NO_RANGES, owning_server, owning_servers
from sim.core.allocation import Partition


def reference(lock: int, ranges: list[tuple[int, int]], servers: int) -> int:
    """Written from the definition: the first range whose upper bound is >= the id (the
    last range above them all), its server modulo the count; no ranges: id modulo count."""
    if not ranges:
        return lock % servers
    for hi, server in ranges:
        if lock <= hi:
            return server % servers
    return ranges[-1][1] % servers


@st.composite
def partitions(draw):
    bounds = sorted(set(draw(st.lists(st.integers(0, 10_000), max_size=6))))
    owners = [draw(st.integers(0, 7)) for _ in bounds]
    return list(zip(bounds, owners, strict=True))


@given(partitions(), st.integers(1, 6), st.lists(st.integers(0, 12_000), min_size=1,
                                                 max_size=30))
def test_every_caller_answers_by_the_one_rule(ranges, servers, locks):
    his = np.array([h for h, _ in ranges] or NO_RANGES, dtype=np.int64)
    owners = np.array([o for _, o in ranges] or NO_RANGES, dtype=np.int64)
    expected = [reference(k, ranges, servers) for k in locks]
    assert [owning_server(k, his, owners, servers) for k in locks] == expected
    out = np.empty(len(locks), dtype=np.int64)
    owning_servers(np.array(locks, dtype=np.int64), his, owners, servers, out)
    assert out.tolist() == expected
    part = Partition(servers, [h for h, _ in ranges] or None, [o for _, o in ranges] or None)
    assert [part.owner(k) for k in locks] == expected


def test_the_plan_and_the_timeless_rack_use_it():
    from netlock.timeless_rack import TimelessRack
    from tests.hwrunner.plans import make_plan

    plan = make_plan([(7, 2)], partition=(PartitionRange(0, 99, 1),
                                          PartitionRange(100, 10**9, 2)))
    locks = np.array([0, 99, 100, 5000])
    assert plan.server_of(locks).tolist() == [1, 1, 2, 2]
    assert plan.server_of(locks, 2).tolist() == [1, 1, 0, 0]
    rack = TimelessRack.from_plan(plan, servers=2)
    assert [rack.server_of(int(k)) for k in locks] == [1, 1, 0, 0]
    hashed = make_plan([(7, 2)], partition=())
    assert hashed.server_of(locks, 3).tolist() == [0, 0, 1, 2]
    assert [TimelessRack.from_plan(hashed, servers=3).server_of(int(k)) for k in locks] \
        == [0, 0, 1, 2], "without ranges the rack hashes, as both engines do"
