"""Ctrl-C: one line, exit status 130, within seconds, and no process left behind.

The first Ctrl-C raises KeyboardInterrupt, which unwinds like any exception: the commands'
``finally`` blocks run (temporary files are removed, emulator state is saved, a sweep stops
its workers). Then any worker process still running is stopped, ``netlock: interrupted`` is
printed and the process exits 130. A second Ctrl-C, or clean-up at exit that takes longer than
:data:`EXIT_GRACE_S`, ends the process at once with the same status.

An interrupt that lands inside a C callback (numba's compiler calls back into Python) cannot
unwind from there: Python reports it as "ignored" and the caller fails with an error of its
own. So the first Ctrl-C is also remembered (:func:`pending`): such an error is then the
interrupt, not a fault, and the report of the ignored KeyboardInterrupt is not printed.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from types import FrameType
from typing import NoReturn

EXIT_CODE = 130
EXIT_GRACE_S = 3.0
MESSAGE = "netlock: interrupted"


_interrupted = threading.Event()
_reported = threading.Event()


def install() -> None:
    """Take over SIGINT for the console script: the first raises KeyboardInterrupt, the next
    ends the process at once."""
    signal.signal(signal.SIGINT, _first_interrupt)
    default_hook = sys.unraisablehook

    def hook(unraisable: sys.UnraisableHookArgs) -> None:
        if not isinstance(unraisable.exc_value, KeyboardInterrupt):
            default_hook(unraisable)

    sys.unraisablehook = hook


def finishing() -> None:
    """The command has done its work and printed its result; the interpreter shuts down.
    A Ctrl-C now has nothing left to stop, and Python's shutdown restores the default
    handler, under which it would kill the process by the signal with no message. So SIGINT
    is ignored (a handler Python's shutdown leaves alone): the command exits with its own
    status."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def pending() -> bool:
    """Whether Ctrl-C has been pressed in this process."""
    return _interrupted.is_set()


def _first_interrupt(signum: int, frame: FrameType | None) -> None:
    _interrupted.set()
    signal.signal(signal.SIGINT, _exit_now)
    raise KeyboardInterrupt


def _exit_now(*_: object) -> None:
    os.write(2, f"{MESSAGE}\n".encode())
    os._exit(EXIT_CODE)


def stop_children() -> None:
    """Terminate the worker processes this process started (multiprocessing's children)."""
    multiprocessing = sys.modules.get("multiprocessing")
    if multiprocessing is None:
        return
    children = multiprocessing.active_children()
    for child in children:
        child.terminate()
    for child in children:
        child.join(EXIT_GRACE_S)


def leave_promptly() -> None:
    """The command has ended on an interrupt: make sure the exit does not linger (a second
    Ctrl-C or :data:`EXIT_GRACE_S` of clean-up at exit ends the process at once)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, lambda *_: os._exit(EXIT_CODE))
    timer = threading.Timer(EXIT_GRACE_S, os._exit, (EXIT_CODE,))
    timer.daemon = True
    timer.start()


def report() -> None:
    """Print :data:`MESSAGE` on stderr, once however many layers see the interrupt (a
    command's own handling, typer's, which turns a Ctrl-C outside the command's body into a
    silent exit 130, and the console script's)."""
    if not _reported.is_set():
        _reported.set()
        print(MESSAGE, file=sys.stderr, flush=True)


def exit_interrupted() -> NoReturn:
    """End a command interrupted outside its own handling (while importing, say)."""
    leave_promptly()
    stop_children()
    report()
    sys.exit(EXIT_CODE)
