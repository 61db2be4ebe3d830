"""Reading a switch's layout back, and checking that what was written is what is there.

The live layout is read from the switch itself (lock table, bound registers, partition
table), so a push never trusts a file about what is installed. Verification compares every
written value on every pipe, and names the first few differences.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hwrunner.bfrt_info import MATCH_PRIORITY
from hwrunner.compile import partition_entries
from hwrunner.driver import Driver, same_on_all_pipes
from hwrunner.operations import EntryAdd, Operation, RegisterWrite, ipv4
from hwrunner.profile import SwitchProfile
from hwrunner.switch_contents import Layout, decode_partition

MAX_REPORTED = 5


@dataclass(frozen=True)
class LiveState:
    """The layout read back, with the partition table's raw entries (for a minimal diff)."""

    layout: Layout
    partition_entries: EntryAdd


def partition_key_names(profile: SwitchProfile) -> tuple[str, ...]:
    return (profile.partition.key, MATCH_PRIORITY)


def read_partition(driver: Driver, profile: SwitchProfile) -> EntryAdd:
    part = profile.partition
    return driver.read_entries(part.table, partition_key_names(profile), (part.server_param,))


def read_live(driver: Driver, profile: SwitchProfile) -> LiveState:
    """The layout installed on the switch now (pipe 0's bounds; verification checks all)."""
    lt = profile.lock_table
    table = driver.read_entries(lt.table, (lt.key,), (lt.index_param,))
    lock_id, index = table.keys[0].value, table.data[0].value
    bounds = read_bounds(driver, profile, index)
    part = read_partition(driver, profile)
    layout = Layout(lock_id, index, bounds["left"][0] - profile.slot_base,
                    bounds["right"][0] - profile.slot_base, decode_partition(profile, part))
    return LiveState(layout, part)


def read_bounds(driver: Driver, profile: SwitchProfile, index: np.ndarray) -> dict[str, np.ndarray]:
    out = {}
    for concept in ("left", "right"):
        reg = profile.register(concept)
        out[concept] = driver.read_registers(reg.register, (reg.field,), index)[reg.field]
    return out


def check_writes(driver: Driver, ops: tuple[Operation, ...] | list[Operation]) -> list[str]:
    """Read back every register field ``ops`` wrote; one line per differing field."""
    problems = []
    for op in ops:
        if not isinstance(op, RegisterWrite):
            continue
        names = tuple(d.name for d in op.data)
        got = driver.read_registers(op.table, names, op.index)
        for col in op.data:
            ok = same_on_all_pipes(got[col.name], col.value)
            if not ok.all():
                i = int(np.argmax(~ok))
                problems.append(f"{op.table}[{int(op.index[i])}].{col.name}: wrote "
                                f"{int(col.value[i])}, read {got[col.name][:, i].tolist()} "
                                f"(per pipe)")
    return problems


def check_layout(driver: Driver, profile: SwitchProfile, target: Layout) -> list[str]:
    """The switch holds exactly ``target``: lock table, bounds and pause flags on every pipe,
    and the partition table's entries."""
    problems: list[str] = []
    lt = profile.lock_table
    table = driver.read_entries(lt.table, (lt.key,), (lt.index_param,))
    live = Layout(table.keys[0].value, table.data[0].value, table.data[0].value,
                  table.data[0].value)
    if np.array_equal(live.lock_id, target.lock_id):
        bad = np.flatnonzero(live.index != target.index)[:MAX_REPORTED]
        problems += [f"{lt.table}: lock {int(target.lock_id[i])} maps to index "
                     f"{int(live.index[i])}, expected {int(target.index[i])}" for i in bad]
    else:
        extra = np.setdiff1d(live.lock_id, target.lock_id)
        missing = np.setdiff1d(target.lock_id, live.lock_id)
        problems.append(f"{lt.table}: {len(live)} entries, expected {len(target)} "
                        f"(unexpected locks {extra[:MAX_REPORTED].tolist()}, missing "
                        f"{missing[:MAX_REPORTED].tolist()})")
    expected = {"left": target.left + profile.slot_base, "right": target.right + profile.slot_base,
                "paused": np.zeros(len(target), dtype=np.int64)}
    for concept, want in expected.items():
        reg = profile.register(concept)
        got = driver.read_registers(reg.register, (reg.field,), target.index)[reg.field]
        ok = same_on_all_pipes(got, want)
        for i in np.flatnonzero(~ok)[:MAX_REPORTED]:
            problems.append(f"lock {int(target.lock_id[i])}: {reg.register}"
                            f"[{int(target.index[i])}].{reg.field} is {got[:, i].tolist()} "
                            f"(per pipe), expected {int(want[i])}")
    want_part = partition_entries(profile, target.partition)
    got_part = read_partition(driver, profile)
    if _entry_map(got_part) != _entry_map(want_part):
        problems.append(f"{profile.partition.table}: entries differ from the plan's partition "
                        f"({len(got_part)} read, {len(want_part)} expected; servers "
                        f"{[ipv4(v) for v in got_part.data[0].value[:MAX_REPORTED]]})")
    return problems


def _entry_map(op: Operation) -> dict[tuple, int]:
    cols = []
    for k in op.keys:
        cols.extend(c for c in (k.value, k.mask, k.high) if c is not None)
    keys = zip(*(c.tolist() for c in cols), strict=True) if cols else iter(())
    return dict(zip(keys, op.data[0].value.tolist(), strict=False))
