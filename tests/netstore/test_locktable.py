"""The controller's 2PL lock table against an oracle that recomputes every queue's holders
from scratch: a request holds its lock when no earlier request in its key's queue conflicts
with it (shared with shared is the only compatible pair)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.netstore.locktable import NetStoreLockTable

steps = st.lists(st.tuples(st.booleans(), st.integers(0, 3), st.booleans(),
                           st.integers(0, 1000)), max_size=80)


def oracle_holders(queue):
    return {txn for i, (txn, x) in enumerate(queue)
            if all(not (x or x2) for _, x2 in queue[:i])}


@settings(max_examples=300, deadline=None)
@given(steps)
def test_grants_match_the_oracle_never_conflict_and_follow_arrival_order(ops):
    table = NetStoreLockTable()
    queues: dict[int, list[tuple[int, bool]]] = {}
    held: dict[int, set[int]] = {}
    arrival: dict[tuple[int, int], int] = {}
    next_txn = 0
    for is_request, key, exclusive, pick in ops:
        queue = queues.setdefault(key, [])
        before = oracle_holders(queue)
        if is_request or not held.get(key):
            granted = table.request(next_txn, key, exclusive)
            arrival[(next_txn, key)] = len(arrival)
            queue.append((next_txn, exclusive))
            assert granted == (next_txn in oracle_holders(queue))
            next_txn += 1
        else:
            txn = sorted(held[key])[pick % len(held[key])]
            newly = table.release(txn, key)
            queue.remove(next(q for q in queue if q[0] == txn))
            after = oracle_holders(queue)
            assert set(newly) == after - (before - {txn})
            assert newly == sorted(newly, key=lambda t: arrival[(t, key)])
        held[key] = oracle_holders(queue)
        holders = table.holders(key)
        assert {t for t, _ in holders} == held[key]
        assert len(holders) <= 1 or not any(x for _, x in holders)
        for t, _ in table.waiting():
            waiting_key = next(k for k, q in queues.items() if any(e[0] == t for e in q))
            assert all(arrival[(h, waiting_key)] < arrival[(t, waiting_key)]
                       for h in held[waiting_key])


def test_a_release_without_a_hold_and_a_second_request_are_refused():
    table = NetStoreLockTable()
    assert table.request(1, 7, exclusive=True)
    assert not table.request(2, 7, exclusive=False)
    with pytest.raises(ValueError):
        table.release(2, 7)
    with pytest.raises(ValueError):
        table.request(1, 7, exclusive=False)
    assert table.release(1, 7) == [2]
