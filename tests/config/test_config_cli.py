"""``netlock config check`` and ``netlock config keys``."""

from __future__ import annotations

import json

import yaml
from typer.testing import CliRunner

from netlock.config import config_from_dict, config_keys, load_config
from tests.config.config_helpers import CONFIGS


def test_check_prints_the_resolved_config_as_yaml(cli):
    path = CONFIGS / "tpcc-high.yaml"
    result = cli("check", path)
    assert result.exit_code == 0, result.output
    doc = yaml.safe_load(result.stdout)
    assert "include" not in doc
    assert config_from_dict(doc) == load_config(path)
    assert doc["workload"]["warehouses"] == 1
    assert doc["servers"]["rate_rps"] == 18e6


def test_check_json_is_one_object_with_overrides(cli):
    result = cli("check", CONFIGS / "micro-exclusive.yaml", "--json",
                 "--set", "switch.slots=5000", "--set", "workload.think_time_us=10")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len(lines) == 1
    doc = json.loads(lines[0])
    assert doc["switch"]["slots"] == 5000
    assert doc["workload"]["think_time_us"] == 10.0
    assert result.stderr == ""


def test_keys_lists_every_key(cli):
    result = cli("keys")
    assert result.exit_code == 0
    listed = [line.split()[0] for line in result.stdout.splitlines()]
    assert listed == [k.path for k in config_keys()]
    assert "workload.think_time_us" in listed
    as_json = json.loads(cli("keys", "--json").stdout)
    slots = next(k for k in as_json["keys"] if k["key"] == "switch.slots")
    assert slots["type"] == "int" and slots["default"] == 100_000


def test_help_shows_an_example(cli):
    result = cli("check", "--help")
    assert result.exit_code == 0
    assert "netlock config check configs/tpcc-low.yaml --set" in result.stdout
    assert "netlock config keys" in cli("keys", "--help").stdout


def test_registered_in_the_netlock_app():
    from netlock.cli.app import app

    result = CliRunner().invoke(app, ["config", "check", str(CONFIGS / "tpcc-low.yaml"),
                                      "--set", "switch.slots=-1"])
    assert result.exit_code == 2
    assert result.stderr.strip().endswith("--set switch.slots: must be >= 0, got -1")


def test_check_refuses_a_lease_as_sim_does():
    """``config check`` enforces every rule ``sim`` does: a lease shorter than the clients'
    guard (or their longest live hold) exits 2 with the same line from both."""
    from netlock.cli.app import app

    path = CONFIGS / "tpcc-low.yaml"
    for lease in ("3", "300"):
        seen = []
        for command in (["config", "check"], ["sim"]):
            result = CliRunner().invoke(app, [*command, str(path), "--set", f"lease.us={lease}"])
            assert result.exit_code == 2, (command, result.output)
            assert "lease.us" in result.stderr and "Traceback" not in result.output
            seen.append(result.stderr.strip().splitlines()[-1])
        assert seen[0] == seen[1]
