"""The event core: simpy's clock and heap, with lock requests as their own events.

Speed comes from keeping events per lock request few (an acquire reaching the lock manager,
its grant reaching the client, its release reaching the lock manager) and cheap: the
message in flight *is* the simpy event. A :class:`Req` carries ``callbacks`` and ``_ok`` as
simpy's event loop expects and goes on simpy's heap directly; no ``Process``, ``Timeout``
or ``Resource`` is created per request. :class:`RackEnvironment` is a
``simpy.Environment`` whose run loop is ``step`` inlined (same semantics: callbacks in
order, failed events that nobody defused crash the run). Rare things (think time, retries)
use :meth:`Engine.call_later` or :meth:`Engine.call_at`, and long-lived activities
(control-plane sweeps, probes, failure injection) are ordinary simpy processes on the same
environment. Writing simpy's private ``_queue``, ``_eid`` and ``_now`` ties this module to the
simpy versions pyproject.toml allows (tests/sim/test_simpy_pin.py checks them).

Simulated time is in microseconds (us) throughout.
"""

from __future__ import annotations

from collections.abc import Callable
from heapq import heappop, heappush
from typing import Any

import simpy
from simpy.events import NORMAL, URGENT

from netlock.packets import ACQUIRE as ACQUIRE
from netlock.packets import EXCLUSIVE as EXCLUSIVE
from netlock.packets import RELEASE as RELEASE
from netlock.packets import SHARED as SHARED


class Req:
    """One lock request of a transaction attempt, and the event that carries it.

    The same object travels client -> lock manager -> client (grant) -> lock manager
    (release). ``rid`` is unique per request in a run; ``source`` is set by the lock manager
    to the index (in its ``sources``) of the component that granted it, ``slot`` to the
    switch queue slot of a switch's grant (its release names it); ``t_enq`` is free
    for the lock manager's own bookkeeping; ``follow`` chains packets that travel together
    (a burst). Times are us.
    """

    __slots__ = ("attempt", "callbacks", "client", "follow", "lease_end", "lock", "mode", "op",
                 "priority", "rid", "slot", "source", "t_created", "t_enq", "t_grant",
                 "tenant")
    _ok = True

    def __init__(self, rid: int, client: Any, attempt: int, lock: int, mode: int,
                 tenant: int, priority: int, t_created: float) -> None:
        self.rid = rid
        self.client = client
        self.attempt = attempt
        self.lock = lock
        self.mode = mode
        self.tenant = tenant
        self.priority = priority
        self.t_created = t_created
        self.op = ACQUIRE
        self.source = -1
        self.slot = -1
        self.t_enq = t_created
        self.follow: Req | None = None

    def copy(self) -> Req:
        """An independent copy of this packet, as a network that duplicates it delivers."""
        twin = Req(self.rid, self.client, self.attempt, self.lock, self.mode, self.tenant,
                   self.priority, self.t_created)
        twin.op = self.op
        twin.source = self.source
        twin.slot = self.slot
        twin.t_enq = self.t_enq
        for name in ("lease_end", "t_grant"):
            if hasattr(self, name):
                setattr(twin, name, getattr(self, name))
        return twin


class _Call:
    """A scheduled plain function call (simpy's event protocol, without a Process)."""

    __slots__ = ("args", "callbacks", "fn")
    _ok = True

    def __init__(self, fn: Callable[..., Any], args: tuple) -> None:
        self.fn = fn
        self.args = args
        self.callbacks = _FIRE

    @staticmethod
    def _fire(call: _Call) -> None:
        call.fn(*call.args)


_FIRE = [_Call._fire]


class _Stop:
    """Marks the end of a run on the heap."""

    __slots__ = ("callbacks",)
    _ok = True

    def __init__(self) -> None:
        self.callbacks: list = []


class RackEnvironment(simpy.Environment):
    """A simpy environment with a tighter run loop and hot-path scheduling helpers."""

    def deliver(self, event: Any, handlers: list, delay_us: float) -> None:
        """Make ``event`` call ``handlers`` after ``delay_us`` (>= 0)."""
        event.callbacks = handlers
        heappush(self._queue, (self._now + delay_us, NORMAL, next(self._eid), event))

    def deliver_at_function(self) -> Callable[[Any, list, float], None]:
        """``deliver_at(event, handlers, at_us)``: like :meth:`deliver` with an absolute
        time (>= now), as a closure over the heap for the hottest call sites."""
        queue = self._queue
        eid = self._eid

        def deliver_at(event: Any, handlers: list, at_us: float) -> None:
            event.callbacks = handlers
            heappush(queue, (at_us, NORMAL, next(eid), event))

        return deliver_at

    def run_until(self, until_us: float) -> None:
        """Process every event scheduled before ``until_us``, then set the clock to it."""
        if until_us <= self._now:
            raise ValueError(f"until ({until_us}) must be after the current time ({self._now})")
        stop = _Stop()
        heappush(self._queue, (until_us, URGENT, next(self._eid), stop))
        queue = self._queue
        while queue:
            self._now, _, _, event = heappop(queue)
            if event is stop:
                return
            callbacks = event.callbacks
            event.callbacks = None
            for callback in callbacks:
                callback(event)
            if not event._ok and not hasattr(event, "_defused"):
                exc = type(event._value)(*event._value.args)
                exc.__cause__ = event._value
                raise exc
        self._now = until_us

    @property
    def events_scheduled(self) -> int:
        """Events put on the heap so far (simpy numbers them in order; this takes a number)."""
        return next(self._eid)


class Engine:
    """The environment plus scheduling helpers used by every component."""

    def __init__(self) -> None:
        self.env = RackEnvironment()
        self.deliver = self.env.deliver
        self.deliver_at = self.env.deliver_at_function()

    @property
    def now(self) -> float:
        return self.env.now

    def call_later(self, delay_us: float, fn: Callable[..., Any], *args: Any) -> None:
        """Call ``fn(*args)`` after ``delay_us`` (>= 0)."""
        self.env.deliver(_Call(fn, args), _FIRE, delay_us)

    def call_at(self, at_us: float, fn: Callable[..., Any], *args: Any) -> None:
        """Call ``fn(*args)`` at ``at_us`` (>= now), that very time: ``now + (at_us - now)``
        can differ from ``at_us`` in its last bit, which would reorder events that a FIFO
        link gives one arrival time (the fast engine schedules the time itself)."""
        self.deliver_at(_Call(fn, args), _FIRE, at_us)

    def process(self, generator: Any) -> simpy.Process:
        return self.env.process(generator)

    def run(self, until_us: float) -> None:
        self.env.run_until(until_us)

    @property
    def events(self) -> int:
        return self.env.events_scheduled
