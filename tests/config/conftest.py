"""Fixtures for the config tests: writing YAML files and running ``netlock config``."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.config.config_helpers import config_app


@pytest.fixture
def write(tmp_path: Path) -> Callable[[str, str], Path]:
    """``write("x.yaml", text)`` creates a dedented file under tmp_path and returns its path."""

    def _write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
        return path

    return _write


@pytest.fixture
def cli() -> Callable[..., object]:
    """Run ``netlock config ...`` in-process; returns click's Result (stdout/stderr apart)."""
    runner = CliRunner()
    app = config_app()

    def _run(*args: object) -> object:
        return runner.invoke(app, ["config", *map(str, args)])

    return _run
