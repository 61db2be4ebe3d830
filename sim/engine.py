"""The event core: simpy's clock and heap, with lock requests as their own events.

Speed comes from keeping events per lock request few (an acquire reaching the lock manager,
its grant reaching the client, its release reaching the lock manager) and cheap: the
message in flight *is* the event. A :class:`Req` carries ``callbacks`` and ``ok`` as an
event on the environment's heap does; no ``Process``, ``Timeout`` or ``Resource`` is
created per request. :class:`RackEnvironment` is a ``simpy.Environment`` that keeps its own
heap and clock behind simpy's public scheduling members (``now``, ``schedule``, ``peek``,
``step``, the members simpy documents for an environment to provide): every simpy event,
process and timeout goes through ``schedule``, and the run loop is ``step`` inlined (same
semantics: callbacks in order, failed events that nobody defused crash the run). Nothing
here reads or writes simpy's private attributes. Rare things (think time, retries) use
:meth:`Engine.call_later` or :meth:`Engine.call_at`, and long-lived activities
(control-plane sweeps, probes, failure injection) are ordinary simpy processes on the same
environment.

Simulated time is in microseconds (us) throughout.
"""

from __future__ import annotations

from collections.abc import Callable
from heapq import heappop, heappush
from itertools import count
from typing import Any

import simpy
from simpy.core import EmptySchedule, Infinity, StopSimulation
from simpy.events import NORMAL, URGENT, EventPriority

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
    ok = True

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
    ok = True

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
    ok = True

    def __init__(self) -> None:
        self.callbacks: list = []


class RackEnvironment(simpy.Environment):
    """A simpy environment with its own heap and clock, a tighter run loop and hot-path
    scheduling helpers.

    ``now`` is a plain attribute here (simpy's is a read-only property): the hot path reads
    it on every packet. Heap entries are simpy's ``(time, priority, sequence, event)``, in
    simpy's order.
    """

    now: float = 0.0  # shadows simpy's read-only property: instances hold the clock

    def __init__(self, initial_time: float = 0.0) -> None:
        super().__init__(initial_time)
        self.now = initial_time
        self.heap: list[tuple[float, EventPriority, int, Any]] = []
        self.sequence = count()

    def schedule(self, event: Any, priority: EventPriority = NORMAL,
                 delay: float = 0) -> None:
        """Schedule ``event`` with ``priority`` after ``delay`` (simpy's member)."""
        heappush(self.heap, (self.now + delay, priority, next(self.sequence), event))

    def peek(self) -> float:
        """The time of the next scheduled event, ``Infinity`` if none (simpy's member)."""
        return self.heap[0][0] if self.heap else Infinity

    def step(self) -> None:
        """Process the next event; :class:`simpy.core.EmptySchedule` if there is none
        (simpy's member, with simpy's semantics)."""
        try:
            self.now, _, _, event = heappop(self.heap)
        except IndexError:
            raise EmptySchedule from None
        callbacks, event.callbacks = event.callbacks, None
        try:
            for callback in callbacks:
                callback(event)
        except StopSimulation:
            event.callbacks = callbacks[callbacks.index(callback) + 1:]
            self.schedule(event, EventPriority(-1))
            raise
        if not event.ok and not event.defused:
            _crash(event)

    def deliver(self, event: Any, handlers: list, delay_us: float) -> None:
        """Make ``event`` call ``handlers`` after ``delay_us`` (>= 0)."""
        event.callbacks = handlers
        heappush(self.heap, (self.now + delay_us, NORMAL, next(self.sequence), event))

    def deliver_at_function(self) -> Callable[[Any, list, float], None]:
        """``deliver_at(event, handlers, at_us)``: like :meth:`deliver` with an absolute
        time (>= now), as a closure over the heap for the hottest call sites."""
        queue = self.heap
        sequence = self.sequence

        def deliver_at(event: Any, handlers: list, at_us: float) -> None:
            event.callbacks = handlers
            heappush(queue, (at_us, NORMAL, next(sequence), event))

        return deliver_at

    def run_until(self, until_us: float) -> None:
        """Process every event scheduled before ``until_us``, then set the clock to it."""
        if until_us <= self.now:
            raise ValueError(f"until ({until_us}) must be after the current time ({self.now})")
        stop = _Stop()
        queue = self.heap
        heappush(queue, (until_us, URGENT, next(self.sequence), stop))
        while queue:
            self.now, _, _, event = heappop(queue)
            if event is stop:
                return
            callbacks = event.callbacks
            event.callbacks = None
            for callback in callbacks:
                callback(event)
            if not event.ok and not event.defused:
                _crash(event)
        self.now = until_us

    @property
    def events_scheduled(self) -> int:
        """Events put on the heap so far (numbered in order; this takes a number)."""
        return next(self.sequence)


def _crash(event: Any) -> None:
    """A failed event nobody defused ends the run with a copy of its exception (as simpy
    does)."""
    failure = event.value
    exc = type(failure)(*failure.args)
    exc.__cause__ = failure
    raise exc


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
