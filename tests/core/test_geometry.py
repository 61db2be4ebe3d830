"""SwitchGeometry: slot mapping over pooled register arrays and priority ranges."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from netlock.geometry import RegisterArray, SwitchGeometry


def test_slot_location_maps_across_arrays():
    geo = SwitchGeometry(arrays=(RegisterArray(3, 4), RegisterArray(2, 8)), stages=12)
    # arrays are ordered by stage: the 8-slot array (stage 2) comes first
    assert [a.stage for a in geo.arrays] == [2, 3]
    assert geo.slot_location(0) == (0, 0)
    assert geo.slot_location(7) == (0, 7)
    assert geo.slot_location(10) == (1, 2)  # the paper's example: slot 10 -> array 1, offset 2
    with pytest.raises(IndexError):
        geo.slot_location(12)


@given(st.lists(st.integers(1, 50), min_size=1, max_size=6))
def test_slot_array_agrees_with_slot_location(sizes):
    geo = SwitchGeometry(arrays=tuple(RegisterArray(i, s) for i, s in enumerate(sizes)))
    assert geo.total_slots == sum(sizes)
    for k in range(geo.total_slots):
        assert geo.slot_array[k] == geo.slot_location(k)[0]


def test_priority_ranges_partition_the_queue_by_stage():
    geo = SwitchGeometry.uniform(100, arrays=4, priorities=2)
    assert geo.priority_ranges == ((0, 49), (50, 99))
    assert geo.priority_capacity(1) == 50


def test_more_priorities_than_slot_stages_is_rejected():
    with pytest.raises(ValueError, match=r"switch\.priorities"):
        SwitchGeometry(arrays=(RegisterArray(2, 10), RegisterArray(2, 10)), priorities=2)


def test_array_outside_pipeline_is_rejected():
    with pytest.raises(ValueError, match=r"switch.arrays\[0\].stage"):
        SwitchGeometry(arrays=(RegisterArray(20, 10),), stages=12)


def test_dict_round_trip():
    geo = SwitchGeometry.uniform(1000, arrays=3, priorities=3)
    assert SwitchGeometry.from_dict(geo.to_dict()) == geo
