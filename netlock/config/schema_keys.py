"""How a config key is declared: its default, help text (with units) and checks."""

from __future__ import annotations

from dataclasses import field
from typing import Any


def key(default: Any, help: str, **checks: Any) -> Any:
    """A config key with its default, help text and checks (min, max, above, below, choices)."""
    return field(default=default, metadata={"help": help, **checks})
