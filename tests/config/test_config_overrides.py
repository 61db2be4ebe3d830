"""Overrides (``--set`` and ``override_config``), includes and path resolution."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable

import pytest
import yaml
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from netlock.config import Config, config_from_dict, config_keys, load_config, override_config
from netlock.errors import ConfigError
from tests.config.config_helpers import CONFIGS


def test_set_values_are_read_as_yaml(write):
    x = write("x.yaml", "")
    cfg = load_config(x, {"workload.think_time_us": "10", "network.one_rtt": "true",
                          "switch.arrays": "[{stage: 1, size: 60000}, {stage: 7, size: 40000}]",
                          "servers.rate_rps": "9e6", "switch.priorities": "2"})
    assert cfg.workload.think_time_us == 10.0
    assert isinstance(cfg.workload.think_time_us, float)
    assert cfg.network.one_rtt is True
    assert cfg.servers.rate_rps == 9e6
    assert [(a.stage, a.size) for a in cfg.geometry.arrays] == [(1, 60000), (7, 40000)]
    assert cfg.geometry.priority_ranges == ((0, 59999), (60000, 99999))


def test_string_keys_take_the_text_as_typed(write):
    cfg = load_config(write("x.yaml", ""), {"testbed.name": "2024", "testbed.description": ""})
    assert cfg.testbed.name == "2024"
    assert cfg.testbed.description == ""


def test_set_list_items_and_sections(write):
    x = write("x.yaml", "tenants: [{id: 0, clients: 7}, {id: 1, clients: 3}]\n"
                        "workload: {clients: 10}\n")
    cfg = load_config(x, {"tenants[1].quota_rps": "5e5", "switch": "{slots: 10}"})
    assert cfg.tenants[1].quota_rps == 5e5
    assert cfg.tenant_clients == (7, 3)
    assert cfg.client_tenants == (0,) * 7 + (1,) * 3
    assert cfg.switch.slots == 10
    assert cfg.switch.stages == 12  # a mapping merges into the section


def test_set_can_fix_a_file_value(write):
    x = write("x.yaml", "switch: {slots: 200000}")
    with pytest.raises(ConfigError):
        load_config(x)
    assert load_config(x, {"switch.slots": "5"}).switch.slots == 5


def test_later_layers_win(write):
    write("testbed.yaml", "switch: {slots: 10, pipes: 2}\nnetwork: {rtt_us: 3}\n")
    write("exp/base.yaml", "include: ../testbed.yaml\nswitch: {slots: 20}\n")
    x = write("exp/x.yaml", "include: base.yaml\nswitch: {slots: 30}\n")
    cfg = load_config(x)
    assert (cfg.switch.slots, cfg.switch.pipes, cfg.network.rtt_us) == (30, 2, 3.0)
    assert load_config(x, {"switch.slots": "40"}).switch.slots == 40


def test_include_list_merges_in_order(write):
    write("a.yaml", "switch: {slots: 1}\nnetwork: {rtt_us: 7}\n")
    write("b.yaml", "switch: {slots: 2}\n")
    cfg = load_config(write("x.yaml", "include: [a.yaml, b.yaml]\n"))
    assert (cfg.switch.slots, cfg.network.rtt_us) == (2, 7.0)


def test_lists_replace_rather_than_merge(write):
    write("a.yaml", "tenants: [{id: 0, clients: 5}, {id: 1}]\n")
    cfg = load_config(write("x.yaml", "include: a.yaml\ntenants: [{id: 4}]\n"))
    assert [t.id for t in cfg.tenants] == [4]


def test_trace_path_is_relative_to_the_file_that_names_it(write, tmp_path, monkeypatch):
    write("exp/base.yaml", "workload: {kind: trace, trace: ../traces/t.csv}\n")
    x = write("exp/sub/x.yaml", "include: ../base.yaml\n")
    cfg = load_config(x)
    assert cfg.workload.trace == str(tmp_path / "traces" / "t.csv")
    monkeypatch.chdir(tmp_path / "exp")
    assert load_config(x, {"workload.trace": "mine.csv"}).workload.trace == str(
        tmp_path / "exp" / "mine.csv")
    assert config_from_dict(cfg.to_dict()) == cfg


def test_override_config_returns_a_validated_copy():
    base = load_config(CONFIGS / "memory-vs-think-time.yaml")
    point = override_config(base, {"switch.slots": 5000, "workload.think_time_us": 20,
                                 "policy.allocation": "random"})
    assert (point.switch.slots, point.workload.think_time_us) == (5000, 20.0)
    assert point.policy.allocation == "random"
    assert base.switch.slots == 100_000
    assert point.source == base.source
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.switch.slots = 1  # type: ignore[misc]
    with pytest.raises(ConfigError) as info:
        override_config(base, {"switch.slots": -1})
    assert str(info.value) == (f"{base.source}: override switch.slots: must be >= 0, got -1")
    with pytest.raises(ConfigError, match=r"override workload\.thinktime_us: unknown key"):
        override_config(base, {"workload.thinktime_us": 1})


def test_lock_server_capacity_follows_its_cores():
    cfg = config_from_dict({"servers": {"rate_rps": 18e6, "rate_cores": 8, "cores": 2}})
    assert cfg.servers.capacity_rps == 4.5e6
    assert cfg.servers.packet_us == pytest.approx(8 / (2 * 18.0))


def test_config_carries_the_seed_and_compares_by_value():
    a = config_from_dict({"sim": {"seed": 7}})
    assert a.seed == 7
    assert a == config_from_dict(a.to_dict(), source="elsewhere")
    assert a != override_config(a, {"sim.seed": 8})


# --- property tests: random values for every scalar key -----------------------------------

BASE = config_from_dict({})
SCALAR_KEYS = {k.path: k for k in config_keys()
               if k.type in ("int", "float", "bool", "str", "float or null", "str or null")
               and "[]" not in k.path}


def _field(path: str) -> dataclasses.Field:
    *sections, name = path.split(".")
    cls = type(_get(BASE, ".".join(sections)))
    return next(f for f in dataclasses.fields(cls) if f.name == name)


def _get(cfg: object, path: str) -> object:
    """The value at a dotted key (sections may nest: ``manager.drtm.read_lease_us``)."""
    for name in path.split("."):
        cfg = getattr(cfg, name)
    return cfg


# Keys whose valid range depends on other keys of the default config.
CONSISTENT = {
    "switch.slots": st.integers(0, 100_000),
    "switch.stages": st.integers(6, 40),
    "switch.priorities": st.integers(1, 4),
    "sim.duration_s": st.floats(0.003, 10.0),
    "sim.warmup_s": st.floats(0.0, 0.019),
    "workload.kind": st.sampled_from(["micro", "tpcc"]),
    "workload.trace": st.none(),
    "policy.plan": st.none(),
    "workload.ol_cnt_min": st.integers(1, 15),
    "workload.ol_cnt_max": st.integers(5, 15),
    "workload.locks_per_txn": st.integers(1, 5000),
    "workload.locks": st.integers(1, 10**7),
    "failures.switch_fail_s": st.none() | st.floats(0.0, 0.0199),
    "failures.switch_restart_s": st.none(),
}


def _valid(path: str) -> st.SearchStrategy:
    if path in CONSISTENT:
        return CONSISTENT[path]
    meta, tp = _field(path).metadata, SCALAR_KEYS[path].type
    if "choices" in meta:
        return st.sampled_from(meta["choices"])
    if tp == "bool":
        return st.booleans()
    if tp.startswith("str"):
        return st.text(max_size=20)
    low = meta.get("min", meta.get("above", 0))
    high = meta.get("max", meta.get("below", 1e12))
    if tp == "int":
        return st.integers(int(low), int(min(high, 10**9)))
    numbers = st.floats(low, high, allow_nan=False, exclude_min="above" in meta,
                        exclude_max="below" in meta)
    return numbers | st.none() if tp.endswith("or null") else numbers


def _invalid(path: str) -> st.SearchStrategy:
    meta, tp = _field(path).metadata, SCALAR_KEYS[path].type
    wrong_type = st.sampled_from([[1, 2], {"a": 1}]) if tp.startswith("str") else (
        st.text(min_size=1, max_size=5).filter(lambda s: s not in meta.get("choices", ())))
    options = [wrong_type]
    if "choices" in meta:
        options.append(st.text(max_size=8).filter(lambda s: s not in meta["choices"]))
    if tp == "int":
        options.append(st.floats(allow_nan=False).filter(lambda f: not f.is_integer()))
    if tp == "bool":
        options.append(st.integers())
    if "min" in meta:
        options.append(st.floats(-1e9, meta["min"], exclude_max=True))
    if "above" in meta:
        options.append(st.floats(-1e9, meta["above"]))
    if "below" in meta:
        options.append(st.floats(meta["below"], 1e9))
    return st.one_of(options)


def _unless_the_lease_refuses(make: Callable[[], Config]) -> Config:
    """``make()``, skipping the example when a rule tying several keys refuses it: a value
    valid on its own (a long client processing time, timeout or think time, a short lease,
    an open-loop setting on a closed-loop config) can break one against the defaults
    (:mod:`netlock.config.cross_field`, tested in test_config_errors.py and test_config_cli.py).
    It must then pass with those rules off."""
    from netlock.config import cross_field

    try:
        return make()
    except ConfigError:
        saved = cross_field.RULES
        cross_field.RULES = ()
        try:
            make()
        finally:
            cross_field.RULES = saved
        reject()
        raise


@st.composite
def valid_override(draw):
    path = draw(st.sampled_from(sorted(SCALAR_KEYS)))
    return path, draw(_valid(path))


@st.composite
def invalid_override(draw):
    path = draw(st.sampled_from(sorted(SCALAR_KEYS)))
    return path, draw(_invalid(path))


@given(valid_override())
def test_valid_values_are_accepted_and_round_trip(override):
    path, value = override
    cfg = _unless_the_lease_refuses(lambda: override_config(BASE, {path: value}))
    assert _get(cfg, path) == value
    assert config_from_dict(cfg.to_dict()) == cfg
    assert config_from_dict(yaml.safe_load(yaml.safe_dump(cfg.to_dict()))) == cfg


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
          max_examples=40)
@given(override=valid_override())
def test_valid_values_through_set_text(write, override):
    path, value = override
    if isinstance(value, str):
        text = value
    else:
        text = yaml.safe_dump(value, default_flow_style=True).strip().removesuffix("...")
        text = text.strip()
    cfg = _unless_the_lease_refuses(lambda: load_config(write("x.yaml", ""), {path: text}))
    expected = os.path.abspath(value) if path == "workload.trace" and value else value
    assert _get(cfg, path) == expected


@given(invalid_override())
def test_invalid_values_are_rejected_in_one_line(override):
    path, value = override
    with pytest.raises(ConfigError) as info:
        override_config(BASE, {path: value})
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"<dict>: override {path}: ")


def test_every_key_is_documented_with_help():
    for info in config_keys():
        assert info.help, info.path


def test_config_root_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        BASE.sim = BASE.sim  # type: ignore[misc]
    assert isinstance(BASE, Config)
