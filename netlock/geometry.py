"""Switch geometry: the register arrays that pool into NetLock's shared queue.

The shared queue concatenates the slot register arrays in stage order; global slot ``k``
lives at ``(array, offset)``. Priorities are realised as one queue per group of stages
(priority 0, the highest, uses the earliest stages), so each priority class owns a
contiguous range of global slot indices and the number of priorities cannot exceed the
number of distinct stages holding slot arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np


@dataclass(frozen=True)
class RegisterArray:
    """One slot register array: ``size`` slots placed in pipeline ``stage``."""

    stage: int
    size: int


@dataclass(frozen=True)
class SwitchGeometry:
    """The shared queue's physical layout.

    ``arrays`` are kept in stage order (stable for equal stages); ``stages`` is the
    pipeline depth of the target; ``priorities`` the number of priority classes.
    """

    arrays: tuple[RegisterArray, ...]
    stages: int = 12
    priorities: int = 1

    def __post_init__(self) -> None:
        ordered = tuple(sorted(self.arrays, key=lambda a: a.stage))
        object.__setattr__(self, "arrays", ordered)
        problem = self.problem()
        if problem:
            raise ValueError(problem)

    def problem(self) -> str | None:
        """Why this geometry is impossible, or None. Field names match the config keys."""
        if not self.arrays:
            return "switch.arrays: at least one register array is needed"
        for i, arr in enumerate(self.arrays):
            if arr.size <= 0:
                return f"switch.arrays[{i}].size: must be > 0, got {arr.size}"
            if not 0 <= arr.stage < self.stages:
                return (
                    f"switch.arrays[{i}].stage: {arr.stage} is outside the pipeline's "
                    f"stages 0..{self.stages - 1}"
                )
        if self.priorities < 1:
            return f"switch.priorities: must be >= 1, got {self.priorities}"
        if self.priorities > len(self.slot_stages):
            return (
                f"switch.priorities: {self.priorities} priorities need as many stages with slot "
                f"arrays, but the arrays use only {len(self.slot_stages)} stage(s)"
            )
        return None

    @classmethod
    def uniform(cls, slots: int, arrays: int = 4, stages: int = 12, priorities: int = 1,
                first_stage: int = 2) -> SwitchGeometry:
        """``arrays`` equal arrays (the last one takes the remainder) in consecutive stages."""
        base, rest = divmod(slots, arrays)
        sizes = [base + (1 if i < rest else 0) for i in range(arrays)]
        return cls(
            arrays=tuple(RegisterArray(stage=first_stage + i, size=s) for i, s in enumerate(sizes)),
            stages=stages,
            priorities=priorities,
        )

    @property
    def total_slots(self) -> int:
        return sum(a.size for a in self.arrays)

    @cached_property
    def slot_stages(self) -> tuple[int, ...]:
        return tuple(sorted({a.stage for a in self.arrays}))

    @cached_property
    def array_starts(self) -> np.ndarray:
        """Global slot index of each array's first slot (int64, len = arrays + 1)."""
        return np.concatenate([[0], np.cumsum([a.size for a in self.arrays])]).astype(np.int64)

    @cached_property
    def slot_array(self) -> np.ndarray:
        """Array index of every global slot (int64, len = total_slots)."""
        return np.repeat(np.arange(len(self.arrays), dtype=np.int64),
                         [a.size for a in self.arrays])

    def slot_location(self, k: int) -> tuple[int, int]:
        """Map global slot ``k`` to ``(array index, offset in that array)``."""
        if not 0 <= k < self.total_slots:
            raise IndexError(f"slot {k} outside the shared queue of {self.total_slots} slots")
        a = int(np.searchsorted(self.array_starts, k, side="right") - 1)
        return a, k - int(self.array_starts[a])

    @cached_property
    def priority_ranges(self) -> tuple[tuple[int, int], ...]:
        """Inclusive global slot range ``(first, last)`` owned by each priority class."""
        groups = np.array_split(np.array(self.slot_stages), self.priorities)
        ranges = []
        for group in groups:
            idx = [i for i, a in enumerate(self.arrays) if a.stage in set(group.tolist())]
            ranges.append((int(self.array_starts[idx[0]]), int(self.array_starts[idx[-1] + 1]) - 1))
        return tuple(ranges)

    def priority_capacity(self, priority: int) -> int:
        first, last = self.priority_ranges[priority]
        return last - first + 1

    def to_dict(self) -> dict:
        return {
            "stages": self.stages,
            "priorities": self.priorities,
            "arrays": [{"stage": a.stage, "size": a.size} for a in self.arrays],
        }

    @classmethod
    def from_dict(cls, data: dict) -> SwitchGeometry:
        return cls(
            arrays=tuple(RegisterArray(int(a["stage"]), int(a["size"])) for a in data["arrays"]),
            stages=int(data.get("stages", 12)),
            priorities=int(data.get("priorities", 1)),
        )
