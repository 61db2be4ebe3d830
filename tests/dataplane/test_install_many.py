"""``SwitchDataPlane.install_many`` (what the emulated switch maps lock batches with) behaves
exactly like :meth:`install` called row by row: same state, same actions, same refusals."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from netlock.dataplane import ControlPlaneError, SwitchDataPlane
from netlock.geometry import RegisterArray, SwitchGeometry

GEOMETRY = SwitchGeometry(tuple(RegisterArray(stage=s, size=6) for s in (2, 3, 4, 5)),
                          priorities=2)
"""24 slots: class 0 owns slots 0..11, class 1 slots 12..23."""

cell = st.tuples(st.integers(0, 30), st.integers(0, 11), st.integers(0, 1), st.integers(0, 3))
"""(lock, cell, slots - 1, server_held): cell k is slots 2k, 2k+1 (class 0 below 6)."""
cells = st.lists(cell, min_size=1, max_size=10, unique_by=lambda c: c[1]).map(
    lambda cs: [(lock, int(k >= 6), 2 * k, extra, held) for lock, k, extra, held in cs])
any_rows = st.lists(st.tuples(st.integers(-1, 9), st.integers(0, 2), st.integers(-1, 24),
                              st.integers(0, 4), st.integers(-1, 3)), min_size=1, max_size=8)
"""(lock, priority, left, slots - 1, server_held): mostly valid regions, or anything."""


@st.composite
def cases(draw) -> tuple[list, list]:
    """Regions already installed, and the batch: disjoint cells, or random rows."""
    rows = draw(cells)
    split = draw(st.integers(0, len(rows) - 1))
    existing = [(lock, c, left, left + extra) for lock, c, left, extra, _ in rows[:split]]
    return existing, rows[split:] if draw(st.booleans()) else draw(any_rows)


def switch_with(existing: list[tuple[int, int, int, int]]) -> SwitchDataPlane:
    sw = SwitchDataPlane(GEOMETRY)
    for lock, priority, left, right in existing:
        with contextlib.suppress(ControlPlaneError):
            sw.install(lock, priority, left, right)
    return sw


def state(sw: SwitchDataPlane) -> list[np.ndarray]:
    """Everything but the pass sequence number (a trace key that install bumps per call)."""
    snap = sw.snapshot()
    return [*(snap[k] for k in ("locks", "regions", "slots", "tenants")), sw._owner.copy(),
            np.array(sorted(sw._table.items())), sw.free_rows.copy()]


def one_by_one(sw: SwitchDataPlane, rows: list[tuple[int, int, int, int, int]]):
    actions = []
    for lock, priority, left, extra, held in rows:
        actions += sw.install(lock, priority, left, left + extra, held)
    return actions


@st.composite
def plan_shaped(draw) -> list:
    """A batch as a plan's entries come to an empty switch (the case ``install_many`` checks
    without sorting): locks in order, each in class 0, 1 or both, each class's regions in
    slot order with gaps; sometimes one region moved a slot (touching a neighbour, crossing
    into the other class, or out of the slots) or one row repeated."""
    rows, cell = [], [0, 6]
    for lock in sorted(draw(st.lists(st.integers(0, 30), min_size=1, max_size=8, unique=True))):
        for c in draw(st.sampled_from([(0,), (1,), (0, 1)])):
            cell[c] += draw(st.integers(0, 1))
            if cell[c] < 6 * (c + 1):
                extra, held = draw(st.integers(0, 1)), draw(st.integers(0, 2))
                rows.append([lock, c, 2 * cell[c], extra, held])
                cell[c] += 1
    if rows and draw(st.booleans()):
        row = draw(st.sampled_from(rows))
        if draw(st.booleans()):
            row[2] += draw(st.sampled_from([-2, -1, 1, 2]))
        else:
            rows.insert(rows.index(row), list(row))
    return [tuple(r) for r in rows]


def check_batch_equals_serial(existing: list, rows: list) -> None:
    batch, serial = switch_with(existing), switch_with(existing)
    before = state(batch)
    cols = [np.array(c, dtype=np.int64) for c in zip(*rows, strict=True)]
    lock, priority, left, extra, held = cols
    try:
        expected = one_by_one(serial, rows)
    except ControlPlaneError:
        event("refused")
        with pytest.raises(ControlPlaneError):
            batch.install_many(lock, priority, left, left + extra, held)
        for a, b in zip(state(batch), before, strict=True):
            assert np.array_equal(a, b), "a refused batch changed the switch"
        return
    event(f"installed {len(rows)} rows")
    got = batch.install_many(lock, priority, left, left + extra, held)
    assert sorted(map(repr, got)) == sorted(map(repr, expected))
    for a, b in zip(state(batch), state(serial), strict=True):
        assert np.array_equal(a, b)
    assert np.array_equal(batch.lock_indices(lock), [serial.lock_index(x) for x in lock])


@settings(max_examples=300, deadline=None)
@given(case=cases())
def test_install_many_equals_installing_row_by_row(case):
    check_batch_equals_serial(*case)


@settings(max_examples=300, deadline=None)
@given(rows=plan_shaped())
def test_a_plan_shaped_batch_equals_installing_row_by_row(rows):
    check_batch_equals_serial([], rows)


@pytest.mark.parametrize(("rows", "message"), [
    ([(1, 0, 0, 3), (2, 0, 3, 5)],
     r"lock 2 \(batch row 1\): region \[3, 5\]: overlaps another lock's region"),
    ([(1, 0, 0, 3), (1, 0, 5, 6)], r"lock 1 \(batch row 1\): already has a region in class 0"),
    ([(1, 0, 0, 3), (2, 0, 9, 13)], r"must lie within class 0's slots \[0, 11\]"),
    ([(1, 2, 0, 3)], "priority: must be in 0..1, got 2"),
    ([(-4, 0, 0, 3)], "lock_id: must be >= 0, got -4"),
    ([(1, 0, 0, 3), (1, 1, 12, 13), (2, 1, 13, 15)],
     r"lock 2 \(batch row 2\): region \[13, 15\]: overlaps another lock's region"),
    ([(1, 0, 0, 3), (2, 0, 10, 12), (3, 1, 14, 15)], r"lock 2 \(batch row 1\): region "
     r"\[10, 12\]: must lie within class 0's slots \[0, 11\]"),
])
def test_refusals_name_the_row_as_install_does(rows, message):
    sw = SwitchDataPlane(GEOMETRY)
    lock, priority, left, right = (np.array(c) for c in zip(*rows, strict=True))
    with pytest.raises(ControlPlaneError, match=message):
        sw.install_many(lock, priority, left, right)
    assert sw.resident_locks == []


def test_a_full_table_is_refused():
    sw = SwitchDataPlane(SwitchGeometry.uniform(4, arrays=1))
    with pytest.raises(ControlPlaneError, match=r"lock 9 \(batch row 4\): the lock table is full"):
        sw.install_many(np.array([5, 6, 7, 8, 9]), 0, np.arange(5) % 4, np.arange(5) % 4)
    sw.install_many(np.array([5, 6]), 0, np.array([0, 1]), np.array([0, 1]),
                    np.array([0, 2]))
    assert sw.resident_locks == [5, 6] and sw.lock_indices(np.array([6, 5, 1])).tolist() == [
        sw.lock_index(6), sw.lock_index(5), -1]
