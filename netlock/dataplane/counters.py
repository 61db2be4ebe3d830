"""What the switch counts, as the control plane reads it: per-lock request counters and
queue occupancy (r_i and c_i for the planner) and the register-access trace of pass checks.
A mixin of :class:`netlock.dataplane.switch.SwitchDataPlane`, whose arrays it reads.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from netlock.dataplane.registers import (
    C_HEADER,
    C_TRACE_FULL,
    C_TRACE_LEN,
    L_REQUESTS,
    R_COUNT,
    R_GRANTED,
    R_HEAD,
    R_LEFT,
    R_PEAK,
    R_RIGHT,
    R_SERVER_HELD,
)


class SwitchCounters:
    """Counters and the access trace of a :class:`netlock.dataplane.switch.SwitchDataPlane`
    (the attributes and the lookups below are its own)."""

    locks: np.ndarray
    regions: np.ndarray
    ctl: np.ndarray
    _table: dict[int, int]
    resident_locks: list[int]
    _index: Callable[[int], int]
    """A resident lock's index (a ControlPlaneError for another lock)."""
    _classes: Callable[[int], list[int]]
    """The priority classes in which the lock at an index has a region."""

    def occupancy(self, lock_id: int) -> list[dict[str, int]]:
        """Per region of the lock: bounds, q1 length, holders, q2 length, peak q1 + q2."""
        i = self._index(lock_id)
        fields = {"left": R_LEFT, "right": R_RIGHT, "count": R_COUNT, "granted": R_GRANTED,
                  "server_held": R_SERVER_HELD, "peak": R_PEAK, "head": R_HEAD}
        return [{"priority": c, **{k: int(self.regions[c, i, col]) for k, col in fields.items()}}
                for c in self._classes(i)]

    def counters(self) -> dict[str, np.ndarray]:
        """Per resident lock (sorted by id): acquires seen, peak and current q1 + q2 length."""
        ids = np.array(self.resident_locks, dtype=np.int64)
        idx = np.array([self._table[x] for x in ids], dtype=np.int64)
        present = self.regions[:, idx, R_LEFT] >= 0
        occ = (self.regions[:, idx, R_COUNT] + self.regions[:, idx, R_SERVER_HELD]) * present
        return {"lock_id": ids, "requests": self.locks[idx, L_REQUESTS].copy(),
                "peak_occupancy": (self.regions[:, idx, R_PEAK] * present).max(axis=0,
                                                                              initial=0),
                "occupancy": occ.sum(axis=0)}

    def set_counters(self, lock_id: int, requests: int | None = None,
                     peak_occupancy: int | None = None) -> None:
        """Write the lock's request counter or its class-0 peak occupancy, as the control
        plane writes those registers (values it read earlier, or 0)."""
        i = self._index(lock_id)
        if requests is not None:
            self.locks[i, L_REQUESTS] = requests
        if peak_occupancy is not None:
            self.regions[0, i, R_PEAK] = peak_occupancy

    def reset_counters(self) -> None:
        """Start a new measurement window for the request and peak-occupancy counters."""
        self.locks[:, L_REQUESTS] = 0
        self.regions[:, :, R_PEAK] = self.regions[:, :, R_COUNT] + self.regions[:, :,
                                                                               R_SERVER_HELD]

    def access_trace(self) -> np.ndarray:
        """Recorded register accesses as rows ``(pass, register array id, index)``."""
        if self.ctl[C_TRACE_FULL]:
            raise RuntimeError("the access trace overflowed; raise trace_capacity")
        n = int(self.ctl[C_TRACE_LEN])
        return self.ctl[C_HEADER:C_HEADER + 3 * n].reshape(n, 3).copy()

    def clear_trace(self) -> None:
        self.ctl[C_TRACE_LEN] = 0
        self.ctl[C_TRACE_FULL] = 0
