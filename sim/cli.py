"""Commands contributed by ``sim``: ``netlock sim`` (one run), ``netlock sweep`` (a grid),
``netlock plot`` (the figures of one run), ``netlock paper`` (a figure of the paper) and
``netlock trace gen`` (a synthetic trace, :mod:`sim.trace_cli`)."""

from __future__ import annotations

import os
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn
from rich.table import Table

from netlock.cli.common import (
    CONFIG_PANEL,
    OUTPUT_PANEL,
    emit_json,
    guarded,
    json_option,
    parse_sets,
    set_option,
)
from netlock.cli.console import console, progress_bar, status
from netlock.config import Config, load_config, override_config
from netlock.errors import ConfigError
from netlock.memory import check_fits
from sim.footprint import run_needs
from sim.plots import plot_sweep
from sim.run import run_engine
from sim.sweep import claim_out, grid_points, parse_grid, run_sweep


class EngineChoice(str, Enum):
    simpy = "simpy"
    fast = "fast"


SetOpt = set_option("workload.think_time_us=10")
JsonOpt = json_option("progress and logs go to")
EngineOpt = Annotated[EngineChoice | None, typer.Option(
    "--engine", help="simulation engine (default: sim.engine of the config)",
    rich_help_panel=CONFIG_PANEL)]
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
CommonSeedOpt = Annotated[bool, typer.Option(
    "--common-seed", help="run every point with the base sim.seed instead of a seed derived "
    "from the point's values")]


def _engine(config_engine: str, flag: EngineChoice | None) -> str:
    engine = flag.value if flag is not None else config_engine
    if engine not in {e.value for e in EngineChoice}:
        raise ConfigError(f"sim.engine: the {engine!r} engine is not available in this "
                          f"version (available: {', '.join(e.value for e in EngineChoice)})")
    return engine


@guarded
def sim_command(
    config: Annotated[Path, typer.Argument(help="experiment config (YAML)")],
    engine: EngineOpt = None,
    sets: SetOpt = None,
    as_json: JsonOpt = False,
    out: Annotated[Path | None, typer.Option(
        "--out", help="folder for summary.json, config.json and the requests, transactions "
        "and time-series tables", rich_help_panel=OUTPUT_PANEL)] = None,
    fmt: Annotated[str, typer.Option(
        "--format", help="table format under --out: parquet or csv",
        rich_help_panel=OUTPUT_PANEL)] = "parquet",
) -> None:
    """Run one simulation of a NetLock rack and report throughput, latency and safety.

    Example:

        netlock sim configs/micro-exclusive.yaml --set workload.think_time_us=10 --json

        netlock sim configs/tpcc-low.yaml --engine fast --set sim.duration_s=1

    The run lasts sim.warmup_s, then the measured sim.duration_s. The JSON keys and the
    tables under --out are in docs/formats.md ("Simulation result"); netlock plot DIR draws
    them.
    """
    if fmt not in ("parquet", "csv"):
        raise ConfigError(f"--format: must be parquet or csv, got {fmt!r}")
    cfg = load_config(config, parse_sets(sets))
    chosen = _engine(cfg.sim.engine, engine)
    check_fits(run_needs(cfg, chosen))
    if chosen == "fast":
        check_fast_engine_models([cfg])
        compile_fast_engine()
    with progress_bar(f"simulating ({chosen} engine)", cfg.sim.end_s * 1e6, unit="ms",
                      scale=1e3, transient=as_json) as update:
        result = run_engine(cfg, chosen, progress=lambda now_us, _end: update(now_us))
    if out is not None:
        result.write(out, fmt)
    if as_json:
        emit_json(result.to_json())
    else:
        _print_summary(result.summary)


def check_fast_engine_models(configs: list[Config]) -> None:
    """Refuse ``configs`` the fast engine does not model before anything is compiled or
    written."""
    from sim.fast.model import check_supported

    for config in configs:
        check_supported(config)


def compile_fast_engine() -> None:
    """Compile the fast engine into numba's cache now if it is not there, saying so (the
    first run on a machine sits minutes in the compiler; later ones load it in a second)."""
    from sim.fast._jit import cache_is_cold

    if not cache_is_cold():
        return
    from sim.fast.warm import warm

    with status("compiling the fast engine into numba's cache: once per machine (2-3 "
                "minutes); later runs load it in about a second"):
        seconds = warm()
    console().print(f"fast engine compiled in {seconds:.0f} s")


def _print_summary(summary: dict[str, Any]) -> None:
    table = Table(title="simulation", show_header=False)
    lat = summary["latency_us"]
    rows = [
        ("engine", summary["engine"]),
        ("simulated", f"{summary['sim_time_s']:g} s ({summary['measured_s']:g} s measured)"),
        ("granted", f"{summary['granted']:,}"),
        ("throughput", f"{summary['throughput_rps']:,.0f} requests/s"),
        ("transactions", f"{summary['tps']:,.0f} /s"),
        ("switch share", f"{summary['switch_share']:.1%}"),
        ("latency (us)", f"mean {lat['mean']:.2f}  p50 {lat['p50']:.2f}  p99 {lat['p99']:.2f}"
                         f"  p99.9 {lat['p999']:.2f}"),
        ("retries", f"{summary['retries']:,}"),
        ("violations", f"{summary['violations']}"),
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
    engine: EngineOpt = None,
    sets: SetOpt = None,
    resume: ResumeOpt = False,
    force: ForceOpt = False,
    common_seed: CommonSeedOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Run a grid of simulations in parallel, then write a results table and plots.

    Example:

        netlock sweep configs/memory-vs-think-time.yaml --grid switch.slots=500,1000,2000
        --grid workload.think_time_us=0,10,100 --out results/fig14a --workers 2 --engine fast

    What --out holds: docs/formats.md ("Sweep folder").
    """
    base = load_config(config, parse_sets(sets))
    chosen = _engine(base.sim.engine, engine)
    if chosen != base.sim.engine:
        base = override_config(base, {"sim.engine": chosen})
    if scheduler is not None and "://" not in scheduler:
        raise ConfigError(f"--scheduler {scheduler!r}: expected a scheduler address such as "
                          f"tcp://HOST:PORT")
    axes = parse_grid(grid)
    points = grid_points(base, axes, common_seed)
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
                  MofNCompleteColumn(), TimeElapsedColumn(), console=log,
                  transient=as_json, disable=not log.is_terminal) as bar:
        task = bar.add_task("sweep points", total=len(points))
        table = run_sweep(points, out, n_workers, resume,
                          progress=lambda done, total: bar.update(task, completed=done),
                          scheduler=scheduler)
    plots = plot_sweep(table, [a.key for a in axes], out)
    if as_json:
        emit_json({"points": len(points), "out": str(out),
                   "results": str(out / "results.parquet"),
                   "plots": [str(p) for p in plots]})
    else:
        log.print(f"{len(points)} points -> {out / 'results.csv'}, {len(plots)} plots")


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
    """Add ``sim``, ``sweep``, ``plot``, ``paper``, ``trace`` and ``capacity`` to the
    ``netlock`` app."""
    from sim.capacity_cli import register as register_capacity
    from sim.paper.cli import register as register_paper
    from sim.trace_cli import register as register_trace

    app.command("sim")(sim_command)
    app.command("sweep")(sweep_command)
    app.command("plot")(plot_command)
    register_paper(app)
    register_trace(app)
    register_capacity(app)
