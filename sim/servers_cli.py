"""``netlock servers``: how many lock servers a rack needs, by issue 30's rule, confirmed by
simulation.

``netlock plan --config`` sizes the lock servers with its rate model: the fewest at which one
more adds less than 5 % of throughput (:data:`planner.closedloop.SERVER_GAIN`). The model's
marginal gains are within a point or two of the simulation's, so where a server's gain is
near the line its count can be one off (planner/README.md: 43 of issue 30's 48 TPC-C
points). This command takes the model's count as the start and lets the simulator decide:
it simulates the plan with k - 1, k and k + 1 lock servers (in parallel), walks by the same
rule while the simulation disagrees (:func:`planner.closedloop.settle_servers`), and reports
each count's predicted and simulated rates. Rates rps, latencies us.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn
from rich.table import Table

from netlock.cli.common import (
    OUTPUT_PANEL,
    emit_json,
    guarded,
    json_option,
    parse_sets,
    set_option,
)
from netlock.cli.console import console
from netlock.config import Config, load_config, override_config
from netlock.errors import ConfigError
from sim.capacity_cli import RequestsOpt, TraceOpt, WorkersOpt, verify_job

JsonOpt = json_option("the table goes to")
SetOpt = set_option("workload.generator=sketch")


@guarded
def servers_command(
    config: Annotated[Path, typer.Argument(help="experiment config (YAML): the rack's "
                                           "clients, network, switch and lock servers")],
    slots: Annotated[int | None, typer.Option(
        "--slots", min=0, help="switch slots the plan allocates (default: switch.slots)")]
        = None,
    trace: TraceOpt = None,
    requests: RequestsOpt = 200_000,
    gain: Annotated[float, typer.Option(
        "--gain", help="one more server must add at least this share of throughput")]
        = 0.05,
    max_servers: Annotated[int, typer.Option("--max-servers", min=1,
                                             help="most lock servers")] = 16,
    duration_s: Annotated[float | None, typer.Option(
        "--duration-s", help="simulated seconds per run (default: sim.duration_s)")] = None,
    workers: WorkersOpt = None,
    sets: SetOpt = None,
    out: Annotated[Path | None, typer.Option(
        "--out", help="write the plan for the settled count (YAML; servers_needed, rates and "
        "partition for that many lock servers)", rich_help_panel=OUTPUT_PANEL)] = None,
    as_json: JsonOpt = False,
) -> None:
    """How many lock servers the rack needs: the fewest at which one more adds less than
    --gain of throughput, the plan's model proposing and the simulator deciding.

    Examples:

        netlock servers configs/tpcc-low.yaml --slots 3000 --out plan.yaml

        netlock servers configs/tpcc-high.yaml --slots 1000 --set workload.generator=sketch --json

    Exit 0 with the count; 1 when a run breaks safety or liveness (violations or stalled
    locks: the rates cannot be trusted); 2 for a bad flag, config or trace.
    """
    from netlock.trace import read_trace
    from planner import settings
    from planner.capacity import predicted_total_rps
    from planner.closedloop import settle_servers
    from planner.planning import make_plan
    from sim.plan_check import demand_trace

    if not (math.isfinite(gain) and 0 < gain < 1):
        raise ConfigError(f"--gain: must be a share in (0, 1), got {gain}")
    if duration_s is not None and not (math.isfinite(duration_s) and duration_s > 0):
        raise ConfigError(f"--duration-s: must be a finite number > 0, got {duration_s}")
    base = load_config(config, parse_sets(sets))
    if duration_s is not None:
        base = override_config(base, {"sim.duration_s": duration_s})
    base = override_config(base, {"sim.engine": "fast"})
    geometry = settings.plan_geometry(base, None, None)
    options = settings.plan_options(base, geometry, slots=slots)
    data = read_trace(trace) if trace is not None else demand_trace(base, requests)
    if options.rack is None or data.txn is None:
        raise ConfigError(f"{trace or config}: needs a trace with client_id and txn_id")
    report = make_plan(data, geometry, options)
    proposed = min(max(report.plan.summary.servers_needed, 1), max_servers)
    runs: dict[int, dict[str, Any]] = {}
    log = console(stderr=as_json)

    with Progress("[progress.description]{task.description}", BarColumn(),
                  MofNCompleteColumn(), TimeElapsedColumn(), console=console(stderr=True),
                  transient=True, disable=not log.is_terminal) as bar:

        def simulated(count: int) -> float:
            if count not in runs:
                near = [n for n in (count - 1, count, count + 1)
                        if 1 <= n <= max_servers and n not in runs]
                task = bar.add_task(f"simulate: {', '.join(map(str, near))} lock server(s)",
                                    total=len(near))
                runs.update(_simulate(base, report, near, workers,
                                      lambda: bar.advance(task)))
            return float(runs[count]["sim_total_rps"])

        needed = settle_servers(simulated, proposed, gain, max_servers)
    rows = _rows(runs, gain, predicted_total_rps(data, options, report, sorted(runs)))
    broken = [r for r in rows if r["violations"] or r["stalled"]]
    if out is not None and not broken:
        from netlock.plan_io import save_plan

        save_plan(make_plan(data, geometry, replace(options, servers=needed)).plan, out)
    result = {"slots": report.plan.summary.slots_total, "gain": gain,
              "model_servers_needed": report.plan.summary.servers_needed,
              "servers_needed": needed, "runs": rows,
              "plan": str(out) if out is not None and not broken else None}
    if as_json:
        emit_json(result)
    else:
        log.print(_table(rows, gain))
        log.print(f"servers needed: {needed} (the model proposed "
                  f"{report.plan.summary.servers_needed})")
    if broken:
        console(stderr=True).print(
            f"netlock: the run with {broken[0]['servers']} lock server(s) had "
            f"{broken[0]['violations']} violations and {broken[0]['stalled']} stalled locks")
        raise typer.Exit(1)


def _simulate(base: Config, report: Any, counts: list[int], workers: int | None,
              tick: Callable[[], None]) -> dict[int, dict[str, Any]]:
    """The plan of ``report`` simulated with each of ``counts`` lock servers (its lock ids
    partitioned over that many), in worker processes when there are several."""
    from planner.planning import for_servers
    from sim.sweep_grid import Point
    from sim.sweep_workers import run_each

    out: dict[int, dict[str, Any]] = {}

    def finished(point: Point, result: dict[str, Any]) -> None:
        out[int(point.pid)] = result
        tick()

    todo = [Point(str(n), {}, 0, (base, for_servers(report, n), n)) for n in counts]
    run_each(todo, 1 if len(todo) <= 1 else min(workers or os.cpu_count() or 1, len(todo)),
             finished, verify_job)
    return out


def _rows(runs: dict[int, dict[str, Any]], gain: float,
          predicted: dict[int, float]) -> list[dict[str, Any]]:
    """Per simulated count: the model's total (``predicted``, rps), the simulation, the
    simulated gain over a server fewer and whether one more adds less than ``gain`` (None
    where the neighbour was not simulated)."""
    from planner.closedloop import adds_little

    rows = []
    for n in sorted(runs):
        rate, before, after = (runs.get(m, {}).get("sim_total_rps") for m in (n, n - 1, n + 1))
        rows.append({"servers": n, "pred_total_rps": predicted[n], **runs[n],
                     "sim_gain": rate / before - 1 if before else None,
                     "meets_rule": adds_little(rate, after, gain) if after is not None
                     else None})
    return rows


def _table(rows: list[dict[str, Any]], gain: float) -> Table:
    table = Table(title=f"netlock servers: one more must add >= {gain:.0%} (simulated)",
                  title_justify="left")
    for name in ("servers", "pred rps", "sim rps", "sim gain", "sim p99 us", "meets rule"):
        table.add_column(name, justify="right")
    for r in rows:
        table.add_row(str(r["servers"]), f"{r['pred_total_rps']:,.0f}",
                      f"{r['sim_total_rps']:,.0f}",
                      "-" if r["sim_gain"] is None else f"{r['sim_gain']:+.1%}",
                      f"{r['sim_p99_us']:.1f}",
                      {True: "yes", False: "no", None: "-"}[r["meets_rule"]])
    return table


def register(app: typer.Typer) -> None:
    """Add ``servers`` to ``app``."""
    app.command("servers")(servers_command)
