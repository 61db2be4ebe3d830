"""Random draws made ahead of need on a second thread, with the values drawing on demand gives.

The fast engine's event loop lets go of the GIL while it runs (numba ``nogil``), so a worker
thread can draw the next blocks of hop delays and the next batches of transactions
meanwhile; when the loop runs out, its refill takes what is ready instead of drawing it.
Each stream is drawn by one party at a time and in its own order (the worker runs its
tasks first in, first out, and a refill draws by itself only after taking every pending
result), so every value is the one drawing on demand gives. On TPC-C, whose draws are about
a tenth of the loop's work, a 0.2 s run took 11 % less wall time (README, Benchmarks). With
as many processes as cores (a sweep) the thread competes with the other process and runs
were slower, so the fast engine draws on demand by default (:data:`sim.fast.fast_model.DRAW_AHEAD`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Generic, TypeVar

T = TypeVar("T")


class Worker:
    """One worker thread, started on first use; :meth:`close` drops the work not begun."""

    def __init__(self) -> None:
        self._pool: ThreadPoolExecutor | None = None

    def submit(self, task: Callable[[], T]) -> Future[T]:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="netlock-draws")
        return self._pool.submit(task)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None


class DrawAhead(Generic[T]):
    """The results of successive ``draw()`` calls, in order, taken ``count`` at a time.

    From the second :meth:`take` on, as many results as the last take asked for are drawn
    ahead on ``worker``: a stream taken once (a short run) costs no draw it does not use.
    Without a worker every result is drawn when taken (streams that must be drawn in the
    order they are needed)."""

    def __init__(self, draw: Callable[[], T], worker: Worker | None) -> None:
        self._draw = draw
        self._worker = worker
        self._pending: deque[Future[T]] = deque()
        self._takes = 0

    @property
    def ahead(self) -> bool:
        """Whether results are drawn ahead (the stream has a worker)."""
        return self._worker is not None

    @property
    def takes(self) -> int:
        """Calls of :meth:`take` so far."""
        return self._takes

    def take(self, count: int) -> list[T]:
        """The next ``count`` results: those drawn ahead, then drawn here if too few."""
        out = [self._pending.popleft().result()
               for _ in range(min(count, len(self._pending)))]
        out += [self._draw() for _ in range(count - len(out))]
        self._takes += 1
        if self._worker is not None and self._takes >= 2:
            while len(self._pending) < count:
                self._pending.append(self._worker.submit(self._draw))
        return out
