"""An in-memory BFRuntime server, written from the real ``bfruntime.proto``, for conformance
tests of the driver through the SDE's own client over real gRPC (127.0.0.1 only).

It serves one program from a bf-rt.json document on a device with ``pipes`` pipes and behaves
as open-p4studio's server does where the driver depends on it:

- ``StreamChannel`` answers a subscribe; ``GetForwardingPipelineConfig`` returns the program's
  bf-rt.json (and an empty non-P4 one); ``SetForwardingPipelineConfig(BIND)`` binds the program
  to one client id at a time (another id gets ALREADY_EXISTS until the holder's stream ends);
- ``Write`` applies updates in order: registers (INSERT = MODIFY; unset fields become 0; index
  and widths checked) and match tables (INSERT / MODIFY / DELETE by key, size, action and
  parameter widths checked). With CONTINUE_ON_ERROR (the default) every update that can be
  applied is, and the failed ones are reported; with ROLLBACK_ON_ERROR a failure undoes the
  request's earlier updates. Failures come back as status UNKNOWN with one ``bfrt_proto.Error``
  per update in ``grpc-status-details-bin``, as the real server sends them;
- ``Read`` returns entries by key or all of a table; a register field comes back as one
  ``DataField`` per pipe (the client folds them into a list).

Tests inject faults: ``reject(table, key) -> message | None`` fails single updates, and
``crash_after`` applies that many more updates and then drops the request (UNAVAILABLE), as a
switch or connection that dies inside a batch would.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from concurrent import futures
from typing import Any

import grpc
from bfrt_grpc import bfruntime_pb2 as pb
from bfrt_grpc import bfruntime_pb2_grpc as pb_grpc
from google.protobuf import any_pb2
from google.rpc import code_pb2, status_pb2

ALL_PIPES = 0xFFFF


class Reject(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _nbytes(width: int) -> int:
    return (width + 7) // 8


def _width(type_doc: dict) -> int:
    if "width" in type_doc:
        return int(type_doc["width"])
    return {"uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64}[type_doc["type"]]


class _Table:
    def __init__(self, doc: dict, pipes: int) -> None:
        self.name = doc["name"]
        self.id = doc["id"]
        self.size = doc["size"]
        self.register = doc["table_type"] == "Register"
        self.keys = [(k["id"], k["name"], k["match_type"], _width(k["type"]))
                     for k in doc["key"]]
        self.data = {d["singleton"]["id"]: (d["singleton"]["name"],
                                            _width(d["singleton"]["type"]))
                     for d in doc.get("data", [])}
        self.actions = {a["id"]: (a["name"], {p["id"]: (p["name"], _width(p["type"]),
                                                        p.get("mandatory", True))
                                              for p in a["data"]})
                        for a in doc.get("action_specs", [])}
        self.cells = {fid: [[0] * self.size for _ in range(pipes)] for fid in self.data}
        self.entries: dict[tuple, tuple[int, dict[int, int]]] = {}


class BfruntimeServer(pb_grpc.BfRuntimeServicer):
    """The servicer and its gRPC server; ``address`` is ``127.0.0.1:PORT`` once started."""

    def __init__(self, bfrt: dict, program: str = "netlock", pipes: int = 4) -> None:
        self.program = program
        self.pipes = pipes
        self.bfrt_json = json.dumps(bfrt).encode()
        self.tables = {t["id"]: _Table(t, pipes) for t in bfrt["tables"]}
        self.by_name = {t.name: t for t in self.tables.values()}
        self.lock = threading.Lock()
        self.bound: int | None = None
        self.streams: dict[int, int] = {}
        self.writes = 0
        self.requests: list[tuple[str, int, int]] = []
        """(table, updates, atomicity) of every write request."""
        self.reject: Callable[[str, tuple], str | None] | None = None
        self.crash_after: int | None = None
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
        pb_grpc.add_BfRuntimeServicer_to_server(self, self.server)
        port = self.server.add_insecure_port("127.0.0.1:0")
        self.address = f"127.0.0.1:{port}"
        self.server.start()

    def stop(self) -> None:
        self.server.stop(grace=None)

    # --- what tests look at ------------------------------------------------------------

    def table(self, suffix: str) -> _Table:
        (hit,) = [t for n, t in self.by_name.items() if n == suffix or n.endswith("." + suffix)]
        return hit

    def register(self, suffix: str, field: str = "f1") -> list[list[int]]:
        """Per-pipe values of one register field."""
        table = self.table(suffix)
        (fid,) = [i for i, (n, _) in table.data.items() if n.endswith("." + field)]
        return table.cells[fid]

    # --- the service -------------------------------------------------------------------

    def StreamChannel(self, request_iterator: Iterator[Any], context: Any) -> Iterator[Any]:
        client: int | None = None
        try:
            for req in request_iterator:
                if req.HasField("subscribe"):
                    client = req.client_id
                    with self.lock:
                        self.streams[client] = self.streams.get(client, 0) + 1
                    resp = pb.StreamMessageResponse()
                    resp.subscribe.device_id = req.subscribe.device_id
                    resp.subscribe.status.code = code_pb2.OK
                    yield resp
        finally:
            if client is not None:
                with self.lock:
                    self.streams[client] -= 1
                    if not self.streams[client] and self.bound == client:
                        self.bound = None

    def GetForwardingPipelineConfig(self, request: Any, context: Any) -> Any:
        resp = pb.GetForwardingPipelineConfigResponse()
        config = resp.config.add()
        config.p4_name = self.program
        config.bfruntime_info = self.bfrt_json
        resp.non_p4_config.bfruntime_info = b'{"tables": []}'
        return resp

    def SetForwardingPipelineConfig(self, request: Any, context: Any) -> Any:
        if request.action != pb.SetForwardingPipelineConfigRequest.BIND:
            context.abort(grpc.StatusCode.UNIMPLEMENTED, "only BIND is served")
        name = request.config[0].p4_name if request.config else ""
        if name != self.program:
            context.abort(grpc.StatusCode.NOT_FOUND, f"program {name!r} is not loaded")
        with self.lock:
            if self.bound is not None and self.bound != request.client_id:
                context.abort(grpc.StatusCode.ALREADY_EXISTS,
                              f"program {name} is bound by client {self.bound}")
            self.bound = request.client_id
        return pb.SetForwardingPipelineConfigResponse()

    def Write(self, request: Any, context: Any) -> Any:
        with self.lock:
            if self.bound != request.client_id:
                context.abort(grpc.StatusCode.FAILED_PRECONDITION,
                              f"client {request.client_id} is not bound to {self.program}")
            rollback = request.atomicity == pb.WriteRequest.ROLLBACK_ON_ERROR
            errors: list[Any] = []
            undo: list[Callable[[], None]] = []
            table_name = ""
            for update in request.updates:
                if self.crash_after is not None:
                    if self.crash_after <= 0:
                        context.abort(grpc.StatusCode.UNAVAILABLE, "switch went away")
                    self.crash_after -= 1
                entry = update.entity.table_entry
                table = self.tables.get(entry.table_id)
                table_name = table.name if table else str(entry.table_id)
                try:
                    if table is None:
                        raise Reject(code_pb2.NOT_FOUND, f"table id {entry.table_id}")
                    self._apply(table, update.type, entry, request.target.pipe_id, undo)
                    errors.append(pb.Error(canonical_code=code_pb2.OK))
                    self.writes += 1
                except Reject as exc:
                    errors.append(pb.Error(canonical_code=exc.code, message=exc.message))
                    if rollback:
                        for step in reversed(undo):
                            step()
                        break
            self.requests.append((table_name, len(request.updates), request.atomicity))
            if any(e.canonical_code != code_pb2.OK for e in errors):
                status = status_pb2.Status(code=code_pb2.UNKNOWN, message="write failed")
                for e in errors:
                    packed = any_pb2.Any()
                    packed.Pack(e)
                    status.details.append(packed)
                context.set_trailing_metadata(
                    (("grpc-status-details-bin", status.SerializeToString()),))
                context.set_code(grpc.StatusCode.UNKNOWN)
                context.set_details("write failed")
            return pb.WriteResponse()

    def _key(self, table: _Table, entry: Any) -> tuple:
        given = {f.field_id: f for f in entry.key.fields}
        out = []
        for fid, name, match, width in table.keys:
            f = given.get(fid)
            if f is None:
                raise Reject(code_pb2.INVALID_ARGUMENT, f"key field {name} missing")
            if match == "Ternary":
                parts = (f.ternary.value, f.ternary.mask)
            elif match == "Range":
                parts = (f.range.low, f.range.high)
            else:
                parts = (f.exact.value,)
            for p in parts:
                if len(p) != _nbytes(width):
                    raise Reject(code_pb2.INVALID_ARGUMENT, f"key field {name}: {len(p)} bytes")
            out.extend(int.from_bytes(p, "big") for p in parts)
        return tuple(out)

    def _apply(self, table: _Table, kind: int, entry: Any, pipe: int,
               undo: list[Callable[[], None]]) -> None:
        key = self._key(table, entry)
        if self.reject is not None:
            message = self.reject(table.name, key)
            if message:
                raise Reject(code_pb2.INTERNAL, message)
        if table.register:
            self._write_register(table, key[0], entry, pipe, undo)
            return
        present = key in table.entries
        old = table.entries.get(key)
        if kind == pb.Update.DELETE:
            if not present:
                raise Reject(code_pb2.NOT_FOUND, f"{table.name}: no entry {key}")
            del table.entries[key]
        else:
            if kind == pb.Update.INSERT and present:
                raise Reject(code_pb2.ALREADY_EXISTS, f"{table.name}: entry {key} exists")
            if kind == pb.Update.MODIFY and not present:
                raise Reject(code_pb2.NOT_FOUND, f"{table.name}: no entry {key}")
            if not present and len(table.entries) >= table.size:
                raise Reject(code_pb2.RESOURCE_EXHAUSTED, f"{table.name}: table full")
            table.entries[key] = self._action_data(table, entry)

        def restore() -> None:
            if old is None:
                table.entries.pop(key, None)
            else:
                table.entries[key] = old

        undo.append(restore)

    def _action_data(self, table: _Table, entry: Any) -> tuple[int, dict[int, int]]:
        action = table.actions.get(entry.data.action_id)
        if action is None:
            raise Reject(code_pb2.INVALID_ARGUMENT, f"{table.name}: no action id "
                                                    f"{entry.data.action_id}")
        name, params = action
        values = {}
        for f in entry.data.fields:
            if f.field_id not in params:
                raise Reject(code_pb2.INVALID_ARGUMENT, f"{name}: no field id {f.field_id}")
            pname, width, _ = params[f.field_id]
            if len(f.stream) != _nbytes(width):
                raise Reject(code_pb2.INVALID_ARGUMENT, f"{name}.{pname}: {len(f.stream)} "
                                                        f"bytes for {width} bits")
            values[f.field_id] = int.from_bytes(f.stream, "big")
        missing = [p[0] for i, p in params.items() if p[2] and i not in values]
        if missing:
            raise Reject(code_pb2.INVALID_ARGUMENT, f"{name}: parameter {missing[0]} missing")
        return entry.data.action_id, values

    def _write_register(self, table: _Table, index: int, entry: Any, pipe: int,
                        undo: list[Callable[[], None]]) -> None:
        if not 0 <= index < table.size:
            raise Reject(code_pb2.OUT_OF_RANGE, f"{table.name}: index {index} outside "
                                                f"0..{table.size - 1}")
        values = dict.fromkeys(table.data, 0)
        for f in entry.data.fields:
            if f.field_id not in table.data:
                raise Reject(code_pb2.INVALID_ARGUMENT, f"{table.name}: no field {f.field_id}")
            name, width = table.data[f.field_id]
            if not f.HasField("stream") or len(f.stream) != _nbytes(width):
                raise Reject(code_pb2.INVALID_ARGUMENT, f"{name}: expected {_nbytes(width)} "
                                                        f"bytes")
            value = int.from_bytes(f.stream, "big")
            if value >= 1 << width:
                raise Reject(code_pb2.INVALID_ARGUMENT, f"{name}: {value} exceeds {width} bits")
            values[f.field_id] = value
        pipes = range(self.pipes) if pipe == ALL_PIPES else range(pipe, pipe + 1)
        old = {fid: [table.cells[fid][p][index] for p in pipes] for fid in values}
        for fid, value in values.items():
            for p in pipes:
                table.cells[fid][p][index] = value

        def restore() -> None:
            for fid, before in old.items():
                for p, v in zip(pipes, before, strict=True):
                    table.cells[fid][p][index] = v

        undo.append(restore)

    def Read(self, request: Any, context: Any) -> Iterator[Any]:
        with self.lock:
            resp = pb.ReadResponse()
            pipe = request.target.pipe_id
            for entity in request.entities:
                entry = entity.table_entry
                table = self.tables.get(entry.table_id)
                if table is None:
                    context.abort(grpc.StatusCode.NOT_FOUND, f"table id {entry.table_id}")
                if entry.HasField("key"):
                    try:
                        key = self._key(table, entry)
                    except Reject as exc:
                        context.abort(grpc.StatusCode.INVALID_ARGUMENT, exc.message)
                    self._read_one(table, key, pipe, resp, context)
                elif table.register:
                    for index in range(table.size):
                        self._read_one(table, (index,), pipe, resp, context)
                else:
                    for key in list(table.entries):
                        self._read_one(table, key, pipe, resp, context)
                if len(resp.entities) >= 1000:
                    yield resp
                    resp = pb.ReadResponse()
            yield resp

    def _read_one(self, table: _Table, key: tuple, pipe: int, resp: Any, context: Any) -> None:
        out = resp.entities.add().table_entry
        out.table_id = table.id
        values = iter(key)
        for fid, _, match, width in table.keys:
            f = out.key.fields.add()
            f.field_id = fid
            n = _nbytes(width)
            if match == "Ternary":
                f.ternary.value = next(values).to_bytes(n, "big")
                f.ternary.mask = next(values).to_bytes(n, "big")
            elif match == "Range":
                f.range.low = next(values).to_bytes(n, "big")
                f.range.high = next(values).to_bytes(n, "big")
            else:
                f.exact.value = next(values).to_bytes(n, "big")
        if table.register:
            index = key[0]
            if not 0 <= index < table.size:
                context.abort(grpc.StatusCode.OUT_OF_RANGE, f"index {index}")
            pipes = range(self.pipes) if pipe == ALL_PIPES else range(pipe, pipe + 1)
            for fid, (_, width) in table.data.items():
                for p in pipes:
                    f = out.data.fields.add()
                    f.field_id = fid
                    f.stream = table.cells[fid][p][index].to_bytes(_nbytes(width), "big")
            return
        if key not in table.entries:
            context.abort(grpc.StatusCode.NOT_FOUND, f"{table.name}: no entry {key}")
        action_id, params = table.entries[key]
        out.data.action_id = action_id
        specs = table.actions[action_id][1]
        for fid, value in params.items():
            f = out.data.fields.add()
            f.field_id = fid
            f.stream = value.to_bytes(_nbytes(specs[fid][1]), "big")
