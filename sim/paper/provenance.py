"""Where a figure was made: the command, the date, the checkout's commit and a digest of the
sources it depends on, recorded in its JSON and in the results index so that a committed
figure can be traced to its code, and found stale when that code changed
(tests/sim/test_paper_fresh.py)."""

from __future__ import annotations

import hashlib
import subprocess
from datetime import date
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SOURCES = (("netlock", "*.py"), ("planner", "*.py"), ("sim", "*.py"), ("configs", "*.yaml"))
"""What a figure's numbers depend on: the code that plans and simulates and every config (its
experiment file, the base config it names and their includes, the peers' fabrics). A figure
is taken to depend on all of it: a change anywhere there can move its numbers."""
OUTPUTS = (":!docs", ":!notebooks")
"""Paths whose changes do not make the code dirty (where figures and their notebooks go)."""


def made(figure: str, scale: str, workers: int,
         sets: dict[str, str] | None = None) -> dict[str, Any]:
    """Where a figure's files come from: its command (with any ``--set``), date and commit."""
    flags = "".join(f" --set {k}={v}" for k, v in (sets or {}).items())
    return {"command": f"netlock paper {figure} --scale {scale} --workers {workers}{flags}",
            "date": date.today().isoformat(), "commit": commit(),
            "sources_sha256": sources_digest()}


def sources_digest(root: Path = ROOT) -> str:
    """SHA-256 over the path and bytes of every file of :data:`SOURCES` under ``root``, in
    path order (``""`` when ``root`` holds none of them: not a checkout)."""
    digest = hashlib.sha256()
    files = sorted(path for folder, pattern in SOURCES for path in (root / folder).rglob(pattern)
                   if "__pycache__" not in path.parts)
    if not files:
        return ""
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


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
