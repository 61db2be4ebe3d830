"""The lock server's send batching (:mod:`netlock.lockserver.txburst`): when a packet that
entered a core's TX buffer leaves, against hand-computed timelines and a tick-by-tick
replay of the DPDK loop (``enqueue_pkt`` + the drain timer) as the oracle."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from netlock.lockserver import txburst


def departures(times: list[float], burst: int, drain_us: float) -> list[float]:
    """Drive the rule as the engines do (one core): each packet's departure time (us).
    Drain events fire in time order before a later packet is added."""
    row = txburst.new_row()
    out: list[float] = [math.nan] * len(times)
    buffered: list[int] = []
    drains: list[tuple[float, int]] = []

    def flush(n: int, depart: float) -> None:
        assert n == len(buffered)
        for i in buffered:
            out[i] = depart
        buffered.clear()

    def fire_drains(before: float) -> None:
        while drains and drains[0][0] < before:
            due, seq = drains.pop(0)
            n = txburst.drain(row, seq)
            if n:
                flush(n, due)

    for i, t in enumerate(times):
        fire_drains(t)
        late, late_at, slot, outcome = txburst.send(row, t, burst, drain_us)
        if late:
            flush(late, late_at)
        assert slot == len(buffered)
        buffered.append(i)
        if outcome == txburst.FULL:
            flush(slot + 1, t)
        elif outcome == txburst.OPENED:
            drains.append((row[txburst.TX_DUE], int(row[txburst.TX_SEQ])))
    fire_drains(math.inf)
    return out


def dpdk_loop(times: list[float], burst: int, drain_us: float) -> list[float]:
    """The oracle: the authors' core loop, step by step. At every drain tick k * drain_us
    the buffer goes out (``server.c`` lines 498-500); a packet enqueued fills the buffer up
    to ``burst`` and a full buffer goes out at once (``util.h`` lines 352-361). A packet
    enqueued exactly at a tick is in that tick's burst."""
    out: list[float] = [math.nan] * len(times)
    buffer: list[int] = []
    tick = 0.0
    for i, t in enumerate(times):
        while tick < t:
            for j in buffer:
                out[j] = tick
            buffer.clear()
            tick += drain_us
        buffer.append(i)
        if len(buffer) == burst:
            for j in buffer:
                out[j] = t
            buffer.clear()
    for j in buffer:
        out[j] = tick
    return out


def test_a_burst_that_fills_leaves_with_its_last_packet():
    assert departures([1.0, 2.0, 3.0, 4.0], 4, 10.0) == [4.0] * 4


def test_a_burst_that_does_not_fill_leaves_at_the_drain_tick():
    assert departures([1.0, 2.0], 32, 10.0) == [10.0, 10.0]


def test_ticks_are_a_fixed_grid_and_a_full_burst_does_not_move_them():
    # 5, 6, 7 fill a burst of 3 at 7; 12 waits for the tick at 20; 9 and 11 straddle 10.
    assert departures([5.0, 6.0, 7.0, 12.0], 3, 10.0) == [7.0, 7.0, 7.0, 20.0]
    assert departures([9.0, 11.0], 32, 10.0) == [10.0, 20.0]
    assert departures([10.0], 32, 10.0) == [10.0]


def test_one_packet_bursts_or_no_timer_send_at_once():
    times = [0.5, 0.7, 3.0, 3.0, 25.0]
    assert departures(times, 1, 10.0) == times
    assert departures(times, 32, 0.0) == times


def test_a_drain_for_a_burst_already_sent_does_nothing():
    row = txburst.new_row()
    assert txburst.send(row, 1.0, 2, 10.0) == (0, 0.0, 0, txburst.OPENED)
    seq = int(row[txburst.TX_SEQ])
    assert txburst.send(row, 2.0, 2, 10.0) == (0, 0.0, 1, txburst.FULL)
    assert txburst.drain(row, seq) == 0
    assert txburst.send(row, 3.0, 2, 10.0) == (0, 0.0, 0, txburst.OPENED)
    assert txburst.drain(row, seq) == 0
    assert txburst.drain(row, int(row[txburst.TX_SEQ])) == 1


def test_a_burst_past_its_tick_leaves_at_the_tick_before_the_next_packet_joins():
    row = txburst.new_row()
    assert txburst.send(row, 1.0, 4, 10.0)[3] == txburst.OPENED
    assert txburst.send(row, 2.0, 4, 10.0)[3] == txburst.JOINED
    assert txburst.send(row, 12.0, 4, 10.0) == (2, 10.0, 0, txburst.OPENED)
    assert row[txburst.TX_DUE] == 20.0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 400), min_size=1, max_size=80),
       st.integers(1, 8), st.sampled_from([1.0, 2.5, 10.0]))
def test_departures_match_the_dpdk_loop(steps, burst, drain_us):
    times = [s / 8 for s in sorted(steps)]
    got = departures(times, burst, drain_us)
    assert got == dpdk_loop(times, burst, drain_us)
    assert all(t <= d <= t + drain_us for t, d in zip(times, got, strict=True))
