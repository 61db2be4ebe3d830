"""Plan -> layout -> migration -> ordered, batched steps (values only, nothing sent)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hwrunner.compile import (
    IN_PHASES,
    OUT_PHASES,
    PHASES,
    _ternary_cover,
    compile_migration,
    partition_entries,
    partition_ops,
    render_program,
)
from hwrunner.operations import EntryAdd, EntryDelete, EntryModify, RegisterWrite
from hwrunner.profile import load_profile
from hwrunner.push import STEPS
from hwrunner.switch_contents import Layout, diff, layout_for
from netlock.errors import TargetError
from netlock.plan import PartitionRange
from planner.migrate import ServerMove, normalize_partition, plan_migration
from tests.hwrunner.plans import make_plan


@given(st.integers(1, 16).flatmap(lambda w: st.tuples(
    st.just(w), st.integers(0, (1 << w) - 1), st.integers(0, (1 << w) - 1))))
def test_ternary_cover_is_exact_and_disjoint(case):
    width, a, b = case
    lo, hi = min(a, b), max(a, b)
    blocks = _ternary_cover(lo, hi, width)
    full = (1 << width) - 1
    covered = []
    for value, mask in blocks:
        assert value & ~mask & full == 0
        size = (~mask & full) + 1
        covered.extend(range(value, value + size))
    assert covered == list(range(lo, hi + 1))
    assert len(blocks) <= 2 * width


def test_normalize_partition_clips_merges_and_extends():
    ranges = (PartitionRange(0, 9, 0), PartitionRange(10, 19, 0), PartitionRange(20, 2**62, 1))
    assert normalize_partition(ranges, 8) == (PartitionRange(0, 19, 0),
                                              PartitionRange(20, 255, 1))
    assert normalize_partition((), 8) == ()


def test_layout_keeps_indices_of_staying_locks(profile):
    a = make_plan([(10, 2), (11, 3), (12, 1)])
    live = layout_for(a, profile)
    assert live.index.tolist() == [1, 2, 3]
    b = make_plan({10: (0, 1), 12: (2, 5), 13: (6, 6)})
    target = layout_for(b, profile, live)
    assert dict(zip(target.lock_id.tolist(), target.index.tolist(), strict=True)) == {
        10: 1, 12: 3, 13: 4}
    mig = diff(live, target)
    assert mig.lock_ids("moved").tolist() == [12]
    assert mig.lock_ids("entering").tolist() == [13]
    assert mig.lock_ids("leaving").tolist() == [11]
    assert mig.migrated_locks == 3


def test_entering_locks_reuse_freed_indices_only_when_needed(small_profile):
    prof = replace(small_profile, lock_capacity=4)
    live = layout_for(make_plan([(1, 1), (2, 1), (3, 1)]), prof)
    target = layout_for(make_plan([(1, 1), (4, 1), (5, 1)]), prof, live)
    assert dict(zip(target.lock_id.tolist(), target.index.tolist(), strict=True)) == {
        1: 1, 4: 2, 5: 3}
    with pytest.raises(TargetError, match="4 switch-resident locks, but the switch has 3"):
        layout_for(make_plan([(1, 1), (2, 1), (3, 1), (4, 1)]), prof)


def test_layout_refuses_what_the_program_cannot_hold(profile):
    plan = make_plan([(1, 2)])
    prio = replace(plan, entries=replace(plan.entries, priority=np.array([1])))
    with pytest.raises(TargetError, match=r"is for 2 priority classes, but profile .* has one "
                                          r"queue per lock"):
        layout_for(prio, profile)
    two = replace(plan, geometry=replace(plan.geometry, priorities=2))
    with pytest.raises(TargetError, match="is for 2 priority classes"):
        layout_for(two, profile)
    with pytest.raises(TargetError, match="geometry has 64 slots, but the switch holds 10"):
        layout_for(plan, profile, slot_capacity=11)


def test_fresh_install_steps(profile):
    plan = make_plan([(10, 2), (11, 3)])
    program = compile_migration(profile, diff(Layout.empty(), layout_for(plan, profile)))
    assert [s.phase for s in program.steps] == ["partition", *IN_PHASES]
    install = next(s for s in program.steps if s.phase == "install")
    tables = [op.table for op in install.ops]
    assert len(tables) == len(set(tables)) == 7
    assert all(isinstance(op, RegisterWrite) for op in install.ops)
    slots_op = next(op for op in install.ops if op.table == "slots_two_sides_register")
    assert slots_op.data_value("lo").tolist() == [2, 3]
    assert slots_op.data_value("hi").tolist() == [0, 0]
    left = next(op for op in install.ops if op.table == "left_bound_register")
    assert left.data_value("f1").tolist() == [1, 3]  # slot_base 1
    mapped = next(s for s in program.steps if s.phase == "map")
    assert isinstance(mapped.ops[0], EntryAdd)
    assert mapped.ops[0].key_value("nlk_hdr.lock").tolist() == [10, 11]
    assert program.operations == 1 + 7 * 2 + 2


def test_moving_locks_leave_before_anything_enters(profile):
    a = make_plan([(10, 2), (11, 3), (12, 1)])
    b = make_plan({10: (0, 1), 12: (2, 5), 13: (6, 6)})
    live = layout_for(a, profile)
    program = compile_migration(profile, diff(live, layout_for(b, profile, live)),
                                partition_entries(profile, live.partition))
    assert [s.phase for s in program.steps] == [*OUT_PHASES, *IN_PHASES]
    out = program.steps[0].lock_ids.tolist()
    assert out == [11, 12]
    assert program.steps[4].lock_ids.tolist() == [12, 13]
    pause = program.steps[0].ops[0]
    assert pause.table == "queue_size_op_register" and pause.data_value("f1").tolist() == [1, 1]
    assert isinstance(program.steps[2].ops[0], EntryDelete)
    text = "\n".join(render_program(program, 1))
    assert "step 3 unmap: 2 operations in 1 batches (2 locks)" in text
    assert "delete check_lock_exist_table[nlk_hdr.lock=11]" in text


def test_same_plan_compiles_to_nothing(profile):
    plan = make_plan([(10, 2), (11, 3)])
    live = layout_for(plan, profile)
    again = layout_for(plan, profile, live)
    program = compile_migration(profile, diff(live, again),
                                partition_entries(profile, live.partition))
    assert program.steps == () and program.operations == 0


def test_batches_are_chunked_per_table(small_profile):
    plan = make_plan([(i, 1) for i in range(7)])
    program = compile_migration(small_profile,
                                diff(Layout.empty(), layout_for(plan, small_profile)))
    mapped = next(s for s in program.steps if s.phase == "map")
    assert [len(op) for op in mapped.ops] == [3, 3, 1]
    assert all(len({op.table}) == 1 for op in mapped.ops)


def test_partition_diff_is_minimal(profile):
    two = (PartitionRange(0, 99, 0), PartitionRange(100, 199, 1))
    live = partition_entries(profile, two)
    same = partition_ops(profile, live, partition_entries(profile, two))
    assert same == []
    swapped = partition_ops(profile, live, partition_entries(
        profile, (PartitionRange(0, 99, 1), PartitionRange(100, 199, 0))))
    assert [type(op) for op in swapped] == [EntryModify]
    grown = partition_ops(profile, live, partition_entries(
        profile, (PartitionRange(0, 149, 0), PartitionRange(150, 199, 1))))
    kinds = [type(op) for op in grown]
    assert kinds[0] is EntryAdd and kinds[-1] is EntryDelete, "make before break"


def test_partition_needs_a_server_address(profile):
    many = tuple(PartitionRange(i, i, i) for i in range(9))
    with pytest.raises(TargetError, match="uses lock server 8 but the profile lists 8"):
        partition_entries(profile, many)


PROFILE = load_profile("netlock-public")


@st.composite
def regions(draw) -> dict[int, tuple[int, int]]:
    """Disjoint regions of 1-4 slots over 32 slots, for a random subset of locks 0..11."""
    locks = draw(st.permutations(range(12)))[:draw(st.integers(0, 8))]
    out, at = {}, 0
    for lock in locks:
        at += draw(st.integers(0, 3))
        size = draw(st.integers(1, 4))
        if at + size > 32:
            break
        out[lock] = (at, at + size - 1)
        at += size
    return out


@settings(max_examples=200, deadline=None)
@given(before=regions(), after=regions())
def test_the_push_runs_the_migration_plan_live_prints(before, after):
    """One migration: what ``plan --live`` prints is what the push compiles, whatever register
    indices the layouts use (see planner.migrate)."""
    profile = PROFILE
    live_plan, goal_plan = make_plan(before, total_slots=32), make_plan(after, total_slots=32)
    live = layout_for(live_plan, profile)
    mig = diff(live, layout_for(goal_plan, profile, live))
    printed = plan_migration(live_plan, goal_plan)
    for which in ("moved", "entering", "leaving", "moved_live"):
        assert sorted(mig.lock_ids(which).tolist()) == sorted(printed.lock_ids(which).tolist())
    assert printed.changes.migrated_locks == mig.migrated_locks
    assert printed.moves == mig.server_moves


def test_moving_server_state_makes_the_partition_the_point_of_no_return(profile):
    a = make_plan([(10, 2), (11, 3)], partition=(PartitionRange(0, 10, 0),
                                                  PartitionRange(11, 999, 1)))
    b = make_plan([(10, 2)], partition=(PartitionRange(0, 999, 0),))
    live = layout_for(a, profile)
    program = compile_migration(profile, diff(live, layout_for(b, profile, live)),
                                partition_entries(profile, live.partition))
    phases = [s.phase for s in program.steps]
    assert phases == ["pause", "drain", "transfer", "partition", "adopt", "unmap", "handover"]
    assert program.steps[2].moves == (ServerMove(11, 2**32 - 1, 1, 0),)
    assert program.no_return == 3
    same = compile_migration(profile, diff(live, layout_for(replace(b, partition=a.partition),
                                                             profile, live)),
                             partition_entries(profile, live.partition))
    assert [s.phase for s in same.steps] == list(OUT_PHASES) and same.no_return == 2
    text = "\n".join(render_program(program))
    assert "transfer: old lock servers stop granting and wait for holders to release " \
           "(11..4294967295: server 1 -> 0)" in text


def test_the_push_runs_every_phase_the_compiler_makes():
    assert set(STEPS) == set(PHASES)
