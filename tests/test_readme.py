"""The README's session runs as written (in a scratch directory beside the configs), as a user
sees it: every command without a traceback or a warning, progress only on stderr, exactly one
JSON object on stdout with --json, and nothing left that git would pick up. Every command's
--help works and shows an example."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from netlock.cli.app import app, command_group

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
PROGRESS = ("simulating (", "sweep runs (", "compiling the fast engine", "━")
"""What progress bars and status lines print: never on stdout."""


def session_script() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## A session", 1)[1]
    return re.search(r"```sh\n(.*?)```", section, re.S).group(1)


def session_commands() -> list[str]:
    """The session's commands, continuation lines joined, comments and `source` left out."""
    joined = session_script().replace("\\\n", " ")
    return [" ".join(line.split()) for line in joined.splitlines()
            if line.strip() and not line.lstrip().startswith("#")
            and not line.startswith("source ")]


def user_env() -> dict[str, str]:
    """The environment of a user's shell with the venv active; warnings shown as Python
    shows them by default, plus deprecations (what a user would be told to fix)."""
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
            "PYTHONWARNINGS": "default::DeprecationWarning"}


def check_output(command: str, done: subprocess.CompletedProcess) -> None:
    where = f"{command}\n--- stdout:\n{done.stdout[-2000:]}\n--- stderr:\n{done.stderr[-2000:]}"
    assert done.returncode == 0, where
    assert "Traceback" not in done.stdout + done.stderr, where
    assert "Warning" not in done.stderr, where
    if "--json" in command.split():
        lines = done.stdout.strip().splitlines()
        assert len(lines) == 1, where
        assert isinstance(json.loads(lines[0]), dict), where
    else:
        assert not any(mark in done.stdout for mark in PROGRESS), where


def test_readme_session_runs(tmp_path: Path) -> None:
    (tmp_path / "configs").symlink_to(ROOT / "configs")
    shutil.copy(ROOT / ".gitignore", tmp_path / ".gitignore")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    env = user_env()
    for command in session_commands():
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", command], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=600)
        check_output(command, done)
    for name in ("zipf.parquet", "plan.yaml", "plan.png", "switch.json", "sweep/results.csv",
                 "run/summary.json", "run/latency_cdf.png", "stats.parquet"):
        assert (tmp_path / name).exists(), name
    summary = yaml.safe_load((tmp_path / "plan.yaml").read_text())["summary"]
    assert summary["locks_in_switch"] > 0
    assert summary["rates"] == "closed-loop"  # --config: the rates the rack's clients offer
    untracked = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"],
                               cwd=tmp_path, capture_output=True, text=True, check=True)
    assert untracked.stdout.split("\n")[:-1] == ["?? .gitignore", "?? configs"], \
        ".gitignore should cover what the session writes"


def command_paths() -> list[list[str]]:
    """Every command and subcommand of ``netlock``, as argument lists."""
    found: list[list[str]] = [[]]

    def walk(group, prefix: list[str]) -> None:
        for name, command in sorted(group.commands.items()):
            found.append([*prefix, name])
            if hasattr(command, "commands"):
                walk(command, [*prefix, name])

    walk(command_group(load_all=True), [])
    return found


def test_netlock_help_imports_and_prints_cleanly() -> None:
    done = subprocess.run([str(BIN / "netlock"), "--help"], env=user_env(),
                          capture_output=True, text=True, timeout=120)
    check_output("netlock --help", done)
    assert done.stderr == ""


@pytest.mark.parametrize("path", command_paths()[1:], ids=" ".join)
def test_every_help_shows_an_example_cleanly(path: list[str]) -> None:
    command = " ".join(["netlock", *path, "--help"])
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("default")
        done = CliRunner().invoke(app, [*path, "--help"])
    assert done.exit_code == 0 and done.exception is None, command
    assert done.stderr == "" and not seen, (command, [str(w.message) for w in seen])
    is_group = path[-1] in {"config", "trace"}
    assert is_group or "Example" in done.stdout, f"{command}: no example"
    examples = [line.strip().removeprefix("Example:").strip()
                for line in done.stdout.splitlines()
                if line.strip().removeprefix("Example:").strip().startswith("netlock ")]
    assert is_group or examples, f"{command}: no example line"
    for line in examples:
        assert not line.endswith("\\") and len(line) <= 76, (
            f"{command}: example {line!r} cannot be pasted as shown (one line of at most "
            f"76 characters, no continuation)")


def test_packaging_metadata_has_no_deprecated_license_table() -> None:
    """setuptools warns about ``license = {text = ...}``; an SPDX string is current."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'^license = "[A-Za-z0-9.-]+"$', text, re.M)
    assert not re.search(r"^license = \{", text, re.M)


def _block(section: str, lang: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    part = text.split(f"## {section}", 1)[1].split("\n## ", 1)[0]
    return re.search(rf"```{lang}\n(.*?)```", part, re.S).group(1)


def test_readme_papermill_command_works_on_a_fresh_clone(tmp_path: Path) -> None:
    """The Notebooks section's papermill command, on a clone without notebooks/results/: a
    stand-in papermill fails as the real one does when the output's folder is missing."""
    (tmp_path / "notebooks").mkdir()
    fake = tmp_path / ".venv" / "bin" / "papermill"
    fake.parent.mkdir(parents=True)
    fake.write_text('#!/bin/sh\n[ -f "$1" ] || { echo "no input $1" >&2; exit 1; }\n'
                    '[ -d "$(dirname "$2")" ] || { echo "output folder $(dirname "$2") '
                    'doesn\'t exist" >&2; exit 1; }\ntouch "$2"\n')
    fake.chmod(0o755)
    lines = _block("Notebooks", "sh").replace("\\\n", " ").splitlines()
    command = next(line.split("#")[0] for line in lines if "papermill" in line
                   and line.startswith("cd "))
    (tmp_path / "notebooks" / command.split("papermill", 1)[1].split()[0]).write_text("{}")
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", command], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "notebooks" / "results" / "paper-6.4-memory.ipynb").exists()


def test_readme_python_section_runs(tmp_path: Path) -> None:
    (tmp_path / "configs").symlink_to(ROOT / "configs")
    code = _block("Use it from Python", "python")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=user_env(),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    throughput, p99 = (float(v) for v in done.stdout.split())
    assert throughput > 0 and p99 > 0
    assert (tmp_path / "run" / "summary.json").exists()
