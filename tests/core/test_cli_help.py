"""Every `netlock` command answers --help with an example; bad flags exit 2 cleanly."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from netlock.cli.app import app


def command_paths() -> list[list[str]]:
    group = typer.main.get_command(app)
    paths = []
    for name, cmd in group.commands.items():
        subs = getattr(cmd, "commands", None)
        paths += [[name, sub] for sub in subs] if subs else [[name]]
    return paths


def test_the_toolkit_commands_are_registered():
    names = {p[0] for p in command_paths()}
    assert {"demo", "trace", "plan", "sim", "sweep", "push", "stats", "bench",
            "config"} <= names


@pytest.mark.parametrize("path", command_paths(), ids=" ".join)
def test_help_has_an_example(path: list[str]):
    result = CliRunner().invoke(app, [*path, "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "Example" in result.output


@pytest.mark.parametrize("path", command_paths(), ids=" ".join)
def test_an_unknown_flag_exits_2_without_traceback(path: list[str]):
    result = CliRunner().invoke(app, [*path, "--no-such-flag"])
    assert result.exit_code == 2
    assert "Traceback" not in result.output
