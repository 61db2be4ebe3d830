"""Concordia (Wang et al., FAST'21) as a lock manager: its per-cache-block reader-writer
locks, exposed to applications as a synchronization primitive (section 6), on the toolkit's
workloads. Each lock id is a cache block; each lock request is one coherence event on it
(a shared request a READ-MISS, an exclusive one a WRITE-MISS).

**Lock path** (5.1). The requester's library sends the request to the ToR switch. If the
switch owns the block (its tag is in the TAG array), the LCF pipeline tries the lock
(:mod:`sim.managers.concordia.locks`): a lock it cannot take is a failed ACK straight back
and the requester's transaction aborts and retries after GAM's back-off (no queue;
:mod:`sim.managers.concordia.gam_backoff`); a lock it takes is forwarded to the other holders
of the copyset, whose ACKs reach the requester (or to the home agent for an Unshared
block, or answered at once when the requester is the only holder). Otherwise the switch
forwards the request to the block's home agent (block mod ``clients.machines``: every
client machine is a memory node), which does the same in software, paying
``home_message_us`` of a core per message it receives or sends (its own forwards
included). The requester is granted when the ACKs are in; its unlock goes to the owner the
same way and is acknowledged. Cache agents answer without a CPU queue.

**One event at a time.** A requester thread performs one read or write at a time and waits
for its coherence event (section 5.1.1; GAM's no-wait 2PL engine, section 7.4, takes a
transaction's locks as it accesses the records): the library starts a transaction's next
lock request when the previous one is granted, and a failed ACK aborts the transaction.

**Ownership migration** (5.2): every ``epoch_us`` the blocks move as
:func:`sim.managers.concordia.ownership.plan_epoch` decides (each home agent's ``top_k``
hottest into the switch, the shadow node evicting the coldest when the switch's
``switch_blocks`` are taken); the migration messages cost the home agents too.
``switch_blocks = 0`` keeps every block with its home agent: the seed's Concordia-base.

**Packet loss** (5.3): a lock request unanswered after ``request_timeout_rtt`` round trips
is sent again, an unlock unacknowledged after ``unlock_timeout_rtt``; the lock rule is
idempotent, so copies neither lock twice nor unlock someone else. A grant that arrives for
a request its client no longer waits for is unlocked by the library.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Generator
from typing import Any

from sim.engine import ACQUIRE, EXCLUSIVE, Req
from sim.managers.concordia.agents import HomeAgent, Metadata
from sim.managers.concordia.gam_backoff import GamBackoff
from sim.managers.concordia.locks import FAILED, STALE, RwLocks
from sim.managers.concordia.ownership import plan_epoch
from sim.managers.context import SERVER, SOURCES, SWITCH, ManagerContext
from sim.managers.interface import each_packet

WAITING, GRANTED, FAILED_ACK, UNLOCKING = range(4)
ADD_MESSAGES = 2
"""A home agent's messages to move a block into the switch: ADD-TO-SWITCH and its ACK."""
REMOVE_MESSAGES = 3
"""... and back: the shadow node's notice, REMOVE-FROM-SWITCH and its ACK."""


class Event:
    """One lock request's coherence event, as the requester's library tracks it."""

    __slots__ = ("answered_at", "at_switch", "locked_at", "req", "sends", "state",
                 "unlock_sends", "unlocked_at")

    def __init__(self, req: Req) -> None:
        self.req = req
        self.state = WAITING
        self.sends = 0
        self.unlock_sends = 0
        self.answered_at = -1.0
        self.unlocked_at = -1.0
        self.locked_at = 0.0
        self.at_switch = False


class ConcordiaManager:
    """The switch's LCF pipeline, the home agents, the shadow node and the requesters'
    library (entered at 0 hops: the library sends its own packets)."""

    kind = "concordia"
    sources = SOURCES
    entry_hops = 0

    def __init__(self, ctx: ManagerContext) -> None:
        cfg = ctx.config
        c = cfg.manager.concordia
        self.engine = ctx.engine
        self.env = ctx.engine.env
        self.network = ctx.network
        self.c = c
        self.pass_us = cfg.switch.pass_us
        self.request_timeout_us = c.request_timeout_rtt * cfg.network.rtt_us
        self.unlock_timeout_us = c.unlock_timeout_rtt * cfg.network.rtt_us
        self.nodes = cfg.clients.machines
        self.homes = [HomeAgent(c.home_agent_cores, c.home_message_us)
                      for _ in range(self.nodes)]
        self.switch = RwLocks()
        self.switch_hotness: dict[int, int] = {}
        self.in_switch: set[int] = set()
        self.meta = Metadata()
        self.backoff = GamBackoff(c.backoff_spins, c.pause_us)
        self.events: dict[int, Event] = {}
        self.lines: dict[int, tuple[int, deque[Req]]] = {}
        """Per client: its attempt and the lock requests still to start, one at a time."""
        self.packet_handlers = [self.on_packets]
        self.warmup_us = cfg.sim.warmup_s * 1e6
        self.at_warmup = (0, 0)
        """Home-agent messages and grants when the warm-up ended."""
        self.counts = dict.fromkeys(
            ("granted", "granted_in_switch", "failed_acks", "retransmits", "unlock_retransmits",
             "late_grants_unlocked", "migrated_in", "migrated_out", "epochs"), 0)

    def backoff_us(self, client: Any) -> float:
        """The wait before an aborted transaction is retried (us): GAM's rule."""
        return self.backoff.backoff_us(client)

    def on_packets(self, first: Req) -> None:
        for req in each_packet(first):
            if req.op == ACQUIRE:
                self.backoff.saw_request(req.client)
                line = self.lines.get(req.client.cid)
                if line is not None and line[0] == req.attempt:
                    line[1].append(req)
                else:
                    self.lines[req.client.cid] = (req.attempt, deque())
                    self.start_event(req)
            else:
                event = self.events.get(req.rid)
                if event is not None and event.state == GRANTED:
                    self.send_unlock(event)

    # --- the requester's library -------------------------------------------------------

    def start_event(self, req: Req) -> None:
        event = Event(req)
        self.events[req.rid] = event
        self.send_lock(event)

    def next_event(self, req: Req) -> None:
        """``req`` is granted: its transaction's next coherence event starts, if any."""
        line = self.lines.get(req.client.cid)
        if line is None or line[0] != req.attempt:
            return
        if line[1]:
            self.start_event(line[1].popleft())
        else:
            del self.lines[req.client.cid]

    def send_lock(self, event: Event) -> None:
        event.sends += 1
        hop = self.network.hop()
        if hop >= 0:
            self.engine.call_later(hop, self.at_switch, event)
        self.engine.call_later(self.request_timeout_us, self.lock_timeout, event, event.sends)

    def lock_timeout(self, event: Event, sends: int) -> None:
        if event.state == WAITING and event.sends == sends and not (
                0 <= event.answered_at <= self.env.now):
            self.counts["retransmits"] += 1
            self.send_lock(event)

    def answer(self, event: Event, at: float, granted: bool) -> None:
        """The switch or a home agent answers ``event``; the answer arrives at ``at``."""
        if event.state == WAITING and event.answered_at < 0:
            event.answered_at = at
        self.engine.call_at(at, self.on_answer, event, granted)

    def on_answer(self, event: Event, granted: bool) -> None:
        req = event.req
        if event.state == WAITING:
            event.state = GRANTED if granted else FAILED_ACK
            alive = req.attempt == req.client.attempt
            if not granted:
                self.events.pop(req.rid, None)
                self.counts["failed_acks"] += 1
                if alive:
                    self.lines.pop(req.client.cid, None)
                    req.client.on_denied(req)
            elif alive:
                self.counts["granted"] += 1
                self.counts["granted_in_switch"] += event.at_switch
                req.source = SWITCH if event.at_switch else SERVER
                req.client.receive(req, self.env.now, event.locked_at)
                self.next_event(req)
            else:
                self.counts["late_grants_unlocked"] += 1
                self.send_unlock(event)
        elif granted and event.state == FAILED_ACK:
            self.counts["late_grants_unlocked"] += 1
            event.state = GRANTED
            self.send_unlock(event)

    def send_unlock(self, event: Event) -> None:
        event.state = UNLOCKING
        event.unlock_sends += 1
        hop = self.network.hop()
        if hop >= 0:
            self.engine.call_later(hop, self.unlock_at_switch, event)
        self.engine.call_later(self.unlock_timeout_us, self.unlock_timeout, event,
                               event.unlock_sends)

    def unlock_timeout(self, event: Event, sends: int) -> None:
        if event.unlock_sends != sends:
            return
        if 0 <= event.unlocked_at <= self.env.now:
            self.events.pop(event.req.rid, None)
        else:
            self.counts["unlock_retransmits"] += 1
            self.send_unlock(event)

    # --- the switch and the home agents ------------------------------------------------

    def node(self, req: Req) -> int:
        return req.client.cid % self.nodes

    def at_switch(self, event: Event) -> None:
        now = self.env.now + self.pass_us
        req = event.req
        block = req.lock
        if block not in self.in_switch:
            hop = self.network.hop()
            if hop >= 0:
                self.engine.call_later(self.pass_us + hop, self.at_home, event)
            return
        outcome = self.switch.lock(block, req.rid, req.mode == EXCLUSIVE)
        if outcome == STALE:
            return
        if outcome == FAILED:
            self.reply(event, now, 1, False)
            return
        event.at_switch = True
        event.locked_at = self.env.now
        fanout, unshared = self.meta.event(block, self.node(req), req.mode == EXCLUSIVE)
        self.switch_hotness[block] = self.switch_hotness.get(block, 0) + fanout
        if fanout:
            self.forward(event, now, fanout, 1)
        elif unshared:
            hop = self.network.hop()
            if hop >= 0:
                home = self.homes[block % self.nodes]
                self.reply(event, home.work(now + hop, 2), 2, True)
        else:
            self.reply(event, now, 1, True)

    def at_home(self, event: Event) -> None:
        now = self.env.now
        req = event.req
        block = req.lock
        home = self.homes[block % self.nodes]
        if block in self.in_switch:
            self.reply(event, home.work(now, 2), 2, False)
            return
        outcome = home.locks.lock(block, req.rid, req.mode == EXCLUSIVE)
        if outcome == STALE:
            home.work(now, 1)
            return
        if outcome == FAILED:
            self.reply(event, home.work(now, 2), 2, False)
            return
        event.at_switch = False
        event.locked_at = now
        fanout, _ = self.meta.event(block, self.node(req), req.mode == EXCLUSIVE)
        home.hotness[block] = home.hotness.get(block, 0) + fanout
        done = home.work(now, 1 + max(fanout, 1))
        if fanout:
            self.forward(event, done, fanout, 2)
        else:
            self.reply(event, done, 2, True)

    def reply(self, event: Event, at: float, hops: int, granted: bool) -> None:
        """An answer (an ACK, or a failed ACK) leaving at ``at`` that reaches the requester
        ``hops`` hops later."""
        delay = self.network.path(hops)
        if delay >= 0:
            self.answer(event, at + delay, granted)

    def forward(self, event: Event, at: float, fanout: int, hops_out: int) -> None:
        """Requests multicast at ``at`` to ``fanout`` cache agents ``hops_out`` hops away;
        each ACKs the requester (two hops: to the switch, to the requester)."""
        last = at
        for _ in range(fanout):
            delay = self.network.path(hops_out + 2)
            if delay < 0:
                return
            last = max(last, at + delay)
        self.answer(event, last, True)

    def unlock_at_switch(self, event: Event) -> None:
        req = event.req
        block = req.lock
        if block in self.in_switch:
            self.switch.unlock(block, req.rid, req.mode == EXCLUSIVE)
            self.unlock_acked(event, self.env.now + self.pass_us, 1)
            return
        hop = self.network.hop()
        if hop >= 0:
            self.engine.call_later(self.pass_us + hop, self.unlock_at_home, event)

    def unlock_at_home(self, event: Event) -> None:
        req = event.req
        home = self.homes[req.lock % self.nodes]
        home.locks.unlock(req.lock, req.rid, req.mode == EXCLUSIVE)
        self.unlock_acked(event, home.work(self.env.now, 2), 2)

    def unlock_acked(self, event: Event, at: float, hops: int) -> None:
        delay = self.network.path(hops)
        if delay >= 0 and event.unlocked_at < 0:
            event.unlocked_at = at + delay

    # --- ownership migration (the home agents and the shadow node) -----------------------

    def start(self) -> None:
        self.engine.call_later(self.warmup_us, self.end_warmup)
        if self.c.switch_blocks > 0:
            self.engine.process(self.epochs())

    def end_warmup(self) -> None:
        self.at_warmup = (sum(h.messages for h in self.homes), self.counts["granted"])

    def epochs(self) -> Generator[Any, Any, None]:
        """The epoch clock: migrate at the end of each ``epoch_us``."""
        while True:
            yield self.env.timeout(self.c.epoch_us)
            self.migrate()

    def movable(self, block: int) -> bool:
        if block in self.in_switch:
            return self.switch.idle(block)
        return self.homes[block % self.nodes].locks.idle(block)

    def migrate(self) -> None:
        now = self.env.now
        moves = plan_epoch([h.hotness for h in self.homes], self.switch_hotness,
                           self.in_switch, self.c.switch_blocks, self.c.top_k, self.movable)
        for block in moves.removed:
            self.in_switch.discard(block)
            self.homes[block % self.nodes].work(now, REMOVE_MESSAGES)
        for block in moves.added:
            self.in_switch.add(block)
            self.homes[block % self.nodes].work(now, ADD_MESSAGES)
        self.counts["migrated_in"] += len(moves.added)
        self.counts["migrated_out"] += len(moves.removed)
        self.counts["epochs"] += 1
        for home in self.homes:
            home.hotness = {}
        self.switch_hotness = {}

    def stats(self) -> dict[str, Any]:
        """Counts over the whole run; ``home_messages_per_grant`` over the measured part
        (after the warm-up): home-agent messages received and sent per granted request."""
        messages = sum(h.messages for h in self.homes)
        measured = messages - self.at_warmup[0]
        granted = self.counts["granted"] - self.at_warmup[1]
        return {**self.counts, "home_messages": messages,
                "home_messages_per_grant": measured / granted if granted > 0 else 0.0,
                "blocks_in_switch": len(self.in_switch),
                "switch_blocks": self.c.switch_blocks,
                "lost_packets": self.network.lost}
