"""Hypothesis strategies for valid NetLock requests and control messages (full field ranges)."""

from __future__ import annotations

from hypothesis import strategies as st

from netlock.packets import LockRequest, Mode, Op
from netlock.wire import ControlKind, ControlMessage


def uint(bits: int) -> st.SearchStrategy[int]:
    return st.integers(min_value=0, max_value=(1 << bits) - 1)


requests = st.builds(
    LockRequest,
    op=st.sampled_from(Op),
    mode=st.sampled_from(Mode),
    lock_id=uint(64),
    txn_id=uint(64),
    client_id=uint(32),
    tenant=uint(16),
    priority=uint(8),
    timestamp_us=uint(64),
    overflow=st.booleans(),
    push_back=st.booleans(),
    slot=st.one_of(st.just(-1), st.integers(min_value=0, max_value=(1 << 32) - 2)),
)

controls = st.builds(
    ControlMessage,
    kind=st.sampled_from(ControlKind),
    lock_id=uint(64),
    priority=uint(8),
    left=uint(32),
    right=uint(32),
    count=uint(32),
)

messages = st.one_of(requests, controls)
