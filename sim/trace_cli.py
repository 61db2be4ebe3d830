"""The command contributed by the workload generators: ``netlock trace gen``.

A thin shell over :mod:`sim.workloads.tracegen` (rows) and :mod:`netlock.trace` (the file);
the library is imported inside the command so that ``netlock --help`` stays fast.
"""

from __future__ import annotations

from contextlib import nullcontext
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from netlock.cli.common import OUTPUT_PANEL, emit_json, guarded, parse_sets
from netlock.cli.console import status
from netlock.config.schema import MAX_SEED
from planner.cli import ConfigOpt, JsonOpt, SetOpt

LARGE_TRACE = 1_000_000
"""Rows from which ``trace gen`` shows a status line (about a second of work and more)."""


class WorkloadKind(str, Enum):
    micro = "micro"
    tpcc = "tpcc"


class TpccGenerator(str, Enum):
    dslr = "dslr"
    dslr_uniform = "dslr_uniform"
    sketch = "sketch"


@guarded
def trace_gen_command(
    kind: Annotated[WorkloadKind, typer.Argument(help="micro (microbenchmark) or tpcc "
                                                 "(TPC-C, see --generator)")],
    out: Annotated[Path, typer.Option("--out", help="trace file to write, .csv or .parquet",
                                      rich_help_panel=OUTPUT_PANEL)],
    requests: Annotated[int, typer.Option("--requests", min=1,
                                          help="lock requests (rows) to write")] = 1_000_000,
    seed: Annotated[int | None, typer.Option("--seed", min=0, max=MAX_SEED,
                                             help="random seed (default: sim.seed)")] = None,
    generator: Annotated[TpccGenerator | None, typer.Option(
        "--generator", help="tpcc: dslr (DSLR's generator, the traces the paper replays), "
        "dslr_uniform (its transactions on uniform lock ids) or sketch (NewOrder only); "
        "default: workload.generator")] = None,
    config: ConfigOpt = None,
    sets: SetOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Write a synthetic workload trace from the simulator's workload generators.

    Each client runs closed-loop transactions: locks requested in lock-id order,
    held network.rtt_us + clients.tx_us + clients.rx_us + workload.think_time_us
    (+ network.jitter_us noise), released together. With several tenants, tenant and
    priority columns are added and each tenant's clients start at its start_s.

    Examples:

        netlock trace gen micro --out zipf.parquet --set workload.zipf=0.99

        netlock trace gen micro --out big.parquet --requests 10000000

        netlock trace gen tpcc --config configs/tpcc-high.yaml --out tpcc.csv

        netlock trace gen tpcc --generator dslr --set workload.warehouses=10 --out dslr.csv
    """
    import numpy as np

    from netlock.memory import check_fits
    from netlock.trace import trace_format, write_trace
    from planner import settings
    from sim.footprint import trace_needs
    from sim.workloads import workload_from_config
    from sim.workloads.tracegen import trace_from_config

    trace_format(out)
    forced = {"workload.kind": kind.value}
    if generator is not None:
        forced["workload.generator"] = generator.value
    cfg = settings.run_config(config, parse_sets(sets), forced)
    check_fits(trace_needs(cfg, requests))
    workload = workload_from_config(cfg)
    with status(f"generating {requests:,} requests -> {out}") if requests >= LARGE_TRACE \
            else nullcontext():
        columns = trace_from_config(cfg, requests, seed, workload)
        write_trace(columns, out)
    result = {
        "out": str(out), "kind": kind.value, "requests": len(columns["lock_id"]),
        "transactions": len(np.unique(columns["txn_id"])),
        "locks": len(np.unique(columns["lock_id"])), "clients": cfg.workload.clients,
        "duration_s": float(columns["t_release"].max() - columns["t_request"].min()),
    }
    if as_json:
        emit_json(result)
        return
    typer.echo(f"wrote {out}: {result['requests']:,} requests of {result['transactions']:,} "
               f"transactions on {result['locks']:,} locks from {result['clients']} clients "
               f"over {result['duration_s']:.4g} s ({workload.describe()})")


def register(app: typer.Typer) -> None:
    """Add the ``trace`` group (``trace gen``) to ``app``."""
    trace_app = typer.Typer(name="trace", help="Workload traces: generate them.",
                            no_args_is_help=True)
    trace_app.command("gen")(trace_gen_command)
    app.add_typer(trace_app, name="trace")
