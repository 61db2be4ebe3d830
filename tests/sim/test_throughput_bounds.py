"""Uncontended exclusive locks: throughput = min(client generation limit, S/T, switch rate).

Every client locks only its own lock (a trace with one private lock per client), so no
request ever waits for another. The three bounds come from the config alone:

- client generation limit: machines x ``clients.rate_rps`` lock requests per second;
- S/T: a slot is held from the acquire's pass to the release's arrival, T = round trip +
  think time + one pass; S slots turn over S/T times per second;
- switch rate: ``switch.rate_pps`` passes per second, two per lock request (an acquire and
  a release, each one pass when nothing waits).
"""

from __future__ import annotations

import pytest

from sim.simulate_simpy import simulate
from tests.sim.helpers import config, private_locks_trace

CLIENTS = 40


def bounds(cfg, slots_used: int) -> dict[str, float]:
    hold_us = cfg.network.rtt_us + cfg.workload.think_time_us + cfg.switch.pass_us
    return {
        "clients": cfg.clients.machines * cfg.clients.rate_rps,
        "slots": slots_used / (hold_us * 1e-6),
        "switch": cfg.switch.rate_pps / 2,
    }


def uncontended(tmp_path, **overrides):
    trace = private_locks_trace(tmp_path / "private.csv", CLIENTS)
    settings = dict(workload__kind="trace", workload__replay="loop", workload__trace=trace,
                    workload__clients=CLIENTS,
                    clients__machines=4, sim__duration_s=0.004, sim__warmup_s=0.001)
    settings.update(overrides)
    return config("micro-exclusive", **settings)


@pytest.mark.parametrize(("name", "overrides", "binding"), [
    ("client generation limit", {"clients__rate_rps": 1e6}, "clients"),
    ("slot turnover S/T", {"workload__think_time_us": 20, "switch__slots": CLIENTS}, "slots"),
    ("switch rate", {"switch__rate_pps": 4e6}, "switch"),
])
def test_throughput_is_the_smallest_bound(tmp_path, name, overrides, binding):
    cfg = uncontended(tmp_path, **overrides)
    expected = bounds(cfg, slots_used=min(cfg.switch.slots, CLIENTS))
    assert min(expected, key=expected.get) == binding, f"{name}: config does not bind"
    result = simulate(cfg).summary
    assert result["switch_share"] == pytest.approx(1.0)
    assert result["throughput_rps"] == pytest.approx(expected[binding], rel=0.03)
    assert result["violations"] == 0


def test_fewer_slots_than_clients_turn_over_s_over_t(tmp_path):
    """With S < clients, the switch grants S/T per second; the servers serve the rest."""
    cfg = uncontended(tmp_path, switch__slots=10, workload__think_time_us=10,
                      servers__count=2)
    result = simulate(cfg).summary
    assert result["switch_rps"] == pytest.approx(bounds(cfg, 10)["slots"], rel=0.03)
    assert result["server_rps"] > 0
