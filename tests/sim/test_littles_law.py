"""Little's law on the switch queues: L (sampled from the registers) = lambda * W (counted)."""

from __future__ import annotations

import pytest

from sim.probes import QueueProbe
from sim.simpy_model import build
from tests.sim.helpers import config


@pytest.mark.parametrize("overrides", [
    {},
    {"workload__locks": 100},
    {"workload__think_time_us": 20, "workload__mode": "mixed"},
])
def test_queue_length_equals_arrival_rate_times_sojourn(overrides):
    cfg = config("micro-exclusive", sim__duration_s=0.004, sim__warmup_s=0.001, **overrides)
    model = build(cfg)
    probe = QueueProbe(model)
    model.run()
    law = probe.result()
    assert len(probe.samples) > 500
    assert law.length > 10
    assert law.length == pytest.approx(law.predicted_length, rel=0.02)
