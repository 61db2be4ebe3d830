"""Benchmarks of the switch data plane: the cost of one acquire + release pair.

Three ways in: the readable ``SwitchDataPlane.process`` (builds Action values), the raw
kernel called from Python (what a simpy engine may use), and the kernel called from a
compiled loop (what the fast engine sees). Values are nanoseconds per pair.
"""

from __future__ import annotations

import numpy as np

from netlock.bench import BenchResult, median_time_s
from netlock.dataplane import kernels
from netlock.dataplane._kernel_jit import JIT_ENABLED, kernel
from netlock.dataplane.registers import O_SLOT
from netlock.dataplane.switch import SwitchDataPlane
from netlock.geometry import SwitchGeometry
from netlock.packets import LockRequest, Mode, Op

LOCK = 1


@kernel
def _compiled_pairs(locks: np.ndarray, regions: np.ndarray, slots: np.ndarray,
                    tenants: np.ndarray, ctl: np.ndarray, trace: np.ndarray | None,
                    out: np.ndarray, i: int, pairs: int) -> int:
    rows = 0
    for t in range(pairs):
        rows += kernels.process(locks, regions, slots, tenants, ctl, trace, out, i, 0, LOCK, 1,
                                t, 0, 0, 0, 0, -1, t)
        rows += kernels.process(locks, regions, slots, tenants, ctl, trace, out, i, 1, LOCK, 1,
                                t, 0, 0, 0, 0, out[0, O_SLOT], t)
    return rows


def _switch() -> SwitchDataPlane:
    switch = SwitchDataPlane(SwitchGeometry.uniform(1024, arrays=4))
    switch.install(LOCK, 0, 0, 7)
    return switch


def run(quick: bool) -> list[BenchResult]:
    """ns per acquire + release pair through each entry point (lower is better)."""
    pairs = 2_000 if quick else 20_000
    repeats = 3 if quick else 7
    switch = _switch()
    acquire = LockRequest(Op.ACQUIRE, Mode.EXCLUSIVE, LOCK, 1, 1)

    def wrapper() -> None:
        for t in range(pairs):
            grant = switch.process(acquire, t).actions[0].request
            switch.process(grant.release(), t)

    state = switch.arrays()
    out = switch.out
    i = switch.lock_index(LOCK)

    def raw() -> None:
        for t in range(pairs):
            kernels.process(*state, i, 0, LOCK, 1, 1, 1, 0, 0, 0, -1, t)
            kernels.process(*state, i, 1, LOCK, 1, 1, 1, 0, 0, 0, out[0, O_SLOT], t)

    def compiled() -> None:
        _compiled_pairs(*state, i, pairs)

    compiled()
    per_pair = {name: median_time_s(func, repeats) / pairs * 1e9
                for name, func in (("wrapper", wrapper), ("raw", raw), ("compiled", compiled))}
    consistent = switch.is_drained(LOCK)
    note = "" if JIT_ENABLED else "JIT disabled (NETLOCK_NOJIT=1)"
    return [
        BenchResult("dataplane", "kernel_from_python_pair_ns", per_pair["raw"], "ns", repeats,
                    baseline_name="switch_process_pair_ns", baseline_value=per_pair["wrapper"],
                    higher_is_better=False, ok=consistent, note=note),
        BenchResult("dataplane", "kernel_from_compiled_loop_pair_ns", per_pair["compiled"], "ns",
                    repeats, baseline_name="kernel_from_python_pair_ns",
                    baseline_value=per_pair["raw"], higher_is_better=False, ok=consistent,
                    note=note),
    ]
