"""Plan values and their one serialisation: YAML plus a Parquet side file when large."""

from pathlib import Path

import numpy as np
import pytest

from netlock.errors import PlanError
from netlock.geometry import SwitchGeometry
from netlock.plan import (
    PartitionRange,
    Plan,
    PlanInputs,
    PlanSummary,
    SwitchEntries,
    servers_needed,
)
from netlock.plan_io import INLINE_ROWS, load_plan, save_plan


def make_plan(n_locks: int, slots_each: int = 2, priorities: int = 1) -> Plan:
    geo = SwitchGeometry.uniform(max(n_locks * slots_each, 8), arrays=4, priorities=priorities)
    left = np.arange(n_locks) * slots_each
    entries = SwitchEntries(
        lock_id=np.arange(n_locks) * 3,
        slots=np.full(n_locks, slots_each),
        left=left,
        right=left + slots_each - 1,
        priority=np.zeros(n_locks),
        rate_rps=np.linspace(1.0, 2.0, n_locks),
        contention=np.full(n_locks, slots_each),
    )
    summary = PlanSummary("knapsack", geo.total_slots, n_locks * slots_each, n_locks * 2, n_locks,
                          10.0, 6.0, 4.0, 1, 18e6)
    return Plan(geometry=geo, policy="knapsack", inputs=PlanInputs(slots=geo.total_slots,
                server_rate_rps=18e6, trace_digest="abc"), entries=entries,
                partition=(PartitionRange(0, 99, 0), PartitionRange(100, 2**62, 1)),
                summary=summary)


@pytest.mark.parametrize("n_locks", [0, 5, INLINE_ROWS + 1])
def test_round_trip(tmp_path: Path, n_locks: int):
    plan = make_plan(n_locks)
    path = tmp_path / "plan.yaml"
    save_plan(plan, path)
    side = tmp_path / "plan.yaml.entries.parquet"
    assert side.exists() == (n_locks > INLINE_ROWS)
    assert load_plan(path) == plan


def test_server_of_uses_partition_ranges():
    plan = make_plan(3)
    assert plan.server_of(np.array([0, 99, 100, 5000])).tolist() == [0, 0, 1, 1]


def test_servers_needed_is_a_ceiling():
    assert servers_needed(0.0, 18e6) == 0
    assert servers_needed(18e6, 18e6) == 1
    assert servers_needed(18e6 + 1, 18e6) == 2


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.replace("version: 1", "version: 9"), "version: unsupported"),
        (lambda t: t.replace("right: 1\n", "right: 2\n", 1), "row 0: entries.slots"),
        (lambda t: t.replace("left: 2\n", "left: 1\n", 1).replace("right: 3\n", "right: 2\n", 1),
         "row 1: entries.left: region [1, 2] overlaps"),
        (lambda t: t.replace("lock_id: 3\n", "lock_id: x\n", 1), "row 1: entries.lock_id"),
        (lambda t: "geometry: [", "malformed YAML"),
        (lambda t: t.replace("policy: knapsack", "policy: magic"), "policy: must be one of"),
    ],
)
def test_bad_plans_give_one_line_errors(tmp_path: Path, edit, message):
    path = tmp_path / "plan.yaml"
    save_plan(make_plan(3), path)
    path.write_text(edit(path.read_text()))
    with pytest.raises(PlanError) as info:
        load_plan(path)
    text = str(info.value)
    assert "\n" not in text
    assert text.startswith(str(path))
    assert message in text


def test_missing_plan_file(tmp_path: Path):
    with pytest.raises(PlanError, match="cannot read"):
        load_plan(tmp_path / "nope.yaml")


def test_region_outside_its_priority_range_is_rejected():
    plan = make_plan(2, priorities=2)
    bad = SwitchEntries(lock_id=[1], slots=[2], left=[0], right=[1], priority=[1])
    found = Plan(plan.geometry, "knapsack", plan.inputs, bad, plan.partition,
                 plan.summary).problem()
    assert found is not None and "outside priority 1" in found[1]
