"""``netlock config``: validate and print configs (filled in by the config module)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Nothing yet: commands are registered only once they work."""
