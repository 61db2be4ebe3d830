"""The BFRuntime driver: the one module that talks to a switch through the SDE's ``bfrt_grpc``.

The SDE's Python client is not on PyPI; it is imported lazily, from the current path or from
``$SDE_INSTALL/lib/pythonX.Y/site-packages/tofino`` (with ``.../tofino/bfrt_grpc``). Every
failure at this boundary -- no client (or a dependency of it missing), unreachable server,
unknown program, a program bound by another client, a program that matches no profile (or not
the one named), a rejected batch -- becomes one TargetError line; gRPC exceptions never reach
the user.

The device is the authority on the program (:mod:`hwrunner.bfrt_schema`): sizes, widths and
names are read from it, a ``--bfrt`` file is checked against it, and its pipe count is read
before anything is written. Writes go to all pipes (``Target(device, 0xffff)``) as one
WriteRequest per table chunk with ``atomicity=ROLLBACK_ON_ERROR``; a switch applies such a
request whole or not at all, but a crash (or a server without rollback) can still leave part
of one applied, which the push recovers from by reading back. Reads use ``from_hw`` and return
one value per pipe.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from hwrunner.bfrt_info import REGISTER_INDEX, Schema, Table, load_schema
from hwrunner.bfrt_schema import (
    check_against_device,
    device_schema,
    first_line,
    register_probe,
)
from hwrunner.operations import (
    DataColumn,
    EntryAdd,
    EntryDelete,
    KeyColumn,
    Operation,
    RegisterWrite,
)
from hwrunner.profile import SwitchProfile, shipped_profiles
from hwrunner.profile_choice import check_profile, choose_profile
from netlock.errors import TargetError

ALL_PIPES = 0xFFFF
GRPC_SCHEME = "grpc://"
CONNECT_TIMEOUT_S = 3.0
MAX_ROW_ERRORS = 3
"""Failed rows named in a rejection message (the count of the others follows)."""


def sde_paths(sde_install: str) -> list[Path]:
    """Where an SDE installs its Python client, this interpreter's version first."""
    lib = Path(sde_install) / "lib"
    own = lib / f"python{sys.version_info.major}.{sys.version_info.minor}"
    found = [own, *sorted(p for p in lib.glob("python3*") if p != own)]
    return [p / "site-packages" / "tofino" for p in found if (p / "site-packages").is_dir()]


def _missing_dependency(exc: ImportError) -> TargetError | None:
    """An ImportError raised inside the client (grpc, protobuf, ...), not for the client."""
    name = exc.name or ""
    if name and not name.startswith("bfrt_grpc"):
        return TargetError(f"grpc target: the SDE's bfrt_grpc client cannot be imported: "
                           f"{first_line(exc)} (it needs grpcio, protobuf, six and "
                           f"googleapis-common-protos)")
    return None


def _quiet(client: ModuleType) -> ModuleType:
    """The client logs every subscribe and bind at INFO on stderr; keep warnings only."""
    logging.getLogger("bfruntime_grpc_client").setLevel(logging.WARNING)
    logging.getLogger("bfruntime_parse").setLevel(logging.WARNING)
    return client


def import_client() -> ModuleType:
    """``bfrt_grpc.client``, already importable or found under ``$SDE_INSTALL``."""
    try:
        return _quiet(importlib.import_module("bfrt_grpc.client"))
    except ImportError as exc:
        found = _missing_dependency(exc)
        if found:
            raise found from None
    sde = os.environ.get("SDE_INSTALL")
    if not sde:
        raise TargetError("grpc target: the Tofino SDE's Python client (bfrt_grpc) is not "
                          "installed; set SDE_INSTALL to the SDE install directory")
    for tofino in sde_paths(sde):
        for extra in (tofino, tofino / "bfrt_grpc"):
            if str(extra) not in sys.path:
                sys.path.append(str(extra))
        try:
            return _quiet(importlib.import_module("bfrt_grpc.client"))
        except ImportError as exc:
            found = _missing_dependency(exc)
            if found:
                raise found from None
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


def describe_rejection(client: ModuleType, exc: BaseException, rows: Sequence[str]) -> str:
    """Every failed row of a rejected request in one line (the client's message has one line
    per row under ``Error(s):``); ``rows`` names the request's rows."""
    errors = getattr(exc, "errors", None) or []
    if errors:
        code_name = client.code_pb2.Code.Name
        parts = []
        for idx, err in errors[:MAX_ROW_ERRORS]:
            row = rows[idx] if 0 <= idx < len(rows) else f"row {idx}"
            parts.append(f"{row}: {code_name(err.canonical_code)} {err.message!r}")
        more = len(errors) - MAX_ROW_ERRORS
        return (f"{len(errors)} of {len(rows)} rows failed: " + "; ".join(parts)
                + (f"; and {more} more" if more > 0 else ""))
    grpc_error = getattr(exc, "grpc_error", None)
    if grpc_error is not None and hasattr(grpc_error, "code"):
        return f"{grpc_error.code().name}: {grpc_error.details()}"
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return "; ".join(lines) or type(exc).__name__


def _grpc_code(exc: BaseException) -> str:
    grpc_error = getattr(exc, "grpc_error", None)
    try:
        return grpc_error.code().name if grpc_error is not None else ""
    except Exception:
        return ""


class BfrtDriver:
    """A switch reached at ``grpc://host:port``, and the profile its program is.

    ``profile`` is checked against the running program; None chooses one of ``candidates``
    (default: the shipped profiles) from it (:mod:`hwrunner.profile_choice`); ``choice``
    says which and why. ``client_id`` is the BFRuntime client id to bind with (one client may
    bind a program at a time); ``bfrt_json`` a bf-rt.json file checked against what the device
    reports.
    """

    def __init__(self, target: str, profile: SwitchProfile | None,
                 bfrt_json: Path | None = None, device: int = 0, num_tries: int = 3,
                 client: ModuleType | None = None, client_id: int = 0,
                 connect_timeout_s: float = CONNECT_TIMEOUT_S,
                 candidates: Sequence[SwitchProfile] | None = None) -> None:
        host, port = parse_address(target)
        self.target = f"{GRPC_SCHEME}{host}:{port}"
        self.batches_sent = 0
        given = load_schema(bfrt_json) if bfrt_json else None
        self.client = client or import_client()
        self.iface = None
        self._reachable(f"{host}:{port}", connect_timeout_s)
        try:
            self.iface = self.client.ClientInterface(grpc_addr=f"{host}:{port}",
                                                     client_id=client_id, device_id=device,
                                                     num_tries=num_tries)
        except Exception as exc:
            raise TargetError(f"{self.target}: cannot reach the BFRuntime server "
                              f"({first_line(exc)})") from None
        try:
            program = self._bind(profile.program if profile else None, device, client_id)
            shipped = shipped_profiles() if candidates is None else candidates
            where = f"{self.target}: program {program}"

            def schema_of(p: SwitchProfile) -> Schema:
                return device_schema(self.info, p, self.target)

            self.choice = (check_profile(profile, shipped, schema_of, where) if profile
                           else choose_profile(program, shipped, schema_of, where))
            self.profile = self.choice.profile
            self.schema = self.choice.schema
            if given is not None:
                check_against_device(given, self.schema)
            self.dev_target = self.client.Target(device_id=device, pipe_id=ALL_PIPES)
            self._tables: dict[str, Any] = {}
            self.pipes = self._device_pipes()
        except BaseException:
            self.close()
            raise
        if self.profile.traffic_pipe >= self.pipes:
            self.close()
            raise TargetError(f"profile {self.profile.source}: traffic_pipe "
                              f"{self.profile.traffic_pipe}, but {self.target} has "
                              f"{self.pipes} pipes")

    def _bind(self, program: str | None, device: int, client_id: int) -> str:
        """Read the program's info (None: the device's program) and bind it; its name."""
        try:
            self.info = self.iface.bfrt_info_get(program)
        except Exception as exc:
            what = f"program {program!r} is not loaded" if program else "no program is loaded"
            raise TargetError(f"{self.target}: {what} on device {device} "
                              f"({first_line(exc)})") from None
        name = program or self.info.p4_name_get()
        try:
            self.iface.bind_pipeline_config(name)
        except Exception as exc:
            if _grpc_code(exc) == "ALREADY_EXISTS":
                raise TargetError(
                    f"{self.target}: program {name!r} is bound by another "
                    f"BFRuntime client ({describe_rejection(self.client, exc, [])}); "
                    f"stop it or wait until it disconnects (this push binds as client "
                    f"id {client_id})") from None
            raise TargetError(f"{self.target}: cannot bind program {name!r} "
                              f"({describe_rejection(self.client, exc, [])})") from None
        return name

    def _reachable(self, address: str, timeout_s: float) -> None:
        """Fail fast, naming the address, when nothing answers there (refused at once, or no
        answer within ``timeout_s``)."""
        grpc = getattr(self.client, "grpc", None)
        if grpc is None:
            return
        seen: list[Any] = []
        settled = threading.Event()
        final = (grpc.ChannelConnectivity.READY, grpc.ChannelConnectivity.TRANSIENT_FAILURE)

        def watch(state: Any) -> None:
            if state in final:
                seen.append(state)
                settled.set()

        channel = grpc.insecure_channel(address)
        try:
            channel.subscribe(watch, try_to_connect=True)
            settled.wait(timeout_s)
            channel.unsubscribe(watch)
        finally:
            channel.close()
        if not seen or seen[0] != grpc.ChannelConnectivity.READY:
            why = "connection failed" if seen else f"no answer within {timeout_s:g} s"
            raise TargetError(f"{self.target}: cannot reach the BFRuntime server ({why}; is "
                              f"bf_switchd or tofino-model running there?)")

    def _device_pipes(self) -> int:
        """The device's pipe count: a register read from hardware has one value per pipe."""
        table = register_probe(self.schema)
        bt = self._table(table.name)[1]
        key = self._key(bt, [self.client.KeyTuple(REGISTER_INDEX, 0)], table.name)
        for data, _ in self._get(table, bt, [key]):
            values = data.to_dict()[table.data[0].name]
            return len(values) if isinstance(values, list) else 1
        raise TargetError(f"{self.target}: read {table.name}[0]: no entry returned")

    def _table(self, name: str) -> tuple[Table, Any]:
        table = self.schema.table(name)
        if table.name not in self._tables:
            try:
                self._tables[table.name] = self.info.table_get(table.name)
            except KeyError as exc:
                raise TargetError(f"{self.target}: table {table.name}: not in the running "
                                  f"program ({first_line(exc)})") from None
        return table, self._tables[table.name]

    def _key(self, bt: Any, tuples: list, table: str) -> Any:
        try:
            return bt.make_key(tuples)
        except Exception as exc:
            raise TargetError(f"{self.target}: {table}: key {[t.name for t in tuples]} does "
                              f"not fit the device ({first_line(exc)})") from None

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
        """Send one batch as one WriteRequest (ROLLBACK_ON_ERROR); nothing is sent when a key
        or value does not fit the device."""
        table, bt = self._table(op.table)
        dt = self.client.DataTuple
        n = len(op)
        keys = [self._key(bt, self._key_tuples(table, op.keys, i), table.name) for i in range(n)]
        action = None
        try:
            if not isinstance(op, EntryDelete):
                short = table.name.rsplit(".", 1)[-1]
                if isinstance(op, RegisterWrite):
                    names = [table.datum(f"{short}.{c.name}").name for c in op.data]
                else:
                    action = table.action(op.action or "")[0]
                    names = [c.name for c in op.data]
                cols = [c.value.tolist() for c in op.data]
                data = [bt.make_data([dt(nm, col[i]) for nm, col in zip(names, cols, strict=True)],
                                     action_name=action) for i in range(n)]
        except TargetError:
            raise
        except Exception as exc:
            raise TargetError(f"{self.target}: {op.kind} {table.name}: data does not fit the "
                              f"device ({first_line(exc)}); nothing was sent") from None
        atomic = self.client.bfruntime_pb2.WriteRequest.ROLLBACK_ON_ERROR
        try:
            if isinstance(op, EntryDelete):
                bt.entry_del(self.dev_target, keys, atomicity=atomic)
            else:
                call = bt.entry_add if isinstance(op, EntryAdd) else bt.entry_mod
                call(self.dev_target, keys, data, atomicity=atomic)
        except Exception as exc:
            rows = [op.render_row(i) for i in range(n)]
            raise TargetError(f"{self.target}: {op.kind} {table.name} ({n} entries) was "
                              f"rejected: {describe_rejection(self.client, exc, rows)}") from None
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
            keys = [self._key(bt, [kt(REGISTER_INDEX, i)], table.name) for i in chunk]
            for data, key in self._get(table, bt, keys):
                row = pos[int(key.to_dict()[REGISTER_INDEX]["value"])]
                values = data.to_dict()
                for f, name in full.items():
                    per_pipe = values[name]
                    if not isinstance(per_pipe, list) or len(per_pipe) != self.pipes:
                        raise TargetError(f"{self.target}: {name}: read {per_pipe!r}, expected "
                                          f"one value per pipe ({self.pipes} pipes)")
                    out[f][:, row] = per_pipe
        return out

    def _get(self, table: Table, bt: Any, keys: list | None) -> list:
        try:
            return list(bt.entry_get(self.dev_target, keys, {"from_hw": True}))
        except Exception as exc:
            raise TargetError(f"{self.target}: read {table.name}: "
                              f"{describe_rejection(self.client, exc, [])}") from None

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

