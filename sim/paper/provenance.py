"""Where a figure was made: the command, the date and the checkout's commit, recorded in its
JSON and in the results index so that a committed figure can be traced to its code."""

from __future__ import annotations

import subprocess
from datetime import date
from pathlib import Path
from typing import Any

OUTPUTS = (":!docs", ":!notebooks")
"""Paths whose changes do not make the code dirty (where figures and their notebooks go)."""


def made(figure: str, scale: str, workers: int,
         sets: dict[str, str] | None = None) -> dict[str, Any]:
    """Where a figure's files come from: its command (with any ``--set``), date and commit."""
    flags = "".join(f" --set {k}={v}" for k, v in (sets or {}).items())
    return {"command": f"netlock paper {figure} --scale {scale} --workers {workers}{flags}",
            "date": date.today().isoformat(), "commit": commit()}


def commit() -> str:
    """The checkout's commit (``+dirty`` when code has uncommitted changes), or ``unknown``
    outside a git checkout."""
    here = Path(__file__).resolve().parent
    try:
        head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=here,
                              capture_output=True, text=True, timeout=10, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--",
                                ".", *OUTPUTS], cwd=here.parents[1], capture_output=True,
                               text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
