"""Rich consoles for the commands: progress and logs on stderr, results on stdout.

On a terminal rich uses its width and animates status lines and progress bars. Elsewhere (a
pipe, a log file, CI) nothing animates and printed lines are never wrapped: a status is one
plain line when it starts (unless it is for terminals only), and a progress bar is not shown,
so that an error found while it runs is still the only line on stderr.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

NOT_A_TERMINAL_WIDTH = 160
"""Width for tables printed to a pipe or file (their lines are not wrapped beyond it)."""


def console(stderr: bool = True) -> Console:
    """A console on stderr (progress, logs) or stdout (results)."""
    found = Console(stderr=stderr)
    if found.is_terminal:
        return found
    return Console(stderr=stderr, soft_wrap=True, width=max(found.width, NOT_A_TERMINAL_WIDTH))


@contextmanager
def status(message: str, log: Console | None = None,
           terminal_only: bool = False) -> Iterator[None]:
    """A status line on stderr while the block runs: a spinner on a terminal, else the
    message once (not at all with ``terminal_only``: for blocks that may end in a bad-input
    error, which must stay the only line)."""
    log = log or console()
    if log.is_terminal:
        with log.status(message):
            yield
    else:
        if not terminal_only:
            log.print(message)
        yield


@contextmanager
def progress_bar(description: str, total: float, unit: str = "", scale: float = 1.0,
                 transient: bool = False,
                 log: Console | None = None) -> Iterator[Callable[[float], None]]:
    """A progress bar on stderr; yields ``update(done)`` (``done`` and ``total`` in the
    caller's units; shown divided by ``scale`` with ``unit``)."""
    log = log or console()
    shown = TextColumn(f"{{task.completed:,.1f}} / {{task.total:,.1f}} {unit}".rstrip())
    with Progress(TextColumn("[progress.description]{task.description}"), BarColumn(), shown,
                  TimeElapsedColumn(), console=log, transient=transient or not log.is_terminal,
                  disable=not log.is_terminal) as bar:
        task = bar.add_task(description, total=total / scale)
        yield lambda done: bar.update(task, completed=done / scale)
