"""NetLock's wire format: lock requests and control messages carried as UDP payloads.

As in the paper (section 4.2), NetLock packets are recognised by a reserved UDP destination
port. Requests (acquire/release) use :data:`NETLOCK_UDP_PORT`; control messages between the
switch control plane and lock servers (bound changes, pause/resume of a lock being moved,
push-back notifications, drain completion) use :data:`NETLOCK_CONTROL_UDP_PORT`. Both ports
sit in the dynamic/private range (RFC 6335) so they collide with no registered service, and
are adjacent so a switch parser can match them as one range.

Request header (40 bytes, network byte order)::

    magic u8 | version u8 | op u8 | mode u8 | priority u8 | flags u8 | tenant u16
    client_id u32 | txn_id u64 | lock_id u64 | timestamp_us u64 | slot u32

``flags`` bit 0 is the overflow mark, bit 1 the push-back mark; other bits must be zero.
``client_id`` is 32 bits so a client's IPv4 address fits, as in the paper. ``timestamp_us``
is the request's time in microseconds (lease accounting). ``slot`` is the shared-queue slot
a switch's grant came from, which the release names for the switch's owner check
(version 2; :data:`NO_SLOT` = none).

Control header (24 bytes, network byte order)::

    magic u8 | version u8 | kind u8 | priority u8 | lock_id u64 | left u32 | right u32
    count u32

``left``/``right`` are shared-queue slot indices (a lock's region); ``count`` is a slot count.

This module (:func:`encode_request`, :func:`decode_request`, :func:`encode_control`,
:func:`decode_control`) uses only :mod:`struct`; the matching scapy layers, built from the
same field tables, and whole Ethernet frames are :mod:`netlock.wire_frames`, so that code
that only encodes and decodes never loads scapy. Every malformed input raises
:class:`~netlock.errors.PacketError` with one line naming the header and field.
"""

from __future__ import annotations

import operator
import struct
from dataclasses import dataclass
from enum import IntEnum
from typing import TypeVar

from netlock.errors import PacketError
from netlock.packets import LockRequest, Mode, Op

NETLOCK_UDP_PORT = 51000
"""UDP destination port of lock requests (acquire/release)."""
NETLOCK_CONTROL_UDP_PORT = 51001
"""UDP destination port of control messages."""
MAGIC = 0x4E
"""First byte of every NetLock header ("N"), so stray traffic on the ports is rejected."""
VERSION = 2
"""Wire format version; decoders reject any other (2 added the request's ``slot``)."""
NO_SLOT = 0xFFFFFFFF
"""``slot`` of a request no switch slot granted."""

_EnumT = TypeVar("_EnumT", bound=IntEnum)

_REQUEST = "netlock header"
_CONTROL = "netlock control"
_FLAG_OVERFLOW = 0x01
_FLAG_PUSH_BACK = 0x02
_KNOWN_FLAGS = _FLAG_OVERFLOW | _FLAG_PUSH_BACK

REQUEST_FIELDS: tuple[tuple[str, str], ...] = (
    ("magic", "B"), ("version", "B"), ("op", "B"), ("mode", "B"), ("priority", "B"),
    ("flags", "B"), ("tenant", "H"), ("client_id", "I"), ("txn_id", "Q"), ("lock_id", "Q"),
    ("timestamp_us", "Q"), ("slot", "I"),
)  # fmt: skip
CONTROL_FIELDS: tuple[tuple[str, str], ...] = (
    ("magic", "B"), ("version", "B"), ("kind", "B"), ("priority", "B"), ("lock_id", "Q"),
    ("left", "I"), ("right", "I"), ("count", "I"),
)  # fmt: skip
_REQUEST_STRUCT = struct.Struct("!" + "".join(code for _, code in REQUEST_FIELDS))
_CONTROL_STRUCT = struct.Struct("!" + "".join(code for _, code in CONTROL_FIELDS))
REQUEST_HEADER_BYTES = _REQUEST_STRUCT.size
CONTROL_HEADER_BYTES = _CONTROL_STRUCT.size


class ControlKind(IntEnum):
    """What a control message asks for (switch control plane -> server) or reports."""

    BOUND_CHANGE = 0
    """A lock's shared-queue region becomes [left, right]."""
    PAUSE = 1
    """Stop enqueuing requests for the lock (it is about to move)."""
    RESUME = 2
    """Enqueue requests for the lock again."""
    PUSH_BACK_NOTIFY = 3
    """The switch queue of (lock, priority) drained: the server may push back ``count``."""
    DRAIN_COMPLETE = 4
    """The lock's queue is empty; a move can proceed."""


@dataclass(frozen=True, slots=True)
class ControlMessage:
    """One control packet's content; unused fields stay 0.

    ``left``/``right`` are inclusive shared-queue slot indices; ``count`` is a slot count.
    """

    kind: ControlKind
    lock_id: int
    priority: int = 0
    left: int = 0
    right: int = 0
    count: int = 0


def _pack(
    header: str, st: struct.Struct, fields: tuple[tuple[str, str], ...], values: dict[str, object]
) -> bytes:
    ints = []
    for name, code in fields:
        value = values[name]
        try:
            number = operator.index(value)  # type: ignore[arg-type]
        except TypeError:
            raise PacketError(f"{header}: {name}: expected an integer, got {value!r}") from None
        limit = (1 << (8 * struct.calcsize(code))) - 1
        if not 0 <= number <= limit:
            raise PacketError(f"{header}: {name}: {number} out of range [0, {limit}]")
        ints.append(number)
    return st.pack(*ints)


def _unpack(
    header: str, st: struct.Struct, fields: tuple[tuple[str, str], ...], data: bytes
) -> dict[str, int]:
    if not isinstance(data, bytes | bytearray | memoryview):
        raise PacketError(f"{header}: expected bytes, got {type(data).__name__}")
    if len(data) < st.size:
        raise PacketError(f"{header}: truncated: {len(data)} of {st.size} bytes")
    if len(data) > st.size:
        raise PacketError(f"{header}: too long: {len(data)} of {st.size} bytes")
    values = dict(zip((name for name, _ in fields), st.unpack(data), strict=True))
    if values["magic"] != MAGIC:
        raise PacketError(f"{header}: magic: expected 0x{MAGIC:02x}, got 0x{values['magic']:02x}")
    if values["version"] != VERSION:
        raise PacketError(f"{header}: version: unsupported {values['version']} (want {VERSION})")
    return values


def _member(header: str, field: str, enum: type[_EnumT], value: object) -> _EnumT:
    try:
        return enum(value)
    except (ValueError, TypeError):
        raise PacketError(f"{header}: {field}: unknown value {value!r}") from None


def encode_request(req: LockRequest) -> bytes:
    """The request header bytes of ``req`` (the UDP payload on :data:`NETLOCK_UDP_PORT`)."""
    flags = (_FLAG_OVERFLOW if req.overflow else 0) | (_FLAG_PUSH_BACK if req.push_back else 0)
    values: dict[str, object] = {
        "magic": MAGIC, "version": VERSION, "op": _member(_REQUEST, "op", Op, req.op),
        "mode": _member(_REQUEST, "mode", Mode, req.mode), "priority": req.priority,
        "flags": flags, "tenant": req.tenant, "client_id": req.client_id, "txn_id": req.txn_id,
        "lock_id": req.lock_id, "timestamp_us": req.timestamp_us,
        "slot": NO_SLOT if req.slot == -1 else req.slot,
    }  # fmt: skip
    return _pack(_REQUEST, _REQUEST_STRUCT, REQUEST_FIELDS, values)


def decode_request(data: bytes) -> LockRequest:
    """The request carried by a request header; :class:`PacketError` if malformed."""
    v = _unpack(_REQUEST, _REQUEST_STRUCT, REQUEST_FIELDS, data)
    if v["flags"] & ~_KNOWN_FLAGS:
        raise PacketError(f"{_REQUEST}: flags: unknown bits 0x{v['flags'] & ~_KNOWN_FLAGS:02x}")
    return LockRequest(
        op=_member(_REQUEST, "op", Op, v["op"]), mode=_member(_REQUEST, "mode", Mode, v["mode"]),
        lock_id=v["lock_id"], txn_id=v["txn_id"], client_id=v["client_id"],
        tenant=v["tenant"], priority=v["priority"], timestamp_us=v["timestamp_us"],
        overflow=bool(v["flags"] & _FLAG_OVERFLOW), push_back=bool(v["flags"] & _FLAG_PUSH_BACK),
        slot=-1 if v["slot"] == NO_SLOT else v["slot"],
    )  # fmt: skip


def encode_control(msg: ControlMessage) -> bytes:
    """The control header bytes of ``msg`` (the UDP payload on the control port)."""
    values: dict[str, object] = {
        "magic": MAGIC, "version": VERSION,
        "kind": _member(_CONTROL, "kind", ControlKind, msg.kind), "priority": msg.priority,
        "lock_id": msg.lock_id, "left": msg.left, "right": msg.right, "count": msg.count,
    }  # fmt: skip
    return _pack(_CONTROL, _CONTROL_STRUCT, CONTROL_FIELDS, values)


def decode_control(data: bytes) -> ControlMessage:
    """The message carried by a control header; :class:`PacketError` if malformed."""
    v = _unpack(_CONTROL, _CONTROL_STRUCT, CONTROL_FIELDS, data)
    return ControlMessage(
        kind=_member(_CONTROL, "kind", ControlKind, v["kind"]),
        lock_id=v["lock_id"], priority=v["priority"], left=v["left"], right=v["right"],
        count=v["count"],
    )  # fmt: skip
