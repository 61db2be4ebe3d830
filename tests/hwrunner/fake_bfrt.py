"""A recording test double of the SDE's ``bfrt_grpc.client``, checked against a bf-rt.json.

It implements the part of the client the driver uses -- ``ClientInterface``, ``Target``,
``KeyTuple``, ``DataTuple``, ``bfrt_info_get``/``table_get`` (full name or unique dotted
suffix, ``KeyError`` otherwise), ``make_key``/``make_data`` (exact field names only),
``entry_add/entry_mod/entry_del/entry_get`` -- over per-pipe register arrays and entry dicts,
and records every call. It parses the JSON itself, independently of ``hwrunner.bfrt_info``.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any


class BfruntimeReadWriteRpcException(Exception):
    """What the real client raises when the server rejects a request."""


class _WriteRequest:
    CONTINUE_ON_ERROR = 0
    ROLLBACK_ON_ERROR = 1


class bfruntime_pb2:
    """Named as the real client's generated module."""

    WriteRequest = _WriteRequest


@dataclass
class KeyTuple:
    name: str
    value: Any = None
    mask: Any = None
    prefix_len: Any = None
    low: Any = None
    high: Any = None


@dataclass
class DataTuple:
    name: str
    val: Any = None


@dataclass
class Target:
    device_id: int = 0
    pipe_id: int = 0xFFFF


class _Key:
    def __init__(self, fields: dict[str, dict]) -> None:
        self.fields = fields

    def frozen(self) -> tuple:
        return tuple(sorted((k, tuple(sorted(v.items()))) for k, v in self.fields.items()))

    def to_dict(self) -> dict:
        return {k: dict(v) for k, v in self.fields.items()}


class _Data:
    def __init__(self, values: dict[str, Any], action: str | None) -> None:
        self.values = values
        self.action = action

    def to_dict(self) -> dict:
        return {**self.values, "action_name": self.action, "is_default_entry": False}


def _bits(type_doc: dict) -> tuple[int, int]:
    bits = type_doc.get("width") or {"uint8": 8, "uint16": 16, "uint32": 32}[type_doc["type"]]
    return (bits + 7) // 8, bits


class _Info:
    def __init__(self, doc: dict) -> None:
        self.doc = doc
        self.keys = {k["name"]: k for k in doc["key"]}
        self.data = {d["singleton"]["name"]: dict(d["singleton"], mandatory=d["mandatory"])
                     for d in doc.get("data", [])}
        self.params = {(a["name"], p["name"]): p for a in doc.get("action_specs", [])
                       for p in a["data"]}

    def name_get(self) -> str:
        return self.doc["name"]

    def size_get(self) -> int:
        return self.doc["size"]

    def type_get(self) -> str:
        return self.doc["table_type"]

    def key_field_size_get(self, name: str) -> tuple[int, int]:
        return _bits(self.keys[name]["type"])

    def key_field_match_type_get(self, name: str) -> str:
        return self.keys[name]["match_type"]

    def key_field_mandatory_get(self, name: str) -> bool:
        return self.keys[name]["mandatory"]

    def _datum(self, name: str, action: str | None) -> dict:
        return self.data[name] if action is None else self.params[(action, name)]

    def data_field_size_get(self, name: str, action: str | None = None) -> tuple[int, int]:
        return _bits(self._datum(name, action)["type"])

    def data_field_mandatory_get(self, name: str, action: str | None = None) -> bool:
        return self._datum(name, action)["mandatory"]

    def key_field_name_list_get(self) -> list[str]:
        return [k["name"] for k in self.doc["key"]]

    def data_field_name_list_get(self, action_name: str | None = None) -> list[str]:
        if action_name is None:
            return [d["singleton"]["name"] for d in self.doc.get("data", [])]
        spec = next(a for a in self.doc["action_specs"] if a["name"] == action_name)
        return [d["name"] for d in spec["data"]]

    def action_name_list_get(self) -> list[str]:
        return [a["name"] for a in self.doc.get("action_specs", [])]


class FakeTable:
    def __init__(self, device: FakeDevice, doc: dict) -> None:
        self.device = device
        self.doc = doc
        self.name = doc["name"]
        self.info = _Info(doc)
        self.keys = {k["name"]: k for k in doc["key"]}
        self.register = doc["table_type"] == "Register"
        self.widths = {d["singleton"]["name"]: d["singleton"]["type"]["width"]
                       for d in doc.get("data", [])}
        self.actions = {a["name"]: {d["name"]: d["type"]["width"] for d in a["data"]}
                        for a in doc.get("action_specs", [])}
        self.entries: dict[tuple, tuple[_Key, _Data]] = {}
        self.cells: dict[str, list[list[int]]] = {
            name: [[0] * doc["size"] for _ in range(device.pipes)] for name in self.widths}

    def make_key(self, tuples: list[KeyTuple]) -> _Key:
        fields = {}
        for t in tuples:
            if t.name not in self.keys:
                raise KeyError(f"{self.name}: no key field {t.name!r}")
            kind = self.keys[t.name]["match_type"]
            if kind == "Ternary":
                fields[t.name] = {"value": t.value, "mask": t.mask}
            elif kind == "Range":
                fields[t.name] = {"low": t.low, "high": t.high}
            else:
                fields[t.name] = {"value": t.value}
        if set(fields) != set(self.keys):
            raise KeyError(f"{self.name}: key needs {sorted(self.keys)}, got {sorted(fields)}")
        return _Key(fields)

    def make_data(self, tuples: list[DataTuple], action_name: str | None = None) -> _Data:
        allowed = self.widths if action_name is None else self.actions.get(action_name)
        if allowed is None:
            raise KeyError(f"{self.name}: no action {action_name!r}")
        values = {}
        for t in tuples:
            if t.name not in allowed:
                raise KeyError(f"{self.name}: no data field {t.name!r}")
            if not 0 <= int(t.val) < (1 << allowed[t.name]):
                raise ValueError(f"{t.name}: {t.val} does not fit {allowed[t.name]} bits")
            values[t.name] = int(t.val)
        return _Data(values, action_name)

    def _record(self, op: str, target: Target, n: int, flags: dict | None = None) -> None:
        self.device.calls.append((op, self.name, n, target.pipe_id, dict(flags or {})))

    def _write(self, op: str, target: Target, keys: list[_Key], datas: list[_Data] | None,
               atomicity: int = 0) -> None:
        self._record(op, target, len(keys), {"atomicity": atomicity})
        if datas is not None and len(datas) != len(keys):
            raise BfruntimeReadWriteRpcException("key and data lists differ in length")
        if self.device.fail_writes:
            self.device.fail_writes -= 1
            raise BfruntimeReadWriteRpcException("injected failure: device busy")
        if self.register:
            for key, data in zip(keys, datas or [], strict=True):
                index = key.fields["$REGISTER_INDEX"]["value"]
                if not 0 <= index < self.doc["size"]:
                    raise BfruntimeReadWriteRpcException(f"index {index} out of range")
                for name, value in data.values.items():
                    for pipe in self.device.pipes_of(target):
                        self.cells[name][pipe][index] = value
            return
        present = [k.frozen() in self.entries for k in keys]
        if op == "entry_add" and any(present):
            raise BfruntimeReadWriteRpcException("ALREADY_EXISTS")
        if op in ("entry_mod", "entry_del") and not all(present):
            raise BfruntimeReadWriteRpcException("NOT_FOUND")
        for i, key in enumerate(keys):
            if op == "entry_del":
                del self.entries[key.frozen()]
            else:
                self.entries[key.frozen()] = (key, datas[i])  # type: ignore[index]

    def entry_add(self, target: Target, key_list: list[_Key], data_list: list[_Data],
                  atomicity: int = 0) -> None:
        self._write("entry_add", target, key_list, data_list, atomicity)

    def entry_mod(self, target: Target, key_list: list[_Key], data_list: list[_Data],
                  atomicity: int = 0) -> None:
        self._write("entry_mod", target, key_list, data_list, atomicity)

    def entry_del(self, target: Target, key_list: list[_Key], atomicity: int = 0) -> None:
        self._write("entry_del", target, key_list, None, atomicity)

    def entry_get(self, target: Target, key_list: list[_Key] | None = None,
                  flags: dict | None = None, required_data: Any = None):
        self._record("entry_get", target, len(key_list or []), flags)
        if self.register:
            for key in key_list or []:
                index = key.fields["$REGISTER_INDEX"]["value"]
                values = {}
                for name in self.widths:
                    per_pipe = [self.cells[name][p][index] for p in range(self.device.pipes)]
                    values[name] = per_pipe if (flags or {}).get("from_hw") else per_pipe[:1]
                yield _Data(values, None), key
            return
        if key_list:
            for key in key_list:
                yield self.entries[key.frozen()][1], key
            return
        for key, data in self.entries.values():
            yield data, key


class FakeDevice:
    """The switch behind the double: one program, ``pipes`` pipes, a call log."""

    def __init__(self, bfrt_json: Path, program: str, pipes: int = 4,
                 addresses: tuple[str, ...] = ("localhost:50052",)) -> None:
        doc = json.loads(Path(bfrt_json).read_text())
        self.program = program
        self.pipes = pipes
        self.addresses = addresses
        self.calls: list[tuple] = []
        self.fail_writes = 0
        self.tables = {t["name"]: FakeTable(self, t) for t in doc["tables"]}

    def pipes_of(self, target: Target) -> range:
        return range(self.pipes) if target.pipe_id == 0xFFFF else range(target.pipe_id,
                                                                        target.pipe_id + 1)

    def table_get(self, name: str) -> FakeTable:
        hits = [t for full, t in self.tables.items() if full == name or full.endswith("." + name)]
        if len(hits) != 1:
            raise KeyError(f"Table {name!r} {'not found' if not hits else 'is ambiguous'}")
        return hits[0]

    def writes(self) -> list[tuple]:
        return [c for c in self.calls if c[0] != "entry_get"]


@dataclass
class _BfRtInfo:
    device: FakeDevice

    def table_get(self, name: str) -> FakeTable:
        return self.device.table_get(name)

    def table_name_list_get(self) -> list[str]:
        return sorted(self.device.tables)

    def p4_name_get(self) -> str:
        return self.device.program


@dataclass
class ClientInterface:
    grpc_addr: str
    client_id: int = 0
    device_id: int = 0
    notifications: Any = None
    timeout: int = 1
    num_tries: int = 5
    perform_subscribe: bool = True
    closed: bool = field(default=False, init=False)

    def __post_init__(self) -> None:
        device = _current
        if device is None or self.grpc_addr not in device.addresses:
            raise RuntimeError(f"Failed to connect to {self.grpc_addr}: "
                               "StatusCode.UNAVAILABLE")
        self.device = device

    def bfrt_info_get(self, p4_name: str | None = None) -> _BfRtInfo:
        if p4_name not in (None, self.device.program):
            raise BfruntimeReadWriteRpcException(f"program {p4_name} not found")
        return _BfRtInfo(self.device)

    def bind_pipeline_config(self, p4_name: str) -> None:
        self.device.calls.append(("bind_pipeline_config", p4_name, 0, None, {}))

    def tear_down_stream(self) -> None:
        self.closed = True


_current: FakeDevice | None = None


def install(monkeypatch: Any, device: FakeDevice) -> ModuleType:
    """Make ``import bfrt_grpc.client`` return this double, bound to ``device``."""
    global _current
    _current = device
    package = ModuleType("bfrt_grpc")
    package.client = sys.modules[__name__]  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "bfrt_grpc", package)
    monkeypatch.setitem(sys.modules, "bfrt_grpc.client", sys.modules[__name__])
    return sys.modules[__name__]
