"""Concordia's experiments (FAST'21): the sharing-ratio sweep of section 7.2.1 on the lock
path (Concordia against Concordia-base), and its ownership migration against NetLock's
knapsack allocation on one skewed workload.

Each is an experiment file in ``configs/paper`` (``concordia-sharing``,
``concordia-migration``: the config it starts from and what it varies at ``small`` and
``full`` scale, read by :func:`sim.paper.experiment_file.load_experiment`). :func:`run` measures
every point (one simpy run each, in worker processes) into a table with one row per point, and
the checks are the trends the seed states, tested on that table.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.figure import Figure as MplFigure

from netlock import atomic, plotstyle
from netlock.config import Config
from sim.paper import plotting as p
from sim.paper.experiment_file import CONFIG_DIR, load_experiment
from sim.paper.figure import Check, safe_and_live
from sim.paper.provenance import commit
from sim.simulate_simpy import simulate
from sim.sweep_grid import Point
from sim.sweep_workers import run_each

SHARING = "workload.sharing_ratio"
BLOCKS = "manager.concordia.switch_blocks"
KIND = "manager.kind"
MANAGER_COLUMNS = ("home_messages_per_grant", "blocks_in_switch", "failed_acks",
                   "retransmits", "unlock_retransmits")


def measure(config: Config) -> dict[str, Any]:
    """One simpy run: its summary figures and, for Concordia, its manager's counts."""
    summary = simulate(config).summary
    row = {k: summary[k] for k in ("throughput_rps", "switch_share", "retries", "violations",
                                   "stalled", "granted", "wall_s")}
    row["latency_mean_us"] = summary["latency_us"]["mean"]
    row["latency_p99_us"] = summary["latency_us"]["p99"]
    manager = summary["manager"]
    row.update({k: manager.get(k) for k in MANAGER_COLUMNS})
    return row


def run(name: str, scale: str = "small", workers: int = 1) -> pd.DataFrame:
    """The table of experiment ``name`` (``concordia-sharing`` or ``concordia-migration``)
    at ``scale``: the values each point varies, then what :func:`measure` returns."""
    experiment = load_experiment(name, scale, CONFIG_DIR)
    todo = [Point(str(i), pt.values, pt.config.sim.seed, pt.config)
            for i, pt in enumerate(experiment.points)]
    done: dict[str, dict[str, Any]] = {}

    def finished(point: Point, row: dict[str, Any]) -> None:
        done[point.pid] = row

    run_each(todo, workers, finished, measure)
    table = pd.DataFrame.from_records([{**pt.values, **done[pt.pid]} for pt in todo])
    if BLOCKS in table and SHARING in table:
        table["design"] = ["Concordia" if b > 0 else "Concordia-base" for b in table[BLOCKS]]
    return table


def _pivot(table: pd.DataFrame, column: str) -> pd.DataFrame:
    return table.pivot(index=SHARING, columns="design", values=column).sort_index()


def sharing_checks(table: pd.DataFrame) -> list[Check]:
    """Section 7.2.1's trends on the lock path: Concordia degrades far less than
    Concordia-base as sharing grows and beats it with sharing; Concordia-base's home agents
    handle more per request as sharing grows, Concordia's fewer."""
    tput = _pivot(table, "throughput_rps")
    msgs = _pivot(table, "home_messages_per_grant")
    lo, hi = tput.index.min(), tput.index.max()
    drop = {d: tput.loc[lo, d] / tput.loc[hi, d] for d in tput.columns}
    shared = tput.index[tput.index > lo]
    return [
        Check("Concordia degrades far less than Concordia-base as sharing grows (its "
              "throughput falls less than half as much)",
              drop["Concordia"] - 1 < 0.5 * (drop["Concordia-base"] - 1),
              f"throughput at {lo:.0%} / at {hi:.0%} sharing: Concordia "
              f"{drop['Concordia']:.2f}x, Concordia-base {drop['Concordia-base']:.2f}x"),
        Check("with shared data, Concordia's throughput beats Concordia-base's",
              all(tput.loc[s, "Concordia"] > tput.loc[s, "Concordia-base"] for s in shared),
              ", ".join(f"{s:.0%}: {tput.loc[s, 'Concordia'] / tput.loc[s, 'Concordia-base']:.2f}x"
                        for s in shared)),
        Check("Concordia-base's home agents handle more messages per request as sharing "
              "grows (they multicast the shared blocks' invalidations); Concordia's fewer",
              msgs.loc[hi, "Concordia-base"] > 1.01 * msgs.loc[lo, "Concordia-base"]
              and msgs.loc[hi, "Concordia"] < msgs.loc[lo, "Concordia"],
              f"messages per granted request at {lo:.0%} -> {hi:.0%}: Concordia-base "
              f"{msgs.loc[lo, 'Concordia-base']:.2f} -> {msgs.loc[hi, 'Concordia-base']:.2f}, "
              f"Concordia {msgs.loc[lo, 'Concordia']:.2f} -> {msgs.loc[hi, 'Concordia']:.2f}"),
        safe_and_live(table),
    ]


def migration_checks(table: pd.DataFrame) -> list[Check]:
    """Neither paper states this comparison: the checks are that each design puts more of
    the load in the switch with more memory, and the shares and throughputs reported."""
    memory = table.assign(memory_kb=_memory_kb(table))
    share = memory.pivot(index="memory_kb", columns=KIND, values="switch_share").sort_index()
    tput = memory.pivot(index="memory_kb", columns=KIND,
                        values="throughput_rps").sort_index()
    return [
        Check("each design serves a larger share of requests in the switch with more "
              "switch memory",
              bool(share.diff().dropna().ge(-0.02).all().all()) and bool(
                  (share > 0).all().all()),
              "; ".join(f"{kind}: {', '.join(f'{v:.0%}' for v in share[kind])}"
                        for kind in share.columns)),
        Check("served in the switch and throughput, same memory (reported)", True,
              "; ".join(f"{kb:g} KB: NetLock {share.loc[kb, 'netlock']:.0%} "
                        f"{tput.loc[kb, 'netlock'] / 1e6:.2f} M/s, Concordia "
                        f"{share.loc[kb, 'concordia']:.0%} "
                        f"{tput.loc[kb, 'concordia'] / 1e6:.2f} M/s" for kb in share.index)),
        safe_and_live(table),
    ]


def _memory_kb(table: pd.DataFrame) -> list[float]:
    """Switch memory of each point's lock state: 16 B per Concordia block, 20 B per
    NetLock slot (configs/concordia-skew.yaml)."""
    return [round(b * 16 / 1024) if k == "concordia" else round(s * 20 / 1024)
            for k, b, s in zip(table[KIND], table[BLOCKS], table["switch.slots"], strict=True)]


def plot_sharing(table: pd.DataFrame) -> MplFigure:
    """Throughput and home-agent messages per request against the sharing ratio."""
    fig, (left, right) = p.axes("Concordia vs Concordia-base: sharing ratio (lock path)",
                                "sharing ratio", "granted requests / s (millions)", ncols=2,
                                width=4.6)
    for design, marker in (("Concordia", "o"), ("Concordia-base", "s")):
        rows = table[table["design"] == design].sort_values(SHARING)
        left.plot(rows[SHARING], rows["throughput_rps"] / 1e6, marker=marker, label=design)
        right.plot(rows[SHARING], rows["home_messages_per_grant"], marker=marker,
                   label=design)
    right.set_ylabel("home-agent messages per granted request")
    right.set_xlabel("sharing ratio")
    left.set_ylim(bottom=0)
    right.set_ylim(bottom=0)
    p.legend(left)
    return fig


def plot_migration(table: pd.DataFrame) -> MplFigure:
    """Switch share and throughput against switch memory, per design."""
    memory = table.assign(memory_kb=_memory_kb(table))
    fig, (left, right) = p.axes("Ownership migration vs knapsack (Zipf 0.99, same memory)",
                                "switch memory for locks (KB)", "requests served by the "
                                "switch", ncols=2, width=4.6)
    for kind, label, marker in (("concordia", "Concordia (epoch top-k)", "o"),
                                ("netlock", "NetLock (knapsack)", "s")):
        rows = memory[memory[KIND] == kind].sort_values("memory_kb")
        left.plot(rows["memory_kb"], rows["switch_share"], marker=marker, label=label)
        right.plot(rows["memory_kb"], rows["throughput_rps"] / 1e6, marker=marker,
                   label=label)
    right.set_ylabel("granted requests / s (millions)")
    right.set_xlabel("switch memory for locks (KB)")
    left.set_ylim(0, 1)
    right.set_ylim(bottom=0)
    sizes = sorted(set(memory["memory_kb"]))
    for ax in (left, right):
        ax.set_xscale("log", base=2)
        ax.set_xticks(sizes, [f"{kb:g}" for kb in sizes])
    p.legend(left)
    return fig


@dataclass
class ExperimentOutcome:
    """An experiment's table, its checks and the files written."""

    name: str
    scale: str
    table: pd.DataFrame
    checks: list[Check]
    files: list[Path]

    @property
    def holds(self) -> bool:
        return all(c.holds for c in self.checks)


CHECKS = {"concordia-sharing": (sharing_checks, plot_sharing),
          "concordia-migration": (migration_checks, plot_migration)}


def run_and_write(name: str, scale: str, workers: int, out: str | Path) -> ExperimentOutcome:
    """Run experiment ``name`` and write ``NAME.csv``, ``NAME.png`` and ``NAME.json`` (its
    checks and the commit it was made at) under ``out``, each atomically."""
    checks_of, plot = CHECKS[name]
    table = run(name, scale, workers)
    checks = checks_of(table)
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    files = [folder / f"{name}.{ext}" for ext in ("csv", "png", "json")]
    atomic.write_with(files[0], lambda tmp: table.to_csv(tmp, index=False))
    with plotstyle.styled():
        plotstyle.save(plot(table), files[1])
    doc = {"experiment": name, "scale": scale, "commit": commit(),
           "checks": [c.to_dict() for c in checks],
           "points": json.loads(table.to_json(orient="records"))}
    atomic.write_text(files[2], json.dumps(doc, indent=1) + "\n")
    return ExperimentOutcome(name, scale, table, checks, files)
