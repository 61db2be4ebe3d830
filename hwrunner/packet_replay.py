"""Lock traffic for the emulated switch: a workload replayed as NetLock packets.

Every request of a trace (or of a config's workload) becomes an acquire packet at its
``t_request`` and a release packet at its ``t_release`` -- or right after its grant, if the
emulated rack grants it later than the trace did -- so the locks see the trace's overlap
(its c_i). Packets are encoded in the project's wire format
(:mod:`netlock.wire`) and decoded again on their way into the switch, as a NIC would hand
them to the pipeline. The switch is the emulated one (:class:`~hwrunner.emulator
.EmulatedSwitch`), so its per-lock counters (acquires, peak occupancy) and queues fill as on
hardware; requests for locks it does not own go to in-process lock servers
(:class:`netlock.lockserver.LockServer`), one per partition entry, which grant them, buffer
overflow and push it back. Requests are identified by (client, transaction): the trace's
row number, plus the pass number when a trace is replayed in a loop.

:class:`Replay` advances in trace time (``run_until``) and can serve as a push's
:class:`~hwrunner.push.Pacer` (:class:`ReplayPacer`): traffic keeps flowing while a push
waits, as on a live switch.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hwrunner.emulator import EmulatedSwitch
from hwrunner.server_handover import LocalLockServers
from netlock.lockserver import LockServer
from netlock.packets import ACQUIRE, RELEASE, Action, ActionKind, LockRequest, Mode, Op
from netlock.wire import decode_request, encode_request


@dataclass(frozen=True, eq=False)
class Requests:
    """One lock request per row: lock id, mode (0 = S, 1 = X), request time and time from
    request to release in microseconds (times start at 0)."""

    lock_id: np.ndarray
    mode: np.ndarray
    t_us: np.ndarray
    hold_us: np.ndarray

    def __len__(self) -> int:
        return len(self.lock_id)

    @property
    def span_us(self) -> int:
        """From the first request to the last release, us."""
        return int((self.t_us + self.hold_us).max()) + 1 if len(self) else 0

    @classmethod
    def of(cls, lock_id: object, mode: object, t_request_s: object,
           t_release_s: object) -> Requests:
        t0 = float(np.min(t_request_s)) if np.size(t_request_s) else 0.0
        t = np.rint((np.asarray(t_request_s, dtype=np.float64) - t0) * 1e6).astype(np.int64)
        end = np.rint((np.asarray(t_release_s, dtype=np.float64) - t0) * 1e6).astype(np.int64)
        order = np.argsort(t, kind="stable")
        return cls(np.asarray(lock_id, dtype=np.int64)[order],
                   np.asarray(mode, dtype=np.int64)[order], t[order],
                   np.maximum(end - t, 0)[order])


@dataclass
class ReplayCounts:
    """What a replay did so far."""

    acquires: int = 0
    granted_by_switch: int = 0
    granted_by_servers: int = 0
    released: int = 0
    dropped: int = 0
    packets: int = 0

    def to_json(self) -> dict:
        return dict(self.__dict__)


class Replay:
    """``requests`` replayed into ``switch`` (looping when ``loop``), lock servers beside it."""

    def __init__(self, switch: EmulatedSwitch, requests: Requests, servers: int,
                 loop: bool = False) -> None:
        self.switch = switch
        self.requests = requests
        self.loop = loop
        self.servers = [LockServer() for _ in range(max(servers, 1))]
        self.now_us = 0
        self.counts = ReplayCounts()
        self._events: list[tuple[int, int, int, int, int, int]] = []
        """(time us, kind, sequence, row, pass) heap."""
        self._seq = 0
        self._next_row = 0
        self._pass = 0
        self._base_us = 0

    # --- routing ------------------------------------------------------------------------

    def server_of(self, lock_ids: np.ndarray) -> np.ndarray:
        """The switch's partition table decides (server 0 where it names none)."""
        routed = self.switch.server_of(lock_ids)
        return np.where((routed >= 0) & (routed < len(self.servers)), routed, 0)

    def lock_servers(self) -> LocalLockServers:
        """The in-process lock servers, for a push that runs beside this traffic."""
        return LocalLockServers(self.servers, self.server_of, self.deliver,
                                lambda: self.now_us, self.switch.take_outbox)

    def _request(self, row: int, lap: int, op: Op, slot: int = -1) -> LockRequest:
        txn = lap * len(self.requests) + row
        return LockRequest(op, Mode(int(self.requests.mode[row])),
                           int(self.requests.lock_id[row]), txn, txn & 0xFFFFFFFF,
                           timestamp_us=self.now_us, slot=slot)

    def _to_switch(self, req: LockRequest) -> list[Action]:
        self.counts.packets += 1
        packet = decode_request(encode_request(req))
        return self.switch.dataplane.process(packet, self.now_us).actions

    def deliver(self, actions: list[Action], from_server: bool = True) -> None:
        """Carry actions between the switch, the lock servers and the clients until none is
        left (grants schedule their releases)."""
        pending = [(a, from_server) for a in actions]
        while pending:
            action, by_server = pending.pop(0)
            req = action.request
            kind = action.kind
            if kind == ActionKind.GRANT:
                self._granted(req, by_server)
            elif kind in (ActionKind.TO_SERVER, ActionKind.OVERFLOW,
                          ActionKind.NOTIFY_SERVER):
                server = self.servers[int(self.server_of(np.array([req.lock_id]))[0])]
                pending.extend((a, True) for a in server.handle(action, self.now_us))
            elif kind == ActionKind.PUSH_BACK:
                pending.extend((a, False) for a in self._to_switch(req))
            else:
                self.counts.dropped += 1

    def _granted(self, req: LockRequest, by_server: bool) -> None:
        if by_server:
            self.counts.granted_by_servers += 1
        else:
            self.counts.granted_by_switch += 1
        n = len(self.requests)
        lap, row = divmod(req.txn_id, n)
        due = (lap * self.requests.span_us + int(self.requests.t_us[row])
               + int(self.requests.hold_us[row]))
        heapq.heappush(self._events, (max(due, self.now_us), RELEASE, self._seq, row, lap,
                                      req.slot))
        self._seq += 1

    # --- time ---------------------------------------------------------------------------

    def _admit_until(self, t_us: int) -> None:
        """Queue the acquires due by ``t_us`` (the next pass of a looping trace too)."""
        n = len(self.requests)
        while n:
            if self._next_row == n:
                if not self.loop:
                    return
                self._pass += 1
                self._base_us += self.requests.span_us
                self._next_row = 0
            row = self._next_row
            at = self._base_us + int(self.requests.t_us[row])
            if at > t_us:
                return
            heapq.heappush(self._events, (at, ACQUIRE, self._seq, row, self._pass, -1))
            self._seq += 1
            self._next_row += 1

    def run_until(self, t_us: int) -> None:
        """Deliver every packet due up to trace time ``t_us``."""
        self._admit_until(t_us)
        while self._events and self._events[0][0] <= t_us:
            at, kind, _, row, lap, slot = heapq.heappop(self._events)
            self.now_us = max(self.now_us, at)
            if kind == ACQUIRE:
                self.counts.acquires += 1
                self.deliver(self._to_switch(self._request(row, lap, Op.ACQUIRE)), False)
            else:
                self.counts.released += 1
                self.deliver(self._to_switch(self._request(row, lap, Op.RELEASE, slot)), False)
            self._admit_until(t_us)
        self.now_us = max(self.now_us, t_us)

    def finish(self) -> None:
        """Stop new acquires and run until every granted lock is released."""
        self.loop = False
        self._next_row = len(self.requests)
        while self._events:
            self.run_until(self._events[0][0])

    @property
    def waiting(self) -> int:
        """Acquires neither granted nor dropped yet."""
        granted = self.counts.granted_by_switch + self.counts.granted_by_servers
        return self.counts.acquires - granted - self.counts.dropped

    def server_counters(self) -> dict[str, np.ndarray]:
        """The lock servers' per-lock counters (acquires, peak occupancy), summed over
        servers, and reset for the next window."""
        ids, requests, peaks = [], [], []
        for server in self.servers:
            c = server.counters()
            ids.append(c["lock_id"])
            requests.append(c["requests"])
            peaks.append(c["peak_occupancy"])
            server.reset_counters()
        lock_id = np.concatenate(ids)
        order = np.argsort(lock_id, kind="stable")
        return {"lock_id": lock_id[order], "requests": np.concatenate(requests)[order],
                "peak_occupancy": np.concatenate(peaks)[order]}


class ReplayPacer:
    """Push and autopilot time is trace time: waiting replays the traffic due meanwhile."""

    def __init__(self, replay: Replay) -> None:
        self.replay = replay

    def now(self) -> float:
        return self.replay.now_us / 1e6

    def wait(self, seconds: float) -> None:
        self.replay.run_until(self.replay.now_us + max(int(seconds * 1e6), 1))


def load_requests(source: Path, requests: int | None = None, sets: list[str] | None = None,
                  seed: int | None = None, shift: int = 0) -> Requests:
    """A trace file's requests (the first ``requests`` of them), or ``requests`` (default
    100,000) of a config's workload, as ``netlock trace gen`` makes them. ``shift`` rotates
    lock ids by that much over the workload's ids (the same workload, its hot set moved)."""
    from netlock.cli.common import parse_sets
    from netlock.trace import read_trace
    from planner import settings

    if source.suffix.lower() in (".yaml", ".yml"):
        from netlock.memory import check_fits
        from sim.footprint import trace_needs
        from sim.workloads import workload_from_config
        from sim.workloads.tracegen import trace_from_config

        cfg = settings.run_config(source, parse_sets(sets))
        check_fits(trace_needs(cfg, requests or 100_000))
        cols = trace_from_config(cfg, requests or 100_000, seed, workload_from_config(cfg))
        lock_id, mode, t_request, t_release = (cols[c] for c in ("lock_id", "mode",
                                                                  "t_request", "t_release"))
    else:
        trace = read_trace(source)
        first = np.argsort(trace.t_request, kind="stable")[:requests]
        lock_id, mode, t_request, t_release = (trace.lock_id[first], trace.mode[first],
                                               trace.t_request[first], trace.t_release[first])
    if shift:
        lock_id = (lock_id + shift) % (int(lock_id.max()) + 1)
    return Requests.of(lock_id, mode, t_request, t_release)
