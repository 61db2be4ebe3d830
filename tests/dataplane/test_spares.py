"""Register rows of gone switches kept for the next switch (issue 32): taken only when nothing
else refers to them and clearing them is worth it, and cleared to exactly a fresh switch's state."""

from __future__ import annotations

import os

import numpy as np
import pytest

from netlock.dataplane import blank_pages, registers
from netlock.dataplane.registers import C_LOCK_ROWS, give_back, new_state
from netlock.dataplane.spares import Spares
from netlock.dataplane.switch import SwitchDataPlane
from netlock.geometry import SwitchGeometry
from netlock.packets import LockRequest, Mode, Op

GEOMETRY = SwitchGeometry.uniform(4_000, priorities=2)
PLAN_LOCKS = 1_000
"""At least WRITTEN_SHARE of the rows: the switch is written, so it takes spares."""


def test_a_set_is_taken_only_when_nothing_else_refers_to_it() -> None:
    spares = Spares(kept=2)
    a, b = np.zeros(8), np.ones(8)
    view = b[2:]
    spares.give_back("k", (a, b), "note")
    assert spares.take("other") is None
    del a, b
    assert spares.take("k") is None, "a view of one array still refers to it"
    del view
    (_, b), note = spares.take("k")
    assert note == "note" and b[0] == 1
    assert spares.take("k") is None


def test_only_the_newest_sets_are_kept() -> None:
    spares = Spares(kept=2)
    for k in range(3):
        spares.give_back(k, (np.zeros(4),), k)
    assert spares.take(0) is None
    assert spares.take(1) is not None and spares.take(2) is not None


def test_the_highest_ranked_set_is_taken() -> None:
    spares = Spares(kept=3)
    for k in range(3):
        spares.give_back("k", (np.zeros(4),), k)
    def rank(note: object) -> object:
        return None if note == 2 else note
    assert spares.take("k", rank)[1] == 1
    assert spares.take("k", rank)[1] == 0
    assert spares.take("k", rank) is None and spares.take("k")[1] == 2


def _used_switch() -> SwitchDataPlane:
    """A written switch with a two-class plan installed and requests queued and granted."""
    dp = SwitchDataPlane(GEOMETRY, locks_expected=PLAN_LOCKS)
    ids = np.arange(PLAN_LOCKS) * 3
    first, _ = GEOMETRY.priority_ranges[1]
    dp.install_many(ids, 0, np.arange(PLAN_LOCKS), np.arange(PLAN_LOCKS))
    dp.install_many(ids[:10], 1, first + np.arange(10) * 2, first + np.arange(10) * 2 + 1)
    for k in range(40):
        dp.process(LockRequest(Op.ACQUIRE, Mode.EXCLUSIVE, int(ids[k % 20]), k, k, 0,
                               k % 2, k), now_us=k)
    return dp


def test_a_given_back_switch_is_cleared_to_a_fresh_ones_state() -> None:
    registers.SPARES.clear()
    fresh = {k: v.copy() for k, v in new_state(GEOMETRY, 64, 0, PLAN_LOCKS).items()}
    dp = _used_switch()
    assert dp.ctl[C_LOCK_ROWS] == PLAN_LOCKS
    regions = _address(dp.regions)
    give_back(GEOMETRY, dp.locks, dp.regions, dp.slots, dp.ctl)
    assert _address(new_state(GEOMETRY, 64, 0, PLAN_LOCKS)["regions"]) != regions, "still held"
    del dp
    state = new_state(GEOMETRY, 64, 0, PLAN_LOCKS)
    assert _address(state["regions"]) == regions, "the spare was taken"
    for name, array in fresh.items():
        np.testing.assert_array_equal(state[name], array)


def test_switches_that_are_not_written_take_no_spares() -> None:
    registers.SPARES.clear()
    dp = _used_switch()
    give_back(GEOMETRY, dp.locks, dp.regions, dp.slots, dp.ctl)
    regions = _address(dp.regions)
    del dp
    assert _address(SwitchDataPlane(GEOMETRY).regions) != regions
    assert _address(SwitchDataPlane(GEOMETRY, locks_expected=PLAN_LOCKS).regions) == regions


def test_a_smaller_plan_takes_a_spare_only_when_clearing_it_is_cheap() -> None:
    """Below WRITTEN_SHARE a switch takes a spare whose used rows and slots cost at most
    CLEAR_PER_COPIED_BYTE times its own locks' rows to clear, and starts from a fresh
    switch's state; a spare that used far more is left for a larger plan."""
    small = PLAN_LOCKS // 4
    assert small < registers.WRITTEN_SHARE * GEOMETRY.total_slots
    registers.SPARES.clear()
    fresh = {k: v.copy() for k, v in new_state(GEOMETRY, 64, 0, small).items()}
    dp = _used_switch()
    give_back(GEOMETRY, dp.locks, dp.regions, dp.slots, dp.ctl)
    regions = _address(dp.regions)
    del dp
    assert _address(new_state(GEOMETRY, 64, 0, small)["regions"]) != regions, "too dear"
    few = SwitchDataPlane(GEOMETRY, locks_expected=PLAN_LOCKS)
    few.install_many(np.arange(small), 0, np.arange(small), np.arange(small))
    few_regions = _address(few.regions)
    give_back(GEOMETRY, few.locks, few.regions, few.slots, few.ctl)
    del few
    state = new_state(GEOMETRY, 64, 0, small)
    assert _address(state["regions"]) == few_regions, "cheap to clear"
    for name, array in fresh.items():
        np.testing.assert_array_equal(state[name], array)


def test_a_mapped_switch_is_taken_only_by_one_that_would_not_be_written() -> None:
    """Copy-on-write rows come back too (their used pages are the process's by then); a
    switch whose rows would be written afresh does not take them (it would copy most of its
    pages on first write), a smaller one does, and starts from a fresh switch's state."""
    if not hasattr(os, "memfd_create"):
        pytest.skip("copy-on-write copies need in-memory files (Linux)")
    big = SwitchGeometry.uniform(40_000, priorities=2)
    small = PLAN_LOCKS // 4
    registers.SPARES.clear()
    fresh = {k: v.copy() for k, v in new_state(big, 64, 0, small).items()}
    mapped = SwitchDataPlane(big)
    for _ in range(blank_pages.TEMPLATE_AFTER + 1):
        mapped = SwitchDataPlane(big)
    assert mapped.regions.base is not None, "a copy-on-write copy (on Linux)"
    mapped.install_many(np.arange(small), 0, np.arange(small), np.arange(small))
    regions = _address(mapped.regions)
    give_back(big, mapped.locks, mapped.regions, mapped.slots, mapped.ctl)
    del mapped
    assert _address(new_state(big, 64, 0, big.total_slots // 4)["regions"]) != regions
    state = new_state(big, 64, 0, small)
    assert _address(state["regions"]) == regions
    for name, array in fresh.items():
        np.testing.assert_array_equal(state[name], array)


def test_slots_outside_every_region_are_not_cleared() -> None:
    """A gone switch's slots from its regions' last on were never written, so they are left."""
    dp = _used_switch()
    used = registers.Used(int(dp.ctl[C_LOCK_ROWS]), PLAN_LOCKS, mapped=False)
    dp.slots[PLAN_LOCKS:, 0] = 7
    registers.clear_state(dp.locks, dp.regions, dp.slots, used.rows, used.slots)
    assert (dp.slots[PLAN_LOCKS:, 0] == 7).all() and not dp.slots[:PLAN_LOCKS, 0].any()


def _address(array: np.ndarray) -> int:
    """Where ``array``'s data is (a reference to it would keep it from being taken)."""
    return int(array.__array_interface__["data"][0])


def test_clearing_the_used_rows_is_clearing_all_of_them() -> None:
    dp = _used_switch()
    partly = [a.copy() for a in (dp.locks, dp.regions, dp.slots)]
    registers.clear_state(*partly, rows=int(dp.ctl[C_LOCK_ROWS]))
    registers.clear_state(dp.locks, dp.regions, dp.slots)
    for a, b in zip(partly, (dp.locks, dp.regions, dp.slots), strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(dp.locks, SwitchDataPlane(GEOMETRY).locks)
