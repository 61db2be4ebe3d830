"""Malformed bytes and unencodable values fail with one PacketError line naming the field."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Ether

from netlock.errors import PacketError
from netlock.packets import LockRequest, Mode, Op
from netlock.wire import (
    NETLOCK_CONTROL_UDP_PORT,
    NETLOCK_UDP_PORT,
    ControlKind,
    ControlMessage,
    decode_control,
    decode_request,
    encode_control,
    encode_request,
)
from netlock.wire_frames import build_packet, parse_packet
from tests.wire.wire_strategies import controls, messages, requests

REQUEST = LockRequest(Op.ACQUIRE, Mode.EXCLUSIVE, lock_id=42, txn_id=7, client_id=3)
CONTROL = ControlMessage(ControlKind.BOUND_CHANGE, lock_id=42, left=10, right=19)
DECODERS = [decode_request, decode_control, parse_packet]


def error_of(call, *args: object) -> str:
    with pytest.raises(PacketError) as info:
        call(*args)
    message = str(info.value)
    assert message and "\n" not in message
    return message


def decodes_or_packet_error(decode, data: bytes) -> object | None:
    """Run ``decode``; the only exception it may raise is a one-line PacketError."""
    try:
        return decode(data)
    except PacketError as err:
        assert "\n" not in str(err)
        return None


@pytest.mark.parametrize("decode", DECODERS)
@given(data=st.binary(max_size=120))
def test_random_bytes_raise_only_packet_error(decode, data: bytes) -> None:
    decodes_or_packet_error(decode, data)


@given(body=st.binary(min_size=34, max_size=34))
def test_any_request_header_that_decodes_is_canonical(body: bytes) -> None:
    data = b"\x4e\x01" + body
    req = decodes_or_packet_error(decode_request, data)
    if req is not None:
        assert encode_request(req) == data


@given(body=st.binary(min_size=22, max_size=22))
def test_any_control_header_that_decodes_is_canonical(body: bytes) -> None:
    data = b"\x4e\x01" + body
    msg = decodes_or_packet_error(decode_control, data)
    if msg is not None:
        assert encode_control(msg) == data


@given(messages, st.data())
def test_corrupted_frames_raise_only_packet_error(msg, data: st.DataObject) -> None:
    frame = bytearray(bytes(build_packet(msg)))
    index = data.draw(st.integers(min_value=0, max_value=len(frame) - 1))
    frame[index] = data.draw(st.integers(min_value=0, max_value=255))
    decodes_or_packet_error(parse_packet, bytes(frame))


@pytest.mark.parametrize(
    ("decode", "data", "header"),
    [
        (decode_request, encode_request(REQUEST), "netlock header"),
        (decode_control, encode_control(CONTROL), "netlock control"),
    ],
)
def test_every_truncation_is_reported(decode, data: bytes, header: str) -> None:
    for n in range(len(data)):
        assert error_of(decode, data[:n]) == f"{header}: truncated: {n} of {len(data)} bytes"


@pytest.mark.parametrize("msg", [REQUEST, CONTROL])
def test_every_truncated_frame_is_rejected(msg) -> None:
    frame = bytes(build_packet(msg))
    for n in range(len(frame)):
        error_of(parse_packet, frame[:n])


def test_trailing_bytes_are_rejected() -> None:
    message = error_of(decode_request, encode_request(REQUEST) + b"\x00")
    assert message == "netlock header: too long: 41 of 40 bytes"


@pytest.mark.parametrize(
    ("offset", "value", "message"),
    [
        (0, 0x00, "netlock header: magic: expected 0x4e, got 0x00"),
        (1, 1, "netlock header: version: unsupported 1 (want 2)"),
        (2, 5, "netlock header: op: unknown value 5"),
        (3, 7, "netlock header: mode: unknown value 7"),
        (5, 0x84, "netlock header: flags: unknown bits 0x84"),
    ],
)
def test_bad_request_header_fields_are_named(offset: int, value: int, message: str) -> None:
    data = bytearray(encode_request(REQUEST))
    data[offset] = value
    assert error_of(decode_request, bytes(data)) == message


@pytest.mark.parametrize(
    ("offset", "value", "message"),
    [
        (0, 0xFF, "netlock control: magic: expected 0x4e, got 0xff"),
        (1, 0, "netlock control: version: unsupported 0 (want 2)"),
        (2, 9, "netlock control: kind: unknown value 9"),
    ],
)
def test_bad_control_header_fields_are_named(offset: int, value: int, message: str) -> None:
    data = bytearray(encode_control(CONTROL))
    data[offset] = value
    assert error_of(decode_control, bytes(data)) == message


REQUEST_WIDTHS = {"priority": 8, "tenant": 16, "client_id": 32, "txn_id": 64, "lock_id": 64,
                  "timestamp_us": 64}  # fmt: skip
CONTROL_WIDTHS = {"priority": 8, "lock_id": 64, "left": 32, "right": 32, "count": 32}


@pytest.mark.parametrize(
    ("encode", "sample", "header", "field", "value"),
    [
        (encode, sample, header, field, value)
        for encode, sample, header, widths in [
            (encode_request, REQUEST, "netlock header", REQUEST_WIDTHS),
            (encode_control, CONTROL, "netlock control", CONTROL_WIDTHS),
        ]
        for field, bits in widths.items()
        for value in (-1, 1 << bits)
    ],
)
def test_out_of_range_values_name_the_field(encode, sample, header, field, value) -> None:
    message = error_of(encode, dataclasses.replace(sample, **{field: value}))
    assert message.startswith(f"{header}: {field}: {value} out of range [0, ")


@pytest.mark.parametrize(
    ("encode", "sample", "field", "value", "message"),
    [
        (encode_request, REQUEST, "op", 2, "netlock header: op: unknown value 2"),
        (encode_request, REQUEST, "mode", -1, "netlock header: mode: unknown value -1"),
        (encode_request, REQUEST, "lock_id", 1.5,
         "netlock header: lock_id: expected an integer, got 1.5"),
        (encode_request, REQUEST, "txn_id", "7",
         "netlock header: txn_id: expected an integer, got '7'"),
        (encode_control, CONTROL, "kind", 5, "netlock control: kind: unknown value 5"),
        (encode_control, CONTROL, "count", None,
         "netlock control: count: expected an integer, got None"),
    ],
)  # fmt: skip
def test_unencodable_values_name_the_field(encode, sample, field, value, message) -> None:
    assert error_of(encode, dataclasses.replace(sample, **{field: value})) == message


@given(requests, controls)
def test_request_and_control_ports_are_not_interchangeable(req, msg) -> None:
    as_control = Ether() / IP() / UDP(dport=NETLOCK_CONTROL_UDP_PORT) / encode_request(req)
    as_request = Ether() / IP() / UDP(dport=NETLOCK_UDP_PORT) / encode_control(msg)
    assert "netlock control: " in error_of(parse_packet, bytes(as_control))
    assert "netlock header: " in error_of(parse_packet, bytes(as_request))


def test_frames_that_are_not_netlock_are_rejected() -> None:
    payload = encode_request(REQUEST)
    tcp = Ether() / IP() / TCP(dport=NETLOCK_UDP_PORT) / payload
    other_port = Ether() / IP() / UDP(sport=NETLOCK_UDP_PORT, dport=9) / payload
    assert error_of(parse_packet, bytes(tcp)) == "netlock packet: not a UDP datagram"
    assert error_of(parse_packet, bytes(other_port)).startswith("netlock packet: UDP port 9 ")
    assert error_of(parse_packet, b"\x01") == (
        "netlock packet: truncated Ethernet header: 1 of 14 bytes"
    )
    assert error_of(parse_packet, 5) == "netlock packet: expected bytes, got int"
    assert error_of(decode_request, "text") == "netlock header: expected bytes, got str"
    assert error_of(build_packet, "text") == "netlock packet: cannot build from str"
