"""The emulated switch's program: BFRuntime-style tables held in numpy arrays and dicts.

Registers are ``(pipes, size)`` int64 arrays per data field; match tables map a key tuple to
``(action, params)``. Every batch is checked against the program's schema exactly as a switch
would check it (names, types, sizes, widths, duplicates, capacity) before anything changes,
so a failing batch applies nothing. Writes go to every pipe (``Target(device, 0xffff)``);
reads return one value per pipe.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hwrunner.bfrt_info import Field, Schema, Table, match_table, register_table
from hwrunner.operations import (
    DataColumn,
    EntryAdd,
    EntryDelete,
    KeyColumn,
    Operation,
    RegisterWrite,
)
from hwrunner.profile import SwitchProfile
from hwrunner.validate import validate_operation
from netlock.errors import TargetError

PARTITION_TABLE_SIZE = 4096
TENANT_TABLE_SIZE = 4096


def emulated_schema(profile: SwitchProfile) -> Schema:
    """The program the profile describes, named as bf-p4c names a P4_14 program."""
    tables: dict[str, Table] = {}
    fields: dict[str, dict[str, int]] = {}
    sizes: dict[str, int] = {}
    groups = [(profile.lock_registers, profile.lock_capacity),
              (profile.slot_registers, profile.slot_capacity)]
    if profile.tenant_counter is not None:
        groups.append(({"tenant": profile.tenant_counter}, TENANT_TABLE_SIZE))
    for regs, size in groups:
        for reg in regs.values():
            fields.setdefault(reg.register, {})[reg.data_name] = reg.width
            sizes[reg.register] = size
    for name, cols in fields.items():
        tables[name] = register_table(f"pipe.{name}", sizes[name], cols)
    lt = profile.lock_table
    tables[lt.table] = match_table(f"pipe.{lt.table}", profile.lock_capacity,
                                   (Field(lt.key, lt.key_width),), lt.action,
                                   {lt.index_param: 32})
    part = profile.partition
    match = {"ternary": "Ternary", "range": "Range"}[part.match]
    tables[part.table] = match_table(f"pipe.{part.table}", PARTITION_TABLE_SIZE,
                                     (Field(part.key, part.key_width, match),), part.action,
                                     {part.server_param: 32})
    if profile.tenant_table is not None:
        tt = profile.tenant_table
        tables[tt.table] = match_table(f"pipe.{tt.table}", TENANT_TABLE_SIZE,
                                       (Field(tt.key, 32),), tt.action,
                                       {tt.tenant_param: 16, tt.quota_param: 32})
    return Schema(tuple(tables.values()), f"emulated program of profile {profile.name}")


def _key_parts(table: Table, op: Operation) -> list[np.ndarray]:
    """The op's key columns in the table's key order, masks/highs after their values."""
    by_field = {table.key(k.name).name: k for k in op.keys}
    cols = []
    for field in table.keys:
        k = by_field[field.name]
        cols.append(k.value)
        cols.extend(c for c in (k.mask, k.high) if c is not None)
    return cols


def _key_tuples(table: Table, op: Operation) -> list[tuple[int, ...]]:
    cols = _key_parts(table, op)
    return list(zip(*(c.tolist() for c in cols), strict=True))


class EmulatedProgram:
    """Tables of one program on an emulated device with ``pipes`` pipes."""

    def __init__(self, schema: Schema, pipes: int) -> None:
        self.schema = schema
        self.pipes = pipes
        self.registers: dict[str, dict[str, np.ndarray]] = {}
        self.entries: dict[str, dict[tuple[int, ...], tuple[str, tuple[int, ...]]]] = {}
        for t in schema.tables:
            if t.is_register:
                self.registers[t.name] = {d.name: np.zeros((pipes, t.size), dtype=np.int64)
                                          for d in t.data}
            else:
                self.entries[t.name] = {}

    def table(self, name: str) -> Table:
        return self.schema.table(name)

    def data_field(self, table: Table, name: str) -> str:
        """Full name of a register field given as ``f1`` / ``lo`` or any unique suffix."""
        return table.datum(f"{table.name.rsplit('.', 1)[-1]}.{name}").name

    def apply(self, op: Operation) -> Table:
        """Apply one batch on every pipe, or raise TargetError having changed nothing."""
        validate_operation(self.schema, op)
        table = self.table(op.table)
        if isinstance(op, RegisterWrite):
            store = self.registers[table.name]
            for col in op.data:
                store[self.data_field(table, col.name)][:, op.index] = col.value
            return table
        rows = self.entries[table.name]
        keys = _key_tuples(table, op)
        if len(set(keys)) != len(keys):
            raise TargetError(f"{table.name}: the batch repeats a key")
        present = [k in rows for k in keys]
        if isinstance(op, EntryAdd):
            if any(present):
                raise TargetError(f"{table.name}: entry {keys[present.index(True)]} already "
                                  "exists")
            if len(rows) + len(keys) > table.size:
                raise TargetError(f"{table.name}: table full ({table.size} entries)")
        elif not all(present):
            raise TargetError(f"{table.name}: entry {keys[present.index(False)]} does not exist")
        if isinstance(op, EntryDelete):
            for k in keys:
                del rows[k]
            return table
        action, params = table.action(op.action or "")
        cols = {c.name: c.value.tolist() for c in op.data}
        values = zip(*(cols.get(p.name, [0] * len(keys)) for p in params), strict=True)
        for k, v in zip(keys, values if params else ((),) * len(keys), strict=True):
            rows[k] = (action, tuple(v))
        return table

    def read_registers(self, table_name: str, fields: Sequence[str],
                       index: np.ndarray) -> dict[str, np.ndarray]:
        table = self.table(table_name)
        if not table.is_register:
            raise TargetError(f"{table.name}: is {table.table_type}, not a Register")
        index = np.asarray(index, dtype=np.int64)
        if len(index) and (index.min() < 0 or index.max() >= table.size):
            raise TargetError(f"{table.name}: read index outside 0..{table.size - 1}")
        store = self.registers[table.name]
        return {f: store[self.data_field(table, f)][:, index].copy() for f in fields}

    def read_entries(self, table_name: str, keys: Sequence[str],
                     data: Sequence[str]) -> EntryAdd:
        table = self.table(table_name)
        if table.is_register:
            raise TargetError(f"{table.name}: is a Register, not a match table")
        rows = self.entries[table.name]
        wanted = [table.key(k).name for k in keys]
        layout: list[tuple[str, int, int]] = []
        pos = 0
        for field in table.keys:
            width = 2 if field.match_type in ("Ternary", "Range") else 1
            layout.append((field.name, pos, width))
            pos += width
        items = list(rows.items())
        matrix = np.array([k for k, _ in items], dtype=np.int64).reshape(len(items), pos)
        key_cols = []
        for asked, full in zip(keys, wanted, strict=True):
            _, start, width = next(x for x in layout if x[0] == full)
            kind = table.key(full).match_type
            extra = matrix[:, start + 1] if width == 2 else None
            key_cols.append(KeyColumn(asked, matrix[:, start],
                                      mask=extra if kind == "Ternary" else None,
                                      high=extra if kind == "Range" else None))
        names_of = {a: [p.name for p in params] for a, params in table.actions}
        data_cols = []
        for name in data:
            values = [params[names_of[action].index(name)] if name in names_of[action] else 0
                      for _, (action, params) in items]
            data_cols.append(DataColumn(name, np.array(values, dtype=np.int64)))
        action_name = items[0][1][0] if items else None
        return EntryAdd(table_name, tuple(key_cols), tuple(data_cols), action_name)

