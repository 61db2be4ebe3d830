"""A closed-loop transaction context's life cycle, written once: kernels over its state row.

:mod:`netlock.client` says what the authors' client does; this module is that behaviour as
steps both simulation engines call, each over the context's state: an int row ``ci``
(columns ``X_*``) and a float row ``cf`` (columns ``XF_*``; times in us). The fast engine
passes rows of its client arrays (its columns start with these), the simpy engine two
Python lists per context. Each step changes the row and returns what the engine must do
(an action code, a time); the engine keeps its own request records, sends the packets,
records uses and schedules events.

The life cycle:

- :func:`start_attempt`, for a new transaction or a retry: its acquires all leave at once;
  the attempt's deadline is set, and the context's one timer armed if none is pending;
- a grant that arrives: :func:`grant_action` (use, ignore or hand back;
  :func:`netlock.client.grant_verdict`), then for a used one :func:`take_grant`: the lease
  already over aborts the attempt; the last grant ends the wait, and the context commits at
  once (``instant``: no think time nor data read) or after its hold;
- :func:`end_txn` at commit (only for the current attempt, :func:`is_current`): a lock whose
  lease ended while held gives the attempt up; otherwise the next transaction starts now or
  when the rate cap or a timed replay lets it;
- :func:`timer_fires`: an attempt not fully granted by its deadline is given up;
- :func:`give_up`: one retry counted per lock of the attempt, later grants of it are stale,
  the same transaction is sent again after a back-off (:func:`netlock.client.backoff_slots`,
  or a lock manager's own);
- :func:`hands_back`: a grant handed back is released if its lease still runs.

An open-loop context (``clients.send_limit_per_ms`` > 0) sends one-lock requests on a
schedule instead: :func:`next_send` (:func:`netlock.client.open_loop_send_at`, its send
window in the row) and :func:`open_grant` (each grant recorded and released at once).

Every function is :func:`jitable`: compiled into the fast engine's loop, plain Python in
the simpy engine (cheaper there than a call into compiled code).
"""

from __future__ import annotations

import math
from typing import Any

from netlock.client import backoff_slots, grant_verdict, open_loop_send_at
from netlock.dataplane._kernel_jit import jitable

X_ATTEMPT, X_NLOCKS, X_PENDING, X_NHELD, X_ABORTS, X_SENT = range(6)
"""``ci`` columns: the current attempt's number (a grant of another attempt is stale), the
transaction's locks (0 while none is under way), its grants still awaited, the grants it
holds, the attempts given up so far (the back-off's draw index), and (open loop) the
packets sent in the current send window."""
N_X = 6
XF_TXN_START, XF_NEXT_START, XF_DEADLINE, XF_TIMER_AT, XF_WINDOW = range(5)
"""``cf`` columns (us): when the transaction started, the earliest the next may start
(the rate cap), the attempt's deadline (``inf`` when it waits for nothing), when the
pending timer fires (``inf``: none pending), and (open loop) the start of the current send
window."""
N_XF = 5

LEASE_OVER, MORE, COMMIT_NOW, COMMIT_LATER = range(4)
""":func:`take_grant`'s answers: abort (the lease ended before the grant arrived), wait for
more grants, commit at once, or commit after the hold."""
GIVE_UP, BEGIN_NOW, BEGIN_LATER = range(3)
""":func:`end_txn`'s answers."""
TIMER_IDLE, TIMER_ABORT, TIMER_REARM = range(3)
""":func:`timer_fires`'s answers: nothing, give the attempt up, or set the timer again for
``cf[XF_TIMER_AT]``."""
AS_EVENT, TAKE_NOW, SETTLE_NOW, FOLD_NOW = range(4)
""":func:`on_arrival`'s answers."""
OPEN_IGNORE, OPEN_EXPIRED, OPEN_RELEASE = range(3)
""":func:`open_grant`'s answers."""

INF = math.inf


def new_row(window_us: float = 0.0) -> tuple[list[int], list[float]]:
    """A context's state before its first transaction, as Python lists (the simpy
    engine's); ``window_us``: an open-loop context's first send window starts one window
    after it."""
    return [0] * N_X, [0.0, 0.0, INF, INF, window_us]


@jitable
def start_attempt(ci: Any, cf: Any, now: float, timeout_us: float, new_locks: int,
                  gap_per_lock_us: float) -> bool:
    """An attempt starts at ``now``: the first of a new transaction of ``new_locks`` locks,
    or (``new_locks`` < 0) a retry of the current one. It awaits a grant per lock until
    ``timeout_us`` later (:func:`netlock.client.attempt_timeout_us`, or a lock manager's
    own). Returns whether to arm the timer for ``cf[XF_TIMER_AT]`` (a context has one timer
    pending at most; a pending one moves itself to a later deadline).

    A new transaction starts its clock; with a rate cap (``gap_per_lock_us`` > 0: one
    acquire per gap on average) the next one may start no earlier than one gap per lock
    after this one (or after the last cap). One function for both, rather than a step per
    transaction and one per attempt: the simpy engine calls it once per request."""
    if new_locks >= 0:
        ci[X_NLOCKS] = new_locks
        cf[XF_TXN_START] = now
        if gap_per_lock_us > 0:
            cf[XF_NEXT_START] = max(cf[XF_NEXT_START], now) + gap_per_lock_us * new_locks
    ci[X_ATTEMPT] += 1
    ci[X_PENDING] = ci[X_NLOCKS]
    ci[X_NHELD] = 0
    deadline = now + timeout_us
    cf[XF_DEADLINE] = deadline
    if cf[XF_TIMER_AT] == INF:
        cf[XF_TIMER_AT] = deadline
        return True
    return False


@jitable
def is_current(ci: Any, attempt: int) -> bool:
    """Whether an event of attempt ``attempt`` (a commit, a retry, a deferred request)
    still concerns the context: an attempt given up or committed since makes it moot."""
    return attempt == ci[X_ATTEMPT]


@jitable
def on_arrival(ci: Any, cf: Any, attempt: int, acquire: bool, t: float, lease_end: float,
               instant: bool, settle: bool) -> int:
    """When a grant of attempt ``attempt`` that reaches the context at ``t`` is handled:
    ``AS_EVENT`` (at ``t``, after whatever the engine has scheduled before), or at once for
    ``t``, which is exact where nothing the context does can come between (the attempt's
    deadline comes after ``t``, so no timer gives it up first):

    - the last grant the current attempt awaits: ``TAKE_NOW`` when the context commits at
      once (``instant``), ``SETTLE_NOW`` when besides nothing is held, its lease runs and
      the next transaction starts at once (``settle``: no rate cap): then the engine commits
      the one lock and starts the next transaction (:func:`take_grant` and :func:`end_txn`
      would answer ``COMMIT_NOW`` and ``BEGIN_NOW``). An engine that folds grants handles a
      ``TAKE_NOW`` at once only once every grant it folded has reached the context by then;
    - ``FOLD_NOW``, a grant before the last, within its lease: at ``t`` it would only join
      the held locks (:func:`take_grant` answers ``MORE``), so an engine that delivers a
      context's grants in the order it handles them, with none of the context's still to
      deliver, may add it now, dated ``t``, without scheduling its arrival (the fast
      engine: an event fewer per lock of a transaction but its last); otherwise an event.
    """
    if not (acquire and attempt == ci[X_ATTEMPT] and ci[X_PENDING] > 0
            and t < cf[XF_DEADLINE]):
        return AS_EVENT
    if ci[X_PENDING] > 1:
        return FOLD_NOW if t < lease_end else AS_EVENT
    if not instant:
        return AS_EVENT
    if settle and ci[X_NHELD] == 0 and t < lease_end:
        return SETTLE_NOW
    return TAKE_NOW


@jitable
def awaits(ci: Any, attempt: int, acquire: bool) -> bool:
    """Whether the context awaits an answer to a request of attempt ``attempt``
    (``acquire``: the packet is still the acquire, not one the context turned into a
    release): the current attempt, still short of grants."""
    return attempt == ci[X_ATTEMPT] and acquire and ci[X_PENDING] > 0


@jitable
def grant_action(ci: Any, attempt: int, acquire: bool, held_slot: int, slot: int) -> int:
    """What the context does with a grant from ``slot`` of a request of attempt
    ``attempt``: :func:`netlock.client.grant_verdict`, waiting if it :func:`awaits` it.
    ``held_slot``: the slot of the grant of the same request the context holds
    (:data:`netlock.client.NOT_HELD` if none)."""
    return grant_verdict(awaits(ci, attempt, acquire), held_slot, slot)


@jitable
def take_grant(ci: Any, cf: Any, now: float, lease_end: float, instant: bool) -> int:
    """A grant the context uses arrives at ``now``; its lease ends at ``lease_end``. The
    engine appends it to the held locks unless the answer is ``LEASE_OVER`` (then it
    aborts the attempt: :func:`give_up`)."""
    if now >= lease_end:
        return LEASE_OVER
    ci[X_NHELD] += 1
    ci[X_PENDING] -= 1
    if ci[X_PENDING]:
        return MORE
    cf[XF_DEADLINE] = INF
    return COMMIT_NOW if instant else COMMIT_LATER


@jitable
def lease_runs(now: float, lease_end: float) -> bool:
    """Whether a held lock is still leased at ``now``: the context releases it then;
    otherwise its use ended with the lease and no release is sent."""
    return lease_end > now


@jitable
def end_txn(ci: Any, cf: Any, all_leased: bool, now: float,
            txn_ready_us: float) -> tuple[int, float]:
    """The current attempt commits at ``now`` (its held locks are released, the engine
    records their uses). A lock whose lease ended meanwhile (``all_leased`` false) makes
    it give up instead (``GIVE_UP``: :func:`give_up`). Otherwise the next transaction starts
    at once (``BEGIN_NOW``) or at the returned time (``BEGIN_LATER``: the rate cap, or a
    timed replay's next start ``txn_ready_us``; never when that is ``inf``). The engine
    records the committed transaction (of ``ci[X_NLOCKS]`` locks) before this call: a later
    start leaves the context with no transaction under way."""
    ci[X_NHELD] = 0
    if not all_leased:
        return GIVE_UP, now
    ready = max(cf[XF_NEXT_START], txn_ready_us)
    if ready > now:
        ci[X_NLOCKS] = 0
        return BEGIN_LATER, ready
    return BEGIN_NOW, now


@jitable
def give_up(ci: Any, cf: Any, now: float, seed: int, client: int, slots: int,
            slot_us: float, own_backoff_us: float) -> tuple[int, float]:
    """The current attempt is given up at ``now`` (the engine releases what it holds).
    Returns the retries it counts (one per lock of the transaction) and how long after
    ``now`` the retry starts (us): :func:`netlock.client.backoff_slots` slots of ``slot_us``,
    or ``own_backoff_us`` when that is >= 0 (a lock manager's own back-off). Grants of the
    attempt that arrive later are stale."""
    retries = ci[X_NLOCKS]
    ci[X_ATTEMPT] += 1
    ci[X_PENDING] = 0
    ci[X_NHELD] = 0
    cf[XF_DEADLINE] = INF
    if own_backoff_us >= 0:
        wait = own_backoff_us
    else:
        wait = backoff_slots(seed, client, ci[X_ABORTS], slots) * slot_us
    ci[X_ABORTS] += 1
    return retries, wait


@jitable
def timer_fires(ci: Any, cf: Any, now: float) -> int:
    """The context's timer fires at ``now``: ``TIMER_ABORT`` when the attempt still awaits
    grants past its deadline; ``TIMER_REARM`` (for ``cf[XF_TIMER_AT]``) when a later
    deadline was set meanwhile."""
    cf[XF_TIMER_AT] = INF
    if ci[X_PENDING] and now >= cf[XF_DEADLINE]:
        return TIMER_ABORT
    if cf[XF_DEADLINE] < INF:
        cf[XF_TIMER_AT] = cf[XF_DEADLINE]
        return TIMER_REARM
    return TIMER_IDLE


@jitable
def hands_back(acquire: bool, now: float, lease_end: float) -> bool:
    """Whether a grant the context hands back (:data:`netlock.client.HAND_BACK`) is released:
    only an acquire's grant whose lease still runs (a late one is cleared by its lease)."""
    return acquire and now < lease_end


@jitable
def next_send(ci: Any, cf: Any, ready_us: float, limit_per_ms: int) -> float:
    """When an open-loop context sends its next request, ready at ``ready_us`` (its last
    send plus its NIC gap): :func:`netlock.client.open_loop_send_at`, which moves the row's
    send window and count."""
    t, window, sent = open_loop_send_at(ready_us, cf[XF_WINDOW], ci[X_SENT], limit_per_ms)
    cf[XF_WINDOW] = window
    ci[X_SENT] = sent
    return t


@jitable
def open_grant(acquire: bool, now: float, lease_end: float) -> int:
    """What an open-loop context does with a grant arriving at ``now``: ``OPEN_IGNORE``
    one that is not an acquire's (a copy of a request it already released); otherwise it
    records the use (up to the lease's end if that came first) and releases the lock at
    once (``OPEN_RELEASE``), unless the lease already ended (``OPEN_EXPIRED``: the lock
    manager clears it; ``client.c`` lines 915-921)."""
    if not acquire:
        return OPEN_IGNORE
    return OPEN_RELEASE if now < lease_end else OPEN_EXPIRED
