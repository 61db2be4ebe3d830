"""``netlock paper FIG``: run one of the paper's figures (or all) and write its CSV, PNG and
JSON; ``--json`` prints the figure's points and checks as one object."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

from netlock.cli.common import OUTPUT_PANEL, emit_json, guarded, json_option, parse_sets, set_option
from netlock.cli.console import console as make_console
from netlock.config import parse_sets_typed
from netlock.errors import ConfigError
from sim.core.budget import check_max_wall_s

from .experiment_file import SCALES
from .experiments import FIGURES, figure, names, run_figure, write_index
from .provenance import made

JsonOpt = json_option("progress and the checks go to")
SetOpt = set_option("manager.rdma.atomic_us=1.1")


@guarded
def paper_command(
    fig: Annotated[str, typer.Argument(
        metavar="FIG", help=f"figure to run: {', '.join(names())} or all")],
    scale: Annotated[str, typer.Option(
        "--scale", help="small (seconds, for tests) or full (the paper's ranges)")] = "small",
    out: Annotated[Path, typer.Option(
        "--out", help="folder for FIG.csv, FIG.png and FIG.json",
        rich_help_panel=OUTPUT_PANEL)] = Path("results/paper"),
    workers: Annotated[int | None, typer.Option(
        "--workers", help="local worker processes (default: the CPU count)", min=1)] = None,
    sets: SetOpt = None,
    max_wall_s: Annotated[float | None, typer.Option(
        "--max-wall-s", metavar="SECONDS", help="wall-clock budget of each point's run: a "
        "run still going after it ends the command, exit 3, that figure's files not "
        "written (figures finished before stay)")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Reproduce a figure of the NetLock paper's evaluation from configs/paper/FIG.yaml and
    check the qualitative outcome its text states (exit 1 if a check of a required figure
    fails; the figures the model does not reproduce yet report theirs).

    Example:

        netlock paper fig14b --scale small --out results/paper --json

        netlock paper all --scale full --workers 2

        netlock paper fig10 --set manager.rdma.atomic_us=1.1 --out results/atomic

    With --set, every point of the figure runs with those keys set last, and the command
    the files record says so.
    """
    if scale not in SCALES:
        raise ConfigError(f"--scale: expected one of {', '.join(SCALES)}, got {scale!r}")
    check_max_wall_s(max_wall_s)
    todo = names() if fig == "all" else [figure(fig).name]
    texts = parse_sets(sets)
    overrides = parse_sets_typed(texts)
    _writable(out)
    n_workers = workers or max(1, os.cpu_count() or 1)
    console = make_console()
    docs: list[dict[str, Any]] = []
    with Progress("[progress.description]{task.description}", BarColumn(),
                  MofNCompleteColumn(), TimeElapsedColumn(), console=console,
                  transient=as_json, disable=not console.is_terminal) as bar:
        for name in todo:
            task = bar.add_task(name, total=None)
            result = run_figure(name, scale, n_workers, out,
                                progress=lambda d, t, task=task: bar.update(
                                    task, completed=d, total=t),
                                overrides=overrides,
                                provenance=made(name, scale, n_workers, texts),
                                max_wall_s=max_wall_s)
            write_index(out)
            docs.append(result.to_json())
            for check in result.checks:
                mark = "[green]holds[/]" if check.holds else "[red]FAILS[/]"
                console.print(f"  {name}: {mark} {check.claim} ({check.detail})",
                              highlight=False)
    if as_json:
        emit_json(docs[0] if fig != "all" else {"figures": docs, "scale": scale,
                                                 "wall_s": sum(d["wall_s"] for d in docs)})
    else:
        for doc in docs:
            console.print(f"{doc['figure']}: {len(doc['points'])} points, "
                          f"{doc['wall_s']:.1f} s -> {out / (doc['figure'] + '.png')}")
    if not all(d["holds"] or not d["required"] for d in docs):
        raise typer.Exit(1)


def _writable(out: Path) -> None:
    """Refuse an ``--out`` that cannot hold the figures before any simulation runs."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"--out {out}: cannot create the folder "
                          f"({exc.strerror or exc})") from None
    if not os.access(out, os.W_OK):
        raise ConfigError(f"--out {out}: the folder is not writable")


def register(app: typer.Typer) -> None:
    app.command("paper")(paper_command)


__all__ = ["FIGURES", "register"]
