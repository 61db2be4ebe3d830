"""Fixtures for tests of the simulator's commands (``netlock sim`` and ``netlock sweep``),
loaded for the whole suite by ``tests/conftest.py``."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from sim import cli


@pytest.fixture(scope="module")
def sim_app() -> typer.Typer:
    app = typer.Typer()
    cli.register(app)
    return app


@pytest.fixture
def run(sim_app):
    """``run(*args)``: invoke the simulator's commands; the CliRunner result."""
    runner = CliRunner()

    def _run(*args: object):
        return runner.invoke(sim_app, [str(a) for a in args])

    return _run
