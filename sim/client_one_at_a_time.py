"""The simpy client of a lock manager whose clients take locks one at a time.

A lock manager whose clients take locks **one at a time** (``one_at_a_time``: DSLR and DrTM
as the DSLR authors' harness drives them, ``LockSimulator::run``) gets that client instead:
an attempt sends its first acquire, each grant sends the next; commit and give-up release in
reverse order, one by one, each release sent when the manager says the previous one is done
(:meth:`OneAtATime.on_released`); the next transaction (or the retry's back-off) starts when the
last is done. Such an attempt is given up after the manager's ``attempt_timeout_us``, not the
NetLock client's timeout. A request's latency runs from when its acquire is sent, and so does
its wait for the liveness checker (:mod:`sim.core.liveness`): the transaction does not ask
for a lock before it sends that acquire. The acquire in flight when an attempt is given up
is recorded as a wait that ended then. ``asked_us`` stays the first attempt's start: it
names the transaction.

A mixin of :class:`sim.clients.Client`: the releases one by one and what follows the last;
the client's ``sequential`` branches (its acquires, grants, commit and give-up) call them.
"""

from __future__ import annotations

from collections.abc import Callable
from math import inf
from typing import Any

from netlock.txn_context import XF_NEXT_START
from sim.client_inputs import TxnSource
from sim.engine import Req


class OneAtATime:
    """Releases one at a time; the attributes are :class:`sim.clients.Client`'s."""

    __slots__ = ()

    env: Any
    cf: list[float]
    txns: TxnSource
    unlocking: list[Req]
    unlocked: Any
    at: Callable[..., None]
    begin_txn: Callable[[], None]
    next_txn: Callable[[float], list[Req]]
    send_acquires: Callable[[list[Req], float], None]
    send_burst: Callable[[list[Req], float], None]

    def unlock(self, releases: list[Req], now: float, then: Any) -> None:
        """One at a time: release ``releases`` in reverse order, each after the one before
        it is done, then call ``then(t)`` at the client time ``t`` the last is done."""
        if not releases:
            then(now)
            return
        self.unlocking = releases[::-1]
        self.unlocked = then
        self.send_burst([self.unlocking[0]], now)

    def on_released(self, req: Req) -> None:
        """The lock manager is done with the release ``req`` (an event): one at a time, the
        next release goes, or what waited for the last."""
        if not self.unlocking or self.unlocking[0] is not req:
            return
        now = self.env.now
        self.unlocking.pop(0)
        if self.unlocking:
            self.send_burst([self.unlocking[0]], now)
            return
        then, self.unlocked = self.unlocked, None
        then(now)

    def start_next(self, now: float) -> None:
        """One at a time: the committed transaction's locks are released at client time
        ``now``: start the next transaction (at once, or when the rate cap or a timed
        replay allows)."""
        ready = max(self.cf[XF_NEXT_START], self.txns.ready_us())
        if ready > now:
            if ready < inf:
                self.at(ready, self.begin_txn)
        else:
            self.send_acquires(self.next_txn(now), now)
