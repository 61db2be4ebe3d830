"""Migration steps replayed on the live layout give the new one, never overlapping on the way."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

from netlock.geometry import SwitchGeometry
from planner.layout import layout
from planner.migrate import (
    MigrationStep,
    apply_migration,
    plan_migration,
    regions_of,
    step_counts,
)
from tests.planner.test_layout import GEOMETRY, allocations, entries_of


def check(live, new, total: int) -> tuple[MigrationStep, ...]:
    steps = plan_migration(live, new, total)
    assert apply_migration(regions_of(live), steps, total) == regions_of(new)
    return steps


@settings(max_examples=200, deadline=None)
@given(allocations(), allocations())
def test_steps_turn_the_live_layout_into_the_new_one(old_alloc, new_alloc) -> None:
    live = entries_of(*old_alloc, layout(*old_alloc, GEOMETRY))
    new_left = layout(*new_alloc, GEOMETRY, live)
    steps = check(live, entries_of(*new_alloc, new_left), GEOMETRY.total_slots)
    kept = set(regions_of(live)) & set(zip(new_alloc[0].tolist(), new_alloc[1].tolist(),
                                           strict=True))
    moved = {s.key for s in steps if s.kind in ("move", "resize")}
    assert moved <= kept


@settings(max_examples=100, deadline=None)
@given(allocations(), allocations())
def test_unrelated_fresh_layouts_also_migrate_safely(a, b) -> None:
    check(entries_of(*a, layout(*a, GEOMETRY)), entries_of(*b, layout(*b, GEOMETRY)),
          GEOMETRY.total_slots)


def test_same_plan_needs_no_steps() -> None:
    live = entries_of([1, 2], [0, 0], [3, 4], [0, 3])
    assert plan_migration(live, live, 10) == ()


def test_kinds_and_order() -> None:
    live = entries_of([1, 2, 3], [0, 0, 0], [3, 3, 3], [0, 3, 6])
    new = entries_of([1, 3, 4], [0, 0, 0], [2, 4, 2], [0, 6, 3])
    steps = check(live, new, 12)
    assert [(s.kind, s.lock_id) for s in steps] == [("leave", 2), ("resize", 1),
                                                     ("resize", 3), ("enter", 4)]
    assert steps[0] == MigrationStep("leave", 2, 0, 3, 5, None, None)
    assert step_counts(steps) == {"leave": 1, "resize": 2, "move": 0, "enter": 1}


def test_swap_cycle_goes_through_the_server() -> None:
    live = entries_of([1, 2], [0, 0], [2, 2], [0, 2])
    new = entries_of([1, 2], [0, 0], [2, 2], [2, 0])
    steps = check(live, new, 4)
    assert [s.kind for s in steps] == ["leave", "move", "enter"]


def test_chain_of_moves_is_ordered() -> None:
    live = entries_of([1, 2, 3], [0, 0, 0], [2, 2, 2], [0, 2, 4])
    new = entries_of([1, 2, 3], [0, 0, 0], [2, 2, 2], [2, 4, 6])
    steps = check(live, new, 8)
    assert [(s.kind, s.lock_id) for s in steps] == [("move", 3), ("move", 2), ("move", 1)]


def test_apply_refuses_unsafe_steps() -> None:
    regions = {(1, 0): (0, 3), (2, 0): (4, 5)}
    with pytest.raises(ValueError, match="overlaps"):
        apply_migration(regions, [MigrationStep("move", 1, 0, 0, 3, 3, 6)], 10)
    with pytest.raises(ValueError, match="not in the switch"):
        apply_migration(regions, [MigrationStep("leave", 9, 0, 0, 1)], 10)
    with pytest.raises(ValueError, match="is at"):
        apply_migration(regions, [MigrationStep("leave", 1, 0, 0, 2)], 10)
    with pytest.raises(ValueError, match="kind"):
        MigrationStep("teleport", 1, 0)


def test_small_change_in_a_large_plan_moves_few_locks() -> None:
    geometry = SwitchGeometry.uniform(100_000)
    rng = np.random.default_rng(0)
    locks = np.arange(5000)
    slots = rng.integers(1, 10, 5000)
    zeros = np.zeros(5000, np.int64)
    live = entries_of(locks, zeros, slots, layout(locks, zeros, slots, geometry))
    new_slots = slots.copy()
    new_slots[:50] += 3
    new_locks = np.r_[locks[:-20], np.arange(10_000, 10_030)]
    new_slots = np.r_[new_slots[:-20], np.full(30, 4)]
    prio = np.zeros(len(new_locks), np.int64)
    new = entries_of(new_locks, prio, new_slots, layout(new_locks, prio, new_slots, geometry,
                                                        live))
    steps = check(live, new, geometry.total_slots)
    counts = step_counts(steps)
    assert (counts["leave"], counts["enter"]) == (20, 30)
    assert counts["move"] + counts["resize"] == 50
    assert {s.lock_id for s in steps if s.kind in ("move", "resize")} == set(range(50))
