"""Every kind of bad config input gives one line naming the file and the dotted key.

Each case runs through ``netlock config check`` (exit 2, one stderr line, no traceback) and
through ``load_config`` (a ConfigError with the same single line).
"""

from __future__ import annotations

import pytest

from netlock.config import config_from_dict, load_config
from netlock.errors import ConfigError

GOOD = "sim: {duration_s: 0.02, warmup_s: 0.002}\n"
NO_SERVER = (": a request that finds its lock's switch queue full would go to no server and "
             "the lock would stay in overflow mode (set servers.count >= 1)")

# (case id, file contents by name (x.yaml is checked), --set items, expected error line
# after "netlock: error: "; "{x}" stands for the checked file's path)
CASES = [
    ("wrong-type-int", {"x.yaml": "workload: {clients: ten}"}, [],
     "{x}: workload.clients: must be an integer, got 'ten' (string)"),
    ("bool-is-not-int", {"x.yaml": "workload: {clients: true}"}, [],
     "{x}: workload.clients: must be an integer, got True (boolean)"),
    ("float-is-not-int", {"x.yaml": "switch: {slots: 1.5}"}, [],
     "{x}: switch.slots: must be an integer, got 1.5 (number)"),
    ("string-is-not-float", {"x.yaml": "network: {rtt_us: fast}"}, [],
     "{x}: network.rtt_us: must be a number, got 'fast' (string)"),
    ("int-is-not-bool", {"x.yaml": "network: {one_rtt: 1}"}, [],
     "{x}: network.one_rtt: must be true or false, got 1 (integer)"),
    ("infinite-number", {"x.yaml": "network: {rtt_us: .inf}"}, [],
     "{x}: network.rtt_us: must be a finite number, got inf (number)"),
    ("unknown-key", {"x.yaml": "workload: {think_time: 5}"}, [],
     "{x}: workload.think_time: unknown key (did you mean 'think_time_us'?)"),
    ("unknown-section", {"x.yaml": "wrkload: {clients: 5}"}, [],
     "{x}: wrkload: unknown key (did you mean 'workload'?)"),
    ("below-min", {"x.yaml": "workload: {think_time_us: -5}"}, [],
     "{x}: workload.think_time_us: must be >= 0, got -5"),
    ("not-below", {"x.yaml": "network: {loss: 1}"}, [],
     "{x}: network.loss: must be < 1, got 1"),
    ("bad-choice", {"x.yaml": "policy: {allocation: knapsak}"}, [],
     "{x}: policy.allocation: must be one of knapsack, random, even; got 'knapsak' "
     "(did you mean 'knapsack'?)"),
    ("section-not-mapping", {"x.yaml": "switch: 5"}, [],
     "{x}: switch: must be a mapping of keys, got 5 (integer)"),
    ("list-expected", {"x.yaml": "switch: {arrays: 5}"}, [],
     "{x}: switch.arrays: must be a list, got 5 (integer)"),
    ("list-item-missing-key", {"x.yaml": "switch: {slots: 0, arrays: [{stage: 2}]}"}, [],
     "{x}: switch.arrays[0].size: missing (required)"),
    ("array-stage-outside", {"x.yaml": "switch: {arrays: [{stage: 2, size: 200000}, "
                                       "{stage: 12, size: 5}]}"}, [],
     "{x}: switch.arrays[1].stage: 12 is outside the pipeline's stages 0..11"),
    ("slots-exceed-arrays", {"x.yaml": "switch: {slots: 100001}"}, [],
     "{x}: switch.slots: 100001 slots do not fit the register arrays, which hold 100000 "
     "in total"),
    ("too-many-priorities", {"x.yaml": "switch: {priorities: 5}"}, [],
     "{x}: switch.priorities: 5 priorities need as many stages with slot arrays, but the "
     "arrays use only 4 stage(s)"),
    ("open-loop-tpcc", {"x.yaml": "workload: {kind: tpcc}\nclients: {send_limit_per_ms: 5}"},
     [], "{x}: clients.send_limit_per_ms: open-loop clients run the microbenchmark: "
     "workload.kind micro, locks_per_txn 1, think_time_us 0"),
    ("open-loop-dslr", {"x.yaml": "manager: {kind: dslr}\nclients: {send_limit_per_ms: 5}"},
     [], "{x}: clients.send_limit_per_ms: open-loop clients are modelled for manager.kind "
     "netlock only, not dslr"),
    ("rdma-loss", {"x.yaml": "manager: {kind: rdma-cas}\nnetwork: {loss: 0.01}"},
     [], "{x}: network.loss: manager.kind rdma-cas issues RDMA verbs over reliable "
     "connections, whose RNIC retransmits a lost packet after its ACK timeout; the model has "
     "no sourced value for that delay, so a loss would be ignored, not measured: set "
     "network.loss=0 for rdma-cas"),
    ("skip-held-closed-loop", {"x.yaml": "clients: {skip_held: true}"}, [],
     "{x}: clients.skip_held: only used by open-loop clients (clients.send_limit_per_ms > 0)"),
    ("tenant-priority", {"x.yaml": "tenants: [{id: 0, priority: 1}]"}, [],
     "{x}: tenants[0].priority: must be < switch.priorities (1), got 1"),
    ("tenant-clients", {"x.yaml": "workload: {clients: 10}\n"
                                  "tenants: [{id: 0, clients: 7}, {id: 1, clients: 4}]"}, [],
     "{x}: tenants: the tenants' clients add up to 11, but workload.clients is 10"),
    ("tenant-duplicate", {"x.yaml": "tenants: [{id: 3}, {id: 3, clients: 1}]"}, [],
     "{x}: tenants[1].id: tenant 3 is listed twice"),
    ("failure-after-run", {"x.yaml": "failures: {switch_fail_s: 0.5}"}, [],
     "{x}: failures.switch_fail_s: must be before the run ends (sim.warmup_s + "
     "sim.duration_s = 0.022 s), got 0.5"),
    ("restart-before-failure", {"x.yaml": "failures: {switch_fail_s: 0.01, "
                                          "switch_restart_s: 0.005}"}, [],
     "{x}: failures.switch_restart_s: must be after failures.switch_fail_s (0.01) and "
     "before the run ends (sim.warmup_s + sim.duration_s = 0.022 s), got 0.005"),
    ("server-failure-index", {"x.yaml": "failures: {server_failures: "
                                        "[{server: 2, at_s: 0.001}]}"}, [],
     "{x}: failures.server_failures[0].server: must be < servers.count (2), got 2"),
    ("trace-required", {"x.yaml": "workload: {kind: trace}"}, [],
     "{x}: workload.trace: required when workload.kind is trace"),
    ("trace-unused", {"x.yaml": "workload: {kind: micro, trace: t.csv}"}, [],
     "{x}: workload.trace: only used when workload.kind is trace, but it is micro "
     "(remove it or set it to null)"),
    ("ol-cnt-order", {"x.yaml": "workload: {ol_cnt_min: 9, ol_cnt_max: 8}"}, [],
     "{x}: workload.ol_cnt_min: must be <= workload.ol_cnt_max (8), got 9"),
    ("nothing-grants", {"x.yaml": "switch: {slots: 0}\nservers: {count: 0}"}, [],
     "{x}: servers.count: 0 lock servers and 0 switch slots: nothing could grant a lock"),
    ("no-server-knapsack", {"x.yaml": "servers: {count: 0}"}, [],
     "{x}: servers.count: 0 lock servers, but only the even split of a micro workload's "
     "locks (policy.allocation even, no plan file, one priority) bounds every lock's queue"
     + NO_SERVER),
    ("no-server-open-loop", {"x.yaml": "servers: {count: 0}\npolicy: {allocation: even}\n"
                                      "clients: {send_limit_per_ms: 5000}"}, [],
     "{x}: servers.count: 0 lock servers, but open-loop contexts that do not skip a lock "
     "they wait for (clients.skip_held false) can queue any number of requests on a lock"
     + NO_SERVER),
    ("no-server-few-slots", {"x.yaml": "servers: {count: 0}\npolicy: {allocation: even}\n"
                                      "workload: {locks: 55000, clients: 24}"}, [],
     "{x}: servers.count: 0 lock servers, but the even split gives each of the 55000 locks "
     "1 slots, fewer than the 24 clients that can queue on one"
     + NO_SERVER),
    ("error-in-base-names-base", {"x.yaml": "include: base.yaml\n" + GOOD,
                                  "base.yaml": "workload: {think_time_us: -1}"}, [],
     "{d}/base.yaml: workload.think_time_us: must be >= 0, got -1"),
    ("missing-base", {"x.yaml": "include: nope.yaml"}, [],
     "{x}: include: base file not found: {d}/nope.yaml"),
    ("include-not-a-name", {"x.yaml": "include: {file: a.yaml}"}, [],
     "{x}: include: must be a file name or a list of file names"),
    ("include-cycle", {"x.yaml": "include: y.yaml", "y.yaml": "include: x.yaml"}, [],
     "{d}/y.yaml: include: include cycle {x} -> {d}/y.yaml -> {x}"),
    ("self-include", {"x.yaml": "include: x.yaml"}, [],
     "{x}: include: include cycle {x} -> {x}"),
    ("include-nested", {"x.yaml": "workload: {include: y.yaml}"}, [],
     "{x}: workload.include: unknown key"),
    ("malformed-yaml", {"x.yaml": "workload:\n  kind: tpcc\n   clients: 3\n"}, [],
     "{x}: line 3, column 11: malformed YAML: mapping values are not allowed here"),
    ("duplicate-key", {"x.yaml": "switch:\n  slots: 10\n  slots: 20\n"}, [],
     "{x}: line 3, column 3: malformed YAML: duplicate key 'slots'"),
    ("top-level-list", {"x.yaml": "- 1\n- 2\n"}, [],
     "{x}: the top level must be a mapping of sections, got a list"),
    ("missing-file", {}, [], "{x}: cannot read config file: no such file"),
    ("set-unknown-key", {"x.yaml": GOOD}, ["workload.think_us=3"],
     "{x}: --set workload.think_us: unknown key 'think_us' in workload "
     "(did you mean 'think_time_us'?)"),
    ("set-unknown-section", {"x.yaml": GOOD}, ["swich.slots=3"],
     "{x}: --set swich.slots: unknown key 'swich' at the top level (did you mean 'switch'?)"),
    ("set-bad-value", {"x.yaml": GOOD}, ["workload.think_time_us=-5"],
     "{x}: --set workload.think_time_us: must be >= 0, got -5"),
    ("set-wrong-type", {"x.yaml": GOOD}, ["switch.slots=many"],
     "{x}: --set switch.slots: must be an integer, got 'many' (string)"),
    ("set-malformed-value", {"x.yaml": GOOD}, ["switch.arrays=[1"],
     "{x}: --set switch.arrays: cannot read '[1': line 1, column 3: malformed YAML: "
     "expected ',' or ']', but got '<stream end>'"),
    ("set-bad-index", {"x.yaml": GOOD}, ["tenants[3].clients=1"],
     "{x}: --set tenants[3].clients: index 3 is out of range: tenants has 1 item(s)"),
    ("set-not-a-key", {"x.yaml": GOOD}, ["switch..slots=1"],
     "{x}: --set switch..slots: not a dotted key like workload.think_time_us or "
     "tenants[0].clients"),
    ("set-below-a-value", {"x.yaml": GOOD}, ["switch.slots.x=1"],
     "{x}: --set switch.slots.x: switch.slots is a value, it has no key 'x'"),
    ("set-breaks-rule", {"x.yaml": GOOD}, ["failures.switch_fail_s=1"],
     "{x}: --set failures.switch_fail_s: must be before the run ends (sim.warmup_s + "
     "sim.duration_s = 0.022 s), got 1.0"),
    ("set-list-item", {"x.yaml": GOOD}, ["switch.arrays[2].size=0"],
     "{x}: --set switch.arrays[2].size: must be >= 1, got 0"),
]


def _setup(write, tmp_path, files):
    for name, text in files.items():
        write(name, text)
    return tmp_path / "x.yaml"


def _expected(template, x, tmp_path):
    return template.replace("{x}", str(x)).replace("{d}", str(tmp_path))


def _overrides(sets):
    return dict(item.split("=", 1) for item in sets)


@pytest.mark.parametrize(("files", "sets", "expected"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_cli_prints_one_line_and_exits_2(cli, write, tmp_path, files, sets, expected):
    x = _setup(write, tmp_path, files)
    args = [x] + [a for s in sets for a in ("--set", s)]
    result = cli("check", *args)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.splitlines() == [f"netlock: error: {_expected(expected, x, tmp_path)}"]
    assert "Traceback" not in result.output


@pytest.mark.parametrize(("files", "sets", "expected"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_load_config_raises_the_same_line(write, tmp_path, files, sets, expected):
    x = _setup(write, tmp_path, files)
    with pytest.raises(ConfigError) as info:
        load_config(x, _overrides(sets))
    assert str(info.value) == _expected(expected, x, tmp_path)


def test_set_without_equals_is_one_line(cli, write):
    result = cli("check", write("x.yaml", GOOD), "--set", "switch.slots")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "netlock: error: --set 'switch.slots': expected KEY=VALUE with a dotted key"]


def test_unreadable_inputs(write, tmp_path):
    with pytest.raises(ConfigError, match=r": cannot read config file: is a directory$"):
        load_config(tmp_path)
    bad = tmp_path / "latin1.yaml"
    bad.write_bytes(b"testbed: {name: caf\xe9}\n")
    with pytest.raises(ConfigError, match=r"latin1\.yaml: line 1: not UTF-8 text \(byte 0xe9 "
                                          r"at offset 19\)$"):
        load_config(bad)


def test_config_from_dict_names_its_source():
    with pytest.raises(ConfigError) as info:
        config_from_dict({"workload": {"think_time_us": -5}}, source="sweep point 3")
    assert str(info.value) == "sweep point 3: workload.think_time_us: must be >= 0, got -5"
    with pytest.raises(ConfigError, match=r"^<dict>: include: only config files"):
        config_from_dict({"include": "x.yaml"})


def test_yaml_oddities_stay_one_line(write):
    x = write("x.yaml", "switch: &a {stages: 12, inner: *a}\n")
    with pytest.raises(ConfigError, match=r"x\.yaml: switch\.inner: unknown key$"):
        load_config(x)
    x = write("x.yaml", "testbed: {name: 2020-13-45}\nswitch: {slots: 1e5}\n")
    with pytest.raises(ConfigError, match=r"switch\.slots: must be an integer, got 100000\.0"):
        load_config(x)
    x = write("x.yaml", "servers: {rate_rps: 18e6}\n")
    assert load_config(x).servers.rate_rps == 18e6
    x = write("x.yaml", f"servers: {{rate_rps: {10**400}}}\n")
    with pytest.raises(ConfigError, match=r"servers\.rate_rps: must be a finite number, got"):
        load_config(x)


def test_no_lock_server_is_accepted_when_no_queue_can_fill(write):
    """The even split with at least one slot per client on every lock cannot overflow, so
    a switch-only rack (the authors' Figure 8 runs, console.py server_node_num = 0) runs."""
    x = write("x.yaml", "servers: {count: 0}\npolicy: {allocation: even}\n"
                        "workload: {locks: 500, clients: 24}\n"
                        "clients: {send_limit_per_ms: 5000, skip_held: true}\n")
    assert load_config(x).servers.count == 0
