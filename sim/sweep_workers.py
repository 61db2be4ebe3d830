"""Where a set of points runs (sweeps, the paper's figures, capacity, the Concordia and
NetStore experiments): in this process, in local worker processes (Ctrl-C and a killed parent
end them; progress comes back through a queue) or on a dask.distributed cluster. The seeds
make all three give the same results."""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import queue
import signal
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any

from netlock.config import Config
from netlock.errors import ConfigError, NetlockError
from sim.sweep_grid import Point
from sim.sweep_row import run_point

DASK_CONNECT_S = 10
REPORT_EVERY_S = 0.5
"""Least wall time between two progress reports of a point running in a worker process (the
last, at the point's end, always goes)."""


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


def run_on_dask(todo: list[Point], scheduler: str,
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
