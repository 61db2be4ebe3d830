"""A plan from a config's demand trace, and the simulation of that plan: the two numbers
``netlock capacity`` and the planner's accuracy tests set side by side.

The steps are the README's: ``netlock trace gen`` (in memory), ``netlock plan --config``,
``netlock sim --set policy.plan=...``. Rates rps, latencies us.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from netlock.config import Config
from netlock.config.load import override_config
from netlock.plan_io import save_plan
from netlock.trace import Trace, transaction_keys
from planner import settings
from planner.planning import PlanReport, for_servers, make_plan
from sim.run_engine import run_engine
from sim.workloads.tracegen import trace_from_config

TRACE_REQUESTS = 200_000


@dataclass(frozen=True)
class Checked:
    """A plan's prediction beside its simulation (rps, us)."""

    slots: int
    servers: int
    predicted_total_rps: float
    predicted_switch_rps: float
    servers_needed: int
    simulated_total_rps: float | None = None
    simulated_switch_rps: float | None = None
    simulated_p99_us: float | None = None
    violations: int | None = None
    stalled: int | None = None


def demand_trace(config: Config, requests: int = TRACE_REQUESTS) -> Trace:
    """The trace ``netlock trace gen`` would write for ``config``, as a Trace."""
    cols = trace_from_config(config, requests)
    return Trace(source="demand trace", lock_id=cols["lock_id"], mode=cols["mode"],
                 t_request=cols["t_request"], t_release=cols["t_release"],
                 txn=transaction_keys(cols["client_id"], cols["txn_id"]))


def plan_for(config: Config, trace: Trace, slots: int) -> PlanReport:
    """``netlock plan --config`` with ``slots`` switch slots."""
    geometry = settings.plan_geometry(config, None, None)
    options = settings.plan_options(config, geometry, slots=slots)
    return make_plan(trace, geometry, options)


def simulate_plan(config: Config, report: PlanReport, servers: int,
                  engine: str = "fast") -> Checked:
    """Run ``config`` with ``servers`` lock servers on the plan of ``report``, its lock ids
    partitioned over that many (as ``netlock capacity`` verifies a rack: a plan's own
    partition over fewer servers would leave the extra ones idle)."""
    summary = report.plan.summary
    plan = report.plan if report.plan.servers == servers else for_servers(report, servers)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "plan.yaml"
        save_plan(plan, path)
        run = override_config(config, {"policy.plan": str(path),
                                       "servers.count": servers})
        result = run_engine(run, engine).summary
    measured = result["plan_predicted"]["measured"]
    return Checked(slots=summary.slots_total, servers=servers,
                   predicted_total_rps=summary.total_rps,
                   predicted_switch_rps=summary.switch_rps,
                   servers_needed=summary.servers_needed,
                   simulated_total_rps=float(measured["total_rps"]),
                   simulated_switch_rps=float(measured["switch_rps"]),
                   simulated_p99_us=float(result["txn_latency_us"]["p99"]),
                   violations=int(result["violations"]), stalled=int(result["stalled"]))


def relative_error(predicted: float, simulated: float) -> float:
    """|predicted - simulated| / simulated (0 when both are 0)."""
    if simulated == 0:
        return 0.0 if predicted == 0 else float(np.inf)
    return abs(predicted - simulated) / simulated
