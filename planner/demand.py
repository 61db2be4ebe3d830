"""The trace's total rate beside what the same clients sustain in a closed loop, each request
taken on its own (:class:`Demand`): the exact mean-value analysis of :mod:`planner.offered`,
with the lock servers' path when the rack is known (one-lock workloads). The planner
(:mod:`planner.planning`) scales r_i by it, or warns that the trace's rates are an upper
bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

from planner.offered import closed_loop_paths_rps, closed_loop_rps, exclusive_shares
from planner.openloop import future_shares
from planner.serverpath import one_lock_server_us

if TYPE_CHECKING:
    from netlock.trace import Trace
    from planner.closedloop import RackTiming, TxnSample

class DemandOptions(Protocol):
    """What :class:`Demand` reads of the planner's options (a
    :class:`planner.planning.PlanOptions`)."""

    @property
    def coarse_group(self) -> int: ...

    @property
    def handover_us(self) -> float | None: ...

    @property
    def rack(self) -> RackTiming | None: ...


PATH_ITERATIONS = 60
"""Damped steps of the one-lock model's rate <-> server-path fixed point (:meth:`Demand.of`)."""


@dataclass(frozen=True)
class Demand:
    """The trace's total rate beside the closed-loop rate of the same clients.

    ``in_flight`` is the mean number of requests the trace holds at once (Little's law:
    trace rate x mean hold); ``handover_us`` is the mean hold plus the switch's hand-over
    time. ``closed_loop_rps`` is what those requests sustain when exclusive requests for
    one lock take turns (:func:`planner.offered.closed_loop_rps`); it equals the trace
    rate (less the hand-over passes) when nothing conflicts.
    """

    trace_rps: float
    closed_loop_rps: float
    in_flight: int
    handover_us: float

    served_share: float = 0.0
    """The share of requests the lock servers serve (0 without the rack's paths)."""
    server_path_us: float = 0.0

    @classmethod
    def of(cls, trace: Trace, options: DemandOptions, mean_hold_us: float,
           sample: TxnSample | None = None, slots: np.ndarray | None = None,
           servers: int | None = None) -> Demand:
        """``sample`` (one request per transaction) and ``slots`` (per dense lock of it) add
        the lock servers' path on ``options.rack`` with ``servers`` of them (None: the
        rack's; :func:`planner.offered.closed_loop_paths_rps`): a lock without slots is the
        servers', each lock's future share of requests is its sample share regressed to the
        mean (:meth:`TxnSample.repeat_weight`; what no seen lock draws goes to the servers),
        and the path's time E (:func:`planner.serverpath.one_lock_server_us`) and the rate are
        solved together (damped iteration: E grows with the servers' load)."""
        trace_rps = len(trace) / trace.duration_s
        in_flight = max(round(trace_rps * mean_hold_us * 1e-6), 1)
        handover = mean_hold_us + (options.handover_us or 0.0)
        rack = options.rack
        if sample is None or slots is None or rack is None:
            locks = trace.lock_id // options.coarse_group
            rate = closed_loop_rps(exclusive_shares(locks, trace.mode), in_flight, handover)
            return cls(trace_rps, min(rate, trace_rps), in_flight, handover)
        count = rack.servers if servers is None else servers
        x, y, held = future_shares(sample, slots)
        q = np.where(held > 0, 0.0, 1.0)
        served = float(np.sum((x + y) * q))
        if served <= 0:
            rate = closed_loop_paths_rps(x, y, q, in_flight, handover, 0.0, math.inf)
            return cls(trace_rps, min(rate, trace_rps), in_flight, handover)
        if count <= 0:
            return cls(trace_rps, 0.0, in_flight, handover, served, math.inf)
        capacity = rack.capacity_rps(count)
        rate = min(trace_rps, 0.999 * capacity / served)
        path = 0.0
        for _ in range(PATH_ITERATIONS):
            path = one_lock_server_us(rack, min(rate * served, 0.999 * capacity), count, served)
            new = closed_loop_paths_rps(x, y, q, in_flight, handover, path, 0.999 * capacity)
            if abs(new - rate) <= 1e-6 * rate:
                break
            rate = 0.5 * (rate + new)
        return cls(trace_rps, min(rate, trace_rps), in_flight, handover, served, path)

    @property
    def scale(self) -> float:
        return self.closed_loop_rps / self.trace_rps

    def warnings(self, options: DemandOptions) -> tuple[str, ...]:
        servers = (f", {self.served_share:.1%} of them through the lock servers "
                   f"({self.server_path_us:.3g} us more each)" if self.served_share > 0 else "")
        model = (f"{self.in_flight} requests in flight taking turns on exclusive locks "
                 f"({self.handover_us:.3g} us per hand-over{servers}) sustain "
                 f"{self.closed_loop_rps:,.0f} rps")
        if options.handover_us is not None:
            if self.scale >= 1.0:
                return ()
            return (f"r_i are scaled by {self.scale:.3g} from the trace's "
                    f"{self.trace_rps:,.0f} rps to the rate the rack's clients offer: "
                    f"{model} (closed-loop model, planner/offered.py)",)
        if self.scale >= 1.0 - 1.0 / self.in_flight:
            return ()  # no conflicts: the model differs only by rounding the in-flight count
        return (f"r_i are the trace's request rates, an upper bound {1 / self.scale:.3g}x "
                f"too high if its requests never waited for locks (as `netlock trace gen` "
                f"writes them): {model}; plan with --config (without --trace-rates) for the "
                f"rates the rack's clients offer",)
