"""The pilot run's servers-only plan (:func:`sim.core.pilot.servers_only`) skips the
synthetic warm-up trace where the partition reads no rates; the plan made is the one
planning that trace with no slots gives."""

from __future__ import annotations

import pickle

import pytest

from sim.core import pilot, plan_cache
from sim.core.allocation import plan_from_trace
from sim.core.run_spec import run_spec
from sim.simpy_model import start_pilot
from tests.sim.helpers import config


def full_servers_only(cfg, synthetic, hold_us):
    return plan_from_trace(synthetic(), cfg, hold_us, slots=0)


@pytest.mark.parametrize("partition", ["hash", "range"])
def test_the_pilot_plans_as_with_the_synthetic_trace(partition, monkeypatch):
    cfg = config("micro-exclusive", workload__clients=12, workload__locks=300,
                 workload__zipf=0.9, switch__slots=120, servers__count=2,
                 servers__partition=partition, sim__warmup_s=0.0002)
    monkeypatch.setattr(pilot, "PILOT_REQUESTS", 2000)
    spec = run_spec(cfg)
    plans = []
    for servers_only in (full_servers_only, pilot.servers_only):
        monkeypatch.setattr(pilot, "servers_only", servers_only)
        pilot.forget_pilots()
        with plan_cache.bypassed():
            plans.append(pickle.dumps(pilot.make_plan(cfg, spec,
                                                      lambda *a: start_pilot(cfg, *a),
                                                      "simpy")))
    pilot.forget_pilots()
    assert plans[0] == plans[1]
    def drawn():
        raise LookupError("the synthetic trace was drawn")

    if partition == "hash":
        assert not len(pilot.servers_only(cfg, drawn, spec.hold_us)[0].entries.lock_id)
    else:
        with pytest.raises(LookupError):
            pilot.servers_only(cfg, drawn, spec.hold_us)
