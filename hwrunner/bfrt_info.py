"""A data-plane program's BFRuntime info: tables, keys, data fields, actions, sizes, widths.

Built from a ``bf-rt.json`` file (what the SDE compiler emits and what a switch reports) or
synthesised for the emulated switch. Names resolve the way BFRuntime resolves them: the full
name or any unique dotted suffix (``pipe.SwitchIngress.r``, ``SwitchIngress.r``, ``r``); a suffix
that matches several names is rejected, never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from netlock.errors import TargetError
from netlock.inputs import load_json

REGISTER = "Register"
MATCH_ACTION = "MatchAction_Direct"
REGISTER_INDEX = "$REGISTER_INDEX"
MATCH_PRIORITY = "$MATCH_PRIORITY"


@dataclass(frozen=True)
class Field:
    """A key field, data field or action parameter; ``width`` in bits."""

    name: str
    width: int
    match_type: str = "Exact"
    mandatory: bool = True
    read_only: bool = False


@dataclass(frozen=True)
class Table:
    """One BFRuntime table. Registers are tables keyed by ``$REGISTER_INDEX``."""

    name: str
    table_type: str
    size: int
    keys: tuple[Field, ...]
    data: tuple[Field, ...] = ()
    actions: tuple[tuple[str, tuple[Field, ...]], ...] = ()

    @property
    def is_register(self) -> bool:
        return self.table_type == REGISTER

    def key(self, name: str) -> Field:
        named = {k.name: k for k in self.keys}
        return named[resolve_name(named, name, f"table {self.name}: key field")]

    def datum(self, name: str) -> Field:
        named = {d.name: d for d in self.data}
        return named[resolve_name(named, name, f"table {self.name}: data field")]

    def action(self, name: str) -> tuple[str, tuple[Field, ...]]:
        named = dict(self.actions)
        full = resolve_name(named, name, f"table {self.name}: action")
        return full, named[full]


def _matches(full: str, query: str) -> bool:
    return full == query or full.endswith("." + query)


def resolve_name(names: object, query: str, what: str) -> str:
    """The one full name in ``names`` equal to ``query`` or ending with ``.query``."""
    hits = [n for n in names if _matches(n, query)]  # type: ignore[attr-defined]
    if query in hits:
        return query
    if not hits:
        raise TargetError(f"{what} {query!r}: not found")
    if len(hits) > 1:
        raise TargetError(f"{what} {query!r}: ambiguous, matches {', '.join(sorted(hits))}")
    return hits[0]


@dataclass(frozen=True)
class Schema:
    """All tables of one program, looked up by full name or unique dotted suffix."""

    tables: tuple[Table, ...]
    source: str = "bf-rt.json"

    def table(self, name: str) -> Table:
        named = {t.name: t for t in self.tables}
        return named[resolve_name(named, name, f"{self.source}: table")]

    def has(self, name: str) -> bool:
        return any(_matches(t.name, name) for t in self.tables)


def _width(type_doc: object, where: str) -> int:
    if not isinstance(type_doc, dict):
        raise TargetError(f"{where}: type: expected a mapping")
    if "width" in type_doc:
        return int(type_doc["width"])
    kind = str(type_doc.get("type", ""))
    if kind == "bool":
        return 1
    if kind.startswith("uint") and kind[4:].isdigit():
        return int(kind[4:])
    if kind == "bytes":
        raise TargetError(f"{where}: type bytes without a width")
    return 32


def _field(doc: dict, where: str, match_type: str = "Exact") -> Field:
    return Field(
        name=str(doc["name"]),
        width=_width(doc.get("type", {}), f"{where}.type"),
        match_type=str(doc.get("match_type", match_type)),
        mandatory=bool(doc.get("mandatory", True)),
        read_only=bool(doc.get("read_only", False)),
    )


def _data_fields(items: list, where: str) -> tuple[Field, ...]:
    out = []
    for i, item in enumerate(items):
        if "singleton" in item:
            inner = dict(item["singleton"])
            inner.setdefault("mandatory", item.get("mandatory", False))
            inner.setdefault("read_only", item.get("read_only", False))
            out.append(_field(inner, f"{where}[{i}]"))
        elif "oneof" in item:
            out.extend(_field(dict(o, mandatory=False), f"{where}[{i}]") for o in item["oneof"])
        else:
            out.append(_field(item, f"{where}[{i}]"))
    return tuple(out)


def _table(doc: dict, where: str) -> Table:
    keys = tuple(_field(k, f"{where}.key[{i}]") for i, k in enumerate(doc.get("key") or []))
    actions = tuple(
        (str(a["name"]), _data_fields(a.get("data") or [], f"{where}.action_specs[{i}].data"))
        for i, a in enumerate(doc.get("action_specs") or [])
    )
    return Table(
        name=str(doc["name"]),
        table_type=str(doc["table_type"]),
        size=int(doc.get("size", 0)),
        keys=keys,
        data=_data_fields(doc.get("data") or [], f"{where}.data"),
        actions=actions,
    )


def schema_from_dict(doc: object, source: str) -> Schema:
    """Parse a loaded bf-rt.json document; a malformed table is a one-line TargetError."""
    if not isinstance(doc, dict) or not isinstance(doc.get("tables"), list):
        raise TargetError(f"{source}: not a bf-rt.json (expected a mapping with 'tables')")
    tables = []
    for i, t in enumerate(doc["tables"]):
        try:
            tables.append(_table(t, f"tables[{i}]"))
        except (KeyError, TypeError, ValueError) as exc:
            raise TargetError(f"{source}: tables[{i}]: malformed table ({exc})") from None
    return Schema(tuple(tables), source)


def load_schema(path: str | Path) -> Schema:
    """Read a bf-rt.json file."""
    return schema_from_dict(load_json(path, TargetError, "bf-rt.json"), str(path))


def register_table(name: str, size: int, fields: dict[str, int]) -> Table:
    """A Register table as bf-p4c describes it (used to synthesise the emulator's program)."""
    return Table(name, REGISTER, size, (Field(REGISTER_INDEX, 32),),
                 tuple(Field(f, w, mandatory=False) for f, w in fields.items()))


def match_table(name: str, size: int, keys: tuple[Field, ...], action: str,
                params: dict[str, int]) -> Table:
    """A MatchAction_Direct table with one action (used to synthesise the emulator's program)."""
    if any(k.match_type != "Exact" for k in keys):
        keys = (*keys, Field(MATCH_PRIORITY, 32))
    return Table(name, MATCH_ACTION, size, keys, (),
                 ((action, tuple(Field(p, w) for p, w in params.items())),))
