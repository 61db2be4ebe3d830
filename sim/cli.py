"""Commands contributed by ``sim``: ``netlock sim`` (one run), ``netlock sweep`` (a grid),
``netlock plot`` (the figures of one run), ``netlock paper`` (a figure of the paper) and
``netlock trace gen`` (a synthetic trace, :mod:`sim.trace_cli`)."""

from __future__ import annotations

import os
import time
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from netlock.cli.common import (
    CONFIG_PANEL,
    OUTPUT_PANEL,
    emit_json,
    guarded,
    json_option,
    parse_sets,
    set_option,
    stderr,
)
from netlock.cli.console import console, progress_bar, status
from netlock.config import Config, load_config, override_config
from netlock.errors import ConfigError
from netlock.memory import check_fits
from sim.core.budget import EXIT_CODE as BUDGET_EXIT
from sim.core.budget import check_max_wall_s, stopped_line
from sim.footprint import run_needs
from sim.run_engine import run_engine
from sim.sweep import run_sweep
from sim.sweep_folder import Provenance, claim_out
from sim.sweep_grid import grid_points, parse_grid


class EngineChoice(str, Enum):
    auto = "auto"
    simpy = "simpy"
    fast = "fast"


SetOpt = set_option("workload.think_time_us=10")
JsonOpt = json_option("progress and logs go to")
EngineOpt = Annotated[EngineChoice, typer.Option(
    "--engine", help="simulation engine: auto picks the compiled fast engine when it models "
    "the config (NetLock without failures) and says so, else simpy; simpy or fast force one "
    "(sim.engine is what the Python API's run_engine uses)", rich_help_panel=CONFIG_PANEL)]
GridOpt = Annotated[list[str], typer.Option(
    "--grid", metavar="KEY=V1,V2,...", help="a grid axis: a dotted key and its values "
    "(repeatable; the grid is their product)")]
SweepOutOpt = Annotated[Path, typer.Option(
    "--out", help="folder for results.parquet/.csv, the PNG plots and points/",
    rich_help_panel=OUTPUT_PANEL)]
WorkersOpt = Annotated[int | None, typer.Option(
    "--workers", help="local worker processes (default: the CPU count)", min=1)]
SchedulerOpt = Annotated[str | None, typer.Option(
    "--scheduler", metavar="tcp://HOST:PORT", help="run the points on the dask.distributed "
    "cluster of this scheduler instead of local processes")]
ResumeOpt = Annotated[bool, typer.Option(
    "--resume", help="continue the sweep under --out: skip the points already finished")]
ForceOpt = Annotated[bool, typer.Option(
    "--force", help="replace an earlier sweep under --out (without it, or --resume, an --out "
    "holding one is refused)")]
SeedsOpt = Annotated[int, typer.Option(
    "--seeds", min=1, help="runs per point, each with its own seed; the table gives each "
    "metric's mean and 95 % confidence half-width (<metric>_ci95), the plots error bars")]
MaxWallOpt = Annotated[float | None, typer.Option(
    "--max-wall-s", metavar="SECONDS", help="wall-clock budget of each run: a run still "
    "going after it stops, exit 3 (sim: its result up to there, marked incomplete; sweep, "
    "paper: nothing of that run kept, finished points stay for --resume)")]
CommonSeedOpt = Annotated[bool, typer.Option(
    "--common-seed", help="run every point with the base sim.seed instead of a seed derived "
    "from the point's values")]


def _engine(configs: list[Config], flag: EngineChoice) -> tuple[str, str]:
    """The engine to run ``configs`` on and a line saying why: the flag's, or for ``auto``
    the fast engine when it models every config, else simpy (printed after the run, so that
    a bad input found while setting it up stays the only line; the progress bar names the
    engine meanwhile)."""
    if flag is not EngineChoice.auto:
        return flag.value, ""
    from sim.fast.fast_model import check_supported

    try:
        for config in configs:
            check_supported(config)
    except ConfigError as exc:
        reason = str(exc).split(": ", 2)[-1].split(";")[0]
        return "simpy", f"engine: simpy (auto: {reason})"
    return "fast", ("engine: fast (auto: the compiled engine models this config; --engine "
                    "simpy for the event-by-event one)")


@guarded
def sim_command(
    config: Annotated[Path, typer.Argument(help="experiment config (YAML)")],
    engine: EngineOpt = EngineChoice.auto,
    sets: SetOpt = None,
    as_json: JsonOpt = False,
    out: Annotated[Path | None, typer.Option(
        "--out", help="folder for summary.json, config.json and the requests, transactions "
        "and time-series tables", rich_help_panel=OUTPUT_PANEL)] = None,
    fmt: Annotated[str, typer.Option(
        "--format", help="table format under --out: parquet or csv",
        rich_help_panel=OUTPUT_PANEL)] = "parquet",
    max_wall_s: MaxWallOpt = None,
) -> None:
    """Run one simulation of a NetLock rack and report throughput, latency and safety.

    Example:

        netlock sim configs/micro-exclusive.yaml --set workload.think_time_us=10 --json

        netlock sim configs/tpcc-low.yaml --engine fast --set sim.duration_s=1

        netlock sim configs/tpcc-low.yaml --max-wall-s 600 --out run

    The run lasts sim.warmup_s, then the measured sim.duration_s. The JSON keys and the
    tables under --out are in docs/formats.md ("Simulation result"); netlock plot DIR draws
    them. A run that --max-wall-s stops is reported up to where it got, its summary's
    "incomplete" says so, and the command exits 3.
    """
    if fmt not in ("parquet", "csv"):
        raise ConfigError(f"--format: must be parquet or csv, got {fmt!r}")
    check_max_wall_s(max_wall_s)
    cfg = load_config(config, parse_sets(sets))
    chosen, why = _engine([cfg], engine)
    check_fits(run_needs(cfg, chosen))
    if cfg.policy.plan:
        from netlock.plan_io import load_plan
        from sim.planfit import plan_fit_warning

        warning = plan_fit_warning(cfg, load_plan(cfg.policy.plan))
        if warning:
            console().print(f"warning: {warning}")
    if chosen == "fast":
        check_fast_engine_models([cfg])
        compile_fast_engine()
    with progress_bar(f"simulating ({chosen} engine)", cfg.sim.end_s * 1e6, unit="ms",
                      scale=1e3, transient=as_json) as update:
        result = run_engine(cfg, chosen, progress=lambda now_us, _end: update(now_us),
                            max_wall_s=max_wall_s)
    if out is not None:
        result.write(out, fmt)
    if why:
        console().print(why)
    if as_json:
        emit_json(result.to_json())
    else:
        _print_summary(result.summary)
    if result.summary["incomplete"]:
        stderr(stopped_line(result.summary))
        raise typer.Exit(BUDGET_EXIT)


def check_fast_engine_models(configs: list[Config]) -> None:
    """Refuse ``configs`` the fast engine does not model before anything is compiled or
    written."""
    from sim.fast.fast_model import check_supported

    for config in configs:
        check_supported(config)


def compile_fast_engine() -> None:
    """Compile the fast engine into numba's cache now if it is not there, saying so (the
    first run on a machine sits minutes in the compiler; later ones load it in a second)."""
    from sim.fast._fast_jit import cache_is_cold

    if not cache_is_cold():
        return
    from sim.fast.warm import warm

    log = console()
    with Progress(TextColumn("compiling the fast engine into numba's cache: once per machine "
                             "(several CPU minutes); later runs load it in about a second"),
                  TimeElapsedColumn(), console=log, transient=True,
                  disable=not log.is_terminal) as bar:
        if not log.is_terminal:
            log.print("compiling the fast engine into numba's cache: once per machine "
                      "(several CPU minutes) ...")
        bar.add_task("compile", total=None)
        seconds = warm()
    log.print(f"fast engine compiled in {seconds:.0f} s")


ENDED = {"duration": "ended at sim.duration_s",
         "trace": "ended when the replayed trace ran out"}
"""The summary's ``ended`` in words."""


def _print_summary(summary: dict[str, Any]) -> None:
    table = Table(title="simulation", show_header=False)
    lat = summary["latency_us"]
    latency = ("none granted" if lat["p50"] is None else
               f"mean {lat['mean']:.2f}  p50 {lat['p50']:.2f}  p99 {lat['p99']:.2f}"
               f"  p99.9 {lat['p999']:.2f}")
    rows = [
        ("engine", summary["engine"]),
        ("simulated", f"{summary['sim_time_s']:g} s ({summary['measured_s']:g} s measured; "
                      f"{ENDED[summary['ended']]})"),
        ("granted", f"{summary['granted']:,}"),
        ("throughput", f"{summary['throughput_rps']:,.0f} requests/s"),
        ("transactions", f"{summary['tps']:,.0f} /s"),
        ("switch share", f"{summary['switch_share']:.1%}"),
        ("latency (us)", latency),
        ("retries", f"{summary['retries']:,}"),
        ("violations", f"{summary['violations']}"),
        ("stalled", f"{summary['stalled']:,} waits past the stall bound"),
        ("wall", f"{summary['wall_s']:.2f} s, {summary['events']:,} events"),
    ]
    for name, value in rows:
        table.add_row(name, str(value))
    console(stderr=False).print(table)


@guarded
def sweep_command(
    config: Annotated[Path, typer.Argument(help="base experiment config (YAML)")],
    grid: GridOpt,
    out: SweepOutOpt,
    workers: WorkersOpt = None,
    scheduler: SchedulerOpt = None,
    engine: EngineOpt = EngineChoice.auto,
    sets: SetOpt = None,
    resume: ResumeOpt = False,
    force: ForceOpt = False,
    seeds: SeedsOpt = 1,
    common_seed: CommonSeedOpt = False,
    max_wall_s: MaxWallOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Run a grid of simulations in parallel, then write a results table and plots.

    Example:

        netlock sweep configs/micro-shared.yaml --grid switch.slots=0,1000 --out sw

        netlock sweep configs/demo.yaml --grid workload.zipf=0,0.99 --seeds 3 --out z

    Every point records its config and the sweep's provenance (engine, durations, --set
    overrides, config file hash); --resume refuses a folder swept with other settings.
    What --out holds: docs/formats.md ("Sweep folder").
    """
    check_max_wall_s(max_wall_s)
    overrides = parse_sets(sets)
    base = load_config(config, overrides)
    if scheduler is not None and "://" not in scheduler:
        raise ConfigError(f"--scheduler {scheduler!r}: expected a scheduler address such as "
                          f"tcp://HOST:PORT")
    axes = parse_grid(grid)
    points = grid_points(base, axes, common_seed, seeds)
    chosen, why = _engine([point.config for point in points], engine)
    if chosen != base.sim.engine:
        base = override_config(base, {"sim.engine": chosen})
        points = grid_points(base, axes, common_seed, seeds)
    for point in points:
        check_fits(run_needs(point.config), prefix=f"--grid {point.values}: ")
    if chosen == "fast":
        check_fast_engine_models([point.config for point in points])
    claim_out(out, resume, force)
    n_workers = workers or max(1, os.cpu_count() or 1)
    if chosen == "fast" and scheduler is None:
        compile_fast_engine()
    log = console()
    with Progress("[progress.description]{task.description}", BarColumn(),
                  MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("ETA"),
                  TimeRemainingColumn(), console=log, transient=as_json,
                  disable=not log.is_terminal) as bar:
        task = bar.add_task(f"sweep runs ({chosen} engine)", total=len(points))

        started = time.monotonic()
        first: list[int] = []

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done)
            if not first:
                first.append(done)
            elif not log.is_terminal:
                ran = done - first[0]
                left = (time.monotonic() - started) / ran * (total - done) if ran else 0.0
                log.print(f"sweep: {done}/{total} runs done, ETA {left:.0f} s")

        running: dict[str, Any] = {}
        ended: set[str] = set()

        def point_progress(point: Any, now_us: float, end_us: float) -> None:
            """One line per running point (several with --workers), gone when it is done."""
            if point.pid in ended:
                return
            if point.pid not in running:
                values = ", ".join(f"{k}={v}" for k, v in point.values.items())
                running[point.pid] = bar.add_task(f"  point {values} (simulated ms)",
                                                  total=end_us / 1e3)
            if now_us >= end_us:
                ended.add(point.pid)
                bar.remove_task(running.pop(point.pid))
            else:
                bar.update(running[point.pid], completed=now_us / 1e3)

        table = run_sweep(points, out, n_workers, resume, progress=progress,
                          scheduler=scheduler, provenance=Provenance.of(config, overrides),
                          point_progress=point_progress, max_wall_s=max_wall_s)
    if why:
        log.print(why)
    from sim.plots import plot_sweep

    plots = plot_sweep(table, [a.key for a in axes], out,
                       caption=f"{config.name}, {chosen} engine, "
                               f"{base.sim.duration_s * 1e3:g} ms measured"
                               + (f", mean of {seeds} seeds (95 % CI)" if seeds > 1 else ""))
    if as_json:
        emit_json({"points": len(table), "runs": len(points), "engine": chosen,
                   "out": str(out),
                   "results": str(out / "results.parquet"),
                   "plots": [str(p) for p in plots]})
    else:
        log.print(f"{len(table)} points ({len(points)} runs) -> {out / 'results.csv'}, "
                  f"{len(plots)} plots")


@guarded
def plot_command(
    result_dir: Annotated[Path, typer.Argument(
        metavar="RESULT_DIR", help="folder written by netlock sim --out")],
    out: Annotated[Path | None, typer.Option(
        "--out", help="folder for the PNGs (default: RESULT_DIR)",
        rich_help_panel=OUTPUT_PANEL)] = None,
    as_json: JsonOpt = False,
) -> None:
    """Plot a simulation run: throughput over time, the latency CDF, and the split of
    grants between the switch and the lock servers (timeseries.png, latency_cdf.png,
    split.png).

    Example:

        netlock sim configs/micro-exclusive.yaml --out run && netlock plot run
    """
    from sim.runplots import load_run, plot_run

    found = load_run(result_dir)
    with status(f"plotting {result_dir}"):
        written = plot_run(found, out)
    if as_json:
        emit_json({"plots": [str(p) for p in written]})
    else:
        console().print(f"wrote {', '.join(str(p) for p in written)}")


def register(app: typer.Typer) -> None:
    """Add ``sim``, ``sweep`` and ``plot`` to the ``netlock`` app (``paper``, ``trace`` and
    ``capacity`` register from their own modules: ``netlock sim`` then spares importing
    the paper's figures, matplotlib among them)."""
    app.command("sim")(sim_command)
    app.command("sweep")(sweep_command)
    app.command("plot")(plot_command)
