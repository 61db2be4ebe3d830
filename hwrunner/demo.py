"""``netlock demo``: the toolkit's main job end to end on the embedded default target.

trace (from the bundled example workload) -> plan (Algorithm 3) -> the switch data plane
model driven by the trace -> a simulated rack running the plan -> push to the emulated
switch, read back and verified. Every
artifact goes to ``--out`` (written atomically), so each step can be re-run by hand with
the command printed beside it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from netlock.cli.common import emit_json, guarded, parse_sets
from netlock.cli.console import console
from netlock.config import Config, load_config, override_config
from netlock.errors import ConfigError
from netlock.timeless_rack import ReplayResult, TimelessRack, replay_trace

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
DEMO_CONFIG = CONFIGS / "demo.yaml"


@dataclass(frozen=True)
class DemoResult:
    """The demo's figures: trace, plan summary, replay counts, push outcome."""

    trace_path: Path
    plan_path: Path
    state_path: Path
    requests: int
    plan: dict
    replay: ReplayResult
    sim: dict
    push: dict
    wall_s: float

    def to_json(self) -> dict:
        return {"trace": str(self.trace_path), "plan_file": str(self.plan_path),
                "state": str(self.state_path), "requests": self.requests, "plan": self.plan,
                "replay": self.replay.to_dict(), "sim": self.sim, "push": self.push,
                "wall_s": self.wall_s}


def run_demo(cfg: Config, out: Path, requests: int, log: Console) -> DemoResult:
    """Generate, plan, replay and push; ``log`` receives one line per step."""
    from hwrunner.targets import push_plan
    from netlock.plan_io import save_plan
    from netlock.trace import read_trace, trace_digest, write_trace
    from planner import settings
    from planner.planning import make_plan
    from sim.fast.fast_model import check_supported
    from sim.run_engine import run_engine
    from sim.workloads.tracegen import trace_from_config

    t0 = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    trace_path, plan_path = out / "trace.parquet", out / "plan.yaml"
    state_path = out / "switch.json"

    columns = trace_from_config(cfg, requests)
    write_trace(columns, trace_path)
    log.print(f"[1/5] trace: {requests:,} requests from {cfg.workload.clients} clients "
              f"-> {trace_path}")

    trace = read_trace(trace_path)
    report = make_plan(trace, cfg.geometry, settings.plan_options(cfg, cfg.geometry),
                       digest=trace_digest(trace_path))
    save_plan(report.plan, plan_path)
    summary = report.plan.summary
    log.print(f"[2/5] plan ({summary.policy}): {summary.locks_in_switch:,} of "
              f"{summary.locks_total:,} locks in {summary.slots_used:,} switch slots, "
              f"{summary.servers_needed} lock server(s) -> {plan_path}")
    for warning in report.warnings:
        log.print(f"      warning: {warning}")

    rack = TimelessRack.from_plan(report.plan, servers=cfg.servers.count)
    replay = replay_trace(rack, columns["lock_id"], columns["mode"], columns["t_request"],
                          columns["t_release"], columns["txn_id"], columns["client_id"])
    log.print(f"[3/5] data plane: {replay.granted:,} grants ({replay.granted_by_switch:,} by "
              f"the switch), {replay.overflowed:,} overflowed, "
              f"{replay.passes_per_packet:.2f} passes per packet")

    planned = override_config(cfg, {"policy.plan": str(plan_path)})
    try:
        check_supported(planned)
        engine = "fast"
    except ConfigError:
        engine = "simpy"
    if engine == "fast":
        from sim.cli import compile_fast_engine

        compile_fast_engine()
    sim = run_engine(planned, engine).summary
    log.print(f"[4/5] simulated rack ({sim['sim_time_s'] * 1e3:g} ms, {engine} engine): "
              f"{sim['throughput_rps'] / 1e6:.2f} M grants/s, {sim['switch_share']:.1%} by the "
              f"switch, p99 latency {sim['latency_us']['p99']:.1f} us, "
              f"{sim['violations']} safety violations")

    state_path.unlink(missing_ok=True)
    pushed = push_plan(report.plan, state=state_path)
    log.print(f"[5/5] push to the emulated switch: {pushed.operations:,} operations in "
              f"{pushed.batches} batches, verified={pushed.verified} -> {state_path}")
    return DemoResult(trace_path=trace_path, plan_path=plan_path, state_path=state_path,
                      requests=requests, plan=summary.to_dict(), replay=replay, sim=sim,
                      push=pushed.to_json(), wall_s=time.perf_counter() - t0)


def _table(result: DemoResult) -> Table:
    r, p, sim = result.replay, result.plan, result.sim
    table = Table(title="netlock demo", show_header=False, title_justify="left")
    table.add_column("what")
    table.add_column("value", justify="right")
    rows = [
        ("requests replayed", f"{r.requests:,}"),
        ("locks in the switch / total", f"{p['locks_in_switch']:,} / {p['locks_total']:,}"),
        ("switch slots used / offered", f"{p['slots_used']:,} / {p['slots_total']:,}"),
        ("planned switch share of load", f"{p['switch_rps'] / p['total_rps']:.1%}"
         if p["total_rps"] else "-"),
        ("lock servers needed", f"{p['servers_needed']}"),
        ("granted by the switch", f"{r.granted_by_switch:,}"),
        ("granted by lock servers", f"{r.granted_by_server:,}"),
        ("overflowed to servers (q2)", f"{r.overflowed:,}"),
        ("pushed back from q2", f"{r.pushed_back:,}"),
        ("switch passes per packet (max)", f"{r.passes_per_packet:.2f} ({r.max_passes})"),
        ("dropped / never granted", f"{r.dropped:,} / {r.ungranted:,}"),
        ("simulated throughput", f"{sim['throughput_rps'] / 1e6:.2f} M grants/s"),
        ("simulated switch share", f"{sim['switch_share']:.1%}"),
        ("simulated latency p50 / p99", f"{sim['latency_us']['p50']:.1f} / "
                                        f"{sim['latency_us']['p99']:.1f} us"),
        ("simulated safety violations", f"{sim['violations']}"),
        ("push operations", f"{result.push['operations']:,}"),
        ("push verified", str(result.push["verified"])),
    ]
    for name, value in rows:
        table.add_row(name, value)
    return table


def next_steps(result: DemoResult) -> str:
    """What to try after the demo, on the files it wrote."""
    return "\n".join([
        "next:",
        f"  netlock plan {result.trace_path} --slots 500 --out plan.yaml --plot plan.png",
        f"  netlock sim configs/demo.yaml --set policy.plan={result.plan_path} --out run",
        "  netlock plot run",
        f"  netlock stats --state {result.state_path}",
        "  netlock --help    (every command's --help has examples; the README has a session)",
    ])


def register(app: typer.Typer) -> None:
    @app.command("demo")
    @guarded
    def demo(
        config: Annotated[Path, typer.Option(
            "--config", help="experiment config with the example workload")] = DEMO_CONFIG,
        sets: Annotated[list[str] | None, typer.Option(
            "--set", help="override a config key, e.g. switch.slots=500")] = None,
        requests: Annotated[int, typer.Option(
            "--requests", min=1, help="lock requests in the generated trace")] = 40_000,
        out: Annotated[Path, typer.Option(
            "--out", help="directory for the trace, plan and switch state")] = Path("demo-out"),
        json_out: Annotated[bool, typer.Option("--json", help="print one JSON object")] = False,
    ) -> None:
        """Run the main job end to end on the emulated switch.

        Generates a trace from the example workload, plans it (Algorithm 3), drives the
        switch data-plane model with it, simulates the rack running the plan, then pushes
        the plan to the emulated switch and verifies it by reading every written value back.

        Example: netlock demo --set switch.slots=500 --out demo-out
        """
        cfg = load_config(config, parse_sets(sets))
        log = console()
        result = run_demo(cfg, out, requests, log)
        if json_out:
            emit_json(result.to_json())
        else:
            console(stderr=False).print(_table(result))
            log.print(next_steps(result))
        if not result.push["verified"] or result.sim["violations"]:
            raise typer.Exit(1)
