"""The lock managers NetLock is compared with: one interface, the registry, the CLI, and
each design's own seed check as a trend at small scale (never a fitted number)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from netlock.config.managers import MANAGER_KINDS
from sim.managers.registry import MANAGERS
from sim.model import build
from sim.simulate import simulate
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


def test_the_fast_engine_refuses_other_managers_in_one_line(run_cli):
    result = run_cli("sim", CONFIGS / "tpcc-low.yaml", "--engine", "fast", "--set",
                     "manager.kind=dslr")
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "manager.kind" in lines[0] and "simpy" in lines[0]


def test_other_managers_refuse_netlock_only_policies(run_cli):
    result = run_cli("sim", CONFIGS / "switch-failure.yaml", "--set", "manager.kind=drtm")
    assert result.exit_code == 2
    assert "failures" in result.stderr and "Traceback" not in result.output


@pytest.fixture
def run_cli(run):
    return run


# --- rdma-lock-management.md: server-centric TCP vs S/R, client-centric vs server-centric -----

FIG1 = dict(workload__clients=40, workload__locks=100)
"""Figure 1a's setting: 40 clients sharing 100 lock items, exclusive locks."""


def test_send_receive_beats_tcp_by_a_large_factor_and_client_centric_beats_both():
    tcp = run(manager__kind="server-tcp", **FIG1)["throughput_rps"]
    sr = run(manager__kind="server-rdma", **FIG1)["throughput_rps"]
    cas = run(manager__kind="rdma-cas", **FIG1)["throughput_rps"]
    assert sr > 3 * tcp > 0
    assert cas > sr


# --- declock.md: DecLock beats CAS spinlocks on a contended lock and cuts the tail -----------

def test_declock_beats_cas_spinlocks_on_a_hot_lock_and_cuts_tail_latency():
    hot = dict(workload__clients=40, workload__locks=1)
    spin = run(manager__kind="rdma-cas", **hot)
    dec = run(manager__kind="declock", **hot)
    assert dec["throughput_rps"] > spin["throughput_rps"]
    assert dec["latency_us"]["p99"] < spin["latency_us"]["p99"] / 2
    assert dec["violations"] == spin["violations"] == 0


# --- DSLR: first come, first served; lease recovery; counter reset --------------------------

ONE_LOCK = dict(workload__clients=20, workload__locks=1, network__jitter_us=0.0)


def grant_inversions(requests) -> int:
    """Grants of one lock that went to a request made after one still waiting."""
    ordered = requests.sort_values("t_us")
    made = (ordered["t_us"] - ordered["latency_us"]).to_numpy()
    return int(np.count_nonzero(np.diff(made) < -1e-9))


def test_dslr_grants_first_come_first_served_and_spinlocks_do_not():
    dslr = run(manager__kind="dslr", workload__think_time_us=5, **ONE_LOCK)
    spin = run(manager__kind="rdma-cas", workload__think_time_us=5, **ONE_LOCK)
    assert len(dslr["requests"]) > 100
    assert grant_inversions(dslr["requests"]) == 0
    assert grant_inversions(spin["requests"]) > 0


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


def test_dslr_a_failed_last_ticket_still_resets_the_frozen_word():
    # Recoveries fail requests, among them the last ticket's: its reset duty stays, else
    # every later request waits for a reset that never comes (0 requests/s, all stalled).
    out = run(manager__kind="dslr", manager__dslr__lease_us=20,
              manager__dslr__counter_limit=4, workload__think_time_us=100, **ONE_LOCK)
    assert out["manager"]["recoveries"] > 0 and out["manager"]["resets"] > 0
    assert out["violations"] == 0 and out["stalled"] == 0
    assert out["throughput_rps"] > 0


# --- DrTM: shared leases are unsafe past their end; writers starve under readers ------------

READ_HEAVY = dict(workload__clients=40, workload__locks=4, workload__mode="mixed",
                  workload__shared_fraction=0.9)


def test_drtm_shared_leases_are_unsafe_when_holds_exceed_the_lease():
    long_holds = run(manager__kind="drtm", manager__drtm__read_lease_us=50,
                     workload__think_time_us=200, lease__us=3000, **READ_HEAVY)
    assert long_holds["violations"] > 0
    dslr = run(manager__kind="dslr", workload__think_time_us=200, lease__us=3000,
               **READ_HEAVY)
    assert dslr["violations"] == 0


def test_drtm_starves_writers_under_read_load_and_dslr_does_not():
    def exclusive_share(out: dict) -> float:
        modes = out["requests"]["mode"].to_numpy()
        return float(np.mean(modes == 1))

    drtm = run(manager__kind="drtm", **READ_HEAVY)
    dslr = run(manager__kind="dslr", **READ_HEAVY)
    assert exclusive_share(dslr) > 0.8 * 0.1
    assert exclusive_share(drtm) < 0.5 * exclusive_share(dslr)


# --- NetChain: fail-and-retry under contention -----------------------------------------------

def test_netchain_retries_far_more_than_netlock_under_contention():
    contended = dict(workload__clients=40)
    netlock = run("micro-contended", manager__kind="netlock", **contended)
    netchain = run("micro-contended", manager__kind="netchain", **contended)
    assert netchain["retries"] > 10 * max(netlock["retries"], 1)
    assert netchain["violations"] == netlock["violations"] == 0
