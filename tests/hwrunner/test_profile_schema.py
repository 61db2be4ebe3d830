"""Switch profiles, bf-rt.json parsing, name resolution and validation of planned writes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from hwrunner.bfrt_info import load_schema, schema_from_dict
from hwrunner.operations import DataColumn, EntryAdd, KeyColumn, RegisterWrite
from hwrunner.profile import PROFILE_DIR, load_profile, profile_from_dict
from hwrunner.validate import validate_operation, validate_profile
from netlock.errors import TargetError
from tests.hwrunner.conftest import P4_14, P4_16


def test_shipped_profiles_load():
    names = sorted(p.stem for p in PROFILE_DIR.glob("*.yaml"))
    assert {"netlock-public", "netlock-stats"} <= set(names)
    for name in names:
        prof = load_profile(name)
        assert prof.name == name
        assert prof.register("free_slots").register == "slots_two_sides_register"
        assert prof.register("free_slots").field == "lo"
        assert prof.register("server_held").field == "hi"
    assert load_profile("netlock-stats").has("requests")
    assert not load_profile("netlock-public").has("requests")


def _doc(name: str = "netlock-public") -> dict:
    return yaml.safe_load((PROFILE_DIR / f"{name}.yaml").read_text())


@pytest.mark.parametrize(("edit", "message"), [
    (lambda d: d["lock_registers"].pop("left"), "lock_registers.left: missing"),
    (lambda d: d["lock_registers"].update(bogus={"register": "x"}),
     "lock_registers.bogus: unknown"),
    (lambda d: d["lock_registers"]["head"].update(width=65), "lock_registers.head.width"),
    (lambda d: d["partition_table"].update(servers=["10.0.0.1", "nope"]),
     "partition_table.servers[1]: 'nope' is not an IPv4 address"),
    (lambda d: d["partition_table"].update(match="lpm"), "partition_table.match"),
    (lambda d: d.pop("lock_table"), "lock_table: missing"),
    (lambda d: d.update(pipes=0), "pipes: expected an integer >= 1"),
    (lambda d: d.update(traffic_pipe=4), "traffic_pipe: must be below pipes (4), got 4"),
])
def test_profile_errors_name_the_field(edit, message):
    doc = _doc()
    edit(doc)
    with pytest.raises(TargetError) as err:
        profile_from_dict(doc, "p.yaml")
    text = str(err.value)
    assert text.startswith("p.yaml: ") and message in text and "\n" not in text


def test_missing_profile_lists_the_shipped_ones(tmp_path: Path):
    with pytest.raises(TargetError, match=r"shipped profiles: .*netlock-public"):
        load_profile("no-such-profile")
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed\n")
    with pytest.raises(TargetError, match=r"bad.yaml: line \d+, column \d+: malformed YAML"):
        load_profile(bad)


@pytest.mark.parametrize("fixture", [P4_14, P4_16])
def test_public_profile_matches_both_naming_styles(profile, fixture):
    schema = load_schema(fixture)
    validate_profile(profile, schema)
    left = schema.table(profile.register("left").register)
    assert left.is_register and left.size == 64
    assert left.name.endswith(".left_bound_register")
    assert schema.table("check_lock_exist_table").key("nlk_hdr.lock").width == 32


def test_suffix_resolution_and_ambiguity():
    doc = json.loads(P4_16.read_text())
    egress = json.loads(json.dumps(next(t for t in doc["tables"]
                                        if t["name"].endswith(".head_register"))))
    egress["name"] = "pipe.SwitchEgress.head_register"
    egress["data"][0]["singleton"]["name"] = "SwitchEgress.head_register.f1"
    doc["tables"].append(egress)
    schema = schema_from_dict(doc, "two.json")
    assert schema.table("SwitchIngress.head_register").name == "pipe.SwitchIngress.head_register"
    assert schema.table("pipe.SwitchEgress.head_register").name.endswith("Egress.head_register")
    with pytest.raises(TargetError, match=r"head_register': ambiguous, matches "
                                          r"pipe.SwitchEgress.head_register, "
                                          r"pipe.SwitchIngress.head_register"):
        schema.table("head_register")
    with pytest.raises(TargetError, match=r"'ingress.head_register': not found"):
        schema.table("ingress.head_register")


def _mutated(fixture: Path, edit) -> object:
    doc = json.loads(fixture.read_text())
    edit(doc)
    return schema_from_dict(doc, "prog.json")


def _table(doc: dict, suffix: str) -> dict:
    return next(t for t in doc["tables"] if t["name"].endswith(suffix))


@pytest.mark.parametrize(("edit", "message"), [
    (lambda d: d["tables"].remove(_table(d, ".tail_register")), "'tail_register': not found"),
    (lambda d: _table(d, ".head_register").update(table_type="Counter"),
     "is Counter, expected Register"),
    (lambda d: _table(d, ".queue_size_op_register")["data"][0]["singleton"]["type"].update(
        width=8), "8 bits, but profile says 1"),
    (lambda d: _table(d, "check_lock_exist_table")["action_specs"][0]["data"].clear(),
     "has no parameter 'index'"),
    (lambda d: _table(d, "forward_to_server_table")["key"][0].update(match_type="Exact"),
     "is Exact, profile says ternary"),
    (lambda d: _table(d, ".slots_two_sides_register")["data"].pop(),
     "data field 'slots_two_sides_register.hi': not found"),
])
def test_profile_mismatch_is_one_clear_line(profile, edit, message):
    schema = _mutated(P4_16, edit)
    with pytest.raises(TargetError) as err:
        validate_profile(profile, schema)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_malformed_bfrt_json(tmp_path: Path):
    path = tmp_path / "bf-rt.json"
    path.write_text("{")
    with pytest.raises(TargetError, match=r"bf-rt.json: line 1, column 2: malformed JSON"):
        load_schema(path)
    path.write_text(json.dumps({"tables": [{"name": "x"}]}))
    with pytest.raises(TargetError, match=r"tables\[0\]: malformed table"):
        load_schema(path)


@pytest.mark.parametrize(("op", "message"), [
    (RegisterWrite.of("left_bound_register", [64], f1=1), "index 64 outside 0..63"),
    (RegisterWrite.of("left_bound_register", [1], f1=1 << 32), "does not fit 32 bits"),
    (RegisterWrite.of("queue_size_op_register", [1], f1=2), "does not fit 1 bits"),
    (RegisterWrite.of("left_bound_register", [1], f2=1), "data field 'left_bound_register.f2'"),
    (RegisterWrite.of("check_lock_exist_table", [1], f1=1), "a register write needs a Register"),
    (EntryAdd("left_bound_register", (KeyColumn("nlk_hdr.lock", [1]),)),
     "is a Register, expected a match-action table"),
    (EntryAdd("forward_to_server_table", (KeyColumn("nlk_hdr.lock", [0], mask=[0]),),
              (DataColumn("server_ip", [1]),), "forward_to_server_action"),
     "key field $MATCH_PRIORITY not given"),
    (EntryAdd("check_lock_exist_table", (KeyColumn("nlk_hdr.lock", [1]),),
              (DataColumn("index", [1]),), "drop_action"), "action 'drop_action': not found"),
    (EntryAdd("check_lock_exist_table", (KeyColumn("nlk_hdr.lock", [1]),), (),
              "check_lock_exist_action"), "mandatory parameter 'index' missing"),
    (EntryAdd("check_lock_exist_table", (KeyColumn("nlk_hdr.lock", np.arange(65)),),
              (DataColumn("index", np.arange(65)),), "check_lock_exist_action"),
     "65 entries exceed its size 64"),
])
@pytest.mark.parametrize("fixture", [P4_14, P4_16])
def test_planned_writes_are_checked(fixture, op, message):
    with pytest.raises(TargetError) as err:
        validate_operation(load_schema(fixture), op)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_valid_writes_pass_in_both_styles():
    for fixture in (P4_14, P4_16):
        schema = load_schema(fixture)
        validate_operation(schema, RegisterWrite.of("slots_two_sides_register", [1, 2],
                                                    lo=[3, 4], hi=0))
        validate_operation(schema, EntryAdd(
            "forward_to_server_table",
            (KeyColumn("nlk_hdr.lock", [0], mask=[0]), KeyColumn("$MATCH_PRIORITY", [0])),
            (DataColumn("server_ip", [0x0A01000C]),), "forward_to_server_action"))
