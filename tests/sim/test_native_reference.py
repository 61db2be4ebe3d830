"""The native reference loop runs the plain simpy model's closed loop (no timing asserted)."""

from __future__ import annotations

import pytest

from sim.baseline import run_baseline
from sim.native.reference import NativeLoop, compiler

pytestmark = pytest.mark.skipif(compiler() is None, reason="no C compiler")


@pytest.mark.parametrize(("clients", "locks"), [(120, 5000), (40, 10)])
def test_it_grants_what_the_plain_simpy_model_grants(clients, locks):
    loop = NativeLoop(compiler())
    try:
        run = loop.run(clients, locks, 5.0, 2000.0)
    finally:
        loop.close()
    plain = run_baseline(clients=clients, locks=locks, rtt_us=5.0, duration_us=2000.0)
    assert run.granted == pytest.approx(plain.granted, rel=0.03)
    assert run.events == pytest.approx(3 * run.granted, rel=0.01)
    assert run.loop_s > 0 and run.rate > 0
