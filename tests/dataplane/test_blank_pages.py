"""Copy-on-write blank register rows (issue 32): every copy equals a written one, and
copies never share what is written to them."""

from __future__ import annotations

import numpy as np
import pytest

from netlock.dataplane import blank_pages
from netlock.dataplane.blank_pages import MAX_FILES, TEMPLATE_AFTER, blank_copy
from netlock.dataplane.registers import WRITTEN_SHARE, new_state
from netlock.dataplane.switch import SwitchDataPlane
from netlock.geometry import SwitchGeometry


def make() -> np.ndarray:
    a = np.zeros((1 << 15, 6), dtype=np.int64)
    a[:, 0] = -1
    a[:, 3] = np.arange(len(a)) % 7
    return a


@pytest.mark.skipif(not blank_pages._can_map(), reason="no in-memory files here")
def test_copies_are_equal_and_independent() -> None:
    key = ("test", object())
    copies = [blank_copy(key, make) for _ in range(TEMPLATE_AFTER + 3)]
    assert key in blank_pages._files
    mapped = copies[TEMPLATE_AFTER + 1:]
    assert all(c.base is not None and c.flags.writeable and c.flags.c_contiguous
               for c in mapped)
    for c in copies:
        np.testing.assert_array_equal(c, make())
    mapped[0][5] = 42
    mapped[0][-1, 0] = 7
    np.testing.assert_array_equal(mapped[1], make())
    np.testing.assert_array_equal(blank_copy(key, make), make())
    assert mapped[0][5, 2] == 42 and mapped[0][-1, 0] == 7


def test_written_copies_are_plain_arrays() -> None:
    key = ("test-written", object())
    for _ in range(TEMPLATE_AFTER + 2):
        blank_copy(key, make)
    written = blank_copy(key, make, written=True)
    assert written.base is None
    np.testing.assert_array_equal(written, make())


@pytest.mark.parametrize("locks_expected", [0, 100_000])
def test_switch_state_same_however_made(locks_expected: int) -> None:
    geometry = SwitchGeometry.uniform(100_000, priorities=2)
    assert (locks_expected >= WRITTEN_SHARE * geometry.total_slots) == bool(locks_expected)
    reference = None
    for _ in range(TEMPLATE_AFTER + 2):
        state = new_state(geometry, 64, 0, locks_expected)
        reference = reference or {k: v.copy() for k, v in state.items()}
        for name, array in state.items():
            np.testing.assert_array_equal(array, reference[name])
    switches = [SwitchDataPlane(geometry, locks_expected=locks_expected) for _ in range(2)]
    switches[0].install_many(np.arange(10), 1, np.arange(10) * 3 + 60_000,
                             np.arange(10) * 3 + 60_002)
    empty = switches[1].snapshot()
    for name, array in SwitchDataPlane(geometry).snapshot().items():
        np.testing.assert_array_equal(empty[name], array)


@pytest.mark.skipif(not blank_pages._can_map(), reason="no in-memory files here")
def test_files_kept_are_bounded_and_copies_outlive_them() -> None:
    first = ("test-first", object())
    for _ in range(TEMPLATE_AFTER + 2):
        early = blank_copy(first, make)
    for k in range(MAX_FILES + 1):
        key = ("test-many", k, object())
        for _ in range(TEMPLATE_AFTER + 1):
            blank_copy(key, make)
    assert len(blank_pages._files) <= MAX_FILES
    assert first not in blank_pages._files
    early[0, 1] = 9
    expected = make()
    expected[0, 1] = 9
    np.testing.assert_array_equal(early, expected)
