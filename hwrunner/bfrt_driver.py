"""The BFRuntime driver: the one module that talks to a switch through the SDE's ``bfrt_grpc``.

The SDE's Python client is not on PyPI; it is imported lazily, from the current path or from
``$SDE_INSTALL/lib/pythonX.Y/site-packages/tofino`` (with ``.../tofino/bfrt_grpc``). Every
failure at this boundary -- no client, unreachable server, unknown program, names that do
not match the profile, a rejected batch -- becomes one TargetError line; gRPC exceptions never
reach the user. Writes go to all pipes (``Target(device, 0xffff)``) as one batched request per
table chunk; reads use ``from_hw`` and return one value per pipe.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from hwrunner.operations import (
    DataColumn,
    EntryAdd,
    EntryDelete,
    KeyColumn,
    Operation,
    RegisterWrite,
)
from hwrunner.profile import SwitchProfile
from hwrunner.schema import (
    REGISTER,
    REGISTER_INDEX,
    Field,
    Schema,
    Table,
    load_schema,
)
from netlock.errors import TargetError

ALL_PIPES = 0xFFFF
PARTITION_TABLE_SIZE = 4096
TENANT_TABLE_SIZE = 4096
GRPC_SCHEME = "grpc://"


def _first_line(exc: BaseException) -> str:
    """The first line of an exception's message (a KeyError's without its quotes)."""
    raw = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
    text = str(raw).strip().splitlines()
    return text[0] if text else type(exc).__name__


def sde_paths(sde_install: str) -> list[Path]:
    """Where an SDE installs its Python client, this interpreter's version first."""
    lib = Path(sde_install) / "lib"
    own = lib / f"python{sys.version_info.major}.{sys.version_info.minor}"
    found = [own, *sorted(p for p in lib.glob("python3*") if p != own)]
    return [p / "site-packages" / "tofino" for p in found if (p / "site-packages").is_dir()]


def import_client() -> ModuleType:
    """``bfrt_grpc.client``, already importable or found under ``$SDE_INSTALL``."""
    try:
        return importlib.import_module("bfrt_grpc.client")
    except ImportError:
        pass
    sde = os.environ.get("SDE_INSTALL")
    if not sde:
        raise TargetError("grpc target: the Tofino SDE's Python client (bfrt_grpc) is not "
                          "installed; set SDE_INSTALL to the SDE install directory")
    for tofino in sde_paths(sde):
        for extra in (tofino, tofino / "bfrt_grpc"):
            if str(extra) not in sys.path:
                sys.path.append(str(extra))
        try:
            return importlib.import_module("bfrt_grpc.client")
        except ImportError:
            continue
    raise TargetError(f"grpc target: no bfrt_grpc client under SDE_INSTALL={sde} "
                      f"(looked in lib/python3.*/site-packages/tofino)")


def parse_address(target: str) -> tuple[str, int]:
    """``grpc://host:port`` -> (host, port); anything else is a TargetError."""
    if not target.startswith(GRPC_SCHEME):
        raise TargetError(f"--target {target!r}: expected 'emulator' or grpc://HOST:PORT")
    host, sep, port = target[len(GRPC_SCHEME):].rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise TargetError(f"--target {target!r}: expected grpc://HOST:PORT with a port 1-65535")
    return host, int(port)


def device_schema(info: Any, profile: SwitchProfile) -> Schema:
    """The profile's tables as the device names them, when no bf-rt.json is at hand.

    Names (tables, keys, fields, actions) come from the device; widths, sizes and match kinds
    from the profile, since the client does not expose them uniformly.
    """
    tables: dict[str, Table] = {}
    part = profile.partition
    match = {"ternary": "Ternary", "range": "Range"}[part.match]

    def table(name: str, size: int, widths: dict[str, int],
              key_match: tuple[str, str] | None = None) -> None:
        try:
            t = info.table_get(name)
        except KeyError as exc:
            raise TargetError(f"program {profile.program}: profile table {name!r} does not "
                              f"match the running program ({_first_line(exc)})") from None
        full = t.info.name_get()
        keys = tuple(Field(k, 32, key_match[1] if key_match and (
            k == key_match[0] or k.endswith("." + key_match[0])) else "Exact")
            for k in t.info.key_field_name_list_get())
        if keys and keys[0].name == REGISTER_INDEX:
            data = tuple(Field(d, next((w for s, w in widths.items()
                                        if d == s or d.endswith("." + s)), 32), mandatory=False)
                         for d in t.info.data_field_name_list_get())
            tables[full] = Table(full, REGISTER, size, keys, data)
            return
        actions = tuple((a, tuple(Field(p, widths.get(p, 32))
                                  for p in t.info.data_field_name_list_get(a)))
                        for a in t.info.action_name_list_get())
        tables[full] = Table(full, "MatchAction_Direct", size, keys, (), actions)

    groups = [(profile.lock_registers, profile.lock_capacity),
              (profile.slot_registers, profile.slot_capacity)]
    if profile.tenant_counter is not None:
        groups.append(({"tenant": profile.tenant_counter}, TENANT_TABLE_SIZE))
    for group, size in groups:
        by_table: dict[str, dict[str, int]] = {}
        for reg in group.values():
            by_table.setdefault(reg.register, {})[reg.data_name] = reg.width
        for name, widths in by_table.items():
            table(name, size, widths)
    lt = profile.lock_table
    table(lt.table, profile.lock_capacity, {lt.index_param: 32})
    table(part.table, PARTITION_TABLE_SIZE, {part.server_param: 32}, (part.key, match))
    if profile.tenant_table is not None:
        tt = profile.tenant_table
        table(tt.table, TENANT_TABLE_SIZE, {tt.tenant_param: 16, tt.quota_param: 32})
    return Schema(tuple(tables.values()), f"program {profile.program} on the device")


class BfrtDriver:
    """A switch reached at ``grpc://host:port`` running the profile's program."""

    def __init__(self, target: str, profile: SwitchProfile, bfrt_json: Path | None = None,
                 device: int = 0, num_tries: int = 3, client: ModuleType | None = None) -> None:
        host, port = parse_address(target)
        self.target = f"{GRPC_SCHEME}{host}:{port}"
        self.profile = profile
        self.pipes = profile.pipes
        self.batches_sent = 0
        self.client = client or import_client()
        try:
            self.iface = self.client.ClientInterface(grpc_addr=f"{host}:{port}", client_id=0,
                                                     device_id=device, num_tries=num_tries)
        except Exception as exc:
            raise TargetError(f"{self.target}: cannot reach the BFRuntime server "
                              f"({_first_line(exc)})") from None
        try:
            self.info = self.iface.bfrt_info_get(profile.program)
            self.iface.bind_pipeline_config(profile.program)
        except Exception as exc:
            self.close()
            raise TargetError(f"{self.target}: program {profile.program!r} is not loaded "
                              f"({_first_line(exc)})") from None
        self.schema = load_schema(bfrt_json) if bfrt_json else device_schema(self.info, profile)
        self.dev_target = self.client.Target(device_id=device, pipe_id=ALL_PIPES)
        self._tables: dict[str, Any] = {}

    def _table(self, name: str) -> tuple[Table, Any]:
        table = self.schema.table(name)
        if table.name not in self._tables:
            try:
                self._tables[table.name] = self.info.table_get(table.name)
            except KeyError as exc:
                raise TargetError(f"{self.target}: table {table.name}: not in the running "
                                  f"program ({_first_line(exc)})") from None
        return table, self._tables[table.name]

    def _key_tuples(self, table: Table, cols: Sequence[KeyColumn], row: int) -> list:
        kt = self.client.KeyTuple
        out = []
        for col in cols:
            name = table.key(col.name).name
            if col.mask is not None:
                out.append(kt(name, int(col.value[row]), mask=int(col.mask[row])))
            elif col.high is not None:
                out.append(kt(name, low=int(col.value[row]), high=int(col.high[row])))
            else:
                out.append(kt(name, int(col.value[row])))
        return out

    def write(self, op: Operation) -> None:
        table, bt = self._table(op.table)
        dt = self.client.DataTuple
        n = len(op)
        keys = [bt.make_key(self._key_tuples(table, op.keys, i)) for i in range(n)]
        try:
            if isinstance(op, EntryDelete):
                bt.entry_del(self.dev_target, keys)
            else:
                short = table.name.rsplit(".", 1)[-1]
                if isinstance(op, RegisterWrite):
                    names = [table.datum(f"{short}.{c.name}").name for c in op.data]
                    action = None
                else:
                    action = table.action(op.action or "")[0]
                    names = [c.name for c in op.data]
                cols = [c.value.tolist() for c in op.data]
                data = [bt.make_data([dt(nm, col[i]) for nm, col in zip(names, cols, strict=True)],
                                     action_name=action) for i in range(n)]
                call = bt.entry_add if isinstance(op, EntryAdd) else bt.entry_mod
                call(self.dev_target, keys, data)
        except TargetError:
            raise
        except Exception as exc:
            raise TargetError(f"{self.target}: {op.kind} {table.name} ({n} entries) was "
                              f"rejected: {_first_line(exc)}") from None
        self.batches_sent += 1

    def read_registers(self, table_name: str, fields: Sequence[str],
                       index: np.ndarray) -> dict[str, np.ndarray]:
        table, bt = self._table(table_name)
        short = table.name.rsplit(".", 1)[-1]
        full = {f: table.datum(f"{short}.{f}").name for f in fields}
        index = np.asarray(index, dtype=np.int64)
        out = {f: np.zeros((self.pipes, len(index)), dtype=np.int64) for f in fields}
        pos = {int(i): n for n, i in enumerate(index.tolist())}
        kt = self.client.KeyTuple
        for start in range(0, len(index), self.profile.batch_size):
            chunk = index[start:start + self.profile.batch_size].tolist()
            keys = [bt.make_key([kt(REGISTER_INDEX, i)]) for i in chunk]
            for data, key in self._get(table, bt, keys):
                row = pos[int(key.to_dict()[REGISTER_INDEX]["value"])]
                values = data.to_dict()
                for f, name in full.items():
                    per_pipe = values[name]
                    if len(per_pipe) != self.pipes:
                        raise TargetError(f"{self.target}: {name}: read {len(per_pipe)} pipe "
                                          f"values, profile {self.profile.name} says "
                                          f"{self.pipes} pipes")
                    out[f][:, row] = per_pipe
        return out

    def _get(self, table: Table, bt: Any, keys: list | None) -> list:
        try:
            return list(bt.entry_get(self.dev_target, keys, {"from_hw": True}))
        except Exception as exc:
            raise TargetError(f"{self.target}: read {table.name}: {_first_line(exc)}") from None

    def read_entries(self, table_name: str, keys: Sequence[str],
                     data: Sequence[str]) -> EntryAdd:
        table, bt = self._table(table_name)
        full_keys = [table.key(k).name for k in keys]
        rows = []
        action = None
        for d, k in self._get(table, bt, None):
            dd, kd = d.to_dict(), k.to_dict()
            if dd.get("is_default_entry"):
                continue
            action = dd.get("action_name", action)
            rows.append(([kd[name] for name in full_keys], [int(dd.get(p, 0)) for p in data]))
        key_cols = []
        for j, (asked, name) in enumerate(zip(keys, full_keys, strict=True)):
            parts = [r[0][j] for r in rows]
            kind = table.key(name).match_type
            if kind == "Range":
                key_cols.append(KeyColumn(asked, [p["low"] for p in parts],
                                          high=[p["high"] for p in parts]))
            elif kind == "Ternary":
                key_cols.append(KeyColumn(asked, [p["value"] for p in parts],
                                          mask=[p["mask"] for p in parts]))
            else:
                key_cols.append(KeyColumn(asked, [p["value"] for p in parts]))
        data_cols = tuple(DataColumn(p, [r[1][j] for r in rows]) for j, p in enumerate(data))
        return EntryAdd(table_name, tuple(key_cols), data_cols, action)

    def close(self) -> None:
        iface = getattr(self, "iface", None)
        if iface is not None:
            with contextlib.suppress(Exception):
                iface.tear_down_stream()
            self.iface = None

