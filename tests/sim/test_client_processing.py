"""The client's own send and receive processing per packet (``clients.tx_us``,
``clients.rx_us``) is part of every request's latency, in both engines, and of the hold time
the planner and the lease guard derive."""

from __future__ import annotations

import pytest

from sim.run_engine import run_engine
from tests.sim.helpers import config

SHORT = dict(sim__duration_s=0.0008, sim__warmup_s=0.0002)


@pytest.mark.parametrize("engine", ["simpy", "fast"])
def test_request_latency_grows_by_the_clients_send_and_receive_time(engine):
    def mean_latency(tx: float, rx: float) -> float:
        cfg = config("micro-exclusive", clients__tx_us=tx, clients__rx_us=rx, **SHORT)
        summary = run_engine(cfg, engine).summary
        assert summary["violations"] == 0 and summary["stalled"] == 0
        return summary["latency_us"]["mean"]

    base = mean_latency(0.0, 0.0)
    assert mean_latency(0.5, 1.0) - base == pytest.approx(1.5, abs=0.1)
    assert mean_latency(0.0, 1.0) - base == pytest.approx(1.0, abs=0.1)


def test_the_testbed_derives_them_from_the_authors_client_cores():
    cfg = config("micro-exclusive")
    assert cfg.clients.tx_us == pytest.approx(2 / 36e6 * 1e6, rel=0.01)
    assert cfg.clients.rx_us == pytest.approx(6 / 18e6 * 1e6, rel=0.01)
    assert cfg.client_rtt_us == pytest.approx(cfg.network.rtt_us + 0.389, abs=0.001)
    assert cfg.hold_time_us(0) == pytest.approx(cfg.client_rtt_us)
