"""The ``netlock`` command line: a typer app composed from per-package command modules.

:func:`main` is the console script. It takes over Ctrl-C before anything else is imported, so
that an interrupt at any moment, even while numpy, pandas and the commands are still
importing, ends the same way: one ``netlock: interrupted`` line and exit status 130 within
seconds (:mod:`netlock.cli.interrupt`).
"""

from __future__ import annotations


def main() -> None:
    """Entry point of the ``netlock`` console script."""
    from netlock.cli import interrupt

    interrupt.install()
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
        raise
    interrupt.finishing()
