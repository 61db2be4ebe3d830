"""The one migration ``plan --live`` prints and ``push`` runs: which locks stay, move, leave or
enter, and which lock ranges change server; and the live partition kept across re-plans."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from netlock.plan import PartitionRange, Plan, PlanInputs, PlanSummary
from planner.migrate import ServerMove, normalize_partition, plan_migration, server_moves
from planner.partition import keep_partition
from planner.placement import layout
from tests.planner.test_placement import GEOMETRY, allocations, entries_of


def plan_of(entries) -> Plan:
    partition = (PartitionRange(0, 99, 0),)
    summary = PlanSummary("manual", 0, 0, 0, 0, 0.0, 0.0, 0.0, 1, 1.0)
    return Plan(GEOMETRY, "manual", PlanInputs(0, 1.0), entries, partition, summary)


def regions(entries, rows=None) -> dict:
    rows = range(len(entries)) if rows is None else rows
    return {(int(entries.lock_id[r]), int(entries.priority[r])):
            (int(entries.left[r]), int(entries.right[r])) for r in rows}


@settings(max_examples=200, deadline=None)
@given(allocations(), allocations())
def test_taking_off_what_changes_then_installing_it_gives_the_new_layout(old_alloc, new_alloc):
    live = entries_of(*old_alloc, layout(*old_alloc, GEOMETRY))
    new = entries_of(*new_alloc, layout(*new_alloc, GEOMETRY, live))
    mig = plan_migration(plan_of(live), plan_of(new))
    c = mig.changes
    kept = regions(mig.live)
    for row in [*c.leaving, *c.moved_live]:
        del kept[(int(mig.live.lock_id[row]), int(mig.live.priority[row]))]
    assert set(kept) == set(regions(mig.target, c.staying))
    added = regions(mig.target, [*c.moved, *c.entering])
    assert not set(kept) & set(added)
    assert {**kept, **added} == regions(new)
    assert mig.counts()["stay"] + mig.counts()["move"] + mig.counts()["enter"] == len(new)


def test_kinds():
    live = entries_of([1, 2, 3], [0, 0, 0], [3, 3, 3], [0, 3, 6])
    new = entries_of([1, 3, 4], [0, 0, 0], [3, 4, 3], [0, 6, 3])
    mig = plan_migration(plan_of(live), plan_of(new))
    groups = {w: mig.lock_ids(w).tolist() for w in ("staying", "moved", "leaving", "entering")}
    assert groups == {"staying": [1], "moved": [3], "leaving": [2], "entering": [4]}
    assert mig.counts() == {"stay": 1, "move": 1, "leave": 1, "enter": 1, "server_ranges": 0}
    same = plan_migration(plan_of(live), plan_of(live))
    assert same.changes.migrated_locks == 0 and not same.moves


def test_server_moves_are_the_ranges_whose_server_changes():
    live = normalize_partition((PartitionRange(0, 9, 0), PartitionRange(10, 19, 1)), 8)
    target = normalize_partition((PartitionRange(0, 4, 0), PartitionRange(5, 14, 1),
                                  PartitionRange(15, 19, 0)), 8)
    assert server_moves(live, target) == (ServerMove(5, 9, 0, 1), ServerMove(15, 255, 1, 0))
    assert server_moves(live, live) == ()
    assert server_moves((), target) == (), "an empty table routed nothing"


LIVE = (PartitionRange(0, 99, 0), PartitionRange(100, 199, 1), PartitionRange(200, 299, 2))


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 6), st.integers(0, 2**16))
def test_a_kept_partition_moves_one_range_per_server_added_or_removed(servers, seed):
    rng = np.random.default_rng(seed)
    locks = np.unique(rng.integers(0, 400, 300))
    load = rng.uniform(0, 10, len(locks))
    kept = keep_partition(LIVE, locks, load, servers)
    assert 1 + max(p.server for p in kept) == servers
    assert sorted({p.server for p in kept}) == list(range(servers))
    moves = server_moves(normalize_partition(LIVE), normalize_partition(kept))
    if servers == 3:
        assert kept == LIVE and moves == ()
    elif servers > 3:
        assert len(moves) == servers - 3
        assert all(m.source < 3 and m.dest >= 3 for m in moves)
    else:
        assert all(m.source >= servers for m in moves)
    assert kept[0].lo == 0
    assert all(a.hi + 1 == b.lo for a, b in itertools.pairwise(kept))
