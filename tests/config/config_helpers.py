"""Paths and an app shared by the config tests."""

from __future__ import annotations

from pathlib import Path

import typer

from netlock.cli import config_cmd

REPO = Path(__file__).resolve().parents[2]
CONFIGS = REPO / "configs"
NETSTORE = sorted(CONFIGS.glob("netstore-*.yaml"))
"""NetStore's configs: a fabric experiment with its own schema (tests/netstore)."""
CANONICAL = sorted(set(CONFIGS.glob("*.yaml")) - set(NETSTORE)) + sorted(
    CONFIGS.glob("testbed/*.yaml"))


def config_app() -> typer.Typer:
    """A bare app with only the ``config`` commands, as ``netlock`` registers them."""
    app = typer.Typer()
    config_cmd.register(app)
    return app
