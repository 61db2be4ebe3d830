"""Outputs that cannot be written (issue 35): a file where a folder should be and a full
disk are one line and exit 2, and a run folder is never left half-written."""

from __future__ import annotations

import errno

from typer.testing import CliRunner

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
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"netlock: error: --out {blocker / 'run'}: cannot write {blocker}")
    assert line.endswith(("Not a directory", "File exists"))


def test_a_full_disk_leaves_no_summary_without_its_tables(tmp_path, monkeypatch):
    from sim.core import result as result_module

    real = result_module.SimResult._write_into

    def full(self, folder, fmt):
        real(self, folder, fmt)
        raise OSError(errno.ENOSPC, "No space left on device", str(folder / "summary.json"))

    monkeypatch.setattr(result_module.SimResult, "_write_into", full)
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
