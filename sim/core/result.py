"""A finished run's result, assembled the same way for both engines.

The run lasts ``sim.warmup_s`` and then the measured ``sim.duration_s``; measurements cover
``[sim.warmup_s, sim.warmup_s + sim.duration_s)``, the safety and liveness checkers and the
time series the whole run. The result holds pandas DataFrames (granted requests, committed
transactions, throughput over time per tenant) and the summary that ``netlock sim --json``
prints (docs/formats.md, "Simulation result"). Each engine hands :func:`result_of` the
tables it recorded (:mod:`sim.core.metrics`) as numpy columns (:class:`sim.core.rows.Columns`)
and its counters. The summary is computed from the columns; the DataFrames are made when
first read (or written): pandas and pyarrow are not imported by a run reported by its
summary alone (issue 32).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from netlock import atomic
from netlock.config import Config
from netlock.errors import OutputError
from netlock.plan import Plan
from sim.core.liveness import count_stalled
from sim.core.metrics import Latency, plan_predicted, timeseries
from sim.core.rows import Columns, Table, column
from sim.core.run_spec import stall_bound_us, unanswered_cutoff_us
from sim.core.safety import count_violations

if TYPE_CHECKING:
    import pandas as pd

Progress = Callable[[float, float], None]
"""``progress(now_us, end_us)``: how far a run has come, in simulated microseconds."""


class SimResult:
    """A finished run: the summary (JSON contract) and its tables, DataFrames made from the
    recorded columns when first read (``requests``, ``txns``, ``timeseries``)."""

    def __init__(self, summary: dict[str, Any], requests: Table, txns: Table,
                 timeseries: pd.DataFrame | Callable[[], pd.DataFrame],
                 config: dict[str, Any]) -> None:
        """``requests``, ``txns``: DataFrames or their :class:`Columns`; ``timeseries``: a
        DataFrame or what makes it."""
        self.summary = summary
        self.config = config
        self._requests = requests
        self._txns = txns
        self._timeseries = timeseries

    def __repr__(self) -> str:
        return f"SimResult(summary={self.summary!r})"

    @property
    def requests(self) -> pd.DataFrame:
        """Granted requests, one row each (``sim.core.rows.USE_FIELDS``)."""
        if isinstance(self._requests, Columns):
            self._requests = self._requests.frame()
        return self._requests

    @property
    def txns(self) -> pd.DataFrame:
        """Committed transactions, one row each (``sim.core.rows.TXN_FIELDS``)."""
        if isinstance(self._txns, Columns):
            self._txns = self._txns.frame()
        return self._txns

    @property
    def timeseries(self) -> pd.DataFrame:
        """Granted requests/s and transactions/s per tenant over time
        (:func:`sim.core.metrics.timeseries`)."""
        if callable(self._timeseries):
            self._timeseries = self._timeseries()
        return self._timeseries

    def to_json(self) -> dict[str, Any]:
        return self.summary

    def write(self, out_dir: str | Path, fmt: str = "parquet") -> list[Path]:
        """Write ``summary.json``, ``config.json`` and the tables (Parquet or CSV) as one
        folder: into a temporary sibling, which then replaces ``out_dir`` (files there that
        a run does not write are carried over). A kill leaves the earlier run whole (at
        ``out_dir``, or at a hidden ``.NAME.old-*`` sibling if it came between the two
        renames), never a mix of two runs. A folder that cannot be written (a full disk, a
        read-only parent) is :class:`OutputError`, the earlier run left as it was."""
        out = Path(out_dir)
        try:
            return self._replace_folder(out, fmt)
        except OSError as exc:
            where = exc.filename or out
            raise OutputError(f"--out {out}: cannot write {where}: "
                              f"{exc.strerror or exc}") from None

    def _replace_folder(self, out: Path, fmt: str) -> list[Path]:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.new-", dir=out.parent))
        try:
            names = self._write_into(tmp, fmt)
            if out.exists():
                for old in out.iterdir():
                    if old.name in RESULT_FILES or (tmp / old.name).exists():
                        continue
                    if old.is_dir():
                        os.replace(old, tmp / old.name)
                    else:
                        os.link(old, tmp / old.name)
                aside = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
                os.replace(out, aside / out.name)
                os.replace(tmp, out)
                shutil.rmtree(aside)
            else:
                os.replace(tmp, out)
            atomic.sync_folder(out.parent)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp)
        return [out / n for n in names]

    def _write_into(self, out: Path, fmt: str) -> list[str]:
        names = []
        for name, doc in (("summary.json", self.summary), ("config.json", self.config)):
            (out / name).write_text(json.dumps(doc, indent=2, default=_plain) + "\n")
            names.append(name)
        for name, frame in (("requests", self.requests), ("txns", self.txns),
                            ("timeseries", self.timeseries)):
            path = out / f"{name}.{fmt}"
            if fmt == "csv":
                frame.to_csv(path, index=False)
            else:
                frame.to_parquet(path, index=False)
            names.append(path.name)
        for name in names:
            with open(out / name, "rb") as fh:
                os.fsync(fh.fileno())
        return names


RESULT_FILES = frozenset({"summary.json", "config.json"} | {
    f"{t}.{f}" for t in ("requests", "txns", "timeseries") for f in ("parquet", "csv")})
"""What :meth:`SimResult.write` writes: files of an earlier run that are not carried over."""


def _plain(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def result_of(cfg: Config, requests: Table, txns: Table, *, engine: str,
              wall_s: float, retries: int, events: int, stale_grants: int,
              ignored_grants: int, hold_us: float, plan: Plan, manager: dict[str, Any],
              open_waits: list[tuple[int, float, float]],
              handbacks: Table, one_at_a_time: bool = False,
              replay_txns: int | None = None,
              open_loop: tuple[float, int, int] = (-math.inf, 0, 0)) -> SimResult:
    """A finished run's result from its recorded requests and transactions (every engine's
    summary has these keys, measured over the window after ``sim.warmup_s`` up to
    :func:`run_end`; ``replay_txns``: a timed trace replay's transactions in all);
    ``open_waits``: ``(lock, asked_us, end_us)`` of waits no grant ended (locks still
    awaited at the end); ``handbacks``: the stale grants
    (:data:`sim.core.metrics.HANDBACK_DTYPE`); ``one_at_a_time``: the clients take locks
    one at a time, so a request's wait begins when its acquire is sent (:func:`stalled_waits`);
    ``open_loop``: ``(cutoff_us, sent, dropped)``, the open-loop acquires sent before the
    engine's :func:`sim.core.run_spec.unanswered_cutoff_us` and those of them a lock
    server's RX rings dropped (:func:`unanswered`).

    The safety checker runs on a second thread meanwhile (its compiled passes let go of
    the GIL): on TPC-C's simulated second it and the rest take about 2 s each."""
    start_us = cfg.sim.warmup_s * 1e6
    end_us, ended = run_end(cfg, txns, replay_txns)
    window_s = (cfg.sim.duration_s if ended == "duration"
                else max(end_us - start_us, 0.0) / 1e6)
    span_s = window_s if window_s > 0 else math.inf
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="netlock-safety") as pool:
        checked = pool.submit(count_violations, column(requests, "lock"),
                              column(requests, "mode"), column(requests, "t_us"),
                              column(requests, "end_us"))
        req_in = window_mask(requests, start_us, end_us)
        txn_in = window_mask(txns, start_us, end_us)
        req_tenant = column(requests, "tenant")[req_in]
        txn_tenant = column(txns, "tenant")[txn_in]
        stalled = stalled_waits(requests, open_waits, handbacks, stall_bound_us(cfg),
                                outages(cfg), one_at_a_time)
        never = unanswered(cfg, requests, *open_loop)
        granted = len(req_tenant)
        by_switch = int(np.count_nonzero(column(requests, "source")[req_in] == 0))
        tenants = sorted({t.id for t in cfg.tenants})
        series = partial(timeseries, requests, txns, end_us, cfg.sim.timeseries_bin_s * 1e6,
                         tenants)
        latency = Latency.of(column(requests, "latency_us")[req_in]).to_dict()
        txn_latency = Latency.of(column(txns, "latency_us")[txn_in]).to_dict()
        violations = checked.result()
    summary: dict[str, Any] = {
        "engine": engine,
        "sim_time_s": cfg.sim.end_s if ended == "duration" else end_us / 1e6,
        "ended": ended,
        "granted": granted,
        "throughput_rps": granted / span_s,
        "tps": len(txn_tenant) / span_s,
        "switch_share": by_switch / granted if granted else 0.0,
        "latency_us": latency,
        "txn_latency_us": txn_latency,
        "retries": retries,
        "violations": violations,
        "stalled": stalled + never,
        "unanswered": never,
        "wall_s": wall_s,
        "events": events,
        "measured_s": window_s,
        "switch_rps": by_switch / span_s,
        "server_rps": (granted - by_switch) / span_s,
        "stale_grants": stale_grants,
        "ignored_grants": ignored_grants,
        "hold_time_us": hold_us,
        "plan": plan.summary.to_dict(),
        "plan_predicted": plan_predicted(plan.summary, granted / span_s, by_switch / span_s,
                                         (granted - by_switch) / span_s),
        "manager": manager,
        "tenants": {str(t): _tenant_summary(req_tenant, txn_tenant, t, span_s)
                    for t in tenants},
        "incomplete": None,
    }
    return SimResult(summary=summary, requests=requests, txns=txns, timeseries=series,
                     config=cfg.to_dict())


ENDINGS = ("duration", "trace")
"""Why a run's measured window ends (a summary's ``ended``): :func:`run_end`."""


def run_end(cfg: Config, txns: Table, replay_txns: int | None) -> tuple[float, str]:
    """Where the run's measured window ends (us) and why: at ``sim.end_s`` (``duration``),
    or, for a timed trace replay whose every transaction (``replay_txns`` in all) committed
    before it, just after the last commit (``trace``: the trace is exhausted, nothing is
    left to run)."""
    end_us = cfg.sim.end_s * 1e6
    if replay_txns is not None and len(txns) and len(txns) >= replay_txns:
        last = float(np.nextafter(column(txns, "t_us").max(), np.inf))
        if last < end_us:
            return last, "trace"
    return end_us, "duration"


def outages(cfg: Config) -> tuple[tuple[float, float], ...]:
    """The injected failures' windows (us) in which locks may not be granted: from the
    failure until a lease after the restart (or the end), and a lease after a lock server
    fails (its heir's grace)."""
    fl, lease, end = cfg.failures, cfg.lease.us, cfg.sim.end_s * 1e6
    windows = [(f.at_s * 1e6, f.at_s * 1e6 + 2 * lease) for f in fl.server_failures]
    if fl.switch_fail_s is not None:
        back = end if fl.switch_restart_s is None else fl.switch_restart_s * 1e6 + 2 * lease
        windows.append((fl.switch_fail_s * 1e6, min(back, end)))
    return tuple(windows)


def stalled_waits(requests: Table, open_waits: list[tuple[int, float, float]],
                  handbacks: Table, bound_us: float,
                  excused: tuple[tuple[float, float], ...] = (),
                  one_at_a_time: bool = False) -> int:
    """Waits for a lock that saw it idle for longer than ``bound_us`` (:mod:`sim.core.liveness`):
    every granted request's, from its transaction's first ask to its grant, and each wait
    ``open_waits`` lists; a stale grant (``handbacks``) is an instant of use; ``excused``:
    injected outages.

    A client that sends all of an attempt's acquires at once asks for every lock at the
    first attempt's start (``asked_us``). One that takes locks ``one_at_a_time`` asks for a
    lock only when it sends that acquire (``t_us - latency_us``): before then the lock is
    idle for no fault of the lock manager (the transaction is queued on an earlier lock or
    backing off), and the acquire in flight when an attempt is given up is one of
    ``open_waits``.

    Only waits longer than the bound can stall (as :func:`count_stalled` says), so they and
    the uses of their locks are picked here before anything is copied: a run's tens of
    millions of requests are not concatenated for the few waits that matter."""
    lock = column(requests, "lock")
    start = column(requests, "t_us")
    asked = (start - column(requests, "latency_us") if one_at_a_time
             else column(requests, "asked_us"))
    waits = np.asarray(open_waits, dtype=np.float64).reshape(-1, 3)
    long = np.flatnonzero(start - asked > bound_us)
    open_long = np.flatnonzero(waits[:, 2] - waits[:, 1] > bound_us)
    if len(long) == 0 and len(open_long) == 0:
        return 0
    wait_lock = np.concatenate([lock[long], waits[open_long, 0].astype(np.int64)])
    used = np.isin(lock, wait_lock)
    back_lock = column(handbacks, "lock").astype(np.int64)
    back_t = column(handbacks, "t_us").astype(np.float64)
    backed = np.isin(back_lock, wait_lock)
    return count_stalled(np.concatenate([lock[used], back_lock[backed]]),
                         np.concatenate([start[used], back_t[backed]]),
                         np.concatenate([column(requests, "end_us")[used], back_t[backed]]),
                         wait_lock, np.concatenate([asked[long], waits[open_long, 1]]),
                         np.concatenate([start[long], waits[open_long, 2]]), bound_us, excused)


def unanswered(cfg: Config, requests: Table, cutoff_us: float, sent: int,
               dropped: int) -> int:
    """Open-loop acquires sent before ``cutoff_us`` (``sent`` of them) that no grant
    answered by the run's end, a stall bound later at least: neither granted (``asked_us``
    before the cutoff) nor dropped by a lock server's full RX rings (``dropped``: an
    overloaded server's loss, reported as ``manager.server_rx_drops``; the authors' client
    never resends it). What is left waits in a switch queue or a server's overflow backlog
    that does not drain, or was lost by the network: a stalled request. 0 for closed-loop
    runs (``cutoff_us`` -inf) and for a run measured over a window that ends before the
    engine's (a run stopped early: its latest requests are merely in flight)."""
    if cutoff_us == -math.inf or unanswered_cutoff_us(cfg) < cutoff_us:
        return 0
    granted = int(np.count_nonzero(column(requests, "asked_us") < cutoff_us))
    return max(sent - dropped - granted, 0)


def window_mask(frame: Table, start_us: float, end_us: float) -> np.ndarray:
    """Which rows have ``start_us <= t_us < end_us`` (:func:`sim.core.metrics.in_window`'s
    rows, without copying every column of them: the summary reads a few)."""
    t = column(frame, "t_us")
    return (t >= start_us) & (t < end_us)


def _tenant_summary(req_tenant: np.ndarray, txn_tenant: np.ndarray, tenant: int,
                    span_s: float) -> dict[str, float]:
    """``req_tenant`` / ``txn_tenant``: the tenant of each request / transaction in the
    window; ``span_s``: the window's length (s), inf for an empty one (rates 0)."""
    granted = int(np.count_nonzero(req_tenant == tenant))
    done = int(np.count_nonzero(txn_tenant == tenant))
    return {"throughput_rps": granted / span_s, "tps": done / span_s}
