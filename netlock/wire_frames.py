"""NetLock packets as scapy layers and whole Ethernet/IP/UDP frames, for captures and tests.

:class:`NetLockHeader` and :class:`NetLockControl` are built from the field tables of
:mod:`netlock.wire` (the byte layout and its checks live there, once); importing this module
binds them to their UDP ports in scapy, so captured frames dissect as NetLock packets.
:func:`build_packet` and :func:`parse_packet` frame and unframe a request or control message;
every malformed frame raises :class:`~netlock.errors.PacketError` with one line.
"""

from __future__ import annotations

from enum import IntEnum

from scapy.fields import (
    ByteEnumField,
    ByteField,
    Field,
    FlagsField,
    IntField,
    LongField,
    ShortField,
    XByteField,
)
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Packet, bind_layers

from netlock.errors import PacketError
from netlock.packets import LockRequest, Mode, Op
from netlock.wire import (
    CONTROL_FIELDS,
    MAGIC,
    NETLOCK_CONTROL_UDP_PORT,
    NETLOCK_UDP_PORT,
    REQUEST_FIELDS,
    VERSION,
    ControlKind,
    ControlMessage,
    decode_control,
    decode_request,
    encode_control,
    encode_request,
)

_ETHER_BYTES = 14


def _enum_labels(enum: type[IntEnum]) -> dict[int, str]:
    return {member.value: member.name.lower() for member in enum}


_LABELS = {"op": _enum_labels(Op), "mode": _enum_labels(Mode), "kind": _enum_labels(ControlKind)}
_SCAPY_INT = {"B": ByteField, "H": ShortField, "I": IntField, "Q": LongField}


def _scapy_fields(fields: tuple[tuple[str, str], ...]) -> list[Field]:
    """scapy fields matching a struct field table, with readable enum and flag names."""
    out: list[Field] = []
    for name, code in fields:
        if name == "magic":
            out.append(XByteField(name, MAGIC))
        elif name == "version":
            out.append(ByteField(name, VERSION))
        elif name == "flags":
            out.append(FlagsField(name, 0, 8, ["overflow", "push_back"]))
        elif name in _LABELS:
            out.append(ByteEnumField(name, 0, _LABELS[name]))
        else:
            out.append(_SCAPY_INT[code](name, 0))
    return out


class NetLockHeader(Packet):
    """scapy layer of a lock request (UDP destination port :data:`NETLOCK_UDP_PORT`)."""

    name = "NetLock"
    fields_desc = _scapy_fields(REQUEST_FIELDS)


class NetLockControl(Packet):
    """scapy layer of a control message (UDP destination port :data:`NETLOCK_CONTROL_UDP_PORT`)."""

    name = "NetLockControl"
    fields_desc = _scapy_fields(CONTROL_FIELDS)


bind_layers(UDP, NetLockHeader, dport=NETLOCK_UDP_PORT)
bind_layers(UDP, NetLockControl, dport=NETLOCK_CONTROL_UDP_PORT)


def build_packet(
    msg: LockRequest | ControlMessage,
    *,
    src_ip: str = "10.0.0.1",
    dst_ip: str = "10.0.0.2",
    src_mac: str = "02:00:00:00:00:01",
    dst_mac: str = "02:00:00:00:00:02",
    sport: int | None = None,
) -> Packet:
    """An Ether/IP/UDP frame carrying ``msg`` on its reserved port.

    ``sport`` defaults to that same port: scapy picks a payload layer by the first matching
    binding, so a well-known source port (scapy's default is 53) would dissect as DNS.
    """
    if isinstance(msg, LockRequest):
        header: Packet = NetLockHeader(encode_request(msg))
        port = NETLOCK_UDP_PORT
    elif isinstance(msg, ControlMessage):
        header = NetLockControl(encode_control(msg))
        port = NETLOCK_CONTROL_UDP_PORT
    else:
        raise PacketError(f"netlock packet: cannot build from {type(msg).__name__}")
    udp = UDP(sport=port if sport is None else sport, dport=port)
    return Ether(src=src_mac, dst=dst_mac) / IP(src=src_ip, dst=dst_ip) / udp / header


def parse_packet(frame: bytes) -> LockRequest | ControlMessage:
    """The request or control message in an Ethernet frame, chosen by UDP destination port."""
    if not isinstance(frame, bytes | bytearray | memoryview):
        raise PacketError(f"netlock packet: expected bytes, got {type(frame).__name__}")
    if len(frame) < _ETHER_BYTES:
        raise PacketError(f"netlock packet: truncated Ethernet header: {len(frame)} of 14 bytes")
    try:
        udp = Ether(bytes(frame)).getlayer(UDP)
        payload = b"" if udp is None else bytes(udp.original[8 : udp.len])
    except Exception as err:  # scapy raises assorted types on malformed frames
        detail = " ".join(str(err).split())
        raise PacketError(f"netlock packet: malformed frame: {detail}") from None
    if udp is None:
        raise PacketError("netlock packet: not a UDP datagram")
    if udp.dport == NETLOCK_UDP_PORT:
        return decode_request(payload)
    if udp.dport == NETLOCK_CONTROL_UDP_PORT:
        return decode_control(payload)
    raise PacketError(
        f"netlock packet: UDP port {udp.dport} is neither {NETLOCK_UDP_PORT} "
        f"(requests) nor {NETLOCK_CONTROL_UDP_PORT} (control)"
    )
