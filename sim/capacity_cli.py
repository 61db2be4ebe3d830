"""``netlock capacity``: the smallest switch memory and lock-server count that meet a target.

The planner's model proposes (:mod:`planner.capacity`); the simulator verifies each rack on
the frontier, and the one below it in servers, in parallel (local processes, or the Dask
cluster of ``--scheduler`` as ``netlock sweep``). Rates rps / tps, latencies us.
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn
from rich.table import Table

from netlock.cli.common import CONFIG_PANEL, OUTPUT_PANEL, emit_json, guarded, json_option
from netlock.cli.console import console
from netlock.config import Config, load_config, override_config
from netlock.errors import ConfigError
from netlock.plan import Plan

JsonOpt = json_option("the table, progress and the binding constraint go to")
TraceOpt = Annotated[Path | None, typer.Option(
    "--trace", help="workload trace (.csv/.parquet with client_id and txn_id); default: the "
    "config's workload, as netlock trace gen makes it", rich_help_panel=CONFIG_PANEL)]
RequestsOpt = Annotated[int, typer.Option("--requests", min=1000,
                                          help="rows of the generated trace")]
WorkersOpt = Annotated[int | None, typer.Option(
    "--workers", min=1, help="local worker processes (default: the CPU count)")]


def verify(config: Config, plan: Plan, servers: int) -> dict[str, Any]:
    """Simulate ``config`` on ``plan`` with ``servers`` lock servers (in a worker): the
    measured rates, p99 and checks."""
    import tempfile

    from netlock.plan_io import save_plan
    from sim.run_engine import run_engine

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "plan.yaml"
        save_plan(plan, path)
        run = override_config(config, {"policy.plan": str(path), "servers.count": servers})
        summary = run_engine(run).summary
    return {"sim_total_rps": float(summary["throughput_rps"]),
            "sim_tps": float(summary["tps"]),
            "sim_switch_rps": float(summary["switch_rps"]),
            "sim_p99_us": float(summary["txn_latency_us"]["p99"]),
            "violations": int(summary["violations"]), "stalled": int(summary["stalled"])}


def _positive(flag: str, value: float | None) -> None:
    if value is not None and not (math.isfinite(value) and value > 0):
        raise ConfigError(f"{flag}: must be a finite number > 0, got {value}")


@guarded
def capacity_command(
    config: Annotated[Path, typer.Argument(help="experiment config (YAML): the rack's "
                                           "clients, network, switch and lock servers")],
    tps: Annotated[float | None, typer.Option("--tps", help="target transactions/s")] = None,
    rps: Annotated[float | None, typer.Option("--rps", help="target lock requests/s "
                                              "(granted)")] = None,
    p99_us: Annotated[float | None, typer.Option(
        "--p99-us", help="target 99th percentile of transaction latency, us")] = None,
    trace: TraceOpt = None,
    requests: RequestsOpt = 200_000,
    max_slots: Annotated[int | None, typer.Option(
        "--max-slots", min=1, help="most switch slots (default: switch.slots)")] = None,
    max_servers: Annotated[int, typer.Option("--max-servers", min=1,
                                             help="most lock servers")] = 8,
    duration_s: Annotated[float | None, typer.Option(
        "--duration-s", help="simulated seconds per verification (default: sim.duration_s)")]
        = None,
    workers: WorkersOpt = None,
    scheduler: Annotated[str | None, typer.Option(
        "--scheduler", metavar="tcp://HOST:PORT", help="verify on this dask.distributed "
        "cluster instead of local processes")] = None,
    plot: Annotated[Path | None, typer.Option(
        "--plot", help="PNG of the frontier, predicted beside simulated",
        rich_help_panel=OUTPUT_PANEL)] = None,
    as_json: JsonOpt = False,
) -> None:
    """Find the smallest switch memory and lock-server count that meet a throughput (and
    latency) target: the planner's model proposes, the simulator verifies.

    Examples:

        netlock capacity configs/tpcc-low.yaml --tps 300000 --plot frontier.png

        netlock capacity configs/tpcc-high.yaml --rps 2e7 --p99-us 200 --json

    Exit 0 with the chosen rack; 1 when no rack within --max-slots/--max-servers meets
    the target (the binding constraint is named: clients, contention, switch memory,
    servers or latency); 2 for a bad target or config. With --p99-us the model's predicted
    p99 (planner/latency.py) picks the candidates too.
    """
    from netlock.trace import read_trace
    from planner import settings
    from planner.capacity import Target, propose
    from sim.plan_check import demand_trace

    target = Target(tps=tps, rps=rps, p99_us=p99_us)
    found = target.problem()
    if found:
        raise ConfigError(found)
    _positive("--duration-s", duration_s)
    if scheduler is not None and "://" not in scheduler:
        raise ConfigError(f"--scheduler {scheduler!r}: expected a scheduler address such as "
                          f"tcp://HOST:PORT")
    base = load_config(config, {})
    if duration_s is not None:
        base = override_config(base, {"sim.duration_s": duration_s})
    base = override_config(base, {"sim.engine": "fast"})
    geometry = settings.plan_geometry(base, None, None)
    options = settings.plan_options(base, geometry)
    limit = max_slots or base.switch.slots or geometry.total_slots
    if limit > geometry.total_slots:
        raise ConfigError(f"--max-slots: {limit} is more than the switch's register arrays "
                          f"hold ({geometry.total_slots})")
    data = read_trace(trace) if trace is not None else demand_trace(base, requests)
    log = console(stderr=as_json)
    with Progress("[progress.description]{task.description}", BarColumn(),
                  MofNCompleteColumn(), TimeElapsedColumn(), console=console(stderr=True),
                  transient=True, disable=not log.is_terminal) as bar:
        from planner.capacity import slot_ladder

        task = bar.add_task("model: slots", total=len(slot_ladder(limit)))
        proposal = propose(data, geometry, options, target, limit, max_servers,
                           tick=lambda: bar.advance(task))
        todo = _to_verify(proposal.frontier, max_servers)
        vtask = bar.add_task("simulate: racks", total=len(todo))
        rows = _run(base, proposal, todo, workers, scheduler, lambda: bar.advance(vtask),
                    target)
    chosen = next((r for r in rows if r["meets"]), None)
    binds = proposal.binds
    if chosen is None and binds is None:
        binds = _simulated_binding(rows, target)
    if plot is not None:
        from sim.capacity_plot import plot_frontier

        plot_frontier(proposal.grid, rows, target, plot)
    result = {"target": asdict(target), "chosen": chosen, "frontier": rows,
              "binds": binds, "plot": str(plot) if plot else None}
    if as_json:
        emit_json(result)
    else:
        log.print(_table(rows, target))
        if chosen:
            log.print(f"chosen rack: {chosen['slots']:,} switch slots, {chosen['servers']} "
                      f"lock server(s): {chosen['sim_tps']:,.0f} tps, "
                      f"{chosen['sim_total_rps']:,.0f} rps, p99 {chosen['sim_p99_us']:.1f} us")
    if chosen is None:
        log_err = console(stderr=True)
        log_err.print(f"netlock: no rack within {limit:,} slots and {max_servers} lock "
                      f"servers meets {target.describe()}: {binds} binds")
        raise typer.Exit(1)


def _to_verify(frontier: tuple[Any, ...], max_servers: int) -> list[tuple[int, int]]:
    """The frontier's racks and, below each, the one with a server fewer (the runner-up
    that shows the frontier's edge)."""
    out: list[tuple[int, int]] = []
    for c in frontier:
        for servers in (c.servers - 1, c.servers):
            if 1 <= servers <= max_servers and (c.slots, servers) not in out:
                out.append((c.slots, servers))
    return out


def _run(base: Config, proposal: Any, todo: list[tuple[int, int]], workers: int | None,
         scheduler: str | None, tick: Any, target: Any) -> list[dict[str, Any]]:
    predicted = {(c.slots, c.servers): c for c in proposal.grid}
    from planner.planning import for_servers

    jobs = [(base, for_servers(proposal.plans[s], k), k) for s, k in todo]
    results: dict[int, dict[str, Any]] = {}
    if scheduler is not None:
        from dask.distributed import as_completed

        from sim.sweep_workers import dask_client

        with dask_client(scheduler) as client:
            futures = {client.submit(verify, *job, pure=False): i for i, job in enumerate(jobs)}
            for future in as_completed(futures):
                results[futures[future]] = future.result()
                tick()
    else:
        from sim.sweep_grid import Point
        from sim.sweep_workers import run_each

        def finished(point: Point, result: dict[str, Any]) -> None:
            results[int(point.pid)] = result
            tick()

        run_each([Point(str(i), {}, 0, job) for i, job in enumerate(jobs)],
                 1 if len(jobs) <= 1 else workers or os.cpu_count() or 1, finished,
                 verify_job)
    rows = []
    for i, (slots, servers) in enumerate(todo):
        c = predicted[(slots, servers)]
        rows.append({"slots": slots, "servers": servers, "pred_tps": c.txn_rps,
                     "pred_total_rps": c.total_rps, "pred_switch_rps": c.switch_rps,
                     "pred_p99_us": c.p99_us, "pred_bound": c.bound, **results[i]})
        row = rows[-1]
        row["meets"] = (target.met_by(row["sim_tps"], row["sim_total_rps"], row["sim_p99_us"])
                        and row["violations"] == 0 and row["stalled"] == 0)
    return sorted(rows, key=lambda r: (r["slots"], r["servers"]))


def verify_job(job: tuple[Config, Any, int]) -> dict[str, Any]:
    """:func:`verify` of one rack (config, plan, servers), in a worker process."""
    return verify(*job)


def _simulated_binding(rows: list[dict[str, Any]], target: Any) -> str:
    """The model predicted racks that simulation did not confirm: latency when their
    throughput met the target but p99 did not, else what the model named for them."""
    if any(target.met_by(r["sim_tps"], r["sim_total_rps"]) for r in rows):
        return "latency"
    rated = [r for r in rows if r["pred_bound"] in ("servers", "contention")]
    if rated:
        return str(rated[-1]["pred_bound"])
    return "contention"


def _table(rows: list[dict[str, Any]], target: Any) -> Table:
    table = Table(title=f"netlock capacity: {target.describe()} (predicted | simulated)",
                  title_justify="left")
    for name in ("slots", "servers", "pred tps", "sim tps", "pred rps", "sim rps",
                 "pred p99 us", "sim p99 us", "meets"):
        table.add_column(name, justify="right")
    for r in rows:
        table.add_row(f"{r['slots']:,}", str(r["servers"]), f"{r['pred_tps']:,.0f}",
                      f"{r['sim_tps']:,.0f}", f"{r['pred_total_rps']:,.0f}",
                      f"{r['sim_total_rps']:,.0f}", f"{r['pred_p99_us']:.1f}",
                      f"{r['sim_p99_us']:.1f}",
                      "yes" if r["meets"] else "no")
    return table


def register(app: typer.Typer) -> None:
    """Add ``capacity`` to ``app``."""
    app.command("capacity")(capacity_command)
