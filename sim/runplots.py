"""``netlock plot RESULT_DIR``: the figures of one ``netlock sim --out`` run.

Three PNGs in the toolkit's style (:mod:`netlock.plotstyle`), from the run's ``summary.json``,
``config.json`` and its ``requests`` and ``timeseries`` tables (Parquet or CSV):

- ``timeseries.png``: granted lock requests and committed transactions per second over
  simulated time (per tenant when there are several), the warm-up shaded;
- ``latency_cdf.png``: the distribution of request latency in the measured window, for all
  grants and by who granted them (switch, lock servers);
- ``split.png``: granted requests per second over time, stacked by switch and lock servers.

Grants with ``source`` 0 are the switch's and the rest the lock servers', as the summary's
``switch_share`` counts them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from netlock import plotstyle
from netlock.errors import ConfigError
from netlock.inputs import load_json

FIGURES = ("timeseries.png", "latency_cdf.png", "split.png")


@dataclass(frozen=True)
class RunResult:
    """What a ``netlock sim --out`` folder holds. Times in us unless named ``_s``."""

    folder: Path
    summary: dict[str, Any]
    config: dict[str, Any]
    requests: pd.DataFrame
    timeseries: pd.DataFrame

    @property
    def warmup_us(self) -> float:
        return float(self.config["sim"]["warmup_s"]) * 1e6

    @property
    def end_us(self) -> float:
        return float(self.summary["sim_time_s"]) * 1e6

    @property
    def bin_us(self) -> float:
        return float(self.config["sim"]["timeseries_bin_s"]) * 1e6


SUMMARY_NUMBERS = ("sim_time_s", "measured_s", "violations", "stalled", "switch_share",
                   "switch_rps", "server_rps")
COLUMNS = {"requests": ("t_us", "latency_us", "source"),
           "timeseries": ("t_s", "tenant", "granted_rps", "tps")}
"""The columns the figures read from each table (numbers all)."""
MAX_BINS = 10_000_000
"""Time bins the split figure may draw (a config.json whose bin is far below the run's
length would make it allocate without bound)."""


def load_run(folder: Path) -> RunResult:
    """Read a result folder; one ConfigError line names what is missing or broken (file
    and key or column), before any figure is drawn."""
    if not (folder / "summary.json").is_file():
        raise ConfigError(f"{folder}: not a result folder of netlock sim --out (no "
                          f"summary.json)")
    summary = load_json(folder / "summary.json", ConfigError, "simulation summary")
    config = load_json(folder / "config.json", ConfigError, "simulation config")
    _check_documents(folder, summary, config)
    run = RunResult(folder, summary, config, _table(folder, "requests"),
                    _table(folder, "timeseries"))
    if run.end_us / run.bin_us > MAX_BINS:
        raise ConfigError(f"{folder / 'config.json'}: sim.timeseries_bin_s: "
                          f"{run.bin_us / 1e6:g} s cuts the run's {run.end_us / 1e6:g} s into "
                          f"more than {MAX_BINS:,} bins")
    return run


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_documents(folder: Path, summary: Any, config: Any) -> None:
    """The keys of ``summary.json`` and ``config.json`` the figures read, as numbers."""
    where = folder / "summary.json"
    if not isinstance(summary, dict):
        raise ConfigError(f"{where}: not a JSON object")
    for key in SUMMARY_NUMBERS:
        if not _number(summary.get(key)):
            raise ConfigError(f"{where}: {key}: missing or not a number")
    if not isinstance(summary.get("engine"), str):
        raise ConfigError(f"{where}: engine: missing or not a name")
    latency = summary.get("latency_us")
    if not (isinstance(latency, dict)
            and all(latency.get(k) is None or _number(latency.get(k))
                    for k in ("p50", "p99", "p999"))
            and (latency.get("p99") is None
                 or all(_number(latency.get(k)) for k in ("p50", "p999")))):
        raise ConfigError(f"{where}: latency_us: not {{p50, p99, p999}} numbers (or null)")
    where = folder / "config.json"
    sim = config.get("sim") if isinstance(config, dict) else None
    if not isinstance(sim, dict):
        raise ConfigError(f"{where}: sim: missing or not a mapping")
    for key, low in (("warmup_s", "a number >= 0"), ("timeseries_bin_s", "a number > 0")):
        value = sim.get(key)
        if not (_number(value) and np.isfinite(value)
                and (value >= 0 if key == "warmup_s" else value > 0)):
            raise ConfigError(f"{where}: sim.{key}: {str(value)[:40]!r} is not {low}")
    end = summary["sim_time_s"]
    if not (np.isfinite(end) and end > 0):
        raise ConfigError(f"{folder / 'summary.json'}: sim_time_s: {end!r} is not a time > 0")


def _table(folder: Path, name: str) -> pd.DataFrame:
    for suffix, read in ((".parquet", pd.read_parquet), (".csv", pd.read_csv)):
        path = folder / f"{name}{suffix}"
        if path.is_file():
            try:
                frame = read(path)
            except (OSError, ValueError) as exc:
                raise ConfigError(f"{path}: cannot read: {exc}") from None
            if frame.columns.duplicated().any():
                raise ConfigError(f"{path}: column "
                                  f"{frame.columns[frame.columns.duplicated()][0]!r}: repeated")
            for column in COLUMNS[name]:
                if column not in frame.columns:
                    raise ConfigError(f"{path}: column {column!r}: missing")
                if not pd.api.types.is_numeric_dtype(frame[column]) or \
                        pd.api.types.is_bool_dtype(frame[column]):
                    raise ConfigError(f"{path}: column {column!r}: not numbers "
                                      f"({frame[column].dtype})")
            return frame
    raise ConfigError(f"{folder}: no {name}.parquet or {name}.csv")


def plot_run(run: RunResult, out: Path | None = None) -> list[Path]:
    """Write the three figures of ``run`` to ``out`` (default: its folder)."""
    out = out or run.folder
    with plotstyle.styled():
        return [_timeseries(run, out / FIGURES[0]), _latency_cdf(run, out / FIGURES[1]),
                _split(run, out / FIGURES[2])]


def _subtitle(run: RunResult) -> str:
    s = run.summary
    return (f"{s['engine']} engine, {s['measured_s'] * 1e3:g} ms measured after "
            f"{run.warmup_us / 1e3:g} ms warm-up; {s['violations']} safety violations, "
            f"{s['stalled']} stalled waits")


def _shade_warmup(ax: Any, run: RunResult) -> None:
    if run.warmup_us > 0:
        ax.axvspan(0, run.warmup_us / 1e3, color="grey", alpha=0.15, lw=0,
                   label="warm-up (not measured)")
    ax.set_xlim(0, run.end_us / 1e3)
    ax.set_xlabel("simulated time (ms)")


def _timeseries(run: RunResult, path: Path) -> Path:
    fig = plotstyle.figure(7.5, 5.0)
    top, bottom = fig.subplots(2, 1, sharex=True)
    ts = run.timeseries
    several = ts["tenant"].nunique() > 1
    groups = ts.groupby("tenant", sort=True) if several else [(None, ts)]
    for tenant, part in groups:
        label = None if tenant is None else f"tenant {tenant}"
        mid_ms = (part["t_s"].to_numpy() * 1e6 + run.bin_us / 2) / 1e3
        top.plot(mid_ms, part["granted_rps"], marker=".", label=label)
        bottom.plot(mid_ms, part["tps"], marker=".", label=label)
    top.set_ylabel(f"granted requests ({plotstyle.rate(top, ts['granted_rps'].max())})")
    bottom.set_ylabel(f"transactions ({plotstyle.rate(bottom, ts['tps'].max(), 'txn/s')})")
    for ax in (top, bottom):
        _shade_warmup(ax, run)
        plotstyle.legend_outside(ax)
    top.set_xlabel("")
    plotstyle.titles(top, f"Throughput over time ({run.bin_us:g} us bins)", _subtitle(run))
    return plotstyle.save(fig, path)


def _measured(run: RunResult) -> pd.DataFrame:
    t = run.requests["t_us"].to_numpy()
    return run.requests[(t >= run.warmup_us) & (t < run.end_us)]


def _latency_cdf(run: RunResult, path: Path) -> Path:
    fig = plotstyle.figure()
    ax = fig.subplots()
    req = _measured(run)
    switch = req["source"].to_numpy() == 0
    latency = req["latency_us"].to_numpy()
    for label, values, color in (
            ("all grants", latency, "black"),
            ("granted by the switch", latency[switch], plotstyle.SWITCH_COLOR),
            ("granted by lock servers", latency[~switch], plotstyle.SERVER_COLOR)):
        if len(values) == 0:
            continue
        ordered = np.sort(values)
        share = np.arange(1, len(ordered) + 1) / len(ordered)
        ax.plot(ordered, share, color=color, label=f"{label} ({len(ordered):,})")
    lat = run.summary["latency_us"]
    ax.axhline(0.99, color="grey", ls=":", lw=1)
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("request latency, from sending the acquire to its grant (us, log scale)")
    plotstyle.percent(ax)
    ax.set_ylabel("requests at or below (%)")
    if lat["p99"] is None:
        title = "Request latency: nothing granted in the measured window"
    else:
        ax.axvline(lat["p99"], color="grey", ls=":", lw=1)
        ax.annotate(f"p99 = {lat['p99']:.3g} us", (lat["p99"], 0.99), xytext=(-4, -12),
                    textcoords="offset points", fontsize=8, color="0.3", ha="right")
        title = (f"Request latency: median {lat['p50']:.3g} us, p99 {lat['p99']:.3g} us, "
                 f"p99.9 {lat['p999']:.3g} us")
    plotstyle.titles(ax, title, _subtitle(run))
    plotstyle.legend_outside(ax)
    return plotstyle.save(fig, path)


def _split(run: RunResult, path: Path) -> Path:
    fig = plotstyle.figure(7.5, 4.0)
    ax = fig.subplots()
    req = run.requests
    n_bins = max(1, int(np.ceil(run.end_us / run.bin_us - 1e-9)))
    edges = np.arange(n_bins + 1) * run.bin_us
    switch = req["source"].to_numpy() == 0
    t = req["t_us"].to_numpy()
    per_s = 1e6 / run.bin_us
    by_switch = np.histogram(t[switch], bins=edges)[0] * per_s
    by_servers = np.histogram(t[~switch], bins=edges)[0] * per_s
    mid_ms = (edges[:-1] + run.bin_us / 2) / 1e3
    ax.stackplot(mid_ms, by_switch, by_servers, labels=["switch", "lock servers"],
                 colors=[plotstyle.SWITCH_COLOR, plotstyle.SERVER_COLOR], alpha=0.85)
    _shade_warmup(ax, run)
    unit = plotstyle.rate(ax, float((by_switch + by_servers).max(initial=0.0)))
    ax.set_ylabel(f"granted requests ({unit})")
    s = run.summary
    plotstyle.titles(ax, f"Who grants: the switch {s['switch_share']:.1%} of the measured "
                         f"requests", f"switch {s['switch_rps'] / 1e6:.3g} M req/s, lock servers "
                         f"{s['server_rps'] / 1e6:.3g} M req/s; {_subtitle(run)}")
    plotstyle.legend_outside(ax)
    return plotstyle.save(fig, path)
