"""The BFRuntime driver against a recording double of ``bfrt_grpc.client`` (and, when
NETLOCK_SWITCH_GRPC names one, against a real switch or tofino-model)."""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from hwrunner import bfrt_driver
from hwrunner.bfrt_driver import BfrtDriver, import_client, parse_address
from hwrunner.push import push
from hwrunner.readback import check_layout, read_live
from hwrunner.switch_contents import layout_for
from hwrunner.targets import open_target
from netlock.errors import TargetError
from tests.hwrunner import fake_bfrt
from tests.hwrunner.conftest import P4_14, P4_16
from tests.hwrunner.plans import make_plan

ADDRESS = "grpc://localhost:50052"


@pytest.fixture(params=[P4_14, P4_16], ids=["p4_14", "p4_16"])
def device(request, monkeypatch) -> fake_bfrt.FakeDevice:
    dev = fake_bfrt.FakeDevice(request.param, program="netlock")
    fake_bfrt.install(monkeypatch, dev)
    dev.fixture = request.param
    return dev


@pytest.mark.parametrize("with_json", [True, False], ids=["bfrt-json", "device-names"])
def test_push_sends_batched_writes_to_all_pipes(device, small_profile, with_json):
    bfrt = device.fixture if with_json else None
    driver = open_target(ADDRESS, small_profile, bfrt=bfrt)
    assert driver.target == ADDRESS
    plan = make_plan([(10, 2), (11, 3), (12, 1), (13, 4)])
    result = push(driver, small_profile, plan)
    assert result.verified and result.outcome == "installed"
    writes = device.writes()
    assert writes[0] == ("bind_pipeline_config", "netlock", 0, None, {})
    table_writes = writes[1:]
    assert all(pipe == 0xFFFF for _, _, _, pipe, _ in table_writes)
    assert result.batches == len(table_writes)
    assert result.operations == sum(n for _, _, n, _, _ in table_writes)
    assert all(n <= small_profile.batch_size for _, _, n, _, _ in table_writes)
    adds = [c for c in table_writes if c[1].endswith("check_lock_exist_table")]
    assert [c[0] for c in adds] == ["entry_add", "entry_add"] and sum(c[2] for c in adds) == 4
    reads = [c for c in device.calls if c[0] == "entry_get"]
    assert reads and all(c[4] == {"from_hw": True} for c in reads)
    left = device.table_get("left_bound_register").cells
    (field,) = left
    assert [left[field][pipe][1] for pipe in range(4)] == [1, 1, 1, 1]
    device.calls.clear()
    again = push(driver, small_profile, plan)
    assert again.operations == 0 and again.verified and device.writes() == []
    driver.close()
    assert driver.iface is None


def test_moves_follow_the_protocol_on_hardware_too(device, small_profile):
    driver = open_target(ADDRESS, small_profile, bfrt=device.fixture)
    push(driver, small_profile, make_plan([(10, 2), (11, 3), (12, 1)]))
    device.calls.clear()
    result = push(driver, small_profile, make_plan({10: (0, 1), 12: (2, 5), 13: (6, 6)}))
    assert result.verified and result.migrated_locks == 3
    order = [(op, table.rsplit(".", 1)[-1]) for op, table, _, _, _ in device.writes()]
    assert order[0] == ("entry_mod", "queue_size_op_register")
    assert order[1] == ("entry_del", "check_lock_exist_table")
    assert order[-1] == ("entry_add", "check_lock_exist_table")


def test_every_pipe_is_checked(device, small_profile):
    driver = open_target(ADDRESS, small_profile, bfrt=device.fixture)
    plan = make_plan([(10, 2), (11, 3)])
    push(driver, small_profile, plan)
    right = device.table_get("right_bound_register").cells
    (field,) = right
    right[field][2][2] = 99
    problems = check_layout(driver, small_profile, layout_for(plan, small_profile))
    assert problems == ["lock 11: right_bound_register[2].f1 is [5, 5, 99, 5] (per pipe), "
                        "expected 5"]


def test_a_rejected_batch_is_one_line_and_rolls_back(device, small_profile):
    driver = open_target(ADDRESS, small_profile, bfrt=device.fixture)
    device.fail_writes = 1
    result = push(driver, small_profile, make_plan([(10, 2)]))
    assert result.outcome == "rolled back" and result.verified
    assert "was rejected: injected failure: device busy" in result.problems[0]
    assert not any(t.entries for t in device.tables.values())


def test_unreachable_server(device, small_profile):
    with pytest.raises(TargetError, match=r"^grpc://10.9.9.9:50052: cannot reach the BFRuntime "
                                          r"server \(Failed to connect"):
        open_target("grpc://10.9.9.9:50052", small_profile)


def test_program_not_loaded(device, small_profile):
    with pytest.raises(TargetError, match="program 'lock_switch' is not loaded"):
        open_target(ADDRESS, replace(small_profile, program="lock_switch"))


def test_names_that_do_not_match_the_profile(device, small_profile):
    profile = replace(small_profile, lock_registers={
        **small_profile.lock_registers,
        "tail": replace(small_profile.register("tail"), register="queue_tail_register")})
    message = (r"^grpc://localhost:50052: program netlock: no table 'queue_tail_register' "
               r"\(profile netlock-public\); the program matches the shipped profile "
               r"netlock-public "
               r"\(omit --profile to choose it\)$")
    with pytest.raises(TargetError, match=message):
        open_target(ADDRESS, profile)
    with pytest.raises(TargetError, match=message):
        open_target(ADDRESS, profile, bfrt=device.fixture)


def test_addresses():
    assert parse_address("grpc://switch.lab:50052") == ("switch.lab", 50052)
    for bad in ("switch:50052", "grpc://switch", "grpc://:1", "grpc://h:0", "grpc://h:99999"):
        with pytest.raises(TargetError, match="expected"):
            parse_address(bad)


def test_missing_sde_is_one_clear_line(monkeypatch, tmp_path: Path):
    monkeypatch.setitem(sys.modules, "bfrt_grpc", None)
    monkeypatch.delenv("SDE_INSTALL", raising=False)
    with pytest.raises(TargetError, match=r"bfrt_grpc.*not installed; set SDE_INSTALL"):
        import_client()
    monkeypatch.setenv("SDE_INSTALL", str(tmp_path))
    with pytest.raises(TargetError, match=f"no bfrt_grpc client under SDE_INSTALL={tmp_path}"):
        import_client()


def test_client_is_found_under_sde_install(monkeypatch, tmp_path: Path):
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    package = tmp_path / "lib" / version / "site-packages" / "tofino" / "bfrt_grpc"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "client.py").write_text("FROM_SDE = True\n")
    monkeypatch.setenv("SDE_INSTALL", str(tmp_path))
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delitem(sys.modules, "bfrt_grpc", raising=False)
    monkeypatch.delitem(sys.modules, "bfrt_grpc.client", raising=False)
    try:
        client = import_client()
        assert client.FROM_SDE
        assert str(package) in sys.path and str(package.parent) in sys.path
    finally:
        sys.modules.pop("bfrt_grpc", None)
        sys.modules.pop("bfrt_grpc.client", None)
    assert bfrt_driver.sde_paths(str(tmp_path))[0] == package.parent


@pytest.mark.hardware
@pytest.mark.skipif(not os.environ.get("NETLOCK_SWITCH_GRPC"),
                    reason="set NETLOCK_SWITCH_GRPC=grpc://HOST:PORT to test a real switch")
def test_real_switch_round_trip():
    from hwrunner.profile import load_profile

    profile = load_profile(os.environ.get("NETLOCK_SWITCH_PROFILE", "netlock-public"))
    bfrt = os.environ.get("NETLOCK_SWITCH_BFRT")
    driver = BfrtDriver(os.environ["NETLOCK_SWITCH_GRPC"], profile,
                        Path(bfrt) if bfrt else None)
    try:
        a = make_plan([(7, 2), (8, 3)])
        b = make_plan({7: (0, 1), 9: (2, 4)})
        assert push(driver, profile, a).verified
        result = push(driver, profile, b)
        assert result.verified and result.migrated_locks == 2
        assert push(driver, profile, b).operations == 0
        assert check_layout(driver, profile, read_live(driver, profile).layout) == []
    finally:
        driver.close()
