"""The simpy rack installs its plan in one batch (``SwitchDataPlane.install_many``, as the
fast engine does); the switch it gets is the one installing lock by lock gives, but for
the pass counter (``C_PASS``, the key of the register-access trace, off in a simulation):
``install`` sends each new lock an idle notice, a pass that does nothing to a lock no
server holds requests for."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from netlock.dataplane.registers import C_PASS
from sim.core import pilot, plan_cache
from sim.core.parts import switch_dataplane
from sim.simpy_model import build
from tests.sim.helpers import config


@pytest.mark.parametrize("name, sets", [
    ("micro-exclusive", {"workload__clients": 12, "workload__locks": 300, "workload__zipf": 0.9,
                         "switch__slots": 120}),
    ("tenants-priority", {"tenants[1].start_s": 0.0001}),
])
def test_one_batch_installs_the_switch_lock_by_lock_would(name, sets, monkeypatch):
    cfg = config(name, sim__duration_s=0.0002, sim__warmup_s=0.0001,
                 **{key.replace(".", "__"): value for key, value in sets.items()})
    monkeypatch.setattr(pilot, "PILOT_REQUESTS", 2000)
    pilot.forget_pilots()
    with plan_cache.bypassed():
        model = build(cfg)
    pilot.forget_pilots()
    entries = model.plan.entries
    assert len(entries.lock_id) > 1
    assert model.manager.switch.dp.trace is None
    batch = switch_dataplane(cfg)
    model.manager.install_plan(SimpleNamespace(dp=batch, refresh_table=lambda: None))
    one_by_one = switch_dataplane(cfg)
    for row in zip(entries.lock_id.tolist(), entries.priority.tolist(), entries.left.tolist(),
                   entries.right.tolist(), strict=True):
        one_by_one.install(*row)
    assert one_by_one.ctl[C_PASS] == len(entries.lock_id) and batch.ctl[C_PASS] == 0
    one_by_one.ctl[C_PASS] = 0
    for a, b in zip(batch.arrays()[:-1], one_by_one.arrays()[:-1], strict=True):  # not `out`
        assert (a is None and b is None) or np.array_equal(a, b)
    assert list(batch._table.items()) == list(one_by_one._table.items())
    assert batch.free_rows.tolist() == one_by_one.free_rows.tolist()
    assert np.array_equal(batch._owner, one_by_one._owner)
