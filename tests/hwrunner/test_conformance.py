"""The BFRuntime driver through the SDE's real client, over real gRPC, against an in-memory
BFRuntime server serving bf-rt.json files shaped as bf-p4c emits them (see conformance.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hwrunner import bfrt_driver
from hwrunner.push import push, resume
from hwrunner.readback import check_layout
from hwrunner.switch_contents import layout_for
from hwrunner.targets import open_target
from netlock.cli.app import app
from netlock.errors import TargetError
from netlock.plan_io import save_plan
from tests.hwrunner import sde_tree
from tests.hwrunner.bfrt_program import SMALL, Sizes, netlock_bfrt
from tests.hwrunner.conformance import sized, start_server, target, write_bfrt
from tests.hwrunner.conftest import P4_14, P4_16
from tests.hwrunner.plans import make_plan

PLAN_A = make_plan([(10, 2), (11, 3), (12, 1), (13, 4)])
PLAN_B = make_plan({10: (0, 1), 12: (2, 5), 14: (6, 6), 15: (7, 9)})
"""B keeps 10, moves 12, evicts 11 and 13, adds 14 and 15."""
ROLLBACK_ON_ERROR = 1


@pytest.fixture
def prof(profile):
    return sized(profile)


def connect(server, prof, **kw):
    return open_target(target(server), prof, **kw)


@pytest.mark.parametrize("p4_16", [False, True], ids=["p4_14", "p4_16"])
def test_push_repush_and_migration(serve, prof, p4_16):
    server = serve(p4_16=p4_16)
    driver = connect(server, prof)
    try:
        result = push(driver, prof, PLAN_A)
        assert result.verified and result.outcome == "installed"
        assert [server.register("left_bound_register")[p][1] for p in range(4)] == [1] * 4
        assert server.requests and all(a == ROLLBACK_ON_ERROR for _, _, a in server.requests)
        assert len(server.table("check_lock_exist_table").entries) == 4
        again = push(driver, prof, PLAN_A)
        assert again.operations == 0 and again.verified and again.outcome == "unchanged"
        moved = push(driver, prof, PLAN_B)
        assert moved.verified and moved.migrated_locks == 5
        assert sorted(k[0] for k in server.table("check_lock_exist_table").entries) == [
            10, 12, 14, 15]
    finally:
        driver.close()


def test_read_back_checks_every_pipe(serve, prof):
    server = serve()
    driver = connect(server, prof)
    try:
        push(driver, prof, PLAN_A)
        server.register("right_bound_register")[2][2] = 99
        problems = check_layout(driver, prof, layout_for(PLAN_A, prof))
        assert problems == ["lock 11: right_bound_register[2].f1 is [5, 5, 99, 5] (per pipe), "
                            "expected 5"]
    finally:
        driver.close()


@pytest.mark.parametrize("fixture", [P4_14, P4_16], ids=["p4_14", "p4_16"])
def test_the_test_fixtures_are_what_bf_p4c_emits(sde_client, prof, fixture, monkeypatch):
    """Register fields as bf-p4c writes them; the real client writes ints into them."""
    doc = json.loads(fixture.read_text())
    for table in doc["tables"]:
        for field in table["data"] if table["table_type"] == "Register" else []:
            assert field["mandatory"] and not field["singleton"]["repeated"]
            assert {"name": "$bfrt_field_class", "value": "register_data"} in \
                field["singleton"]["annotations"]
    monkeypatch.setitem(sys.modules, "bfrt_grpc.client", sde_client)
    server = start_server(doc)
    try:
        driver = connect(server, prof, bfrt=fixture)
        try:
            assert push(driver, prof, PLAN_A).verified
        finally:
            driver.close()
    finally:
        server.stop()


def test_a_failed_row_is_named_and_its_batch_applies_nothing(serve, prof, tmp_path):
    server = serve()
    server.reject = lambda table, key: ("no room for this lock" if
                                        table.endswith("check_lock_exist_table") and key == (12,)
                                        else None)
    driver = connect(server, prof)
    journal = tmp_path / "push.journal"
    try:
        with pytest.raises(TargetError) as err:
            push(driver, prof, PLAN_A, journal_path=journal)
        message = str(err.value)
        assert "\n" not in message and "Error(s)" not in message
        assert ("add check_lock_exist_table[nlk_hdr.lock=12] check_lock_exist_action(index=3): "
                "INTERNAL 'no room for this lock'") in message
        assert "run netlock push --resume" in message
        entries = server.table("check_lock_exist_table").entries
        assert (12,) not in entries and len(entries) < 4, "the failing batch applied rows"
        server.reject = None
        done = resume(driver, prof, journal)
        assert done.verified and not journal.exists()
    finally:
        driver.close()


def test_a_rejection_after_the_point_of_no_return_finishes_forward(serve, prof):
    server = serve()
    driver = connect(server, prof)
    try:
        push(driver, prof, PLAN_A)
        once = iter(["transient"])
        server.reject = lambda table, key: (next(once, None)
                                            if table.endswith("left_bound_register") else None)
        result = push(driver, prof, PLAN_B)
        assert result.outcome == "finished forward" and result.verified
        assert check_layout(driver, prof, layout_for(PLAN_B, prof, layout_for(PLAN_A, prof))) \
            == []
    finally:
        driver.close()


def test_a_rejection_before_the_point_of_no_return_rolls_back(serve, prof):
    server = serve()
    driver = connect(server, prof)
    try:
        push(driver, prof, PLAN_A)
        once = iter(["busy"])
        server.reject = lambda table, key: (next(once, None)
                                            if table.endswith("queue_size_op_register") else None)
        result = push(driver, prof, PLAN_B)
        assert result.outcome == "rolled back" and result.verified
        assert "INTERNAL 'busy'" in result.problems[0]
        assert check_layout(driver, prof, layout_for(PLAN_A, prof)) == []
    finally:
        driver.close()


@pytest.mark.parametrize("after", [2, 9, 17, 26, 40])
def test_a_push_cut_inside_a_batch_is_finished(serve, prof, tmp_path, after):
    """The switch applies ``after`` more updates and goes away mid-request; a later push
    (``--resume``) reconnects and ends verified."""
    server = serve()
    driver = connect(server, prof)
    journal = tmp_path / "push.journal"
    push(driver, prof, PLAN_A)
    server.crash_after = after
    try:
        outcome = push(driver, prof, PLAN_B, journal_path=journal).outcome
    except TargetError as exc:
        outcome = str(exc)
    finally:
        driver.close()
    server.crash_after = None
    driver = connect(server, prof)
    try:
        if journal.exists():
            result = resume(driver, prof, journal)
            assert result.verified
            outcome = result.outcome
        assert outcome in ("rolled back", "installed", "finished forward")
        a = layout_for(PLAN_A, prof)
        goal = a if outcome == "rolled back" else layout_for(PLAN_B, prof, a)
        assert check_layout(driver, prof, goal) == []
    finally:
        driver.close()


def test_bind_conflict_names_the_other_client(serve, prof):
    server = serve()
    first = connect(server, prof)
    try:
        with pytest.raises(TargetError, match=r"program 'netlock' is bound by another BFRuntime "
                                              r"client \(ALREADY_EXISTS: .*client 0\)"):
            connect(server, prof, client_id=7)
    finally:
        first.close()
    deadline = time.monotonic() + 5
    while server.bound is not None and time.monotonic() < deadline:
        time.sleep(0.01)
    second = connect(server, prof, client_id=7)
    try:
        assert push(second, prof, PLAN_A).verified
    finally:
        second.close()


def test_a_bfrt_file_that_differs_from_the_device_is_refused_before_writing(serve, prof,
                                                                            tmp_path):
    server = serve()
    doc = netlock_bfrt(sizes=SMALL)
    for table in doc["tables"]:
        for key in table["key"]:
            if key["name"] == "nlk_hdr.lock":
                key["name"] = "nlk_hdr.lock_id"
    bfrt = write_bfrt(tmp_path / "bf-rt.json", doc)
    with pytest.raises(TargetError, match=r"bf-rt.json: pipe.check_lock_exist_table: keys "
                                          r"differ: the device has 'nlk_hdr.lock'"):
        connect(server, prof, bfrt=bfrt)
    public = write_bfrt(tmp_path / "public.json", netlock_bfrt())
    with pytest.raises(TargetError, match=r"public.json: pipe.left_bound_register: size 55000, "
                                          r"the device says 64"):
        connect(server, prof, bfrt=public)
    assert server.writes == 0


def test_two_pipe_device(serve, prof):
    server = serve(pipes=2)
    driver = connect(server, prof)
    try:
        assert prof.pipes == 4 and driver.pipes == 2
        assert push(driver, prof, PLAN_A).verified
        assert len(server.register("left_bound_register")) == 2
    finally:
        driver.close()


def test_sizes_come_from_the_device(serve, profile):
    server = serve(sizes=Sizes())
    driver = connect(server, profile)
    try:
        sizes = {t.name.rsplit(".", 1)[-1]: t.size for t in driver.schema.tables}
        assert sizes["check_lock_exist_table"] == 55000 and sizes["left_bound_register"] == 55000
        assert sizes["mode_array_register"] == 130000
        assert sizes["forward_to_server_table"] == 512 and sizes["get_tenant_inf_table"] == 512
        assert sizes["tenant_acq_counter_register"] == 12
        too_big = make_plan([(1, 130000)], total_slots=130000)
        with pytest.raises(TargetError, match="geometry has 130000 slots, but the switch holds "
                                              "129999"):
            push(driver, profile, too_big)
        assert server.writes == 0
    finally:
        driver.close()


def test_unreachable_address(sde_client, prof, monkeypatch):
    monkeypatch.setitem(sys.modules, "bfrt_grpc.client", sde_client)
    started = time.monotonic()
    with pytest.raises(TargetError, match=r"^grpc://127.0.0.1:1: cannot reach the BFRuntime "
                                          r"server \(connection failed"):
        open_target("grpc://127.0.0.1:1", prof)
    assert time.monotonic() - started < 2


def test_a_missing_dependency_of_the_client_is_named(sde_install, monkeypatch):
    monkeypatch.setenv("SDE_INSTALL", str(sde_install))
    monkeypatch.setattr(sys, "path", list(sys.path))
    for name in [m for m in sys.modules if m == "bfrt_grpc" or m.startswith("bfrt_grpc.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "grpc", None)
    with pytest.raises(TargetError, match=r"bfrt_grpc client cannot be imported: .*grpc"):
        bfrt_driver.import_client()


def test_the_command_line_finds_the_client_under_sde_install(serve, sde_install, tmp_path):
    server = serve()
    plan = tmp_path / "a.yaml"
    save_plan(PLAN_A, plan)
    env = {**os.environ, "SDE_INSTALL": str(sde_install)}
    push = [str(Path(sys.executable).parent / "netlock"), "push", str(plan), "--target",
            target(server), "--json", "--journal", str(tmp_path / "j")]
    done = subprocess.run(push, env=env, capture_output=True, text=True, timeout=120,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) | {"wall_s": 0} == {
        "target": target(server), "profile": "netlock-public", "operations": 33,
        "verified": True, "migrated_locks": 4, "wall_s": 0}
    assert "profile netlock-public chosen: the program has all 17 tables" in done.stderr
    again = subprocess.run([*push, "--profile", "netlock-public"], env=env,
                           capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["operations"] == 0 and "chosen" not in again.stderr


def test_the_command_line_on_an_unreachable_address(sde_client, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "bfrt_grpc.client", sde_client)
    plan = tmp_path / "a.yaml"
    save_plan(PLAN_A, plan)
    gone = CliRunner().invoke(app, ["push", str(plan), "--target", "grpc://127.0.0.1:1"])
    assert gone.exit_code == 2 and gone.stdout == ""
    assert gone.stderr.count("\n") == 1 and "cannot reach the BFRuntime server" in gone.stderr


def test_the_suite_says_why_it_skips(monkeypatch, tmp_path):
    monkeypatch.delenv("SDE_INSTALL", raising=False)
    monkeypatch.setattr(sde_tree, "SHARED_SDE", tmp_path / "nowhere")
    assert sde_tree.missing_reason() == (
        f"no SDE client: set SDE_INSTALL or provide {tmp_path / 'nowhere'} (client.py, "
        f"info_parse.py, bfruntime.proto)")


def test_profile_pipes_are_not_trusted(serve, prof):
    server = serve(pipes=1)
    with pytest.raises(TargetError, match=r"traffic_pipe 1, but .* has 1 pipes"):
        connect(server, replace(prof, traffic_pipe=1))
    assert server.writes == 0
