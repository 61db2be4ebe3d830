"""The paper's figures by name, and running one: points -> table, checks, PNG, CSV, JSON.

``run_figure("fig14b", "small", workers=2, out="results/paper")`` runs Figure 14b's
experiment (``configs/paper/fig14b.yaml``) and writes ``fig14b.csv``, ``fig14b.png`` and
``fig14b.json`` (atomically) under ``out``; the returned :class:`FigureResult` holds the
same table and checks for notebooks.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from netlock import atomic, plotstyle
from netlock.errors import ConfigError

from . import comparison, failure, memory_figures, micro_figures, policy
from .experiment_file import CONFIG_DIR, load_experiment
from .figure import Check, Figure
from .run_points import run_points

ORDER = ("fig8a", "fig8b", "fig8cd", "fig9", "fig10", "fig11", "fig12a", "fig12b", "fig13",
         "fig14a", "fig14b", "fig15", "st")
_ALL = {f.name: f for f in (*micro_figures.FIGURES, *policy.FIGURES, *memory_figures.FIGURES,
                            *failure.FIGURES, *comparison.FIGURES)}
FIGURES: dict[str, Figure] = {name: _ALL[name] for name in ORDER}


def names() -> list[str]:
    """Every figure name, in the paper's order (section 4.5's analysis last)."""
    return list(FIGURES)


@dataclass
class FigureResult:
    """One figure's run: its table (one row per plotted point), extra tables, the paper's
    qualitative outcomes checked, and the files written."""

    figure: Figure
    scale: str
    table: pd.DataFrame
    extra: dict[str, pd.DataFrame]
    checks: list[Check]
    wall_s: float
    files: list[Path]
    provenance: dict[str, Any]
    """Where the run was made (commit, command, date), as the caller knows it."""
    digests: dict[str, str] = field(default_factory=dict)
    """SHA-256 of each file written beside the JSON (by name), once written."""

    @property
    def holds(self) -> bool:
        return all(c.holds for c in self.checks)

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "figure": self.figure.name,
            "title": self.figure.title,
            "section": self.figure.section,
            "scale": self.scale,
            "points": _records(self.table),
            "checks": [c.to_dict() for c in self.checks],
            "holds": self.holds,
            "required": self.figure.required,
            "wall_s": self.wall_s,
            "provenance": self.provenance,
        }
        doc.update({name: _records(t) for name, t in self.extra.items()})
        if self.digests:
            doc["files_sha256"] = self.digests
        return doc


def _records(table: pd.DataFrame) -> list[dict[str, Any]]:
    return json.loads(table.to_json(orient="records"))


def figure(name: str) -> Figure:
    """The figure called ``name``; an unknown name is a ConfigError."""
    found = FIGURES.get(name)
    if found is None:
        raise ConfigError(f"FIG: unknown figure {name!r} (expected one of "
                          f"{', '.join(names())} or all)")
    return found


def run_figure(name: str, scale: str = "small", workers: int = 1,
               out: str | Path | None = None, config_dir: Path = CONFIG_DIR,
               progress: Callable[[int, int], None] | None = None,
               overrides: dict[str, Any] | None = None,
               provenance: dict[str, Any] | None = None,
               max_wall_s: float | None = None) -> FigureResult:
    """Run figure ``name`` at ``scale`` on ``workers`` processes; with ``out``, write
    ``FIG.csv``, ``FIG.png``, ``FIG.json`` (and ``FIG-<extra>.csv``) there. A point's run
    longer than ``max_wall_s`` ends it (:class:`sim.core.budget.WallBudgetSpent`) with
    none of the figure's files written."""
    fig = figure(name)
    experiment = load_experiment(name, scale, config_dir, overrides)
    t0 = time.perf_counter()
    results = run_points(experiment, workers, progress, max_wall_s)
    table = fig.table(experiment, results)
    extra = fig.extra(experiment, results)
    result = FigureResult(fig, scale, table, extra, fig.checks(table),
                          time.perf_counter() - t0, [], provenance or {})
    if out is not None:
        result.files = write(result, Path(out))
    return result


INDEX_TITLE = "# The NetLock paper's figures, reproduced"


def write_index(out: Path) -> Path:
    """``out/README.md``: every figure whose JSON is in ``out``, in the paper's order, with
    its PNG, the command that made it, its wall time, commit and checks. A README.md there
    that this did not write (it does not start with the index's title) is left alone and
    the index goes to ``FIGURES.md`` instead."""
    docs = []
    for name in names():
        path = out / f"{name}.json"
        if path.exists():
            docs.append(json.loads(path.read_text()))
    lines = [INDEX_TITLE, "",
             "Made by `netlock paper` (see the repository README); each figure's points are in",
             "its CSV and JSON beside the PNG. The checks are the qualitative outcomes the",
             "paper's text states for the figure, tested on these runs.", ""]
    for doc in docs:
        made = doc.get("provenance", {})
        lines += [f"## {doc['title']} (section {doc['section']})", "",
                  f"![{doc['figure']}]({doc['figure']}.png)", "",
                  f"`{made.get('command', 'netlock paper ' + doc['figure'])}`: "
                  f"{doc['wall_s']:.0f} s of wall time, scale {doc['scale']}, commit "
                  f"{made.get('commit', 'unknown')}, {made.get('date', '')}", ""]
        problem = figure_problem(out, doc)
        if problem:
            lines += [f"**Incomplete**: {problem} (an interrupted run?): rerun "
                      f"`netlock paper {doc['figure']}`.", ""]
        lines += [f"- {'holds' if c['holds'] else '**fails**'}: {c['claim']} ({c['detail']})"
                  for c in doc["checks"]]
        lines.append("")
    path = out / "README.md"
    if path.exists() and not _starts_with(path, INDEX_TITLE):
        path = out / "FIGURES.md"
    atomic.write_text(path, "\n".join(lines))
    return path


def _starts_with(path: Path, title: str) -> bool:
    with open(path, "rb") as fh:
        return fh.read(len(title.encode())) == title.encode()


def write(result: FigureResult, out: Path) -> list[Path]:
    """The figure's CSV, PNG, JSON and extra tables under ``out`` (each written atomically),
    listed in that order. The JSON is written last and records the SHA-256 of the others,
    so a run killed between files leaves a figure that :func:`figure_problem` finds
    incomplete, not a JSON that vouches for another run's CSV or PNG."""
    out.mkdir(parents=True, exist_ok=True)
    name = result.figure.name
    files = [out / f"{name}.csv", out / f"{name}.png"]
    atomic.write_with(files[0], lambda tmp: result.table.to_csv(tmp, index=False))
    with plotstyle.styled():
        plotstyle.save(result.figure.plot(result.table, result.extra), files[1])
    for extra, table in result.extra.items():
        path = out / f"{name}-{extra}.csv"
        atomic.write_with(path, lambda tmp, t=table: t.to_csv(tmp, index=False))
        files.append(path)
    result.digests = {path.name: _sha256(path) for path in files}
    files.insert(2, out / f"{name}.json")
    atomic.write_text(files[2], json.dumps(result.to_json(), indent=1) + "\n")
    return files


def figure_problem(out: Path, doc: dict[str, Any]) -> str | None:
    """Why the figure ``doc`` (its JSON, read from ``out``) does not match the files beside
    it, or None when every file it records is there with its recorded digest."""
    for name, digest in doc.get("files_sha256", {}).items():
        path = out / name
        if not path.is_file():
            return f"{name} is missing"
        if _sha256(path) != digest:
            return f"{name} is not the one this JSON was written with"
    return None


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
