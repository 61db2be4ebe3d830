"""``netlock bench``: every registered benchmark beside its baseline, medians, one table."""

from __future__ import annotations

import time
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from netlock.bench import BenchResult, discover
from netlock.cli.common import emit_json, guarded
from netlock.cli.console import console, status
from netlock.errors import NetlockError

SUITE_NOTES = {"sim-fast": " (the first run on a machine compiles the fast engine first: "
                          "2-3 minutes, once)"}


def _fmt(value: float | None) -> str:
    if value is None:
        return "-"
    if abs(value) >= 1e5:
        return f"{value:,.0f}"
    return f"{value:.4g}"


def render(results: list[BenchResult]) -> Table:
    table = Table(title="netlock bench (medians)")
    for col in ("suite", "benchmark", "value", "unit", "baseline", "baseline value",
                "speedup", "target", "ok"):
        table.add_column(col, justify="right" if col in {"value", "baseline value",
                                                          "speedup", "target"} else "left")
    for r in results:
        speed = r.speedup
        table.add_row(r.suite, r.name, _fmt(r.value), r.unit, r.baseline_name or "-",
                      _fmt(r.baseline_value), f"{speed:.1f}x" if speed else "-",
                      ("≥ " if r.higher_is_better else "≤ ") + _fmt(r.target) if r.target else "-",
                      "yes" if r.ok else f"NO {r.note}".strip())
    return table


def register(app: typer.Typer) -> None:
    @app.command("bench")
    @guarded
    def bench(
        quick: Annotated[bool, typer.Option(
            "--quick", help="Smaller inputs, fewer repeats.")] = False,
        only: Annotated[list[str] | None, typer.Option(
            "--only", help="Run only these suites (repeatable, or comma-separated).")] = None,
        json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
        check: Annotated[bool, typer.Option(
            "--check", help="Exit 1 when a target is missed or a consistency check fails.")]
        = False,
    ) -> None:
        """Run the performance benchmarks, each beside its baseline in the same run.

        Misses (a target not reached, a consistency check such as the engines agreeing that
        fails) are marked in the table and named on stderr; with --check they also make the
        exit status 1 (timings depend on the machine and its load).

        Example: netlock bench --quick --only sim-fast,sim
        """
        suites = discover()
        only = [name for value in only or [] for name in value.split(",") if name]
        unknown = sorted(set(only) - set(suites))
        if unknown:
            raise NetlockError(f"--only {unknown[0]}: no such benchmark suite "
                               f"(have: {', '.join(suites) or 'none'})")
        results: list[BenchResult] = []
        log = console()
        for name, run in suites.items():
            if only and name not in only:
                continue
            t0 = time.perf_counter()
            with status(f"bench {name}: running{SUITE_NOTES.get(name, '')} ...", log):
                found = run(quick)
            log.print(f"bench {name}: {len(found)} results in {time.perf_counter() - t0:.0f} s")
            results.extend(found)
        failed = [r for r in results if not r.ok]
        if json_out:
            emit_json({"quick": quick, "ok": not failed,
                       "results": [r.to_dict() for r in results]})
        else:
            out = console(stderr=False)
            Console(width=max(out.width, 150), soft_wrap=out.soft_wrap).print(render(results))
        if failed:
            typer.echo(f"netlock bench: {len(failed)} benchmark(s) missed their target or "
                       f"failed a check: {', '.join(r.suite + '/' + r.name for r in failed)}",
                       err=True)
            if check:
                raise typer.Exit(1)
