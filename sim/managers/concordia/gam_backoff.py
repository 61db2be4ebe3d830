"""The back-off of Concordia's transactions: GAM's transaction engine, which the seed ported
(FAST'21, section 7.4: "We port the transaction engine of GAM into CONCORDIA; this engine
implements two-phase locking ... and non-waiting scheme").

In ``ooibc88/gam`` ``database/txn/TransactionExecutor.h`` (``ProcessQueryThread``, built
with ``-DBACKOFF`` by ``database/tpcc/Makefile`` line 6) a worker keeps one shift count
``s``: a transaction's first abort raises it by one (at most 63), and every abort of that
transaction then spins ``100 * 2**s`` ``_mm_pause`` instructions before the retry; a
transaction that commits without aborting halves ``s``. The wait does not grow with a
transaction's own retries, only across transactions that abort.
"""

from __future__ import annotations

from typing import Any

MAX_SHIFTS = 63
"""``if (backoff_shifts < 63) ++backoff_shifts;``"""


class GamBackoff:
    """Per client: the transaction last seen (its start time, us), whether it aborted, and
    the shift count."""

    def __init__(self, spins: int, pause_us: float) -> None:
        self.spins = spins
        self.pause_us = pause_us
        self.state: dict[int, list[Any]] = {}

    def saw_request(self, client: Any) -> None:
        """A lock request of ``client``: a new transaction after one that committed
        without aborting halves the shift count."""
        state = self.state.get(client.cid)
        if state is None:
            self.state[client.cid] = [client.txn_start, False, 0]
        elif state[0] != client.txn_start:
            if not state[1]:
                state[2] >>= 1
            state[0], state[1] = client.txn_start, False

    def backoff_us(self, client: Any) -> float:
        """The spin before ``client`` retries its aborted transaction (us)."""
        self.saw_request(client)
        state = self.state[client.cid]
        if not state[1]:
            state[1] = True
            state[2] = min(state[2] + 1, MAX_SHIFTS)
        return self.spins * 2.0 ** state[2] * self.pause_us
