"""Sweeps: one simulation per point of a grid of configs, on local processes or dask.

A grid is one or more axes ``key=v1,v2,...`` over dotted config keys; the points are their
cartesian product, each a validated config. Every point gets its own seed, derived from
the base seed and the point's values alone (so a point's result does not depend on the
grid around it or on the order the points ran), unless ``common_seed`` asks for the base
seed everywhere (common random numbers: smoother curves when points are compared).

Points run on the engine their config names (``sim.engine``: simpy or fast), serially, in
local worker processes, or on a dask.distributed cluster; the seeds make all three give the
same results. Each finished point is written at once to ``points/<id>.json`` under the
output folder with the point's full config and the sweep's provenance (engine, durations,
``--set`` overrides, config file and its SHA-256); ``resume`` skips the points already there
and refuses a folder whose points were run with other settings, so one table never mixes
them. ``seeds`` > 1 runs every point that many times with seeds derived from its values and
the run's number; the table then holds each metric's mean over the runs and its 95 %
confidence half-width (``<metric>_ci95``, Student's t). Workers send back one summary row
per run, so memory does not grow with the raw samples of the points. The results table
(one row per point) is written as ``results.parquet`` and ``results.csv``; with ``seeds`` >
1 every run's row is also in ``runs.csv``.
"""

from __future__ import annotations

import ctypes
import hashlib
import itertools
import json
import multiprocessing
import os
import queue
import shutil
import signal
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from netlock import atomic
from netlock.config import Config, override_config
from netlock.config.overrides import parse_override
from netlock.errors import ConfigError, NetlockError
from netlock.inputs import load_json
from sim.core.budget import require_whole
from sim.core.result import ENDINGS
from sim.run_engine import run_engine

if TYPE_CHECKING:
    import pandas as pd

SUMMARY_COLUMNS = ("throughput_rps", "tps", "switch_share", "switch_rps", "server_rps",
                   "retries", "violations", "stalled", "granted", "wall_s", "events",
                   "measured_s")
PROVENANCE_COLUMNS = ("engine", "duration_s", "warmup_s", "overrides", "config_file",
                      "config_sha256")
LATENCY_COLUMNS = ("mean", "p50", "p99", "p999")
DASK_CONNECT_S = 10
REPORT_EVERY_S = 0.5
"""Least wall time between two progress reports of a point running in a worker process (the
last, at the point's end, always goes)."""


@dataclass(frozen=True)
class Axis:
    """One grid axis: a dotted key and the values it takes (typed as in a config file)."""

    key: str
    values: tuple[Any, ...]


@dataclass(frozen=True)
class Point:
    """One run of a grid point: its values per axis key, its seed, its validated config
    (a :class:`Config`; the NetStore experiment's points hold its own config document)
    and which of the point's ``--seeds`` runs it is (0 for the first)."""

    pid: str
    values: dict[str, Any]
    seed: int
    config: Any
    run: int = 0


@dataclass(frozen=True)
class Provenance:
    """Where a sweep's settings came from: recorded with every point, compared on resume."""

    config_file: str
    config_sha256: str
    overrides: dict[str, str]

    @classmethod
    def of(cls, path: str | Path, overrides: dict[str, str] | None = None) -> Provenance:
        data = Path(path).read_bytes()
        return cls(str(path), hashlib.sha256(data).hexdigest(), dict(overrides or {}))

    def record(self, config: Config) -> dict[str, Any]:
        return {"engine": config.sim.engine, "duration_s": config.sim.duration_s,
                "warmup_s": config.sim.warmup_s,
                "overrides": " ".join(f"{k}={v}" for k, v in self.overrides.items()),
                "config_file": self.config_file, "config_sha256": self.config_sha256}


def parse_grid(items: Iterable[str]) -> list[Axis]:
    """``["switch.slots=500,1000", ...]`` -> axes; a malformed item is a ConfigError."""
    axes: list[Axis] = []
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip()
        values = [v.strip() for v in text.split(",")] if sep else []
        if not sep or not key or not values or any(v == "" for v in values):
            raise ConfigError(f"--grid {item!r}: expected KEY=V1,V2,... with a dotted key "
                              f"and comma-separated values")
        if any(a.key == key for a in axes):
            raise ConfigError(f"--grid {key}: the same key is given twice")
        try:
            typed = tuple(parse_override(key, v) for v in values)
        except Exception as exc:  # the override parser raises its own Problem type
            raise ConfigError(f"--grid {key}: {exc}") from None
        axes.append(Axis(key, typed))
    if not axes:
        raise ConfigError("--grid: give at least one axis, e.g. --grid switch.slots=500,1000")
    return axes


def point_seed(base_seed: int, values: dict[str, Any]) -> int:
    """A seed from the base seed and the point's values only (stable across runs)."""
    text = json.dumps({"seed": base_seed, **values}, sort_keys=True, default=str)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big") >> 1


def grid_points(base: Config, axes: list[Axis], common_seed: bool = False,
                seeds: int = 1) -> list[Point]:
    """Every run of every point of the grid (``seeds`` per point), validated; a bad value
    names its ``--grid`` key. Run ``r`` > 0 of a point seeds from its values and ``r``."""
    if seeds < 1:
        raise ConfigError(f"--seeds: must be at least 1, got {seeds}")
    points = []
    for combo in itertools.product(*(a.values for a in axes)):
        values = {a.key: v for a, v in zip(axes, combo, strict=True)}
        for run in range(seeds):
            salt = {} if run == 0 else {"run": run}
            seed = (base.sim.seed if common_seed else point_seed(base.sim.seed, values))
            if run:
                seed = point_seed(seed, {**values, **salt})
            overrides = {**values, "sim.seed": seed} if "sim.seed" not in values else values
            try:
                config = override_config(base, overrides)
            except ConfigError as exc:
                raise ConfigError(f"--grid {', '.join(values)}: {exc}") from None
            pid = hashlib.sha1(json.dumps({**values, "seed": config.sim.seed, **salt},
                                          sort_keys=True, default=str).encode()).hexdigest()[:12]
            points.append(Point(pid, values, config.sim.seed, config, run))
    return points


def run_point(config: Config,
              progress: Callable[[float, float], None] | None = None,
              max_wall_s: float | None = None) -> dict[str, Any]:
    """Simulate one point (in a worker) on its ``sim.engine``; its flat result row.
    ``progress(now_us, end_us)`` follows the run (serial sweeps show it); a run longer
    than ``max_wall_s`` is :class:`sim.core.budget.WallBudgetSpent`."""
    summary = run_engine(config, progress=progress, max_wall_s=max_wall_s).summary
    require_whole(summary)
    row = {k: summary[k] for k in SUMMARY_COLUMNS}
    row["ended"] = summary["ended"]
    row.update({f"latency_{k}_us": summary["latency_us"][k] for k in LATENCY_COLUMNS})
    row.update({f"txn_latency_{k}_us": summary["txn_latency_us"][k] for k in LATENCY_COLUMNS})
    return row


def point_path(out_dir: Path, point: Point) -> Path:
    return out_dir / "points" / f"{point.pid}.json"


def load_finished(out_dir: Path, point: Point,
                  provenance: Provenance | None = None) -> dict[str, Any] | None:
    """The stored result of ``point`` when a previous run finished it, else None. A stored
    point run with other settings (config, engine, durations, overrides) is a ConfigError
    naming what differs: resuming it would mix two experiments in one table."""
    path = point_path(out_dir, point)
    if not path.exists():
        return None
    try:
        doc = load_json(path, ConfigError, "sweep point")
    except ConfigError:
        return None
    if not isinstance(doc, dict) or doc.get("values") != _jsonable(point.values):
        return None
    result = doc.get("result")
    if not isinstance(result, dict):
        return None
    stored = doc.get("config")
    if not isinstance(stored, dict):
        raise ConfigError(f"--resume: {path} does not record the settings it was run with "
                          f"(an older sweep); add --force to replace it or use another --out")
    differs = _differences(stored, _jsonable(point.config.to_dict()))
    old = doc.get("provenance") or {}
    if provenance is not None and old.get("config_sha256") not in (
            None, provenance.config_sha256) and not differs:
        differs = [f"config file {old.get('config_file')} (sha256 "
                   f"{str(old.get('config_sha256'))[:12]}) -> {provenance.config_file} "
                   f"(sha256 {provenance.config_sha256[:12]})"]
    if differs:
        raise ConfigError(f"--resume: {out_dir} was swept with other settings: "
                          f"{'; '.join(differs[:3])}{' ...' if len(differs) > 3 else ''}; "
                          f"rerun with the same settings, or add --force to replace it, or "
                          f"use another --out")
    check_row(result, path)
    return result


ROW_COLUMNS = SUMMARY_COLUMNS + tuple(
    f"{kind}_{k}_us" for kind in ("latency", "txn_latency") for k in LATENCY_COLUMNS)
"""What :func:`run_point` returns for a point: the metrics of its row in the table."""


def check_row(result: dict[str, Any], path: Path) -> None:
    """Refuse (ConfigError naming the file and field) a stored point whose result is not a
    number per metric (a latency may be null: nothing granted), so that a damaged point
    file is one line rather than a table that cannot be written."""
    for column in ROW_COLUMNS:
        value = result.get(column)
        if column.endswith("_us") and value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            said = "missing" if column not in result else f"{str(value)[:40]!r} is not a number"
            raise ConfigError(f"--resume: {path}: result.{column}: {said}; remove the file to "
                              f"run the point again, or add --force to replace the sweep")
    if result.get("ended") not in ENDINGS:
        raise ConfigError(f"--resume: {path}: result.ended: {str(result.get('ended'))[:40]!r} "
                          f"is not one of {', '.join(ENDINGS)}; remove the file to run the "
                          f"point again, or add --force to replace the sweep")


def _differences(old: dict[str, Any], new: dict[str, Any], prefix: str = "") -> list[str]:
    """``key: old -> new`` for every dotted key whose value differs."""
    out = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            out += _differences(a, b, f"{prefix}{key}.")
        elif a != b:
            out.append(f"{prefix}{key} {a!r} -> {b!r}")
    return out


def _jsonable(values: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(values, default=str))


def save_point(out_dir: Path, point: Point, row: dict[str, Any],
               provenance: Provenance | None = None) -> None:
    doc = {"pid": point.pid, "values": _jsonable(point.values), "seed": point.seed,
           "run": point.run,
           "provenance": provenance.record(point.config) if provenance else None,
           "config": _jsonable(point.config.to_dict()), "result": row}
    atomic.write_text(point_path(out_dir, point), json.dumps(doc, indent=1) + "\n")


def claim_out(out_dir: Path, resume: bool, force: bool) -> None:
    """Make ``out_dir`` ready for a sweep: an earlier sweep's results there are continued
    (``resume``), replaced (``force``: its ``points/`` removed) or refused, never mixed in
    silently."""
    earlier = [name for name in ("points", "results.parquet", "results.csv")
               if (out_dir / name).exists()]
    if not earlier or resume:
        return
    if not force:
        raise ConfigError(f"--out {out_dir}: holds an earlier sweep ({', '.join(earlier)}); "
                          f"add --resume to continue it or --force to replace it")
    shutil.rmtree(out_dir / "points", ignore_errors=True)


def run_sweep(points: list[Point], out_dir: str | Path, workers: int = 1,
              resume: bool = False,
              progress: Callable[[int, int], None] | None = None,
              scheduler: str | None = None,
              provenance: Provenance | None = None,
              point_progress: Callable[[Point, float, float], None] | None = None,
              max_wall_s: float | None = None) -> pd.DataFrame:
    """Run every point, streaming each result to disk as it finishes; the table.

    Points run serially (``workers`` <= 1), in a pool of ``workers`` local processes, or on
    the dask.distributed cluster whose scheduler is at ``scheduler`` (``tcp://HOST:PORT``).
    Workers return one summary row per point, never the raw samples. ``progress(done,
    total)`` is called after each point. Rows keep the grid's order. An interrupted sweep
    loses only the points that were running; ``resume`` skips the points already on disk
    (all of them checked against this run's settings before any point runs). ``provenance``
    is recorded with every point and in the table. A serial sweep, or one on local processes
    (every ``REPORT_EVERY_S`` of wall time and at each point's end), tells
    ``point_progress(point, now_us, end_us)`` how far each running point has come, and
    ``now_us == end_us`` once it is done (a worker's late reports may follow). A run
    longer than ``max_wall_s`` ends the sweep (:class:`sim.core.budget.WallBudgetSpent`,
    naming its point) before the table is written; the points finished stay for
    ``resume``.
    """
    out = Path(out_dir)
    rows: dict[str, dict[str, Any]] = {}
    todo = []
    for point in points:
        found = load_finished(out, point, provenance) if resume else None
        if found is None:
            todo.append(point)
        else:
            rows[point.pid] = found
    total = len(points)
    if progress:
        progress(len(rows), total)

    def finished(point: Point, row: dict[str, Any]) -> None:
        save_point(out, point, row, provenance)
        rows[point.pid] = row
        if point_progress:
            end_us = point.config.sim.end_s * 1e6
            point_progress(point, end_us, end_us)
        if progress:
            progress(len(rows), total)

    measure = run_point if max_wall_s is None else partial(run_point, max_wall_s=max_wall_s)
    if scheduler is not None:
        _run_on_dask(todo, scheduler, finished, measure)
    else:
        run_each(todo, workers, finished, measure, point_progress)
    runs = results_table(points, rows, provenance)
    table = summarise_runs(runs, list(points[0].values) if points else [])
    write_table(table, out, runs if len(table) < len(runs) else None)
    return table


def run_each(todo: Sequence[Point], workers: int,
             finished: Callable[[Point, Any], None],
             measure: Callable[..., Any] = run_point,
             point_progress: Callable[[Point, float, float], None] | None = None) -> None:
    """The one loop that runs a set of points (sweeps, the paper's figures, the Concordia
    and NetStore experiments): ``measure(point.config)`` for each, in this process when
    ``workers`` <= 1, else in worker processes (:func:`run_in_processes`: Ctrl-C and a
    killed parent end the workers); ``finished(point, result)`` as each ends. With
    ``point_progress``, ``measure`` is called as ``measure(config, progress)`` and its
    reports of ``progress(now_us, end_us)`` reach ``point_progress(point, now_us, end_us)``."""
    if workers > 1:
        run_in_processes(todo, workers, finished, measure, point_progress)
        return
    for point in todo:
        try:
            result = (measure(point.config) if point_progress is None else
                      measure(point.config,
                              lambda now, end, p=point: point_progress(p, now, end)))
        except NetlockError as exc:
            if not point.values:
                raise
            raise type(exc)(f"grid point {point.values}: {exc}") from None
        finished(point, result)


def run_in_processes(todo: Sequence[Point], workers: int,
                     finished: Callable[[Point, Any], None],
                     measure: Callable[..., Any] = run_point,
                     point_progress: Callable[[Point, float, float], None] | None = None,
                     ) -> None:
    """Run ``measure`` on the points' configs in ``workers`` processes (``measure`` must be
    a module-level function; with ``point_progress`` it is called as ``measure(config,
    progress)`` and the workers' reports of ``progress(now_us, end_us)`` come back through
    a queue, :func:`_followed`). If the sweep stops early (Ctrl-C, a point's error) the
    points not started are cancelled and the workers ended at once: only the points they
    were running are lost."""
    others = set(multiprocessing.active_children())
    reports: Any = multiprocessing.Queue() if point_progress is not None else None
    pool = ProcessPoolExecutor(max_workers=worker_count(workers, len(todo)),
                               initializer=_start_worker, initargs=(os.getpid(), reports))
    by_pid = {p.pid: p for p in todo}
    try:
        running: dict[Future, Point] = {
            (pool.submit(measure, p.config) if reports is None
             else pool.submit(_followed, measure, p.pid, p.config)): p for p in todo}
        while running:
            done, _ = wait(running, timeout=None if reports is None else REPORT_EVERY_S,
                           return_when=FIRST_COMPLETED)
            _relay(reports, by_pid, point_progress)
            for future in done:
                point = running.pop(future)
                finished(point, _result(future, point))
        _relay(reports, by_pid, point_progress)
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        ours = [p for p in multiprocessing.active_children() if p not in others]
        for process in ours:
            process.terminate()
        for process in ours:
            process.join()
        raise
    pool.shutdown(wait=True)


PR_SET_PDEATHSIG = 1
"""prctl(2): the signal a process gets when the thread that created it exits."""


def worker_count(asked: int, points: int) -> int:
    """Processes worth starting: no more than the points, nor than this machine's cores."""
    return max(1, min(asked, points, os.cpu_count() or 1))


_reports: Any = None
"""In a worker process: the queue its points' progress goes to (None: not followed)."""


def _start_worker(parent: int, reports: Any) -> None:
    """A worker process's start: leave Ctrl-C to the sweep, keep the progress queue."""
    global _reports
    _reports = reports
    _leave_interrupts_to_sweep(parent)


def _followed(measure: Callable[..., dict[str, Any]], pid: str,
              config: Config) -> dict[str, Any]:
    """In a worker: ``measure(config, progress)``, its progress put on the sweep's queue as
    ``(pid, now_us, end_us)``, at most every ``REPORT_EVERY_S`` of wall time and at the end."""
    last = [-REPORT_EVERY_S]

    def progress(now_us: float, end_us: float) -> None:
        t = time.monotonic()
        if now_us >= end_us or t - last[0] >= REPORT_EVERY_S:
            last[0] = t
            _reports.put((pid, now_us, end_us))

    return measure(config, progress)


def _relay(reports: Any, by_pid: dict[str, Point],
           point_progress: Callable[[Point, float, float], None] | None) -> None:
    """Hand the workers' progress reports that came in to ``point_progress``."""
    if reports is None or point_progress is None:
        return
    while True:
        try:
            pid, now_us, end_us = reports.get_nowait()
        except queue.Empty:
            return
        point_progress(by_pid[pid], now_us, end_us)


def _leave_interrupts_to_sweep(parent: int) -> None:
    """In a worker: ignore Ctrl-C (the terminal sends it to every process of the command);
    the sweep ends its workers itself. A worker dies with its parent (on Linux, by
    ``PR_SET_PDEATHSIG``), so a killed sweep leaves none running."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent and multiprocessing.get_start_method() == "fork":
            os._exit(1)


def dask_client(scheduler: str) -> Any:
    """A dask.distributed client of the scheduler at ``scheduler``, or a ConfigError naming
    ``--scheduler`` when none answers within ``DASK_CONNECT_S``."""
    from dask.distributed import Client

    try:
        return Client(scheduler, timeout=DASK_CONNECT_S)
    except (OSError, TimeoutError, ValueError) as exc:
        raise ConfigError(f"--scheduler {scheduler}: cannot reach a dask scheduler there "
                          f"({type(exc).__name__}: {exc})") from None


def _run_on_dask(todo: list[Point], scheduler: str,
                 finished: Callable[[Point, dict[str, Any]], None],
                 measure: Callable[[Any], Any] = run_point) -> None:
    """Run the points as tasks of a dask.distributed cluster, collecting them as they end."""
    from dask.distributed import as_completed

    with dask_client(scheduler) as client:
        futures = {client.submit(measure, p.config, key=f"netlock-point-{p.pid}",
                                 pure=False): p for p in todo}
        try:
            for future in as_completed(futures):
                point = futures[future]
                finished(point, _result(future, point))
        finally:
            client.cancel(list(futures))


def _result(future: Any, point: Point) -> dict[str, Any]:
    try:
        return future.result()
    except NetlockError as exc:
        raise type(exc)(f"grid point {point.values}: {exc}") from None


def results_table(points: list[Point], rows: dict[str, dict[str, Any]],
                  provenance: Provenance | None = None) -> pd.DataFrame:
    """One row per run: the point's id, values, run number, seed, result and provenance."""
    import pandas as pd

    records = [{"point": p.pid, **p.values, "run": p.run, "seed": p.seed, **rows[p.pid],
                **(provenance.record(p.config) if provenance else {})} for p in points]
    return pd.DataFrame.from_records(records)


def summarise_runs(runs: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """One row per grid point: the runs' means and, with more than one run per point,
    each metric's 95 % confidence half-width (``<metric>_ci95``, Student's t; ``seeds``:
    the runs). One run per point: the runs' table unchanged."""
    if runs.empty or runs["run"].max() == 0:
        return runs.drop(columns="run")
    import pandas as pd
    from scipy import stats

    metrics = [c for c in runs.columns
               if c in SUMMARY_COLUMNS or c.startswith(("latency_", "txn_latency_"))]
    rows = []
    for _, part in runs.groupby(keys, sort=False, dropna=False):
        first = part.iloc[0]
        row = {c: first[c] for c in runs.columns if c not in metrics and c != "run"}
        row["seeds"] = len(part)
        for column in metrics:
            values = part[column].astype(float).dropna()
            row[column] = float(values.mean()) if len(values) else float("nan")
            row[f"{column}_ci95"] = (float(stats.t.ppf(0.975, len(values) - 1)
                                           * values.std(ddof=1) / len(values) ** 0.5)
                                     if len(values) > 1 else float("nan"))
        rows.append(row)
    return pd.DataFrame.from_records(rows)


def write_table(table: pd.DataFrame, out: Path, runs: pd.DataFrame | None = None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    atomic.write_with(out / "results.parquet", lambda tmp: table.to_parquet(tmp, index=False))
    atomic.write_with(out / "results.csv", lambda tmp: table.to_csv(tmp, index=False))
    if runs is not None:
        atomic.write_with(out / "runs.csv", lambda tmp: runs.to_csv(tmp, index=False))
