"""Plans agree with the simulation of the rack they are for (issue 11, items 9 and 10).

A plan made from `netlock trace gen`'s demand trace with the config predicts the rates the
rack's closed-loop clients offer, and `netlock sim` reports that prediction beside what it
measured (``plan_predicted``) on both engines. A plan made on the fly for a micro workload
gives every lock the workload can draw a rate, so a warm-up too short to see them all still
puts the hot ones in the switch.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from netlock.cli.app import app
from netlock.plan_io import load_plan
from sim.core.allocation import Warmup, known_popularity, plan_from_trace
from sim.core.parts import client_workload
from sim.workloads.tracegen import warmup_trace
from tests.sim.helpers import CONFIGS, config

CFG = CONFIGS / "micro-exclusive.yaml"
ZIPF = ["--set", "workload.locks=2000", "--set", "workload.zipf=0.99"]
RUN = ["--set", "sim.duration_s=0.004", "--set", "sim.warmup_s=0.001"]


@pytest.fixture(scope="module")
def readme_plan(tmp_path_factory):
    """The README session's steps at a smaller scale: trace gen, then plan with --config."""
    tmp = tmp_path_factory.mktemp("plan")
    runner = CliRunner()
    trace, plan = tmp / "zipf.parquet", tmp / "plan.yaml"
    out = runner.invoke(app, ["trace", "gen", "micro", "--config", str(CFG), "--out",
                              str(trace), "--requests", "50000", *ZIPF])
    assert out.exit_code == 0, out.output
    out = runner.invoke(app, ["plan", str(trace), "--config", str(CFG), "--slots", "500",
                              *ZIPF, "--out", str(plan), "--json"])
    assert out.exit_code == 0, out.output
    return plan


@pytest.mark.parametrize("engine", ["simpy", "fast"])
def test_the_plan_and_its_simulation_agree_on_switch_throughput(readme_plan, engine):
    out = CliRunner().invoke(app, ["sim", str(CFG), *ZIPF, *RUN, "--engine", engine,
                                   "--set", f"policy.plan={readme_plan}", "--json"])
    assert out.exit_code == 0, out.output
    result = json.loads(out.stdout)
    assert result["plan"] == load_plan(readme_plan).summary.to_dict()  # it ran that plan
    predicted = result["plan_predicted"]
    assert predicted["rates"] == "closed-loop"
    assert predicted["measured"]["switch_rps"] == pytest.approx(result["switch_rps"])
    assert predicted["measured"]["total_rps"] == pytest.approx(result["throughput_rps"])
    assert predicted["switch_rps"] == result["plan"]["switch_rps"]
    assert predicted["ratio"]["switch_rps"] == pytest.approx(1.0, abs=0.15)
    assert predicted["ratio"]["total_rps"] == pytest.approx(1.0, abs=0.15)


@pytest.mark.parametrize("name, sets", [
    ("micro-exclusive", [*ZIPF, "--set", "switch.slots=500"]),  # one hot lock bounds the rack
    ("micro-contended", []),  # 120 clients on 100 locks: waits of half a hold, not a whole one
])
def test_a_plan_made_on_the_fly_reports_its_prediction_too(name, sets):
    out = CliRunner().invoke(app, ["sim", str(CONFIGS / f"{name}.yaml"), *sets, *RUN,
                                   "--engine", "fast", "--json"])
    assert out.exit_code == 0, out.output
    predicted = json.loads(out.stdout)["plan_predicted"]
    assert set(predicted) >= {"total_rps", "switch_rps", "server_rps", "servers_needed",
                              "measured", "ratio"}
    assert predicted["ratio"]["switch_rps"] == pytest.approx(1.0, abs=0.15)
    assert predicted["ratio"]["total_rps"] == pytest.approx(1.0, abs=0.15)


def _short_warmup_plan(cfg):
    """A plan from a warm-up trace of about 2,000 requests: far fewer than the locks."""
    rng = np.random.default_rng(0)
    trace = Warmup(*warmup_trace(client_workload(cfg), cfg, [0] * cfg.workload.clients, 0,
                                 rng))
    seen = trace.trace.lock_id[:2000]
    short = type(trace)(type(trace.trace)(
        source="warm-up run", lock_id=seen, mode=trace.trace.mode[:2000],
        t_request=trace.trace.t_request[:2000], t_release=trace.trace.t_release[:2000],
        priority=trace.trace.priority[:2000]), trace.clients[:2000])
    return plan_from_trace(short, cfg, 5.0), len(np.unique(seen))


def test_every_lock_the_workload_can_draw_gets_a_rate():
    cfg = config("micro-contended", workload__locks=20_000, switch__slots=100_000)
    (plan, _), seen = _short_warmup_plan(cfg)
    assert seen < 20_000 // 2
    assert plan.summary.locks_total == 20_000
    assert plan.summary.locks_in_switch == 20_000  # 1 slot each fits in 100K slots
    assert plan.summary.server_rps == 0.0


def test_the_hot_locks_of_a_large_zipf_workload_get_switch_slots():
    cfg = config("micro-exclusive", workload__locks=100_000, workload__zipf=0.99,
                 switch__slots=5_000)
    (plan, _), _ = _short_warmup_plan(cfg)
    popularity = known_popularity(cfg)
    hottest = np.argsort(popularity)[::-1][:1_000]
    assert set(hottest.tolist()) <= set(plan.entries.lock_id.tolist())
    assert plan.summary.locks_total == 100_000
