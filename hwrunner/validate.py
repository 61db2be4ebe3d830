"""Check a profile and every planned write against the program's schema before sending any.

Each check names what is wrong in one line: the table is missing or of the wrong type, a name
is ambiguous, an index is outside the register, a mandatory field is absent, a value does not
fit its width, an action does not exist. Checks are vectorised over each batch's columns.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from hwrunner.bfrt_info import MATCH_PRIORITY, Schema, Table
from hwrunner.operations import EntryDelete, Operation, RegisterWrite
from hwrunner.profile import RegisterField, SwitchProfile
from netlock.errors import TargetError

_MATCH = {"exact": "Exact", "ternary": "Ternary", "range": "Range"}
"""Profile match kinds -> bf-rt.json match_type."""


def _fail(profile: SwitchProfile, where: str, what: str) -> TargetError:
    return TargetError(f"profile {profile.source}: {where}: {what}")


def register_table(schema: Schema, reg: RegisterField) -> Table:
    table = schema.table(reg.register)
    if not table.is_register:
        raise TargetError(f"{schema.source}: table {table.name}: is {table.table_type}, "
                          f"expected Register")
    return table


def register_field(schema: Schema, reg: RegisterField) -> str:
    """The full data-field name of ``reg`` in ``schema``; its width must match the profile."""
    table = register_table(schema, reg)
    datum = table.datum(f"{table.name.rsplit('.', 1)[-1]}.{reg.field}")
    if datum.width != reg.width:
        raise TargetError(f"{schema.source}: {datum.name}: {datum.width} bits, but profile "
                          f"says {reg.width}")
    return datum.name


def validate_profile(profile: SwitchProfile, schema: Schema) -> None:
    """Every name in ``profile`` resolves uniquely in ``schema`` with the right type and width."""
    for group in (profile.lock_registers, profile.slot_registers):
        for reg in group.values():
            register_field(schema, reg)
    if profile.tenant_counter is not None:
        register_field(schema, profile.tenant_counter)
    lt = profile.lock_table
    _match_table(schema, lt.table, lt.key, "exact", lt.key_width, lt.action, (lt.index_param,))
    part = profile.partition
    _match_table(schema, part.table, part.key, part.match, part.key_width, part.action,
                 (part.server_param,))
    if profile.tenant_table is not None:
        tt = profile.tenant_table
        _match_table(schema, tt.table, tt.key, "exact", None, tt.action,
                     (tt.tenant_param, tt.quota_param))
    lock_size = min(schema.table(r.register).size for r in profile.lock_registers.values())
    if lock_size <= profile.lock_index_base:
        raise _fail(profile, "lock_index_base", f"{profile.lock_index_base} leaves no lock index "
                                                f"in registers of {lock_size} entries")


def _match_table(schema: Schema, name: str, key: str, match: str, width: int | None,
                 action: str, params: tuple[str, ...]) -> Table:
    table = schema.table(name)
    if table.is_register or not table.table_type.startswith("MatchAction"):
        raise TargetError(f"{schema.source}: table {table.name}: is {table.table_type}, "
                          f"expected a match-action table")
    field = table.key(key)
    if field.match_type != _MATCH[match]:
        raise TargetError(f"{schema.source}: {table.name}: key {field.name} is "
                          f"{field.match_type}, profile says {match}")
    if width is not None and field.width != width:
        raise TargetError(f"{schema.source}: {table.name}: key {field.name} is {field.width} "
                          f"bits, profile says {width}")
    _, fields = table.action(action)
    names = {f.name for f in fields}
    for p in params:
        if p not in names:
            raise TargetError(f"{schema.source}: {table.name}: action {action} has no "
                              f"parameter {p!r} (has {', '.join(sorted(names)) or 'none'})")
    return table


def _check_width(schema: Schema, table: Table, name: str, values: np.ndarray,
                 width: int) -> None:
    """Values are unsigned: 0 <= v < 2**width (int64 columns cannot exceed 63 bits)."""
    if len(values) == 0:
        return
    bad = values < 0
    if width < 63:
        bad |= values >= (1 << width)
    if bad.any():
        row = int(np.argmax(bad))
        raise TargetError(f"{schema.source}: {table.name}: {name} = {int(values[row])} "
                          f"(row {row}) does not fit {width} bits")


def validate_operation(schema: Schema, op: Operation) -> None:
    """One batch: table type, index range, key/data names, mandatory fields, widths, action."""
    table = schema.table(op.table)
    if isinstance(op, RegisterWrite):
        if not table.is_register:
            raise TargetError(f"{schema.source}: table {table.name}: is {table.table_type}, "
                              f"a register write needs a Register")
        idx = op.index
        if len(idx) and (int(idx.min()) < 0 or int(idx.max()) >= table.size):
            bad = int(np.argmax((idx < 0) | (idx >= table.size)))
            raise TargetError(f"{schema.source}: {table.name}: index {int(idx[bad])} outside "
                              f"0..{table.size - 1}")
        given = set()
        short = table.name.rsplit(".", 1)[-1]
        for col in op.data:
            datum = table.datum(f"{short}.{col.name}")
            given.add(datum.name)
            _check_width(schema, table, datum.name, col.value, datum.width)
        missing = [d.name for d in table.data if d.mandatory and d.name not in given]
        if missing:
            raise TargetError(f"{schema.source}: {table.name}: mandatory field {missing[0]} "
                              f"not written")
        return
    if table.is_register:
        raise TargetError(f"{schema.source}: table {table.name}: is a Register, "
                          f"expected a match-action table")
    given = set()
    for col in op.keys:
        field = table.key(col.name)
        given.add(field.name)
        _check_width(schema, table, field.name, col.value, field.width)
        for extra in (col.mask, col.high):
            if extra is not None:
                _check_width(schema, table, field.name, extra, field.width)
    missing = [k.name for k in table.keys if k.name not in given
               and (k.mandatory or k.name == MATCH_PRIORITY)]
    if missing:
        raise TargetError(f"{schema.source}: {table.name}: key field {missing[0]} not given")
    if len(op) > table.size:
        raise TargetError(f"{schema.source}: {table.name}: {len(op)} entries exceed its size "
                          f"{table.size}")
    if isinstance(op, EntryDelete):
        return
    if op.action is None:
        raise TargetError(f"{schema.source}: {table.name}: entry without an action")
    full, params = table.action(op.action)
    by_name = {p.name: p for p in params}
    for col in op.data:
        if col.name not in by_name:
            raise TargetError(f"{schema.source}: {table.name}: action {full} has no "
                              f"parameter {col.name!r}")
        _check_width(schema, table, col.name, col.value, by_name[col.name].width)
    absent = [p.name for p in params if p.mandatory and p.name not in {c.name for c in op.data}]
    if absent:
        raise TargetError(f"{schema.source}: {table.name}: action {full}: mandatory "
                          f"parameter {absent[0]!r} missing")


def validate_operations(schema: Schema, ops: Iterable[Operation]) -> None:
    for op in ops:
        validate_operation(schema, op)

