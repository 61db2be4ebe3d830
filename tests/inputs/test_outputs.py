"""Outputs that cannot be written (issue 35): a file where a folder should be and a full
disk are one line and exit 2, and a run folder is never left half-written."""

from __future__ import annotations

import errno

from typer.testing import CliRunner

from netlock import atomic
from netlock.cli.app import app
from tests.config.config_helpers import CONFIGS

SHORT = ["--set", "sim.duration_s=0.0002", "--set", "sim.warmup_s=0"]
MICRO = str(CONFIGS / "micro-exclusive.yaml")


def run(*args: str):
    result = CliRunner().invoke(app, list(args))
    assert "Traceback" not in result.output
    return result


def test_a_file_where_the_out_folder_should_be(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = run("sim", MICRO, *SHORT, "--out", str(blocker / "run"))
    assert result.exit_code == 2, result.output
    assert result.stderr.strip().splitlines() == [
        f"netlock: error: --out {blocker / 'run'}: cannot write {blocker / 'run'}: "
        "Not a directory"]


def test_a_full_disk_leaves_no_summary_without_its_tables(tmp_path, monkeypatch):
    real = atomic.write_text

    def full(target, text):
        if str(target).endswith("summary.json"):
            raise OSError(errno.ENOSPC, "No space left on device", str(target))
        real(target, text)

    monkeypatch.setattr(atomic, "write_text", full)
    out = tmp_path / "run"
    result = run("sim", MICRO, *SHORT, "--out", str(out))
    assert result.exit_code == 2, result.output
    assert "No space left on device" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not out.exists() or list(out.iterdir()) == []


def test_any_os_error_of_a_command_is_one_line(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = run("trace", "gen", "micro", "--config", MICRO, "--requests", "100", "--out",
                 str(blocker / "t.csv"))
    assert result.exit_code == 2, result.output
    assert len(result.stderr.strip().splitlines()) == 1
