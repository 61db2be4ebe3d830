"""Client machines as the testbed ran them (issue 11): transaction contexts that send all
their acquires at once, attempt timeouts that resolve deadlocks, steady TPC-C throughput,
and quotas that isolate tenants without collapsing them."""

from __future__ import annotations

import pytest

from netlock.errors import ConfigError
from sim.fast.simulate_fast import simulate_fast
from sim.simulate_simpy import simulate
from tests.sim.helpers import config


def test_a_transaction_sends_all_its_acquires_at_once():
    """Sent one at a time, a NewOrder of ~90 locks would take ~90 round trips (> 400 us);
    sent back to back it takes a few round trips and the NIC's pacing."""
    cfg = config("tpcc-low", workload__generator="sketch", workload__clients=2,
                 sim__duration_s=0.003, sim__warmup_s=0.001)
    summary = simulate(cfg).summary
    per_txn = summary["throughput_rps"] / summary["tps"]
    assert per_txn > 50
    assert summary["txn_latency_us"]["mean"] < 20 * cfg.network.rtt_us
    assert summary["violations"] == 0 and summary["stalled"] == 0


@pytest.mark.parametrize("engine", [simulate, simulate_fast])
def test_an_attempts_acquires_travel_in_one_burst(engine):
    """The authors' client hands a transaction's acquires to its NIC in one TX burst
    (netlock.client.starts_burst): they cross the link with one delay and reach the switch
    together, so no jitter makes two transactions reach two of their locks in opposite
    orders, and DSLR's TPC-C (each transaction's locks in one global order) never
    deadlocks on a lossless network: no attempt times out, not even when all 40 contexts
    start at once. Sent one by one, 0.22 us apart (their NIC share) with a delay each,
    they did (measured: 251 retries in tpcc-low's 25 ms at jitter 0.5 us)."""
    cfg = config("tpcc-low", network__jitter_us=1.0, sim__duration_s=0.003,
                 sim__warmup_s=0.001)
    summary = engine(cfg).summary
    assert summary["tps"] > 0 and summary["retries"] == 0
    assert summary["violations"] == 0 and summary["stalled"] == 0


def test_deadlocks_resolve_by_the_attempt_timeout():
    """Two exclusive locks per transaction over 16 locks, all acquires at once: attempts
    deadlock, give up after clients.timeout_us, back off, and commit."""
    cfg = config("micro-contended", workload__locks=16, workload__locks_per_txn=2,
                 workload__clients=40, clients__timeout_us=100, lease__us=1000,
                 sim__duration_s=0.006, sim__warmup_s=0.001)
    summary = simulate(cfg).summary
    assert summary["retries"] > 0
    assert summary["tps"] > 0
    assert summary["violations"] == 0 and summary["stalled"] == 0
    locks, clients = 2, 40
    assert summary["retries"] % locks == 0, "a retry is counted per lock of an attempt given up"
    most_give_ups = cfg.sim.end_s * 1e6 / cfg.clients.timeout_us + 1
    assert summary["retries"] <= clients * locks * most_give_ups, (
        "a context gives up at most once per attempt timeout")


def test_a_lease_shorter_than_a_live_hold_is_refused():
    with pytest.raises(ConfigError, match=r"lease\.us: 300 us is shorter than a live client"):
        simulate(config("tpcc-low", lease__us=300))


def tps_series(result, start_s: float, end_s: float) -> float:
    ts = result.timeseries
    t = ts["t_s"]
    return float(ts[(t >= start_s - 1e-12) & (t < end_s - 1e-12)]["tps"].mean())


def steady(name: str, duration_s: float, window_s: float, rel: float = 0.10) -> None:
    """TPS of the last ``window_s`` within ``rel`` of the first ``window_s`` after the
    warm-up; no violation, nothing stalled."""
    warmup = 0.005
    cfg = config(name, sim__duration_s=duration_s, sim__warmup_s=warmup,
                 sim__timeseries_bin_s=0.005)
    result = simulate_fast(cfg)
    first = tps_series(result, warmup, warmup + window_s)
    end_s = warmup + duration_s
    last = tps_series(result, end_s - window_s, end_s)
    assert last == pytest.approx(first, rel=rel)
    assert result.summary["violations"] == 0 and result.summary["stalled"] == 0


@pytest.mark.parametrize("name", ["tpcc-low", "tpcc-high"])
def test_tpcc_throughput_does_not_decay_with_run_length(name):
    """The issue measured 8,333 -> 3,348 TPS from 0.05 s to 1 s of tpcc-low. On DSLR's
    TPC-C a 15 ms window's TPS moved by about 12 % from window to window while deadlocked
    attempts waited out the 2 ms timeout (before an attempt's acquires travelled in one
    burst), so the short run allows 25 %; the slow tier's simulated second keeps 10 % over
    0.2 s windows."""
    steady(name, duration_s=0.06, window_s=0.015, rel=0.25)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["tpcc-low", "tpcc-high"])
def test_tpcc_is_steady_over_a_simulated_second(name):
    """The issue's acceptance: 1 s simulated, last 0.2 s against the first 0.2 s."""
    steady(name, duration_s=1.0, window_s=0.2)


def test_quotas_hold_the_larger_tenant_and_narrow_the_gap():
    """Figure 12b: seven against three client machines. Without quotas the larger tenant
    takes most of the rack; with equal quotas it is held at its quota and the tenants' gap
    narrows. Not both at their share (measured: 432,700 against 294,400 requests/s): on
    DSLR's TPC-C the tenants share every warehouse's hot rows, and a transaction whose
    acquires the quota defers keeps the locks it has, which slows the other tenant too
    (capping tenant 0 alone slows tenant 1, which has no quota: configs/paper/fig12b.yaml)."""
    short = dict(sim__duration_s=0.02, sim__warmup_s=0.005)
    free = simulate_fast(config("tenants-quota", **{"tenants[0]__quota_rps": 0,
                                                    "tenants[1]__quota_rps": 0},
                                **short)).summary["tenants"]
    cfg = config("tenants-quota", **short)
    capped = simulate_fast(cfg).summary["tenants"]
    assert free["0"]["throughput_rps"] > 1.8 * free["1"]["throughput_rps"]
    big, small = capped["0"]["throughput_rps"], capped["1"]["throughput_rps"]
    assert big / small < 0.8 * free["0"]["throughput_rps"] / free["1"]["throughput_rps"]
    quota = cfg.tenants[0].quota_rps
    assert 0.75 * quota < big <= 1.02 * quota
    assert small <= 1.02 * cfg.tenants[1].quota_rps
