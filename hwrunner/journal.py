"""The push journal: enough on disk to finish (or undo) a push after a crash.

It records the target, the layout that was live when the push began, the target layout, the
step being run, and whether the push is going forward or rolling back. Every update replaces
the file atomically; a finished push removes it. Steps re-run after a crash act only on what
the switch still needs (they read it back), so repeating a step is safe.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

from hwrunner.switch_contents import Layout
from netlock import atomic
from netlock.errors import TargetError
from netlock.inputs import load_json

FORMAT = "netlock-push-journal"
VERSION = 1
FORWARD = "forward"
ROLLBACK = "rollback"


@dataclass(frozen=True)
class Journal:
    """A push in progress; ``step`` is the first step not known to be complete."""

    target: str
    profile: str
    live: Layout
    goal: Layout
    step: int = 0
    direction: str = FORWARD

    def at(self, step: int) -> Journal:
        return replace(self, step=step)

    def to_dict(self) -> dict:
        return {"format": FORMAT, "version": VERSION, "target": self.target,
                "profile": self.profile, "step": self.step, "direction": self.direction,
                "live": self.live.to_dict(), "goal": self.goal.to_dict()}


def save_journal(journal: Journal, path: str | Path) -> None:
    atomic.write_text(path, json.dumps(journal.to_dict(), separators=(",", ":")))


def load_journal(path: str | Path) -> Journal:
    path = Path(path)
    doc = load_json(path, TargetError, "push journal")
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("version") != VERSION:
        raise TargetError(f"{path}: not a push journal (version {VERSION})")
    try:
        return Journal(str(doc["target"]), str(doc["profile"]), Layout.from_dict(doc["live"]),
                       Layout.from_dict(doc["goal"]), int(doc["step"]), str(doc["direction"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise TargetError(f"{path}: corrupt push journal ({exc})") from None


def clear_journal(path: str | Path) -> None:
    Path(path).unlink(missing_ok=True)
