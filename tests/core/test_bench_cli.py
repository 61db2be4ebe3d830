"""``netlock bench`` reports misses and fails on them only with ``--check``."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from netlock.bench import BenchResult
from netlock.cli import bench_cmd
from netlock.cli.app import app


def _suite(quick: bool) -> list[BenchResult]:
    return [BenchResult("fake", "rate", 1.0, "rps", 3, baseline_name="base", baseline_value=2.0,
                        ok=False, note="slow")]


@pytest.fixture(autouse=True)
def fake_suite(monkeypatch):
    monkeypatch.setattr(bench_cmd, "discover", lambda: {"fake": _suite})


@pytest.mark.parametrize(("flags", "code"), [([], 0), (["--check"], 1)])
def test_a_missed_target_is_named_and_fails_only_with_check(flags, code):
    result = CliRunner().invoke(app, ["bench", "--quick", "--json", *flags])
    assert result.exit_code == code
    assert json.loads(result.stdout)["ok"] is False
    assert "fake/rate" in result.stderr


def test_only_takes_comma_separated_suites(monkeypatch):
    ran = []

    def suite(name):
        return lambda quick: ran.append(name) or []

    monkeypatch.setattr(bench_cmd, "discover",
                        lambda: {name: suite(name) for name in ("a", "b", "c")})
    result = CliRunner().invoke(app, ["bench", "--quick", "--json", "--only", "c,a"])
    assert result.exit_code == 0 and ran == ["a", "c"]
    bad = CliRunner().invoke(app, ["bench", "--only", "a,nope"])
    assert bad.exit_code == 2 and "--only nope" in bad.stderr
