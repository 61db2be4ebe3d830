"""``netlock netstore``: one run of the NetStore experiment (Active'17, section 4.1)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from netlock.cli.common import emit_json, guarded, json_option, parse_sets, set_option
from netlock.cli.console import console, progress_bar
from sim.netstore.config import load_netstore_config
from sim.netstore.netstore_run import simulate_netstore

SetOpt = set_option("background.max_kb=12000")
JsonOpt = json_option("progress goes to")


@guarded
def netstore_command(
    config: Annotated[Path, typer.Argument(help="NetStore experiment config (YAML)")],
    sets: SetOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Run NetStore's controller (2PL lock server choosing each operation's path) on a
    flow-level fat-tree with background traffic, and report transaction completion times.

    Example:

        netlock netstore configs/netstore-lbp.yaml --set background.max_kb=12000 --json

        netlock netstore configs/netstore-ecmp.yaml --set sim.duration_s=10

    The JSON keys are in docs/formats.md ("NetStore result").
    """
    cfg = load_netstore_config(config, parse_sets(sets))
    end = cfg.sim.warmup_s + cfg.sim.duration_s + cfg.sim.drain_s
    with progress_bar(f"simulating NetStore ({cfg.netstore.routing})", end, unit="s",
                      transient=as_json) as update:
        summary = simulate_netstore(cfg, progress=lambda now, _end: update(now))
    if as_json:
        emit_json(summary)
    else:
        _print_summary(summary)


def _print_summary(summary: dict[str, Any]) -> None:
    table = Table(title="NetStore", show_header=False)
    txn, bg = summary["txn_completion_ms"], summary["background"]
    rows = [
        ("routing", summary["routing"]),
        ("simulated", f"{summary['sim_time_s']:.3g} s ({summary['measured_s']:g} s measured)"),
        ("transactions", f"{summary['transactions']:,} ({summary['tps']:,.0f} /s, "
                         f"{summary['unfinished']} unfinished)"),
        ("completion", f"mean {txn['mean']:.4g} ms, p50 {txn['p50']:.4g} ms, "
                       f"p99 {txn['p99']:.4g} ms"),
        ("background", f"{bg['flows']:,} flows, mean {bg['completion_ms_mean']:.4g} ms"),
        ("core utilisation", f"{summary['utilisation']['agg_core']:.1%}"),
        ("violations", str(summary["violations"])),
        ("stalled", str(summary["stalled"])),
    ]
    for name, value in rows:
        table.add_row(name, value)
    console(stderr=False).print(table)


def register(app: typer.Typer) -> None:
    """Add ``netstore`` to the ``netlock`` app."""
    app.command("netstore")(netstore_command)
