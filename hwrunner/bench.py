"""Hardware-runner benchmarks for ``netlock bench``: pushing plans to the emulated switch.

Two plans fill a 100K-slot shared queue: locks of 1-8 slots (about 22K locks, the shape
Algorithm 3 gives a contended workload) and 100K one-slot locks (the most locks such a plan
can have, which stresses the per-lock work: lock table, data-plane install, read-back).
Figures (medians, fresh switch per repeat):

- seconds to compile, check, send and verify each whole plan, beside the same push sent one
  entry per batch (timed on a slice of the locks and scaled by operations); target < 2 s each;
- operations per second of the full plan's push, with the batches each sent;
- seconds to push a plan that moves, evicts and adds 10% of the locks, for reference.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

import numpy as np

from hwrunner.emulator import EmulatedSwitch
from hwrunner.profile import SwitchProfile, load_profile
from hwrunner.push import PushResult, push
from hwrunner.server_handover import NoLockServers
from netlock.bench import BenchResult, meets
from netlock.geometry import SwitchGeometry
from netlock.plan import PartitionRange, Plan, PlanInputs, PlanSummary, SwitchEntries

SUITE = "hwrunner"
SLOTS = 100_000
TARGET_S = 2.0
BASELINE_LOCKS = 1_000


def bench_plan(sizes: np.ndarray, lock_ids: np.ndarray, slots: int = SLOTS) -> Plan:
    """A plan whose locks take ``sizes`` consecutive slots each, in lock-id order."""
    right = np.cumsum(sizes) - 1
    left = right - sizes + 1
    geometry = SwitchGeometry.uniform(slots, arrays=4)
    entries = SwitchEntries(lock_ids, sizes, left, right, np.zeros(len(sizes)))
    used = int(sizes.sum())
    summary = PlanSummary("manual", slots, used, len(sizes), len(sizes), 0.0, 0.0, 0.0, 2, 18e6)
    top = int(lock_ids.max()) if len(lock_ids) else 0
    partition = (PartitionRange(0, top // 2, 0), PartitionRange(top // 2 + 1, top, 1))
    return Plan(geometry, "manual", PlanInputs(slots, 18e6), entries, partition, summary)


def contended_sizes(rng: np.random.Generator, slots: int = SLOTS) -> np.ndarray:
    sizes = rng.integers(1, 9, size=slots // 2)
    return sizes[np.cumsum(sizes) <= slots]


def _timed_push(profile: SwitchProfile, geometry: SwitchGeometry,
                plans: list[Plan]) -> tuple[float, PushResult]:
    """Seconds for the last of ``plans`` (the earlier ones set the switch up, untimed)."""
    switch = EmulatedSwitch(profile, geometry)
    servers = NoLockServers(idle=True)
    for plan in plans[:-1]:
        push(switch, profile, plan, servers=servers)
    start = time.perf_counter()
    result = push(switch, profile, plans[-1], servers=servers)
    elapsed = time.perf_counter() - start
    if not result.verified:
        raise RuntimeError(f"benchmark push not verified: {result.problems[:1]}")
    return elapsed, result


def _median(repeats: int, run: Callable[[], tuple[float, PushResult]]
            ) -> tuple[float, PushResult]:
    samples = [run() for _ in range(repeats)]
    times = sorted(t for t, _ in samples)
    return times[len(times) // 2], samples[-1][1]


def _moved(plan: Plan, rng: np.random.Generator) -> Plan:
    """Evict and re-add 10% of the locks (new ids, new sizes), and move every lock after."""
    n = len(plan.entries)
    keep = np.sort(rng.choice(n, size=n - n // 10, replace=False))
    ids = plan.entries.lock_id[keep]
    sizes = plan.entries.slots[keep]
    fresh = contended_sizes(rng, SLOTS - int(sizes.sum()))
    new_ids = ids.max() + 1 + np.arange(len(fresh))
    return bench_plan(np.concatenate([sizes, fresh]), np.concatenate([ids, new_ids]))


def _plan_result(profile: SwitchProfile, plan: Plan, name: str,
                 repeats: int) -> tuple[BenchResult, float, PushResult]:
    """Push ``plan`` batched, and a slice of it one entry per batch (scaled), timed."""
    geometry = plan.geometry
    ours_s, ours = _median(repeats, lambda: _timed_push(profile, geometry, [plan]))
    one = replace(profile, batch_size=1)
    part = bench_plan(plan.entries.slots[:BASELINE_LOCKS], plan.entries.lock_id[:BASELINE_LOCKS])
    part_s, part_result = _median(repeats, lambda: _timed_push(one, geometry, [part]))
    base_s = part_s * ours.operations / part_result.operations
    baseline = f"one entry per batch (timed on {BASELINE_LOCKS:,} locks, scaled)"
    result = BenchResult(SUITE, name, ours_s, "s", repeats, baseline, base_s, TARGET_S, False,
                         meets(ours_s, TARGET_S, False),
                         f"{ours.operations:,} operations in {ours.batches} batches")
    return result, base_s, ours


def run(quick: bool) -> list[BenchResult]:
    """Run the push benchmarks (quick: fewer repeats)."""
    repeats = 3 if quick else 5
    rng = np.random.default_rng(1)
    profile = load_profile()
    sizes = contended_sizes(rng)
    plan = bench_plan(sizes, np.arange(len(sizes), dtype=np.int64) * 3)
    geometry = plan.geometry
    _timed_push(profile, geometry, [bench_plan(sizes[:10], np.arange(10))])
    full, base_s, ours = _plan_result(
        profile, plan, f"push {SLOTS // 1000}K-slot plan ({len(plan.entries):,} locks) to the "
        "emulator", repeats)
    ones = bench_plan(np.ones(SLOTS, dtype=np.int64), np.arange(SLOTS, dtype=np.int64))
    most, _, _ = _plan_result(profile, ones, f"push {SLOTS:,} one-slot locks (most locks) to "
                              "the emulator", repeats)
    ours_s = full.value
    results = [
        full,
        BenchResult(SUITE, "push operations per second", ours.operations / ours_s, "ops/s",
                    repeats, full.baseline_name, ours.operations / base_s, None, True, True,
                    f"{ours.batches} batches vs {ours.operations:,} unbatched"),
        most,
    ]
    moved = _moved(plan, rng)
    move_s, move = _median(repeats, lambda: _timed_push(profile, geometry, [plan, moved]))
    results.append(BenchResult(SUITE, f"migrate: {move.migrated_locks:,} locks move, leave or "
                               "enter", move_s, "s", repeats, note=f"{move.operations:,} "
                               f"operations in {move.batches} batches", higher_is_better=False))
    return results
