"""Commands contributed by ``hwrunner`` to the ``netlock`` command line."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this package's commands to ``app`` (none registered until they work)."""
