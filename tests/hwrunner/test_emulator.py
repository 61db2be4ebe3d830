"""The emulated switch: BFRuntime-like batches over the data-plane model, and its state file."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from hwrunner.bfrt_info import load_schema
from hwrunner.compile import lock_register_writes, lock_table_add
from hwrunner.emulator import EmulatedSwitch
from hwrunner.emulator_state import load_state, save_state
from hwrunner.operations import DataColumn, EntryAdd, EntryDelete, KeyColumn, RegisterWrite
from hwrunner.profile import load_profile
from hwrunner.push import push
from hwrunner.readback import read_live
from hwrunner.stats import read_stats
from hwrunner.switch_contents import Layout
from netlock.errors import TargetError
from netlock.packets import ActionKind, LockRequest, Mode, Op
from tests.hwrunner.conftest import P4_16
from tests.hwrunner.plans import make_plan


@pytest.fixture
def switch(small_profile):
    plan = make_plan([(10, 2), (11, 3)])
    sw = EmulatedSwitch(small_profile, plan.geometry)
    push(sw, small_profile, plan)
    return sw


def acquire(lock: int, txn: int, mode: Mode = Mode.EXCLUSIVE) -> LockRequest:
    return LockRequest(Op.ACQUIRE, mode, lock, txn, client_id=txn)


def test_reads_give_one_value_per_pipe(switch, small_profile):
    got = switch.read_registers("left_bound_register", ("f1",), np.array([1, 2]))
    assert got["f1"].shape == (small_profile.pipes, 2)
    assert (got["f1"] == [[1, 3]] * small_profile.pipes).all()


def test_traffic_shows_on_pipe_zero_only(switch):
    out = switch.dataplane.process(acquire(10, 1), 0)
    assert [a.kind for a in out.actions] == [ActionKind.GRANT]
    switch.dataplane.process(acquire(10, 2), 0)
    got = switch.read_registers("slots_two_sides_register", ("lo", "hi"), np.array([1]))
    assert got["lo"][:, 0].tolist() == [0, 2, 2, 2]
    held = switch.read_registers("shared_and_exclusive_count_register", ("lo",), np.array([1]))
    assert held["lo"][:, 0].tolist() == [1, 0, 0, 0]
    assert switch.read_registers("tail_register", ("f1",), np.array([1]))["f1"][0, 0] == 1


def test_a_failing_batch_applies_nothing(switch):
    before = switch.read_registers("head_register", ("f1",), np.arange(8))["f1"].copy()
    with pytest.raises(TargetError, match="does not fit 32 bits"):
        switch.write(RegisterWrite.of("head_register", [5, 6], f1=[1, 1 << 40]))
    assert (switch.read_registers("head_register", ("f1",), np.arange(8))["f1"] == before).all()
    for op in lock_register_writes(switch.profile, Layout([20, 21], [7, 8], [20, 22], [21, 23])):
        switch.write(op)
    add = EntryAdd("check_lock_exist_table", (KeyColumn("nlk_hdr.lock", [20, 10]),),
                   (DataColumn("index", [7, 8]),), "check_lock_exist_action")
    with pytest.raises(TargetError, match=r"entry \(10,\) already exists"):
        switch.write(add)
    assert 20 not in read_live(switch, switch.profile).layout.lock_id.tolist()


def test_names_are_resolved_like_bfruntime(small_profile):
    schema = load_schema(P4_16)
    sw = EmulatedSwitch(small_profile, make_plan([(1, 1)]).geometry, schema)
    sw.write(RegisterWrite.of("SwitchIngress.head_register", [3], f1=7))
    assert sw.read_registers("pipe.SwitchIngress.head_register", ("f1",),
                             np.array([3]))["f1"][:, 0].tolist() == [7] * 4
    with pytest.raises(TargetError, match="'tail_registers': not found"):
        sw.write(RegisterWrite.of("tail_registers", [3], f1=7))


def test_unmapping_a_busy_lock_is_refused(switch):
    switch.dataplane.process(acquire(11, 1), 0)
    delete = EntryDelete("check_lock_exist_table", (KeyColumn("nlk_hdr.lock", [10, 11]),))
    with pytest.raises(TargetError, match="lock 11 still has queued requests"):
        switch.write(delete)
    assert read_live(switch, switch.profile).layout.lock_id.tolist() == [10, 11]


def test_rewriting_a_served_lock_is_refused_but_pause_works(switch):
    with pytest.raises(TargetError, match="lock 10 is being served"):
        switch.write(RegisterWrite.of("left_bound_register", [1], f1=5))
    switch.write(RegisterWrite.of("queue_size_op_register", [1], f1=1))
    out = switch.dataplane.process(acquire(10, 1), 0)
    assert [a.kind for a in out.actions] == [ActionKind.OVERFLOW]


def test_mapping_needs_an_empty_queue_and_a_free_index(switch):
    switch.write(RegisterWrite.of("left_bound_register", [9], f1=10))
    switch.write(RegisterWrite.of("right_bound_register", [9], f1=12))
    add = EntryAdd("check_lock_exist_table", (KeyColumn("nlk_hdr.lock", [30]),),
                   (DataColumn("index", [9]),), "check_lock_exist_action")
    with pytest.raises(TargetError, match="its head register does not describe an empty queue"):
        switch.write(add)
    taken = EntryAdd("check_lock_exist_table", (KeyColumn("nlk_hdr.lock", [31]),),
                     (DataColumn("index", [1]),), "check_lock_exist_action")
    with pytest.raises(TargetError, match="index 1 already belongs to lock 10"):
        switch.write(taken)


def test_state_round_trip(tmp_path: Path, switch, small_profile):
    holder = switch.dataplane.process(acquire(10, 1), 0).actions[0].request
    switch.dataplane.process(acquire(10, 2), 0)
    path = tmp_path / "s.json"
    save_state(switch, path)
    again = load_state(path, small_profile)
    assert read_live(again, small_profile).layout == read_live(switch, small_profile).layout
    free = again.read_registers("slots_two_sides_register", ("lo",), np.array([1]))["lo"]
    assert free[:, 0].tolist() == [0, 2, 2, 2]
    grants = again.dataplane.process(holder.release(), 5).actions
    assert [(a.kind, a.request.txn_id) for a in grants] == [(ActionKind.GRANT, 2)]


def test_bad_state_files(tmp_path: Path, small_profile, switch):
    path = tmp_path / "s.json"
    path.write_text("{}")
    with pytest.raises(TargetError, match="not an emulated-switch state file"):
        load_state(path, small_profile)
    save_state(switch, path)
    doc = json.loads(path.read_text())
    doc["registers"]["pipe.head_register"]["pipe.head_register"] = doc["registers"][
        "pipe.head_register"].pop("head_register.f1")
    path.write_text(json.dumps(doc))
    with pytest.raises(TargetError, match="do not match its sha256 checksum"):
        load_state(path, small_profile)
    del doc["sha256"]
    path.write_text(json.dumps(doc))
    with pytest.raises(TargetError, match="does not fit this program"):
        load_state(path, small_profile)


def test_a_lock_batch_failing_midway_is_taken_back(switch):
    layout = Layout([20, 21], [7, 8], [20, 1], [21, 2])  # lock 21 overlaps lock 10's region
    for op in lock_register_writes(switch.profile, layout):
        switch.write(op)
    add = EntryAdd("check_lock_exist_table", (KeyColumn("nlk_hdr.lock", [20, 21]),),
                   (DataColumn("index", [7, 8]),), "check_lock_exist_action")
    with pytest.raises(TargetError,
                       match=r"lock 21 \(batch row 1\): .*overlaps another lock's region"):
        switch.write(add)
    assert read_live(switch, switch.profile).layout.lock_id.tolist() == [10, 11]
    assert switch.dataplane.lock_index(20) == -1
    assert switch.lock_of_index() == {1: 10, 2: 11}


def test_stats_read_queue_state_from_the_traffic_pipe(small_profile):
    """Writes reach every pipe but traffic only the traffic pipe: a backlog installed with a
    lock and since pushed back must not be counted from the other pipes' stale copies."""
    profile = replace(load_profile("netlock-stats"), lock_capacity=64, slot_capacity=129)
    sw = EmulatedSwitch(profile, make_plan([(1, 1)]).geometry)
    rows = Layout([30], [5], [0], [3])
    for op in lock_register_writes(profile, rows, server_held=np.array([2])):
        sw.write(op)
    sw.write(lock_table_add(profile, rows))
    for txn in (1, 2):
        sw.dataplane.process(LockRequest(Op.ACQUIRE, Mode.SHARED, 30, txn, txn,
                                         push_back=True), 0)
    held = sw.read_registers("slots_two_sides_register", ("hi",), np.array([5]))["hi"]
    assert held[:, 0].tolist() == [0, 2, 2, 2]
    stats = read_stats(sw, profile)
    assert stats["server_held"].tolist() == [0] and stats["occupancy"].tolist() == [2]
    assert stats["contention"].tolist() == [2] and stats["shared_holders"].tolist() == [2]
