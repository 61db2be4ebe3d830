"""Re-planning: the ordered steps that turn the live switch layout into a new one.

A region is keyed by (lock_id, priority). The steps are values the hardware runner
executes one after the other; each is "pause the lock's enqueues, drain its queue, change
its region, resume" (paper section 4.3, "Moving locks"), and at no point do two live
regions overlap:

- ``leave``: the lock's queue moves from the switch to its lock server (frees the region);
- ``resize``: the region keeps its ``left`` and changes size in place;
- ``move``: the region changes place (and possibly size);
- ``enter``: the lock moves from its lock server into a new region.

Order: all leaves, then in-place shrinks (both only free slots), then moves, grows and
entries as soon as their target slots are free. If moves block each other in a cycle,
one lock of the cycle leaves the switch and enters again later (two steps instead of
one). Locks whose region is unchanged need no step at all.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass

import numpy as np

from netlock.plan import SwitchEntries

STEP_KINDS = ("leave", "resize", "move", "enter")
Region = tuple[int, int]
Key = tuple[int, int]


@dataclass(frozen=True)
class MigrationStep:
    """One change of one (lock, priority) region; bounds are inclusive slot indices."""

    kind: str
    lock_id: int
    priority: int
    old_left: int | None = None
    old_right: int | None = None
    new_left: int | None = None
    new_right: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in STEP_KINDS:
            raise ValueError(f"kind: must be one of {', '.join(STEP_KINDS)}, got {self.kind!r}")

    @property
    def key(self) -> Key:
        return (self.lock_id, self.priority)

    def to_dict(self) -> dict:
        return asdict(self)


def regions_of(entries: SwitchEntries) -> dict[Key, Region]:
    """``{(lock_id, priority): (left, right)}`` of a layout."""
    return {(int(k), int(p)): (int(lo), int(hi)) for k, p, lo, hi in
            zip(entries.lock_id, entries.priority, entries.left, entries.right, strict=True)}


def plan_migration(live: SwitchEntries, new: SwitchEntries,
                   total_slots: int) -> tuple[MigrationStep, ...]:
    """Ordered steps from ``live`` to ``new`` on a shared queue of ``total_slots``."""
    old_regions, new_regions = regions_of(live), regions_of(new)
    ids = {key: i for i, key in enumerate(old_regions.keys() | new_regions.keys())}
    owner = np.full(total_slots, -1, dtype=np.int64)
    for key, (lo, hi) in old_regions.items():
        owner[lo:hi + 1] = ids[key]
    steps: list[MigrationStep] = []

    for key in sorted(old_regions.keys() - new_regions.keys()):
        lo, hi = old_regions[key]
        owner[lo:hi + 1] = -1
        steps.append(MigrationStep("leave", *key, old_left=lo, old_right=hi))

    pending: list[Key] = []
    for key in sorted(new_regions):
        old, target = old_regions.get(key), new_regions[key]
        if old == target:
            continue
        if old is not None and old[0] == target[0] and target[1] < old[1]:
            owner[target[1] + 1:old[1] + 1] = -1
            steps.append(MigrationStep("resize", *key, *old, *target))
        else:
            pending.append(key)

    current = {key: old_regions.get(key) for key in pending}
    while pending:
        blocked = []
        for key in pending:
            lo, hi = new_regions[key]
            if np.all((owner[lo:hi + 1] == -1) | (owner[lo:hi + 1] == ids[key])):
                steps.append(_change(key, current[key], (lo, hi), owner, ids[key]))
            else:
                blocked.append(key)
        if len(blocked) == len(pending):
            evict = next((key for key in blocked if current[key] is not None), None)
            if evict is None:
                raise ValueError("the new layout has overlapping regions")
            lo, hi = current[evict]
            owner[lo:hi + 1] = -1
            steps.append(MigrationStep("leave", *evict, old_left=lo, old_right=hi))
            current[evict] = None
        pending = blocked
    return tuple(steps)


def _change(key: Key, old: Region | None, new: Region, owner: np.ndarray,
            ident: int) -> MigrationStep:
    if old is not None:
        owner[old[0]:old[1] + 1] = -1
    owner[new[0]:new[1] + 1] = ident
    if old is None:
        return MigrationStep("enter", *key, new_left=new[0], new_right=new[1])
    kind = "resize" if old[0] == new[0] else "move"
    return MigrationStep(kind, *key, *old, *new)


def apply_migration(regions: dict[Key, Region], steps: Iterable[MigrationStep],
                    total_slots: int) -> dict[Key, Region]:
    """Replay ``steps`` on ``regions``; a step that finds its lock missing or overlaps
    another live region is a ValueError (this is how tests check a migration is safe)."""
    regions = dict(regions)
    owner = np.full(total_slots, -1, dtype=np.int64)
    ids: dict[Key, int] = {}
    for key, (lo, hi) in regions.items():
        owner[lo:hi + 1] = ids.setdefault(key, len(ids))
    for n, step in enumerate(steps):
        ident = ids.setdefault(step.key, len(ids))
        old = regions.get(step.key)
        if (step.kind == "enter") != (old is None):
            raise ValueError(f"step {n}: {step.kind} of {step.key}, which is "
                             f"{'not ' if old is None else ''}in the switch")
        if old is not None:
            if old != (step.old_left, step.old_right):
                raise ValueError(f"step {n}: {step.key} is at {old}, not "
                                 f"{(step.old_left, step.old_right)}")
            owner[old[0]:old[1] + 1] = -1
            del regions[step.key]
        if step.kind != "leave":
            lo, hi = step.new_left, step.new_right
            if lo is None or hi is None or not 0 <= lo <= hi < total_slots \
                    or (owner[lo:hi + 1] != -1).any():
                raise ValueError(f"step {n}: {step.key} -> [{lo}, {hi}] overlaps a live "
                                 f"region or leaves the shared queue")
            owner[lo:hi + 1] = ident
            regions[step.key] = (lo, hi)
    return regions


def step_counts(steps: Iterable[MigrationStep]) -> dict[str, int]:
    """Steps per kind, every kind present."""
    counts = dict.fromkeys(STEP_KINDS, 0)
    for step in steps:
        counts[step.kind] += 1
    return counts
