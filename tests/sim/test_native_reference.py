"""The native reference loop runs the plain simpy model's closed loop, and its two event queues
give identical results (no timing asserted)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sim.baseline import run_baseline
from sim.native.reference import NativeLoop, compiler

pytestmark = pytest.mark.skipif(compiler() is None, reason="no C compiler")


@pytest.fixture(scope="module")
def loop():
    compiled = NativeLoop(compiler())
    yield compiled
    compiled.close()


@pytest.mark.parametrize(("clients", "locks"), [(120, 5000), (40, 10)])
@pytest.mark.parametrize("queue", ["heap", "calendar"])
def test_it_grants_what_the_plain_simpy_model_grants(loop, clients, locks, queue):
    run = loop.run(clients, locks, 5.0, 2000.0, queue=queue)
    plain = run_baseline(clients=clients, locks=locks, rtt_us=5.0, duration_us=2000.0)
    assert run.granted == pytest.approx(plain.granted, rel=0.03)
    assert run.events == pytest.approx(3 * run.granted, rel=0.01)
    assert run.loop_s > 0 and run.rate > 0


def test_without_contention_a_request_takes_a_round_trip(loop):
    """Two clients on 5000 locks seldom meet: acquire out, grant back, 5 us on average
    (the jitter's mean is zero; clipping at zero and the FIFO links add next to nothing)."""
    run = loop.run(2, 5000, 5.0, 20_000.0, jitter_us=0.5, queue="calendar")
    assert run.latency_sum_us / run.granted == pytest.approx(5.0, rel=0.01)


def test_jitter_changes_the_run(loop):
    still = loop.run(120, 5000, 5.0, 2000.0)
    jittered = loop.run(120, 5000, 5.0, 2000.0, jitter_us=0.5)
    assert still.outcome != jittered.outcome


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(clients=st.integers(1, 200), locks=st.integers(1, 6000),
       jitter=st.sampled_from([0.0, 0.01, 0.5, 4.0]), rtt=st.sampled_from([1.0, 5.0]),
       seed=st.integers(0, 2**63), duration=st.sampled_from([50.0, 500.0, 3000.0]))
def test_the_calendar_queue_gives_the_heaps_results_exactly(loop, clients, locks, jitter, rtt,
                                                            seed, duration):
    """Same grants, events, latencies (their sum, bit for bit) and grant order (client and
    arrival time of each grant), with ties (zero jitter: every event of a round trip at the
    same time), clipped delays (jitter near the hop's delay) and contention."""
    heap = loop.run(clients, locks, rtt, duration, seed=seed, jitter_us=jitter, queue="heap")
    calendar = loop.run(clients, locks, rtt, duration, seed=seed, jitter_us=jitter,
                        queue="calendar")
    assert calendar.outcome == heap.outcome
    assert heap.granted > 0


def test_an_unknown_queue_is_refused(loop):
    with pytest.raises(ValueError, match="queue must be one of"):
        loop.run(1, 1, 5.0, 10.0, queue="list")
