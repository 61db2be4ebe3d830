"""The command contributed by ``planner``: ``netlock plan``.

Thin shells: parse, call the library, print. The library (numba, pyarrow, matplotlib) is
imported inside the commands so that ``netlock --help`` stays fast.
"""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from netlock.cli.common import (
    CONFIG_PANEL,
    OUTPUT_PANEL,
    distinct_outputs,
    emit_json,
    guarded,
    json_option,
    parse_sets,
    set_option,
    stderr,
)
from netlock.cli.console import console as make_console
from netlock.cli.console import status
from netlock.errors import ConfigError, PlanError

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from netlock.geometry import SwitchGeometry
    from netlock.plan import Plan
    from planner.coarse import CoarseOption
    from planner.planning import PlanOptions, PlanReport

ConfigOpt = Annotated[Path | None, typer.Option(
    "--config", help="config file (YAML); flags given on the command line win",
    rich_help_panel=CONFIG_PANEL)]
SetOpt = set_option("switch.slots=5000")
JsonOpt = json_option("tables and warnings go to")
LARGE_TRACE_BYTES = 20_000_000
"""Trace file size from which ``plan`` shows status lines while it reads and plans."""


def _coarse(text: str | None) -> int | str | None:
    if text is None or text == "auto":
        return text
    try:
        return int(text)
    except ValueError:
        raise ConfigError(f"--coarse: expected a whole number of locks or auto, "
                          f"got {text!r}") from None


TraceArg = Annotated[Path, typer.Argument(help="workload trace, .csv or .parquet (columns: "
                                          "docs/formats.md, Workload trace)")]
OutOpt = Annotated[Path, typer.Option("--out", help="plan file to write (YAML; a Parquet side "
                                      "file is added for large plans)",
                                      rich_help_panel=OUTPUT_PANEL)]
SlotsOpt = Annotated[int | None, typer.Option(
    "--slots", help="switch slots the plan may use (default: switch.slots, else 100000)")]
ServerRateOpt = Annotated[float | None, typer.Option(
    "--server-rate", help="requests/s one lock server completes (default: servers.rate_rps, "
    "else 18e6)")]
PolicyOpt = Annotated[str | None, typer.Option(
    "--policy", help="knapsack (Algorithm 3), random, or even (an equal share "
    "for every lock) (default: policy.allocation)")]
ContentionOpt = Annotated[str | None, typer.Option(
    "--contention", help="c_i statistic of measured concurrency: max, p999, p99, p95, ... "
    "(default: policy.contention, else max)")]
CoarseOpt = Annotated[str | None, typer.Option(
    "--coarse", help="locks per coarse-grained lock (uniform workloads), or auto to pick the "
    "best (default: policy.coarse_group, else 1)")]
HoldOpt = Annotated[float | None, typer.Option(
    "--hold-us", help="hold time T for the S/T bound, us (default: network.rtt_us + "
    "clients.tx_us + clients.rx_us + workload.think_time_us, else the trace's mean)")]
TraceRatesOpt = Annotated[bool, typer.Option(
    "--trace-rates", help="keep the trace's r_i as they are, for a trace recorded from a "
    "running rack (its requests already waited); by default --config scales a demand trace's "
    "r_i to what the config's clients offer (planner/offered.py)")]
PrioritiesOpt = Annotated[int | None, typer.Option(
    "--priorities", help="priority classes of the switch (default: switch.priorities, else 1)")]
SeedOpt = Annotated[int | None, typer.Option("--seed", help="seed of the random policy "
                                             "(default: sim.seed, else 0)")]
LiveOpt = Annotated[Path | None, typer.Option(
    "--live", help="the plan installed now: keep its regions in place where possible and "
    "print the migration to the new plan", rich_help_panel=OUTPUT_PANEL)]
PlotOpt = Annotated[Path | None, typer.Option(
    "--plot", help="also draw the layout and load split to this figure (.png, .pdf or "
    ".svg, by its extension)",
    rich_help_panel=OUTPUT_PANEL)]


@guarded
def plan_command(
    trace: TraceArg,
    out: OutOpt,
    slots: SlotsOpt = None,
    server_rate: ServerRateOpt = None,
    policy: PolicyOpt = None,
    contention: ContentionOpt = None,
    coarse: CoarseOpt = None,
    hold_us: HoldOpt = None,
    trace_rates: TraceRatesOpt = False,
    priorities: PrioritiesOpt = None,
    seed: SeedOpt = None,
    live: LiveOpt = None,
    plot: PlotOpt = None,
    config: ConfigOpt = None,
    sets: SetOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Allocate switch slots to locks (Algorithm 3) and size the lock servers.

    Examples:

        netlock trace gen micro --out trace.parquet --set workload.zipf=0.99

        netlock plan trace.parquet --slots 5000 --out plan.yaml --plot plan.png

        netlock plan tpcc.csv --config configs/tpcc-low.yaml --out p.yaml --json

        netlock plan new.parquet --slots 5000 --live plan.yaml --out plan2.yaml

    The trace's columns and the plan file are in docs/formats.md. A bad trace
    prints one line naming its file, row and column, exits 2 and writes nothing.
    """
    from dataclasses import replace

    from netlock.memory import Need, check_fits
    from netlock.plan_io import entries_path, load_plan
    from planner import settings
    from planner.placement import SLOT_BYTES

    inputs = {"TRACE": trace, "--live": live, "--config": config}
    distinct_outputs({"--out": out, "--out (its entries side file)": entries_path(out),
                      "--plot": plot}, inputs)
    if plot is not None:
        from netlock.plotstyle import figure_format

        figure_format(plot)

    cfg = settings.optional_config(config, parse_sets(sets))
    geometry = settings.plan_geometry(cfg, slots, priorities)
    total = geometry.total_slots
    check_fits([Need(f"--slots={slots}" if cfg is None else f"switch.arrays ({total} slots)",
                     "the plan's per-slot arrays", total * SLOT_BYTES)])
    group = _coarse(coarse)
    options = settings.plan_options(
        cfg, geometry, slots=slots, server_rate_rps=server_rate, policy=policy,
        contention=contention, seed=seed, hold_time_us=hold_us,
        coarse_group=group if isinstance(group, int) else None)
    if trace_rates:
        options = replace(options, handover_us=None)
    found = options.problem(geometry)
    if found:
        raise ConfigError(found)
    live_plan = load_plan(live) if live is not None else None
    console = make_console(stderr=as_json)
    report = _planned(trace, geometry, options, group == "auto", live_plan, str(live),
                      console)
    if plot is not None:
        from planner.plot import plot_plan

        plot_plan(report, plot)
    _save(report, out)
    _print(report, console, out, plot, as_json)


def _planned(trace: Path, geometry: SwitchGeometry, options: PlanOptions, auto_group: bool,
             live: Plan | None, live_source: str, console: Console) -> PlanReport:
    """Read ``trace`` and plan it (``auto_group``: with the best coarse-lock group, whose
    table is printed), with status lines when the trace is large."""
    from dataclasses import replace

    from netlock.trace import read_trace, trace_digest
    from planner.coarse import best_group, score_groups
    from planner.planning import make_plan

    large = trace.is_file() and trace.stat().st_size >= LARGE_TRACE_BYTES
    with status(f"reading {trace}", terminal_only=True) if large else nullcontext():
        data = read_trace(trace)
    if auto_group:
        scored = score_groups(data, geometry, options.slots, options.server_rate_rps,
                              options.contention)
        chosen = best_group(scored)
        console.print(_coarse_table(scored, chosen.group))
        options = replace(options, coarse_group=chosen.group)
    with status(f"planning {len(data):,} requests", terminal_only=True) if large \
            else nullcontext():
        return make_plan(data, geometry, options, live, trace_digest(trace),
                         live_source=live_source)


def _print(report: PlanReport, console: Console, out: Path, plot: Path | None,
           as_json: bool) -> None:
    """The plan's report, or with ``as_json`` its summary on stdout and the rest on stderr."""
    from planner.report import migration_table, render

    if as_json:
        for warning in report.warnings:
            stderr(f"netlock: warning: {warning}")
        if report.migration is not None:
            console.print(migration_table(report.migration))
        emit_json(report.plan.summary.to_dict())
        return
    console.print(render(report))
    console.print(f"wrote {out}" + (f" and {plot}" if plot else ""))


def _save(report: PlanReport, out: Path) -> None:
    from netlock.plan_io import save_plan

    try:
        save_plan(report.plan, out)
    except OSError as exc:
        raise PlanError(f"{out}: cannot write: {exc.strerror or exc}") from None


def _coarse_table(scored: list[CoarseOption], chosen: int) -> Table:
    from rich.table import Table

    table = Table(title="Coarse-grained locks (--coarse auto)", title_justify="left")
    for name in ("locks per coarse lock", "coarse locks", "switch rps", "server rps",
                 "servers"):
        table.add_column(name, justify="right")
    for option in scored:
        mark = " *" if option.group == chosen else ""
        table.add_row(f"{option.group}{mark}", f"{option.locks:,}", f"{option.switch_rps:,.0f}",
                      f"{option.server_rps:,.0f}", str(option.servers_needed))
    return table


def register(app: typer.Typer) -> None:
    """Add ``plan`` to ``app``."""
    app.command("plan")(plan_command)
