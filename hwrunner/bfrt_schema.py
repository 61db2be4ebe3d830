"""The program's schema as a BFRuntime device reports it, and a bf-rt.json file checked against it.

The device is the authority: table sizes, key and data field names, widths, match kinds and
mandatory flags are read from its info object (``bfrt_info.table_get(name).info``), so a plan
is sized for the program that is actually loaded. A ``--bfrt`` file is compared with what the
device reports for every table the profile names, and any difference is one line before a
single write is sent.
"""

from __future__ import annotations

from typing import Any

from hwrunner.bfrt_info import MATCH_ACTION, REGISTER, REGISTER_INDEX, Field, Schema, Table
from hwrunner.profile import SwitchProfile
from netlock.errors import TargetError


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (a KeyError's without its quotes)."""
    raw = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
    text = str(raw).strip().splitlines()
    return text[0] if text else type(exc).__name__


def profile_tables(profile: SwitchProfile) -> list[str]:
    """Every table (register or match) the profile names, once each."""
    names = [r.register for r in profile.lock_registers.values()]
    names += [r.register for r in profile.slot_registers.values()]
    if profile.tenant_counter is not None:
        names.append(profile.tenant_counter.register)
    names += [profile.lock_table.table, profile.partition.table]
    if profile.tenant_table is not None:
        names.append(profile.tenant_table.table)
    return list(dict.fromkeys(names))


def _bits(size: Any) -> int:
    """Width in bits from the client's ``(bytes, bits)`` size pair."""
    nbytes, bits = size
    return int(bits if bits is not None else 8 * (nbytes or 4))


def _table(info: Any) -> Table:
    name = info.name_get()
    keys = tuple(Field(k, _bits(info.key_field_size_get(k)), info.key_field_match_type_get(k),
                       bool(info.key_field_mandatory_get(k)))
                 for k in info.key_field_name_list_get())
    if info.type_get() == REGISTER:
        data = tuple(Field(d, _bits(info.data_field_size_get(d)),
                           mandatory=bool(info.data_field_mandatory_get(d)))
                     for d in info.data_field_name_list_get())
        return Table(name, REGISTER, int(info.size_get()), keys, data)
    actions = tuple(
        (a, tuple(Field(p, _bits(info.data_field_size_get(p, a)),
                        mandatory=bool(info.data_field_mandatory_get(p, a)))
                  for p in info.data_field_name_list_get(a)))
        for a in info.action_name_list_get())
    return Table(name, info.type_get() or MATCH_ACTION, int(info.size_get()), keys, (), actions)


def missing_table(bfrt_info: Any, name: str) -> str:
    """Why ``bfrt_info.table_get(name)`` found nothing: no such table, or several end in it."""
    hits = [t for t in bfrt_info.table_name_list_get() if t == name or t.endswith(f".{name}")]
    if len(hits) > 1:
        return f"table {name!r} is ambiguous (matches {', '.join(sorted(hits))})"
    return f"no table {name!r}"


def device_schema(bfrt_info: Any, profile: SwitchProfile, where: str) -> Schema:
    """The profile's tables as the device describes them (names, sizes, widths, kinds)."""
    tables = []
    source = f"{where}: program {profile.program}"
    for name in profile_tables(profile):
        try:
            tables.append(_table(bfrt_info.table_get(name).info))
        except KeyError:
            raise TargetError(f"{source}: {missing_table(bfrt_info, name)}") from None
    return Schema(tuple(tables), source)


def _fields(fields: tuple[Field, ...]) -> dict[str, tuple[int, str]]:
    return {f.name: (f.width, f.match_type) for f in fields}


def check_against_device(given: Schema, device: Schema) -> None:
    """A bf-rt.json file describes the loaded program: every table the device was asked about
    exists in it with the same keys, fields, actions, widths and size."""
    for dev in device.tables:
        try:
            mine = given.table(dev.name)
        except TargetError:
            raise TargetError(f"{given.source}: has no table {dev.name} (the device has "
                              f"it): not this program's bf-rt.json") from None
        where = f"{given.source}: {dev.name}"
        if mine.size != dev.size:
            raise TargetError(f"{where}: size {mine.size}, the device says {dev.size}")
        pairs = [("key", _fields(mine.keys), _fields(dev.keys)),
                 ("data field", _fields(mine.data), _fields(dev.data))]
        pairs += [(f"action {a} parameter", _fields(p), _fields(dict(dev.actions).get(a, ())))
                  for a, p in mine.actions if a in dict(dev.actions)]
        for what, a, b in pairs:
            if a != b:
                diff = sorted(set(a.items()) ^ set(b.items()))[0]
                side = "the device has" if diff in b.items() else "the file has"
                raise TargetError(f"{where}: {what}s differ: {side} {diff[0]!r} "
                                  f"({diff[1][0]} bits, {diff[1][1]}); file "
                                  f"{sorted(a)}, device {sorted(b)}")
        missing = sorted(set(dict(dev.actions)) - set(dict(mine.actions)))
        if missing:
            raise TargetError(f"{where}: no action {missing[0]} (the device has it)")


def register_probe(schema: Schema) -> Table:
    """A register of the program to read once, to learn the device's pipe count."""
    for table in schema.tables:
        if table.is_register and table.keys and table.keys[0].name == REGISTER_INDEX:
            return table
    raise TargetError(f"{schema.source}: no register table")
