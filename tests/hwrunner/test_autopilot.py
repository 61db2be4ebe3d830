"""The closed loop under live traffic: re-plan from the switch's and servers' counters, migrate
once when the hot set moves, never on noise, and never break a lock while doing it."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from hwrunner.autopilot import (
    Autopilot,
    AutopilotOptions,
    MeasuredLocks,
    hold_peaks,
    merge_counters,
    plan_rate,
    replan,
)
from hwrunner.emulator import EmulatedSwitch
from hwrunner.profile import load_profile
from hwrunner.push import push
from hwrunner.readback import read_live
from netlock.errors import ConfigError, TargetError
from netlock.plan import PartitionRange, SwitchEntries
from tests.hwrunner.plans import make_plan
from tests.hwrunner.test_push_live import OPTIONS, assert_safe
from tests.hwrunner.traffic import SimPacer, Traffic

PARTITION = (PartitionRange(0, 12, 0), PartitionRange(13, 999, 1))
HOT_A, HOT_B = [1, 2, 3, 4], [11, 12, 13, 14]
LOCKS = list(range(1, 25))
START = make_plan([(x, 3) for x in HOT_A], partition=PARTITION)
"""The hot set in the switch, each lock a little short of slots."""
LOOP = AutopilotOptions(interval_s=0.003, slots=16)
"""300 ticks of traffic per round; 16 slots for four hot locks that each want about 8."""


@pytest.fixture
def stats_profile():
    return replace(load_profile("netlock-stats"), lock_capacity=64, slot_capacity=129,
                   batch_size=3)


def running(profile, seed: int) -> tuple[EmulatedSwitch, Traffic, Autopilot]:
    switch = EmulatedSwitch(profile, START.geometry)
    traffic = Traffic(switch, START, LOCKS, clients=12, seed=seed)
    traffic.hot, traffic.hot_share = HOT_A, 0.85
    servers, pacer = traffic.lock_servers(), SimPacer(traffic)
    push(switch, profile, START, servers=servers, pacer=pacer, options=OPTIONS)
    pilot = Autopilot(switch, profile, START, options=LOOP, servers=servers, pacer=pacer,
                      push_options=OPTIONS)
    return switch, traffic, pilot


def resident(switch: EmulatedSwitch, profile) -> set[int]:
    return set(read_live(switch, profile).layout.lock_id.tolist())


@pytest.mark.parametrize("seed", range(2))
def test_a_stationary_workload_with_noise_migrates_no_more_once_fitted(stats_profile, seed):
    switch, traffic, pilot = running(stats_profile, seed)
    fit = pilot.run(3)
    assert sum(r.migrated for r in fit) == 1, "the start plan is fitted to the workload once"
    assert resident(switch, stats_profile) <= set(HOT_A)
    rounds = pilot.run(8)
    assert not any(r.migrated for r in rounds)
    assert all(r.locks_seen >= 20 for r in rounds), "cold locks are measured at the servers"
    assert_safe(traffic)


@pytest.mark.parametrize("seed", range(2))
def test_a_shifted_hot_set_causes_exactly_one_migration(stats_profile, seed):
    switch, traffic, pilot = running(stats_profile, seed)
    pilot.run(4)
    before = pilot.migrations
    traffic.run(150)
    traffic.hot = HOT_B
    rounds = pilot.run(7)
    assert [r.migrated for r in rounds].count(True) == 1 and pilot.migrations == before + 1
    moved = next(r for r in rounds if r.migrated)
    assert moved.push is not None and moved.push.verified
    assert moved.new_rps > 1.2 * moved.live_rps
    assert resident(switch, stats_profile) <= set(HOT_B)
    assert pilot.last_plan is not None
    assert set(pilot.last_plan.entries.lock_id.tolist()) == resident(switch, stats_profile)
    assert_safe(traffic)


def test_without_validation_noise_thrashes(stats_profile):
    """Guards the hysteresis: without it the same noise migrates again and again."""
    _, traffic, pilot = running(stats_profile, 0)
    pilot.options = replace(LOOP, margin=0.0, keep=0.0, memory=0.0, validate=False)
    rounds = pilot.run(8)
    assert sum(r.migrated for r in rounds) >= 3
    assert_safe(traffic)


def workload(rates: dict[int, tuple[float, int]]) -> MeasuredLocks:
    ids = np.array(sorted(rates), dtype=np.int64)
    return MeasuredLocks(ids, np.array([rates[x][0] for x in ids.tolist()]),
                    np.array([rates[x][1] for x in ids.tolist()], dtype=np.float64))


def entries(regions: dict[int, tuple[int, int]]) -> SwitchEntries:
    ids = sorted(regions)
    left = np.array([regions[x][0] for x in ids])
    right = np.array([regions[x][1] for x in ids])
    return SwitchEntries(ids, right - left + 1, left, right, np.zeros(len(ids)))


def test_replan_keeps_live_locks_unless_clearly_below_the_entry_threshold():
    base = replace(START, inputs=replace(START.inputs, slots=4))
    live = entries({1: (0, 3)})
    close = workload({1: (100.0, 4), 2: (130.0, 4)})
    kept = replan(close, live, base, AutopilotOptions(keep=0.5))
    assert kept.plan.entries.lock_id.tolist() == [1] and not kept.changed
    clear = workload({1: (100.0, 4), 2: (160.0, 4)})
    swapped = replan(clear, live, base, AutopilotOptions(keep=0.5))
    assert swapped.plan.entries.lock_id.tolist() == [2] and swapped.migrate
    assert swapped.live_rps == pytest.approx(100.0) and swapped.new_rps == pytest.approx(160.0)
    timid = replan(clear, live, base, AutopilotOptions(keep=0.5, margin=0.7))
    assert timid.changed and not timid.migrate, "60% better is not worth a 70% margin"
    assert plan_rate(swapped.plan.entries, clear) == pytest.approx(160.0)
    assert swapped.plan.partition == START.partition and swapped.plan.problem() is None


def test_counters_merge_and_peaks_are_held():
    switch = {"lock_id": np.array([1, 2]), "requests": np.array([10, 20]),
              "peak_occupancy": np.array([3, 1])}
    servers = {"lock_id": np.array([2, 5]), "requests": np.array([4, 6]),
               "peak_occupancy": np.array([2, 0])}
    got = merge_counters(switch, servers, 2.0)
    assert got.lock_id.tolist() == [1, 2, 5]
    assert got.rate_rps.tolist() == [5.0, 12.0, 3.0]
    assert got.contention.tolist() == [3, 2, 1]
    later = hold_peaks(got, workload({1: (5.0, 1), 7: (1.0, 2)}), 0.5)
    assert later.contention.tolist() == [1.5, 2], "lower peaks decay, new locks count as seen"


def test_the_loop_needs_counters_and_sane_options(profile, stats_profile):
    switch = EmulatedSwitch(profile, START.geometry)
    with pytest.raises(TargetError, match="keeps no per-lock request and peak-occupancy"):
        Autopilot(switch, profile, START)
    with pytest.raises(ConfigError, match="--margin: must be >= 0"):
        Autopilot(EmulatedSwitch(stats_profile, START.geometry), stats_profile, START,
                  options=AutopilotOptions(margin=-1))
