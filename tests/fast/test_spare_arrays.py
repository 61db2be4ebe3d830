"""A rack built after another is gone takes its switch registers and dense lock table
(:mod:`sim.fast.lock_table`, issue 32) and starts from exactly a fresh rack's arrays."""

from __future__ import annotations

import numpy as np

from netlock.config import Config
from netlock.dataplane import registers
from sim.core import plan_cache
from sim.fast import lock_table
from sim.fast.simulate_fast import build
from tests.sim.helpers import config

SWITCH = ("sw_locks", "sw_regions", "sw_slots", "sw_tenants", "sw_ctl", "table_dense",
          "table_keys", "table_values")


def _address(array: np.ndarray) -> int:
    return int(array.__array_interface__["data"][0])


def test_a_rack_after_a_gone_one_starts_from_a_fresh_ones_arrays() -> None:
    cfg = config("tenants-priority-tpcc", sim__duration_s=0.01)
    registers.SPARES.clear()
    lock_table.SPARES.clear()
    with plan_cache.temporary_cache():
        _runs_after_a_gone_rack(cfg)


def _runs_after_a_gone_rack(cfg: Config) -> None:
    first = build(cfg)
    fresh = {name: getattr(first.rack, name).copy() for name in SWITCH}
    used = {name: _address(getattr(first.rack, name)) for name in ("sw_regions", "table_dense")}
    first.advance(2000.0)
    first.close(2000.0)
    del first
    again = build(cfg)
    assert {name: _address(getattr(again.rack, name)) for name in used} == used
    for name in SWITCH:
        np.testing.assert_array_equal(getattr(again.rack, name), fresh[name], err_msg=name)
    kept = again.rack
    del again
    third = build(cfg)
    assert _address(third.rack.sw_regions) != _address(kept.sw_regions), "still referred to"
    for name in SWITCH:
        np.testing.assert_array_equal(getattr(third.rack, name), fresh[name], err_msg=name)
