"""A timed replay's per-transaction start and hold (``replay_timing``), against the trace
generator that wrote the trace: it starts transaction k at ``t0_k`` and releases it
``(m - 1) * request_gap + hold`` later, the hold being the client's round trip plus what it
did holding its locks; so the replay must start k at ``t0_k`` less the trace's first request
and hold it for ``hold`` less the round trip (a transaction the trace's last row cuts short
holds longer: its last request is missing)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from netlock.trace import write_trace
from sim.workloads.micro import MicroWorkload
from sim.workloads.replay import NONE_LEFT, TraceWorkload
from sim.workloads.tracegen import TraceTiming, generate_trace


@settings(max_examples=15, deadline=None)
@given(clients=st.integers(1, 6), locks_per_txn=st.integers(1, 4),
       trip_us=st.floats(0.0, 8.0), work_us=st.floats(0.5, 40.0),
       gap_us=st.floats(0.01, 2.0), seed=st.integers(0, 2**16))
def test_replay_timing_recovers_the_generators_starts_and_holds(
        tmp_path_factory, clients, locks_per_txn, trip_us, work_us, gap_us, seed):
    timing = TraceTiming(hold_us=trip_us + work_us, jitter_us=0.0, request_gap_us=gap_us)
    workload = MicroWorkload(locks=1000, mode="X", shared_fraction=0.0, zipf=0.0,
                             locks_per_txn=locks_per_txn)
    columns = generate_trace(workload, clients, 200, timing, np.random.default_rng(seed))
    path = tmp_path_factory.mktemp("t") / "t.parquet"
    write_trace(columns, path)
    replay = TraceWorkload.from_file(path, clients, round_trip_us=trip_us)

    t0 = columns["t_request"].min()
    first = {}
    for txn, t in zip(columns["txn_id"].tolist(), columns["t_request"].tolist(), strict=True):
        first[txn] = min(first.get(txn, t), t)
    for c in range(clients):
        mine = sorted((t, txn) for txn, t in first.items()
                      if columns["client_id"][columns["txn_id"] == txn][0] == c)
        batch = replay.sample_txns(len(mine) + 1, np.random.default_rng(0),
                                   np.full(len(mine) + 1, c))
        assert np.allclose(batch.start_us[:-1], [(t - t0) * 1e6 for t, _ in mine], atol=1e-3)
        assert batch.start_us[-1] == NONE_LEFT
        whole = [np.count_nonzero(columns["txn_id"] == txn) == locks_per_txn
                 for _, txn in mine]
        assert np.allclose(batch.hold_us[:-1][whole], work_us, atol=2e-3)


def test_a_trace_that_cannot_advance_in_time_is_refused():
    """One-lock transactions with no hold and no rate cap take no time: the generator ran
    forever (found by the property test above); it is refused in one line instead."""
    import pytest

    from netlock.errors import ConfigError

    timing = TraceTiming(hold_us=0.0, jitter_us=0.0, request_gap_us=0.1)
    workload = MicroWorkload(locks=1000, mode="X", shared_fraction=0.0, zipf=0.0,
                             locks_per_txn=1)
    with pytest.raises(ConfigError, match="would never advance in time"):
        generate_trace(workload, 4, 100, timing, np.random.default_rng(1))
    capped = TraceTiming(hold_us=0.0, jitter_us=0.0, request_gap_us=0.1, rate_rps=1e6)
    assert len(generate_trace(workload, 4, 100, capped, np.random.default_rng(1))
               ["t_request"]) == 100
