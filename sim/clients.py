"""Client machines running closed-loop transactions against any lock manager.

Each client process is one transaction context of a client machine, and follows the
client's rules of :mod:`netlock.client`, applied by :mod:`netlock.txn_context`'s steps on its
state row (the fast engine calls the same steps): an attempt sends all its acquires back to back
(through the machine's NIC, one per ``gap`` us, as one burst), waits for every grant, reads
its data if the workload has any (one round trip to the database servers, unless the lock manager
forwards grants through them: the one-RTT mode), thinks, then releases everything and
starts the next transaction. An attempt not fully granted within its timeout releases what
it holds and sends the same transaction again after a random back-off; grants that arrive
for an attempt given up are released at once if still leased. A timed trace replay
(:mod:`sim.workloads.replay`) starts each transaction no earlier than its recorded start
and holds it for its recorded hold instead of the think time; a client with no transaction
left stops.
Clients honour their leases: a lock's lease runs from the moment the lock manager granted
it (the grant carries that timestamp); a client stops using a lock when its lease ends and
never sends a release after that. A transaction that cannot commit within its leases is
aborted the same way.

Each client process has its own share of its machine's NIC (:class:`sim.network.Machine`)
and its own FIFO links, so what a client does depends only on its own packets. That makes
the common reaction exact to compute at the moment the lock manager sends the grant: when
a grant completes an attempt, nothing delays the commit (no think time, no data read) and
the retry timer cannot fire first, :meth:`Client.receive` runs the reaction for the
grant's arrival time right away instead of scheduling an event for it. Either way the
client's clock is the ``now`` passed down, never the engine's.

On a network that duplicates or reorders packets (:class:`sim.network.Faults`) a client
sends each packet with its own delay draw, the network may add a copy or hold the packet
back (:mod:`sim.client_faults`), and every grant goes through
:func:`netlock.client.grant_verdict` as an event: a copy of a grant it holds is ignored, a
grant of a copied acquire is handed back under its own slot.

A lock manager whose clients take locks **one at a time** (``one_at_a_time``: DSLR and DrTM)
gets that client instead (:mod:`sim.client_one_at_a_time`).

Clients know only the lock manager's packet entry point and the network; nothing here is
specific to NetLock.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from netlock.client import HAND_BACK, NOT_HELD, USE, attempt_timeout_us
from netlock.txn_context import (
    BEGIN_LATER,
    COMMIT_NOW,
    GIVE_UP,
    LEASE_OVER,
    MORE,
    SETTLE_NOW,
    TAKE_NOW,
    TIMER_ABORT,
    TIMER_REARM,
    X_ABORTS,
    X_ATTEMPT,
    X_NLOCKS,
    XF_NEXT_START,
    XF_TIMER_AT,
    XF_TXN_START,
    awaits,
    end_txn,
    grant_action,
    hands_back,
    is_current,
    lease_runs,
    new_row,
    on_arrival,
    start_attempt,
    take_grant,
    timer_fires,
)
from netlock.txn_context import give_up as give_up_attempt
from sim.client_bursts import ClientBursts
from sim.client_inputs import ClientParams, SimpyRack, TxnSource
from sim.client_one_at_a_time import OneAtATime
from sim.engine import ACQUIRE, RELEASE, Req
from sim.network import Machine
from sim.workloads.base import WorkloadGenerator

INF = math.inf


class Client(ClientBursts, OneAtATime):
    """One client process: a closed loop of transactions with leases and retries.

    Its transaction state is :mod:`netlock.txn_context`'s row (``ci``, ``cf``: two lists),
    which that module's rules change; the rest are its requests and its engine's handles.
    Its packets go out through :class:`sim.client_bursts.ClientBursts`, and one at a time
    its releases through :class:`sim.client_one_at_a_time.OneAtATime`.
    Its attributes are slots: the hot path reads and writes many of them per request,
    and an instance dict of more than 30 keys stops sharing its keys (CPython), which made
    each access a few ns slower.
    """

    __slots__ = ("add_txn", "add_use", "asking", "cf", "ci", "cid", "deliver_at", "engine",
                 "env", "fast", "faults", "grant_handlers", "held", "hops", "instant",
                 "lease_us", "locks", "lossy", "machine", "modes", "network", "one_lock",
                 "one_mode", "p", "priority", "rack", "rec", "rx_us", "sequential", "spare",
                 "tenant", "timeout_one_us", "todo", "tx_us", "txns", "unlocked", "unlocking")

    def __init__(self, cid: int, rack: SimpyRack, machine: Machine, txns: TxnSource,
                 params: ClientParams, tenant: int, priority: int) -> None:
        self.cid = cid
        self.rack = rack
        self.engine = rack.engine
        self.env = rack.engine.env
        self.deliver_at = rack.engine.deliver_at
        self.network = rack.network
        self.rec = rack.recorder
        self.add_use = rack.recorder.add_use
        self.add_txn = rack.recorder.add_txn
        self.machine = machine
        self.txns = txns
        self.p = params
        self.instant = params.think_us <= 0 and params.fetch_hops == 0 and not txns.timed
        self.fast = self.instant and params.gap_per_lock_us <= 0 and rack.entry_hops == 1
        self.lease_us = params.lease_us
        self.tx_us = params.tx_us
        self.rx_us = params.rx_us
        self.timeout_one_us = attempt_timeout_us(1, params.timeout_us, params.think_us,
                                                 params.lease_us)
        """The timeout of one-lock attempts (the inline path's)."""
        self.faults = rack.network.faults
        self.lossy = rack.network.loss > 0 or self.faults is not None
        self.hops = rack.network.block
        self.tenant = tenant
        self.priority = priority
        self.grant_handlers = [self.on_grant]
        self.ci, self.cf = new_row()
        self.locks: list[int] = []
        self.modes: list[int] = []
        self.one_lock = [0]
        self.one_mode = [0]
        self.held: list[Req] = []
        self.spare: Req | None = None
        self.sequential = rack.one_at_a_time
        self.todo: list[Req] = []
        """One at a time: the current attempt's acquires not sent yet, next last."""
        self.asking: Req | None = None
        """One at a time: the acquire in flight (its wait began when it was sent)."""
        self.unlocking: list[Req] = []
        """One at a time: the releases not done yet, the one in flight first."""
        self.unlocked: Any = None
        """One at a time: what to do (a function of the client time) when they are done."""

    @property
    def attempt(self) -> int:
        """The current attempt's number (a request of another one is stale)."""
        return self.ci[X_ATTEMPT]

    @property
    def aborts(self) -> int:
        """Attempts given up so far."""
        return self.ci[X_ABORTS]

    @property
    def txn_start(self) -> float:
        """When the current transaction started (us; it names the transaction)."""
        return self.cf[XF_TXN_START]

    def at(self, t: float, fn: Any, *args: Any) -> None:
        """Call ``fn(*args)`` at client time ``t`` (>= the engine's clock)."""
        self.engine.call_at(t, fn, *args)

    def start(self, at_us: float) -> None:
        self.cf[XF_NEXT_START] = at_us
        self.at(at_us, self.begin_txn)

    def begin_txn(self) -> None:
        now = self.env.now
        ready = self.txns.ready_us()
        if ready > now:
            if ready < INF:
                self.at(ready, self.begin_txn)
            return
        self.send_acquires(self.next_txn(now), now)

    def send_acquires(self, reqs: list[Req], now: float) -> None:
        """Send an attempt's acquires: all back to back, or (one at a time) the first, the
        rest each after the grant before it."""
        if self.sequential and reqs:
            self.todo = reqs[:0:-1]
            reqs = reqs[:1]
            self.asking = reqs[0]
        self.send_burst(reqs, now)

    def next_txn(self, now: float) -> list[Req]:
        """Draw the next transaction and make its first attempt's acquires."""
        self.locks, self.modes = self.txns.next()
        return self.new_attempt(now, len(self.locks))

    def new_attempt(self, now: float, new_locks: int = -1) -> list[Req]:
        """A fresh attempt at the current transaction (a new one of ``new_locks`` locks):
        all its acquires, and its deadline (:func:`netlock.txn_context.start_attempt`)."""
        p = self.p
        if self.sequential:
            timeout = self.rack.one_at_a_time_timeout_us
        else:
            timeout = attempt_timeout_us(len(self.locks), p.timeout_us, p.think_us, p.lease_us)
        cf = self.cf
        arm = start_attempt(self.ci, cf, now, timeout, new_locks, p.gap_per_lock_us)
        attempt = self.ci[X_ATTEMPT]
        self.held = []
        rack = self.rack
        rid = rack.next_rid
        rack.next_rid = rid + len(self.locks)
        tenant, priority = self.tenant, self.priority
        reqs = [Req(rid + k, self, attempt, lock, mode, tenant, priority, now)
                for k, (lock, mode) in enumerate(zip(self.locks, self.modes, strict=True))]
        if arm:
            self.at(cf[XF_TIMER_AT], self.on_timer)
        return reqs

    def receive(self, req: Req, t: float, granted_at: float,
                lease_us: float | None = None) -> None:
        """A grant made at ``granted_at`` will reach this client at ``t`` over its FIFO
        down link; the lock manager's lease runs from ``granted_at`` for ``lease_us`` (a
        design's own lease for this grant; default: the rack's).

        The lock manager calls this instead of scheduling the delivery itself. When the
        grant completes a one-lock attempt and the client commits and starts its next
        transaction at once with no rate cap (module notes), that is done here for time
        ``t``, written out inline (down to sending the release and the next acquire as one
        burst on a lossless network) because it runs once per request in the
        microbenchmark.
        """
        lease = self.lease_us
        if lease_us is not None and lease_us < lease:
            lease = lease_us
        req.lease_end = lease_end = (granted_at // 1.0) + lease
        t += self.rx_us
        if self.faults is not None:
            self.receive_faulty(req, t)
            return
        down = self.machine.down
        if t < down.last:
            t = down.last
        else:
            down.last = t
        action = on_arrival(self.ci, self.cf, req.attempt, not req.op, t, lease_end,
                            self.instant, self.fast)
        if action == SETTLE_NOW:
            self.commit_one(req, t)
        elif action == TAKE_NOW:
            self.granted(req, t)
        else:
            self.deliver_at(req, self.grant_handlers, t)

    def commit_one(self, req: Req, t: float) -> None:
        """:meth:`receive`'s inline path: the grant ``req`` completes a one-lock attempt at
        client time ``t``; commit it and send its release with the next transaction's
        acquires, one burst (on a lossless network written out for two packets)."""
        tenant = self.tenant
        cid = self.cid
        start = self.cf[XF_TXN_START]
        self.add_use((t, t - req.t_created, tenant, req.source, req.lock, req.mode, t, cid,
                      start))
        self.add_txn((t, t - start, tenant, 1, cid))
        req.op = RELEASE
        source = self.txns
        if not (source.sizes and source.sizes[-1] == 1):
            self.send_burst([req, *self.next_txn(t)], t)
            return
        new = self.next_one_lock(t)
        if self.lossy:
            self.send_burst([req, new], t)
            return
        machine = self.machine
        depart = machine.free_at
        ready = t + self.tx_us
        if depart < ready:
            depart = ready
        machine.free_at = depart + machine.gap_us
        req.follow = new
        new.follow = None
        block = self.hops
        arrival = depart + (block.pop() if block else self.network.hop())
        up = machine.up
        if arrival < up.last:
            arrival = up.last
        else:
            up.last = arrival
        self.deliver_at(req, self.rack.packet_handlers, arrival)

    def next_one_lock(self, t: float) -> Req:
        """The next transaction, drawn at client time ``t`` and known to take one lock: its
        acquire (the spare request reused when there is one), its deadline and timer. What
        :meth:`next_txn` does, without the lists of a many-lock transaction."""
        source = self.txns
        source.sizes.pop()
        locks, modes = self.one_lock, self.one_mode
        locks[0] = lock = source.locks.pop()
        modes[0] = mode = source.modes.pop()
        self.locks = locks
        self.modes = modes
        ci, cf = self.ci, self.cf
        arm = start_attempt(ci, cf, t, self.timeout_one_us, 1, self.p.gap_per_lock_us)
        attempt = ci[X_ATTEMPT]
        rack = self.rack
        rid = rack.next_rid
        rack.next_rid = rid + 1
        new = self.spare
        if new is None:
            new = Req(rid, self, attempt, lock, mode, self.tenant, self.priority, t)
        else:
            self.spare = None
            new.rid = rid
            new.attempt = attempt
            new.lock = lock
            new.mode = mode
            new.t_created = t
            new.op = ACQUIRE
            new.source = -1
        if arm:
            self.at(cf[XF_TIMER_AT], self.on_timer)
        return new

    def on_grant(self, req: Req) -> None:
        """A grant arrived (an event): use it, ignore it or hand it back
        (:func:`netlock.client.grant_verdict`)."""
        now = self.env.now
        held_slot = NOT_HELD
        for mine in self.held:
            if mine.rid == req.rid:
                held_slot = mine.slot
                break
        verdict = grant_action(self.ci, req.attempt, req.op == ACQUIRE, held_slot, req.slot)
        if verdict == USE:
            self.granted(req, now)
        elif verdict == HAND_BACK:
            self.stale_grant(req, now)
        else:
            self.rec.ignored_grants += 1

    def granted(self, req: Req, now: float) -> None:
        """A grant of the current attempt arrives at client time ``now``
        (:func:`netlock.txn_context.take_grant`)."""
        action = take_grant(self.ci, self.cf, now, req.lease_end, self.instant)
        if action == LEASE_OVER:
            self.abort(now)
            return
        req.t_grant = now
        self.held.append(req)
        self.asking = None
        if action == MORE:
            if self.todo:
                self.asking = nxt = self.todo.pop()
                nxt.t_created = now
                self.send_burst([nxt], now)
            return
        if action == COMMIT_NOW:
            self.commit(self.ci[X_ATTEMPT], now)
            return
        p = self.p
        wait = p.think_us if self.txns.hold_us is None else self.txns.hold_us
        if p.fetch_hops:
            wait += self.network.reliable_path(p.fetch_hops)
        self.at(now + wait, self.commit_event, self.ci[X_ATTEMPT])

    def stale_grant(self, req: Req, now: float) -> None:
        """A grant for an attempt already given up: hand the lock back if still leased."""
        self.rec.stale_grants += 1
        self.rec.handbacks.append((now, req.lock))
        if hands_back(req.op == ACQUIRE, now, req.lease_end):
            req.op = RELEASE
            self.send_burst([req], now)

    def on_denied(self, req: Req) -> None:
        """The lock manager refused ``req`` (a fail-and-retry design; an event): the
        attempt it belongs to is given up like a timed-out one (what it holds is released,
        the transaction is retried after a back-off)."""
        if awaits(self.ci, req.attempt, req.op == ACQUIRE):
            self.rec.denied += 1
            self.abort(self.env.now)

    def on_defer(self, req: Req, wait_us: float) -> None:
        """The lock manager asks to resend ``req`` after ``wait_us`` (e.g. over quota)."""
        if is_current(self.ci, req.attempt):
            self.rec.retries += 1
            self.at(self.env.now + wait_us, self._resend, req)

    def _resend(self, req: Req) -> None:
        if is_current(self.ci, req.attempt):
            self.send_burst([req], self.env.now)

    def end_uses(self, now: float) -> tuple[list[Req], bool]:
        """Record every held lock's use; the releases to send and whether all were leased."""
        add_use = self.add_use
        tenant, cid, asked = self.tenant, self.cid, self.cf[XF_TXN_START]
        releases = []
        all_valid = True
        for req in self.held:
            if lease_runs(now, req.lease_end):
                end = now
                req.op = RELEASE
                releases.append(req)
            else:
                end = req.lease_end
                all_valid = False
            add_use((req.t_grant, req.t_grant - req.t_created, tenant, req.source, req.lock,
                     req.mode, end, cid, asked))
        self.held = []
        return releases, all_valid

    def commit_event(self, attempt: int) -> None:
        self.commit(attempt, self.env.now)

    def commit(self, attempt: int, now: float) -> None:
        """Commit at client time ``now`` (:func:`netlock.txn_context.end_txn`): releases and
        the next transaction in one burst."""
        ci = self.ci
        if not is_current(ci, attempt):
            return
        burst, valid = self.end_uses(now)
        if valid:
            self.add_txn((now, now - self.cf[XF_TXN_START], self.tenant, len(self.locks),
                          self.cid))
        if self.sequential:
            action, ready = end_txn(ci, self.cf, valid, now, INF)
            if action == GIVE_UP:
                self.give_up(burst, now)
                return
            self.locks = []
            ci[X_NLOCKS] = 0
            self.unlock(burst, now, self.start_next)
            return
        action, ready = end_txn(ci, self.cf, valid, now, self.txns.ready_us())
        if action == GIVE_UP:
            self.give_up(burst, now)
            return
        if action == BEGIN_LATER:
            self.locks = []
            if ready < INF:
                self.at(ready, self.begin_txn)
        else:
            burst += self.next_txn(now)
        self.send_burst(burst, now)

    def abort(self, now: float) -> None:
        """Give up the current attempt: release what is held, then retry the transaction."""
        burst, _ = self.end_uses(now)
        self.give_up(burst, now)

    def give_up(self, releases: list[Req], now: float) -> None:
        """Send ``releases`` of an attempt given up; send the transaction again after a
        back-off (:func:`netlock.txn_context.give_up`). Grants for the old attempt that arrive
        meanwhile are stale."""
        p = self.p
        rule = self.rack.backoff_us
        retries, wait = give_up_attempt(self.ci, self.cf, now, p.seed, self.cid,
                                            p.backoff_slots, p.backoff_slot_us,
                                            -1.0 if rule is None else rule(self))
        self.rec.retries += retries
        self.todo = []
        if self.asking is not None:
            self.rec.open_waits.append((self.asking.lock, self.asking.t_created, now))
        self.asking = None
        attempt = self.ci[X_ATTEMPT]
        if self.sequential:
            self.unlock(releases, now, lambda t: self.at(t + wait, self.retry, attempt))
            return
        if releases:
            self.send_burst(releases, now)
        self.at(now + wait, self.retry, attempt)

    def retry(self, attempt: int) -> None:
        """The back-off of the attempt before ``attempt`` is over: try again."""
        if is_current(self.ci, attempt):
            now = self.env.now
            self.send_acquires(self.new_attempt(now), now)

    def on_timer(self) -> None:
        """The retry timer: abort an attempt whose grants did not all come in time.

        One timer per client is pending at most; it fires at the deadline it was set for
        and moves itself to the current attempt's deadline if that is later.
        """
        action = timer_fires(self.ci, self.cf, self.env.now)
        if action == TIMER_ABORT:
            self.abort(self.env.now)
        elif action == TIMER_REARM:
            self.at(self.cf[XF_TIMER_AT], self.on_timer)

    def close(self, now: float) -> None:
        """At the end of a run: record the uses still in progress as ending ``now``, and
        the locks the current transaction still waits for."""
        using = set()
        for req in self.held:
            if req.t_grant < now:
                using.add(req.lock)
                self.add_use((req.t_grant, req.t_grant - req.t_created, self.tenant, req.source,
                              req.lock, req.mode, min(now, req.lease_end), self.cid,
                              self.cf[XF_TXN_START]))
        self.held = []
        if self.sequential:
            if self.asking is not None and self.asking.lock not in using:
                self.rec.open_waits.append((self.asking.lock, self.asking.t_created, now))
            return
        self.rec.open_waits += [(lock, self.cf[XF_TXN_START], now) for lock in self.locks
                                if lock not in using]


def make_clients(rack: SimpyRack, workload: WorkloadGenerator, params: ClientParams,
                 machines: list[Machine], tenants: list[int], priorities: list[int],
                 seeds: Any) -> list[Client]:
    """One :class:`Client` per entry of ``machines``, each with its own random stream."""
    return [Client(cid, rack, machine, TxnSource(workload, cid, np.random.default_rng(seed)),
                   params, tenants[cid], priorities[cid])
            for cid, (machine, seed) in enumerate(zip(machines, seeds, strict=True))]
