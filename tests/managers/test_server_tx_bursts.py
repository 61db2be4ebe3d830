"""A simpy lock server's grants leave in TX bursts (``servers.tx_burst``,
``servers.tx_drain_us``): hand-computed timelines through :class:`ServerNode` with a stub
rack that records when each packet leaves. The fast engine's are the same grants at the
same times (tests/fast/test_differential.py)."""

from __future__ import annotations

from types import SimpleNamespace

from sim.engine import ACQUIRE, Engine, Req
from sim.managers.netlock_rack.servers import ServerNode


class Rack:
    """What a :class:`ServerNode` needs of its rack; a grant leaves as its txn id."""

    def __init__(self) -> None:
        self.engine = Engine()
        self.partition = SimpleNamespace(owner=lambda lock: 0)
        self.sent: list[tuple[int, float]] = []

    def server_answer(self, server, kind, reason, txn, push_back, t, core):
        server.send(core, txn, t)

    def server_send(self, server, packet, depart):
        self.sent.append((packet, depart))

    def server_rx_drop(self, req, op):
        raise AssertionError("no RX ring bound here")


def acquire(lock: int, txn: int) -> Req:
    return Req(txn, SimpleNamespace(cid=txn), 0, lock, 1, 0, 0, 0.0)


def run(arrivals: list[tuple[float, int]], burst: int, drain_us: float,
        packet_us: float = 0.5) -> list[tuple[int, float]]:
    """Acquires of distinct locks on a one-core server at (time us, txn); what left when."""
    rack = Rack()
    node = ServerNode(rack, 0, cores=1, packet_us=packet_us, tx_burst=burst,
                      tx_drain_us=drain_us)
    for at, txn in arrivals:
        rack.engine.call_at(at, node.on_request, acquire(100 + txn, txn), ACQUIRE, False, 0,
                            int(at))
    rack.engine.run(1000.0)
    return rack.sent


def test_grants_wait_for_the_drain_tick():
    # The core is done with them at 1.5 and 3.5 us: both leave at the 10 us tick.
    assert run([(1.0, 1), (3.0, 2)], 32, 10.0) == [(1, 10.0), (2, 10.0)]


def test_a_full_burst_leaves_when_its_last_packet_is_done():
    # Back to back at 1 us, 0.5 us each: done at 1.5, 2.0, 2.5; the third fills the burst
    # of 3; the fourth, done at 3.0, waits for the tick at 10; the fifth (done at 12.5)
    # for the tick at 20.
    got = run([(1.0, 1), (1.0, 2), (1.0, 3), (1.0, 4), (12.0, 5)], 3, 10.0)
    assert got == [(1, 2.5), (2, 2.5), (3, 2.5), (4, 10.0), (5, 20.0)]


def test_one_packet_bursts_leave_when_the_core_is_done():
    assert run([(1.0, 1), (1.0, 2)], 1, 10.0) == [(1, 1.5), (2, 2.0)]
