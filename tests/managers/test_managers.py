"""The lock managers NetLock is compared with: one interface, the registry, the CLI, and
each design's own seed check as a trend at small scale (never a fitted number)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from netlock.config.managers import MANAGER_KINDS
from sim.managers.registry import MANAGERS
from sim.paper.peers import NOT_REPRODUCED, PEERS, run_peer
from sim.simpy_model import build
from sim.simulate_simpy import simulate
from tests.sim.helpers import CONFIGS, SHORT, config

SMALL = dict(sim__duration_s=0.004, sim__warmup_s=0.001, clients__machines=10,
             servers__count=1)


def run(name: str = "micro-exclusive", **overrides: object) -> dict:
    """A short simpy run of ``configs/<name>.yaml``: its summary, with the request table."""
    result = simulate(config(name, **{**SMALL, **overrides}))
    return {**result.summary, "requests": result.requests}


def test_every_kind_has_a_manager_behind_the_one_interface():
    assert tuple(MANAGERS) == MANAGER_KINDS
    for kind in MANAGER_KINDS:
        model = build(config("micro-exclusive", manager__kind=kind, workload__locks=50,
                             sim__duration_s=0.001, sim__warmup_s=0.0002))
        manager = model.manager
        assert manager.kind == kind
        assert manager.sources == ("switch", "server")
        assert manager.entry_hops == (1 if kind in ("netlock", "netchain", "server-tcp",
                                                    "server-rdma") else 0)
        assert callable(manager.packet_handlers[0])


@pytest.mark.parametrize("kind", [k for k in MANAGER_KINDS if k != "netlock"])
def test_tpcc_runs_on_every_manager_safely(run_cli, kind):
    """(NetLock on TPC-C is tested with the simulator's other tests.)"""
    result = run_cli("sim", CONFIGS / "tpcc-low.yaml", *SHORT, "--set",
                     f"manager.kind={kind}", "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["violations"] == 0
    assert summary["manager"]
    assert summary["switch_share"] == (1.0 if kind == "netchain" else 0.0)


def test_a_verb_crosses_the_tor_both_ways_like_a_lock_servers_grant():
    """An RDMA verb travels client -> switch -> lock server and back (four hops), the path a
    NetLock lock server's grant takes (switch.slots 0: every lock on the servers; its send
    batching off, which would hold the grant for the core's drain tick)."""
    alone = dict(workload__clients=1, workload__locks=1000, network__jitter_us=0.0)
    rtt = config("micro-exclusive").network.rtt_us
    cas = run(manager__kind="rdma-cas", **alone)["latency_us"]["p50"]
    server = run(manager__kind="netlock", switch__slots=0, servers__tx_burst=1,
                 **alone)["latency_us"]["p50"]
    assert 2 * rtt <= cas < 2 * rtt + 1.0
    assert abs(cas - server) < 1.0


def test_the_fast_engine_refuses_other_managers_in_one_line(run_cli):
    result = run_cli("sim", CONFIGS / "tpcc-low.yaml", "--engine", "fast", "--set",
                     "manager.kind=dslr")
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "manager.kind" in lines[0] and "simpy" in lines[0]


@pytest.mark.parametrize("command", ["sim", "sweep"])
def test_the_refusal_comes_before_a_cold_compile(run_cli, monkeypatch, tmp_path, command):
    """On a fresh machine the refusal must not wait minutes for the compiler."""
    import sim.fast._fast_jit
    import sim.fast.warm

    def must_not_compile() -> float:
        raise AssertionError("compiled before refusing")

    monkeypatch.setattr(sim.fast._fast_jit, "cache_is_cold", lambda: True)
    monkeypatch.setattr(sim.fast.warm, "warm", must_not_compile)
    extra = ["--out", tmp_path / "out", "--grid", "workload.think_time_us=0,10"] \
        if command == "sweep" else []
    result = run_cli(command, CONFIGS / "tpcc-low.yaml", "--engine", "fast", "--set",
                     "manager.kind=dslr", *extra)
    assert result.exit_code == 2, result.output
    assert "manager.kind" in result.stderr and "compiled" not in result.output
    assert not (tmp_path / "out").exists()


def test_other_managers_refuse_netlock_only_policies(run_cli):
    result = run_cli("sim", CONFIGS / "switch-failure.yaml", "--set", "manager.kind=drtm")
    assert result.exit_code == 2
    assert "failures" in result.stderr and "Traceback" not in result.output


@pytest.fixture
def run_cli(run):
    return run


# --- each design's own source, at small scale (the notebook paper-peers runs them at full) ---

@pytest.mark.parametrize("name", list(PEERS))
def test_each_seed_claim_holds_at_small_scale(name, tmp_path):
    """(Claims the model does not reproduce, ``NOT_REPRODUCED``, are reported only.)"""
    result = run_peer(name, "small", tmp_path)
    assert result.required == (name not in NOT_REPRODUCED)
    if result.required:
        assert result.holds, [c.to_dict() for c in result.checks if not c.holds]
    assert (tmp_path / f"peer-{name}.png").stat().st_size > 0
    assert len(pd.read_csv(tmp_path / f"peer-{name}.csv")) == len(result.table)


# --- DSLR: lease recovery; counter reset ----------------------------------------------------

ONE_LOCK = dict(workload__clients=20, workload__locks=1, network__jitter_us=0.0)


def test_dslr_recovers_locks_whose_holders_overstay_the_lease_without_violating_safety():
    # Holds of 100 us against a 2 x 20 us grant lease: holders stop at their lease (the
    # per-grant lease), waiters reset the counters past them.
    out = run(manager__kind="dslr", manager__dslr__lease_us=20, workload__think_time_us=100,
              **ONE_LOCK)
    assert out["manager"]["recoveries"] > 0
    assert out["violations"] == 0 and out["stalled"] == 0


def test_dslr_resets_overflowed_counters_and_keeps_granting():
    out = run(manager__kind="dslr", manager__dslr__counter_limit=4, workload__think_time_us=5,
              **ONE_LOCK)
    assert out["manager"]["overflows"] > 0 and out["manager"]["resets"] > 0
    assert out["violations"] == 0 and out["stalled"] == 0
    assert out["throughput_rps"] > 0


def test_dslr_resets_a_frozen_word_whose_holders_overstay_their_lease():
    # Every holder overstays (and so never releases); recoveries fail requests, the last
    # ticket's among them. Its client still resets the frozen word once the counters stand
    # still, else every later request waits for a reset that never comes (0 requests/s,
    # all stalled).
    out = run(manager__kind="dslr", manager__dslr__lease_us=20,
              manager__dslr__counter_limit=4, workload__think_time_us=100, **ONE_LOCK)
    assert out["manager"]["recoveries"] > 0 and out["manager"]["resets"] > 0
    assert out["violations"] == 0 and out["stalled"] == 0
    assert out["throughput_rps"] > 0


# --- DrTM: shared leases are unsafe past their end ------------------------------------------

READ_HEAVY = dict(workload__clients=40, workload__locks=4, workload__mode="mixed",
                  workload__shared_fraction=0.9)


def test_drtm_shared_leases_are_unsafe_when_holds_exceed_the_lease():
    long_holds = run(manager__kind="drtm", manager__drtm__read_lease_us=50,
                     workload__think_time_us=200, lease__us=3000, **READ_HEAVY)
    assert long_holds["violations"] > 0
    dslr = run(manager__kind="dslr", workload__think_time_us=200, lease__us=3000,
               **READ_HEAVY)
    assert dslr["violations"] == 0
