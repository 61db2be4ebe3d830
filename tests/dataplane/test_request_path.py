"""A lock server's request path (:mod:`netlock.lockserver.request_path`): a core's busy time
and service, the RX-ring drop and the kernels' answers, against hand-computed timelines and
a core replayed as a FIFO queue of packets (the oracle). The engines' use of the steps is
held by tests/fast/test_differential.py (the same grants at the same times)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from netlock.lockserver import request_path as rp
from netlock.packets import ActionKind, DropReason


def test_a_core_takes_packets_one_after_another():
    sv, cores = rp.new_server(2)
    assert rp.serve(sv, cores[0], 10.0, 0.5) == 0.5
    assert rp.serve(sv, cores[0], 10.0, 0.5) == 1.0
    assert rp.serve(sv, cores[0], 10.25, 0.5) == 1.25
    assert rp.serve(sv, cores[1], 10.25, 0.5) == 0.5
    assert rp.serve(sv, cores[0], 20.0, 0.5) == 0.5
    assert cores[0][rp.C_FREE] == 20.5 and cores[1][rp.C_FREE] == 10.75
    assert sv[rp.SV_PACKETS] == 5 and sv[rp.SV_BUSY_US] == 2.5 and sv[rp.SV_RX_DROPS] == 0


def test_a_full_rx_ring_drops_what_reaches_it_and_the_core_stays_as_it_was():
    sv, cores = rp.new_server(1)
    core = cores[0]
    assert [rp.admit(sv, core, 0.0, 1.0, 2) for _ in range(3)] == [1.0, 2.0, -1.0]
    assert core[rp.C_FREE] == 2.0 and sv[rp.SV_RX_DROPS] == 1 and sv[rp.SV_PACKETS] == 2
    assert rp.admit(sv, core, 0.5, 1.0, 2) == 2.5
    assert rp.admit(sv, core, 0.5, 1.0, 0) == 3.5


def test_what_the_kernels_answers_ask_of_the_engine():
    assert rp.answer(int(ActionKind.GRANT), 0) == rp.SEND_GRANT
    assert rp.answer(int(ActionKind.PUSH_BACK), 0) == rp.SEND_PUSH_BACK
    drop = int(ActionKind.DROP)
    assert rp.answer(drop, int(DropReason.DUPLICATE)) == rp.FORGET_COPY
    assert rp.answer(drop, int(DropReason.STALE_RELEASE)) == rp.DROP
    assert rp.answer(drop, int(DropReason.NOT_HELD)) == rp.DROP


def fifo_core(arrivals: list[float], service: float, ring: int) -> list[float]:
    """The oracle: each packet is dropped (-1) when ``ring`` packets' worth of work waits
    on the core, else done after those before it; the delay from its arrival."""
    done: list[float] = []
    out = []
    for now in arrivals:
        backlog = sum(min(service, d - now) for d in done if d > now)
        if ring and backlog >= ring * service:
            out.append(-1.0)
            continue
        finish = max([now, *done]) + service
        done.append(finish)
        out.append(finish - now)
    return out


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 60), min_size=1, max_size=40), st.integers(0, 4),
       st.sampled_from([0.5, 1.0, 2.0]))
def test_admitted_packets_match_a_fifo_core(steps, ring, service):
    arrivals = [s / 4 for s in sorted(steps)]
    sv, cores = rp.new_server(1)
    array_sv, array_cores = np.zeros(rp.N_SV), np.zeros((1, rp.N_CORE))
    got = [rp.admit(sv, cores[0], t, service, ring) for t in arrivals]
    assert got == fifo_core(arrivals, service, ring)
    assert got == [rp.admit(array_sv, array_cores[0], t, service, ring) for t in arrivals]
    assert sv[rp.SV_RX_DROPS] == got.count(-1.0) == array_sv[rp.SV_RX_DROPS]
