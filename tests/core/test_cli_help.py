"""Every `netlock` command answers --help with an example; bad flags exit 2 cleanly."""

from __future__ import annotations

import subprocess
import sys

import pytest
import typer
from typer.testing import CliRunner

from netlock.cli.app import COMMANDS, _load, app, command_group


def command_paths() -> list[list[str]]:
    group = command_group(load_all=True)
    paths = []
    for name, cmd in group.commands.items():
        subs = getattr(cmd, "commands", None)
        paths += [[name, sub] for sub in subs] if subs else [[name]]
    return paths


def test_the_lazy_index_matches_what_the_register_functions_add():
    """``netlock --help`` lists COMMANDS without importing the command modules: each entry must
    name a command its register function adds, with that command's short help, in the order
    an eager registration lists them (config and trace, groups, after the commands)."""
    group = command_group(load_all=True)
    eager = typer.Typer()
    for target in dict.fromkeys(target for target, _ in COMMANDS.values()):
        module, _, func = target.partition(":")
        getattr(__import__(module, fromlist=[func]), func)(eager)
    registered = typer.main.get_group(eager).commands
    assert set(COMMANDS) == set(registered), "add the missing command to netlock.cli.app.COMMANDS"
    for name, (target, short) in COMMANDS.items():
        assert name in _load(target), (name, target)
        assert group.commands[name].help.split("\n\n")[0].strip() == short, name


def test_help_imports_no_command_module():
    """``netlock --help`` stays fast: listing the commands imports none of their modules."""
    code = ("import sys; from typer.testing import CliRunner; from netlock.cli.app import app; "
            "r = CliRunner().invoke(app, ['--help']); assert r.exit_code == 0, r.output; "
            "print(sorted(m for m in ('pandas', 'numba', 'matplotlib', 'simpy', 'sim', "
            "'planner', 'hwrunner', 'netlock.config') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]", done.stdout


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
