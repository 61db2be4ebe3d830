"""Hardware-runner benchmarks for ``netlock bench``: pushing a full plan to the emulated switch.

The plan fills a 100K-slot shared queue with locks of 1-8 slots (about 22K locks, the shape
Algorithm 3 gives a contended workload). Figures (medians, fresh switch per repeat):

- seconds to compile, check, send and verify the whole plan, beside the same push sent one
  entry per batch (timed on a slice of the locks and scaled by operations); target < 2 s;
- operations per second of both, with the batches each sent;
- seconds to push a plan that moves, evicts and adds 10% of the locks, for reference;
- seconds for 100K one-slot locks (the most locks a 100K-slot plan can have), for reference.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

import numpy as np

from hwrunner.emulator import EmulatedSwitch
from hwrunner.profile import SwitchProfile, load_profile
from hwrunner.push import PushResult, push
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
    for plan in plans[:-1]:
        push(switch, profile, plan)
    start = time.perf_counter()
    result = push(switch, profile, plans[-1])
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


def run(quick: bool) -> list[BenchResult]:
    """Run the push benchmarks (quick: fewer repeats)."""
    repeats = 3 if quick else 5
    rng = np.random.default_rng(1)
    profile = load_profile()
    sizes = contended_sizes(rng)
    plan = bench_plan(sizes, np.arange(len(sizes), dtype=np.int64) * 3)
    geometry = plan.geometry
    _timed_push(profile, geometry, [bench_plan(sizes[:10], np.arange(10))])
    ours_s, ours = _median(repeats, lambda: _timed_push(profile, geometry, [plan]))
    one = replace(profile, batch_size=1)
    part = bench_plan(sizes[:BASELINE_LOCKS], plan.entries.lock_id[:BASELINE_LOCKS])
    part_s, part_result = _median(repeats, lambda: _timed_push(one, geometry, [part]))
    base_s = part_s * ours.operations / part_result.operations
    locks = len(plan.entries)
    name = f"push {SLOTS // 1000}K-slot plan ({locks:,} locks) to the emulator"
    baseline = f"one entry per batch (timed on {BASELINE_LOCKS:,} locks, scaled)"
    results = [
        BenchResult(SUITE, name, ours_s, "s", repeats, baseline, base_s, TARGET_S, False,
                    meets(ours_s, TARGET_S, False),
                    f"{ours.operations:,} operations in {ours.batches} batches"),
        BenchResult(SUITE, "push operations per second", ours.operations / ours_s, "ops/s",
                    repeats, baseline, ours.operations / base_s, None, True, True,
                    f"{ours.batches} batches vs {ours.operations:,} unbatched"),
    ]
    moved = _moved(plan, rng)
    move_s, move = _median(repeats, lambda: _timed_push(profile, geometry, [plan, moved]))
    results.append(BenchResult(SUITE, f"migrate: {move.migrated_locks:,} locks move, leave or "
                               "enter", move_s, "s", repeats, note=f"{move.operations:,} "
                               f"operations in {move.batches} batches", higher_is_better=False))
    if not quick:
        ones = bench_plan(np.ones(SLOTS, dtype=np.int64), np.arange(SLOTS, dtype=np.int64))
        ones_s, _ = _median(1, lambda: _timed_push(profile, geometry, [ones]))
        results.append(BenchResult(SUITE, f"push {SLOTS:,} one-slot locks (most locks)",
                                   ones_s, "s", 1, higher_is_better=False,
                                   note="bounded by the data-plane model's per-lock install"))
    return results
