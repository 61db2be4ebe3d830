"""Requests and control messages survive encoding, framing and scapy dissection unchanged."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from netlock.packets import LockRequest, Mode, Op
from netlock.wire import (
    CONTROL_HEADER_BYTES,
    NETLOCK_CONTROL_UDP_PORT,
    NETLOCK_UDP_PORT,
    NO_SLOT,
    REQUEST_HEADER_BYTES,
    ControlKind,
    ControlMessage,
    decode_control,
    decode_request,
    encode_control,
    encode_request,
)
from netlock.wire_frames import NetLockControl, NetLockHeader, build_packet, parse_packet
from tests.wire.wire_strategies import controls, requests

ips = st.ip_addresses(v=4).map(str)
ports = st.integers(min_value=0, max_value=65535)


def request_fields(req: LockRequest) -> dict[str, int]:
    """The scapy field values a request should dissect to."""
    return {
        "magic": 0x4E, "version": 2, "op": int(req.op), "mode": int(req.mode),
        "priority": req.priority, "flags": int(req.overflow) | int(req.push_back) << 1,
        "tenant": req.tenant, "client_id": req.client_id, "txn_id": req.txn_id,
        "lock_id": req.lock_id, "timestamp_us": req.timestamp_us,
        "slot": NO_SLOT if req.slot == -1 else req.slot,
    }  # fmt: skip


def control_fields(msg: ControlMessage) -> dict[str, int]:
    return {
        "magic": 0x4E, "version": 2, "kind": int(msg.kind), "priority": msg.priority,
        "lock_id": msg.lock_id, "left": msg.left, "right": msg.right, "count": msg.count,
    }  # fmt: skip


def layer_fields(layer: NetLockHeader | NetLockControl) -> dict[str, int]:
    return {f.name: int(layer.getfieldval(f.name)) for f in layer.fields_desc}


@given(requests)
def test_request_round_trips_through_bytes(req: LockRequest) -> None:
    data = encode_request(req)
    assert len(data) == REQUEST_HEADER_BYTES == 40
    assert decode_request(data) == req


@given(controls)
def test_control_round_trips_through_bytes(msg: ControlMessage) -> None:
    data = encode_control(msg)
    assert len(data) == CONTROL_HEADER_BYTES == 24
    assert decode_control(data) == msg


@given(requests, ips, ips, ports)
def test_request_round_trips_through_a_frame(
    req: LockRequest, src: str, dst: str, sport: int
) -> None:
    frame = bytes(build_packet(req, src_ip=src, dst_ip=dst, sport=sport))
    assert parse_packet(frame) == req
    dissected = Ether(frame)
    assert (dissected[IP].src, dissected[IP].dst) == (src, dst)
    assert dissected[UDP].dport == NETLOCK_UDP_PORT


@given(controls, ips, ips, ports)
def test_control_round_trips_through_a_frame(
    msg: ControlMessage, src: str, dst: str, sport: int
) -> None:
    frame = bytes(build_packet(msg, src_ip=src, dst_ip=dst, sport=sport))
    assert parse_packet(frame) == msg
    assert Ether(frame)[UDP].dport == NETLOCK_CONTROL_UDP_PORT


@given(requests)
def test_request_port_dissects_to_the_request_layer(req: LockRequest) -> None:
    dissected = Ether(bytes(build_packet(req)))
    assert NetLockHeader in dissected and NetLockControl not in dissected
    assert layer_fields(dissected[NetLockHeader]) == request_fields(req)


@given(controls)
def test_control_port_dissects_to_the_control_layer(msg: ControlMessage) -> None:
    dissected = Ether(bytes(build_packet(msg)))
    assert NetLockControl in dissected and NetLockHeader not in dissected
    assert layer_fields(dissected[NetLockControl]) == control_fields(msg)


@given(requests)
def test_scapy_request_layer_matches_the_pure_encoding(req: LockRequest) -> None:
    assert bytes(NetLockHeader(**request_fields(req))) == encode_request(req)


@given(controls)
def test_scapy_control_layer_matches_the_pure_encoding(msg: ControlMessage) -> None:
    assert bytes(NetLockControl(**control_fields(msg))) == encode_control(msg)


def test_stacking_a_layer_on_udp_sets_its_port() -> None:
    req = LockRequest(Op.ACQUIRE, Mode.SHARED, lock_id=7, txn_id=1, client_id=2)
    msg = ControlMessage(ControlKind.PAUSE, lock_id=7)
    frame = Ether() / IP() / UDP(sport=40000) / NetLockHeader(**request_fields(req))
    control = Ether() / IP() / UDP(sport=40000) / NetLockControl(**control_fields(msg))
    assert parse_packet(bytes(frame)) == req
    assert parse_packet(bytes(control)) == msg
    assert NetLockHeader in Ether(bytes(frame))
    assert NetLockControl in Ether(bytes(control))


def test_numpy_integers_encode_like_python_integers() -> None:
    plain = LockRequest(Op.RELEASE, Mode.EXCLUSIVE, lock_id=2**63, txn_id=5, client_id=9)
    numpy = LockRequest(
        Op.RELEASE, Mode.EXCLUSIVE, lock_id=np.uint64(2**63), txn_id=np.int64(5),
        client_id=np.int32(9),
    )  # fmt: skip
    assert encode_request(numpy) == encode_request(plain)


@given(st.one_of(requests, controls), st.binary(min_size=1, max_size=16))
def test_ethernet_padding_after_the_datagram_is_ignored(msg, padding: bytes) -> None:
    assert parse_packet(bytes(build_packet(msg)) + padding) == msg


def test_encoding_and_decoding_do_not_load_scapy():
    """Only framing needs scapy: the codec (and the replay that uses it) must not pay for
    importing it."""
    code = ("import sys, netlock.wire, hwrunner.packet_replay; "
            "print(any(m == 'scapy' or m.startswith('scapy.') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"
