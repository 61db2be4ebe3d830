"""Commands contributed by ``hwrunner``: ``netlock push``, ``netlock stats``, ``netlock
traffic`` and ``netlock autopilot``, each in its own module (``push_cli.py``,
``stats_cli.py``, ``traffic_cli.py``, ``autopilot_cli.py``) on the options and the opening
of a target they share (``cli_target.py``)."""

from __future__ import annotations

import typer

from hwrunner.autopilot_cli import autopilot_command
from hwrunner.push_cli import push_command
from hwrunner.stats_cli import stats_command
from hwrunner.traffic_cli import traffic_command


def register(app: typer.Typer) -> None:
    """Add ``push``, ``stats``, ``traffic`` and ``autopilot`` to the ``netlock`` app."""
    app.command("push")(push_command)
    app.command("stats")(stats_command)
    app.command("traffic")(traffic_command)
    app.command("autopilot")(autopilot_command)
