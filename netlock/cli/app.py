"""The ``netlock`` console script.

``netlock`` owns only the composition: its own commands (``config``) are added here, and
``sim``, ``planner`` and ``hwrunner`` contribute theirs through the ``netlock.commands``
entry-point group (each entry is ``register(app: typer.Typer) -> None``). That keeps the
dependency arrow pointing into ``netlock`` while one command line covers the whole toolkit.
"""

from __future__ import annotations

import sys
from importlib.metadata import entry_points

import typer

from netlock.errors import NetlockError

app = typer.Typer(
    name="netlock",
    help="Plan, simulate and deploy NetLock, the in-switch lock manager.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        from netlock import __version__

        typer.echo(f"netlock {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the version and exit."),
) -> None:
    """Plan, simulate and deploy NetLock, the in-switch lock manager.

    Start with `netlock demo`; every command has --help with an example. File formats
    and results: docs/formats.md; config keys: docs/config.md (or netlock config keys).
    """


def _register_all() -> None:
    from netlock.cli import bench_cmd, config_cmd

    config_cmd.register(app)
    bench_cmd.register(app)
    for ep in sorted(entry_points(group="netlock.commands"), key=lambda e: e.name):
        ep.load()(app)


_register_all()


def run() -> None:
    """Run the app; a :class:`NetlockError` becomes one line and exit 2 (the console script
    is :func:`netlock.cli.main`, which also owns Ctrl-C)."""
    try:
        app()
    except NetlockError as exc:
        print(f"netlock: error: {exc}", file=sys.stderr)
        sys.exit(exc.exit_code)
