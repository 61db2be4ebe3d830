"""The ``netlock`` command line: a typer app composed from per-package command modules.

:func:`main` is the console script. It takes over Ctrl-C before anything else is imported, so
that an interrupt at any moment, even while numpy, pandas and the commands are still
importing, ends the same way: one ``netlock: interrupted`` line and exit status 130 within
seconds (:mod:`netlock.cli.interrupt`).
"""

from __future__ import annotations

import os
import sys
from typing import NoReturn

from netlock.cli import collector, interrupt

REFUSED = 2
"""Exit status of a refused input: one line on stderr (:class:`netlock.errors.NetlockError`)."""


def leave_refused() -> NoReturn:
    """Exit :data:`REFUSED` at once, after the line. The command's own clean-up (``finally``
    blocks, atomic writes) has run; what is left is the interpreter's exit, whose C++ static
    destructors can still find a library's thread winding down (pyarrow's CSV reader after
    a refused trace: ``terminate called without an active exception``, 1 run in 60 on a
    loaded machine), turning a clean refusal into an abort message."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(REFUSED)


def main() -> None:
    """Entry point of the ``netlock`` console script."""
    interrupt.install()
    collector.starting()
    try:
        from netlock.cli.app import run

        run()
    except KeyboardInterrupt:
        interrupt.exit_interrupted()
    except Exception:
        if not interrupt.pending():
            raise
        interrupt.exit_interrupted()
    except SystemExit as exc:
        if exc.code == interrupt.EXIT_CODE:
            interrupt.leave_promptly()
            interrupt.stop_children()
            interrupt.report()
        else:
            interrupt.finishing()
            if exc.code == REFUSED:
                leave_refused()
        raise
    finally:
        collector.leaving()
    interrupt.finishing()
