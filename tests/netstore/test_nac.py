"""Network-aware caching (section 3.2): the controller's replica directory and the servers'
caches against plain dictionaries, and where a read is sent."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.netstore.nac import ReplicaDirectory, ServerCache, replica_source

actions = st.lists(st.tuples(st.sampled_from(["read", "write"]), st.integers(0, 12),
                             st.integers(0, 5)), max_size=120)


@settings(max_examples=200, deadline=None)
@given(actions, st.integers(1, 6))
def test_the_directory_never_serves_a_version_older_than_the_last_write(steps, capacity):
    directory = ReplicaDirectory(capacity)
    newest_seen: dict[int, int] = {}
    written_after: dict[int, int] = {}
    for action, key, host in steps:
        if action == "write":
            directory.invalidate(key)
            written_after[key] = max(newest_seen.values(), default=0)
            assert directory.version(key) is None
        else:
            version = directory.record_read(key, host)
            assert version > written_after.get(key, 0)
            assert host in directory.holders(key)
            newest_seen[key] = max(newest_seen.get(key, 0), version)
        assert len(directory) <= capacity


def test_the_clock_spares_a_key_referenced_since_the_hand_passed():
    directory = ReplicaDirectory(2)
    directory.record_read(1, 0)
    directory.record_read(2, 0)
    directory.record_read(3, 0)
    assert directory.version(1) is None
    directory.touch(2)
    directory.record_read(4, 0)
    assert directory.version(2) is not None and directory.version(3) is None


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 15), st.integers(1, 4)), max_size=80),
       st.integers(1, 5))
def test_a_server_cache_holds_what_it_stored_last_and_stays_within_capacity(steps, capacity):
    cache = ServerCache(capacity, np.random.default_rng(0))
    last: dict[int, int] = {}
    for key, version in steps:
        cache.store(key, version)
        last[key] = version
        assert cache.holds(key, version)
        assert len(cache) <= capacity
        held = [k for k in last if cache.holds(k, last[k])]
        assert len(held) == len(cache)
        assert not cache.holds(key, None)


def rack(host: int) -> int:
    return host // 4


def pod(host: int) -> int:
    return host // 16


def test_cross_pod_reads_go_to_the_nearest_replica_and_others_go_home():
    assert replica_source(0, 5, {1, 2}, rack, pod) == 5
    assert replica_source(0, 20, {3, 9, 30}, rack, pod) == 3
    assert replica_source(0, 20, {9, 30}, rack, pod) == 9
    assert replica_source(0, 20, {30, 0}, rack, pod) == 20
