"""Small plans for the hardware-runner tests, built from (lock, slots) regions."""

from __future__ import annotations

import numpy as np

from netlock.geometry import SwitchGeometry
from netlock.plan import PartitionRange, Plan, PlanInputs, PlanSummary, SwitchEntries


def make_plan(regions: list[tuple[int, int]] | dict[int, tuple[int, int]], total_slots: int = 64,
              partition: tuple[PartitionRange, ...] = (PartitionRange(0, 999, 0),),
              arrays: int = 4) -> Plan:
    """A plan whose locks own the given regions: a list of (lock, slots) packed from slot 0, or
    a mapping lock -> (left, right)."""
    if isinstance(regions, dict):
        items = sorted(regions.items())
        lock = [k for k, _ in items]
        left = [lr[0] for _, lr in items]
        right = [lr[1] for _, lr in items]
    else:
        lock = [k for k, _ in regions]
        sizes = np.array([s for _, s in regions], dtype=np.int64)
        left = (np.cumsum(sizes) - sizes).tolist()
        right = (np.cumsum(sizes) - 1).tolist()
    slots = np.array(right, dtype=np.int64) - np.array(left, dtype=np.int64) + 1
    geo = SwitchGeometry.uniform(total_slots, arrays=arrays)
    entries = SwitchEntries(lock_id=lock, slots=slots, left=left, right=right,
                            priority=np.zeros(len(lock)))
    summary = PlanSummary("manual", total_slots, int(slots.sum()), len(lock), len(lock),
                          0.0, 0.0, 0.0, 1, 1e6)
    plan = Plan(geometry=geo, policy="manual", inputs=PlanInputs(total_slots, 1e6),
                entries=entries, partition=partition, summary=summary)
    problem = plan.problem()
    assert problem is None, problem
    return plan
