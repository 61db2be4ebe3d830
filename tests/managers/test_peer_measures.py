"""The measures the compared designs' claims are checked with: transactions told apart as
writers or readers (for DrTM's writer starvation), and the server-centric design's
messages per lock."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.engine import EXCLUSIVE, SHARED
from sim.paper.peers import writer_txns
from sim.simulate_simpy import simulate
from tests.sim.helpers import config

TXN = st.tuples(st.integers(0, 3),
                st.floats(0.0, 5e4, allow_nan=False, allow_infinity=False),
                st.floats(0.01, 2e4, allow_nan=False, allow_infinity=False),
                st.lists(st.sampled_from([SHARED, EXCLUSIVE]), min_size=1, max_size=4))
"""One committed transaction: client, first attempt's start, latency (us), its locks' modes."""


@settings(max_examples=60, deadline=None)
@given(st.lists(TXN, max_size=30, unique_by=lambda t: (t[0], round(t[1], 3))))
def test_a_transaction_is_a_writer_when_any_of_its_locks_is_exclusive(txns):
    requests = pd.DataFrame(
        [{"client": c, "asked_us": start, "mode": m, "t_us": start + lat / 2}
         for c, start, lat, modes in txns for m in modes],
        columns=["client", "asked_us", "mode", "t_us"]).astype(
        {"client": "int32", "asked_us": float, "mode": "int8", "t_us": float})
    committed = pd.DataFrame(
        [{"t_us": start + lat, "latency_us": (start + lat) - start, "client": c}
         for c, start, lat, _ in txns], columns=["t_us", "latency_us", "client"]).astype(
        {"t_us": float, "latency_us": float, "client": "int32"})
    joined = writer_txns(requests, committed)
    assert len(joined) == len(txns)
    expected = {(c, start + lat): EXCLUSIVE in modes for c, start, lat, modes in txns}
    got = {(int(c), t): bool(w)
           for c, t, w in zip(joined["client"], joined["t_us"], joined["writer"], strict=True)}
    assert got == expected


def test_a_committed_transaction_without_a_granted_request_is_refused():
    requests = pd.DataFrame({"client": [0], "asked_us": [1.0], "mode": [SHARED]})
    committed = pd.DataFrame({"t_us": [9.0], "latency_us": [3.0], "client": [0]})
    with pytest.raises(ValueError, match="no granted request"):
        writer_txns(requests, committed)


@pytest.mark.parametrize("kind", ["server-tcp", "server-rdma"])
def test_the_server_centric_server_handles_four_messages_per_lock(kind):
    """Request, grant, release and the release's acknowledgement (rdma-lock-management.md,
    section 3) each cost the server's CPU."""
    clients = 10
    result = simulate(config("micro-exclusive", manager__kind=kind, workload__clients=clients,
                             workload__locks=100, clients__machines=10, servers__count=1,
                             sim__duration_s=0.001, sim__warmup_s=0.0002))
    stats = result.summary["manager"]
    messages, granted = sum(stats["server_messages"]), stats["granted"]
    assert granted > 100
    assert 4 * granted - 2 * clients <= messages <= 4 * granted + 2 * clients


def test_a_server_centric_client_waits_for_its_releases_acknowledgement():
    """One client on uncontended locks: each lock costs it two round trips through the ToR
    (request -> grant, release -> acknowledgement: 2 x 2 x rtt_us), a client-centric CAS
    one."""
    alone = dict(workload__clients=1, workload__locks=1000, network__jitter_us=0.0,
                 clients__machines=10, servers__count=1, sim__duration_s=0.002,
                 sim__warmup_s=0.0005)
    rtt = config("micro-exclusive").network.rtt_us
    per_lock = {kind: 1e6 / simulate(config("micro-exclusive", manager__kind=kind, **alone))
                .summary["throughput_rps"] for kind in ("server-rdma", "rdma-cas")}
    assert 4 * rtt <= per_lock["server-rdma"] < 4 * rtt + 3.0
    assert 2 * rtt <= per_lock["rdma-cas"] < 2 * rtt + 3.0
