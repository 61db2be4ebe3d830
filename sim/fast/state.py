"""The fast engine's state: every array of one rack, their named columns, and their growth.

One :class:`RackArrays` (a named tuple of numpy arrays, passed whole to compiled code) holds:

- the switch: the data plane's arrays (:mod:`netlock.dataplane.registers`), its lock table (an
  array for the lowest lock ids, a hash map above), its pipeline's busy-until time and drop
  counters;
- the lock servers: :class:`netlock.lockserver.server_state.ServerState`, each server's
  request-path rows (:mod:`netlock.lockserver.request_path`: ``srv_f[s]``, whose first
  columns are its counters, then the server's links; ``srv_cores[s, core]``, a core's
  busy-until time and TX burst), the packets waiting in each core's TX burst
  (``tx_buf[s, core, i]`` = (TX_GRANT, request row) or (TX_PUSH, wire id)), and the
  partition of lock ids over servers;
- requests in flight (``ri``/``rf`` rows, a free-list pool): a request's id ``rid`` is
  ``generation * 2**RID_BITS + row``, unique in a run and mapped back to its row in O(1);
  a copy the network makes is a row of its own carrying the original's id on the wire
  (``RI_TXN``), chained from the original's row, which stays taken while copies live;
- clients (``ci``/``cf`` rows), the locks they hold and their transactions, drawn in
  batches from the workload (``tx_*``; ``tx_start``/``tx_hold``: a timed trace replay's
  earliest start and hold per transaction, :mod:`sim.workloads.replay`, one unused column
  otherwise);
- the network's pre-drawn hop delays (negative = lost) and faults (``faults[k]``: copy
  flag, extra delay of a held-back packet; :class:`sim.network.Faults`), the event heap,
  the recorder's rows (records of :data:`sim.core.metrics.USE_DTYPE`,
  :data:`sim.core.metrics.TXN_DTYPE` and :data:`sim.core.metrics.HANDBACK_DTYPE`, written in
  place of the result: no row is copied), and
  scalar counters ``cnt``.

Times are us (float64). Compiled code never allocates: before each event the loop checks
that every growable array has room for the worst event, and returns to Python
(:mod:`sim.fast.simulate_fast`) to refill or grow when one does not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from netlock.lockserver.request_path import N_SV
from netlock.lockserver.server_state import ServerState
from netlock.packets import ACQUIRE as ACQUIRE
from netlock.packets import RELEASE as RELEASE
from netlock.txn_context import (
    N_X,
    N_XF,
    X_ABORTS,
    X_ATTEMPT,
    X_NHELD,
    X_NLOCKS,
    X_PENDING,
    X_SENT,
    XF_DEADLINE,
    XF_NEXT_START,
    XF_TIMER_AT,
    XF_TXN_START,
    XF_WINDOW,
)

if TYPE_CHECKING:
    from sim.fast.heap import Heap

RID_BITS = 24
RID_MASK = (1 << RID_BITS) - 1

# requests: ri[h, :] int64, rf[h, :] float64
RI_RID, RI_CLIENT, RI_ATTEMPT, RI_LOCK, RI_MODE, RI_OP, RI_SOURCE, RI_FOLLOW = range(8)
RI_WHERE, RI_GEN, RI_SLOT = 8, 9, 10  # RI_SLOT: the switch queue slot of its grant, or -1
RI_TXN, RI_COPY, RI_REFS = 11, 12, 13  # wire id, next copy, live rows of an original's chain
N_RI = 14
RF_CREATED, RF_GRANT, RF_LEASE_END = range(3)
N_RF = 3
IN_WAITING = 1  # queued in the switch, ungranted (the switch node's ``waiting``)
IN_PENDING = 2  # forwarded to a lock server (the manager's ``pending``)
IN_DEAD = 4  # an original let go while copies of it live: kept for their lookups

# clients: ci[c, :] int64, cf[c, :] float64; the first columns are the transaction
# context's state row (netlock.txn_context), which its kernels take as r.ci[c], r.cf[c]
CI_ATTEMPT, CI_NLOCKS, CI_PENDING, CI_NHELD, CI_ABORTS = (X_ATTEMPT, X_NLOCKS, X_PENDING,
                                                          X_NHELD, X_ABORTS)
CI_SENT = X_SENT  # open loop: packets sent in the current send window
CI_TENANT, CI_PRIORITY, CI_TX_NEXT, CI_TX_N, CI_TX_OFF, CI_NEED = range(N_X, N_X + 6)
# grant arrivals of the client on the heap; the heap key and sequence number of the last grant
# folded (netlock.txn_context.FOLD_NOW: sim.fast.client_rows.receive), its arrival unscheduled
CI_GRANT_EVENTS, CI_FOLD_KEY, CI_FOLD_SEQ = range(N_X + 6, N_X + 9)
N_CI = N_X + 9
CF_TXN_START, CF_NEXT_START, CF_DEADLINE, CF_TIMER_AT = (XF_TXN_START, XF_NEXT_START,
                                                         XF_DEADLINE, XF_TIMER_AT)
CF_WINDOW = XF_WINDOW  # open loop: start of the current send window (us)
CF_FREE_AT, CF_GAP, CF_UP_LAST, CF_DOWN_LAST, CF_START = range(N_XF, N_XF + 5)
CF_HOLD = N_XF + 5  # a timed trace replay: the current transaction's hold after its last grant
N_CF = N_XF + 6

# lock servers: srv_f[s, :]; the first columns are the request path's row
# (netlock.lockserver.request_path), which its steps take as r.srv_f[s]
SF_UP_LAST, SF_DOWN_LAST = range(N_SV, N_SV + 2)
N_SF = N_SV + 2

# counters: cnt[:]
(K_FREE, K_HOP, K_USES, K_TXNS, K_RETRIES, K_STALE, K_LOST, K_SERVER_GRANTS,
 K_SERVER_DROPS, K_SWITCH_EXPIRED, K_NEED_TXN, K_BAD_FREE) = range(12)
K_FAULT, K_COPIES, K_REORDERED, K_IGNORED, K_HANDBACKS = 12, 13, 14, 15, 16
K_OL_SENT, K_OL_DROPPED = 17, 18  # open loop: acquires sent before P_OL_CUTOFF, RX-dropped
K_FOLDED = 19  # grant arrivals handled without an event (sim.fast.client_rows.receive)
N_CNT = 20

# parameters: pf[:] float64, pi[:] int64
(P_HALF_RTT, P_PASS_US, P_PASS_GAP, P_THINK, P_LEASE_CLIENT, P_TIMEOUT, P_GAP_PER_LOCK,
 P_SWEEP, P_QUOTA_WINDOW, P_SERVICE_US, P_BURST, P_BACKOFF_SLOT, P_TX, P_RX) = range(14)
P_TX_DRAIN = 14  # a server core's TX drain period (us)
P_CL_DRAIN = 15  # open loop: a receiving core's TX drain period (us)
P_OL_CUTOFF = 16  # open loop: sim.core.run_spec.unanswered_cutoff_us (us; -inf closed)
N_PF = 17
(I_LOSSY, I_FETCH_HOPS, I_EXTRA_HOPS, I_SERVERS, I_LEASE_MGR, I_INSTANT, I_FAST,
 I_CORES, I_ROOM_HOPS, I_ROOM_REQUESTS, I_ROOM_ROWS, I_ROOM_LOCKS, I_SEED,
 I_BACKOFF_SLOTS, I_FAULTY) = range(15)
I_TX_BURST = 15  # packets in a server core's TX burst
I_TIMED = 16  # a timed trace replay: tx_start / tx_hold hold each transaction's timing
I_OPEN_LIMIT, I_SKIP_HELD = 17, 18  # open loop: sends per ms (0: closed), skip rule
I_RX_RING = 19  # packets a server core's RX rings hold (0: no bound)
I_CL_CORES, I_CL_BURST = 20, 21  # open loop: a context's receiving cores, TX burst
N_PI = 22

# events
(E_BURST, E_GRANT, E_BEGIN, E_TIMER, E_COMMIT, E_SERVER, E_NOTIFY, E_PUSH, E_DEFER,
 E_RESEND, E_SWEEP, E_QUOTA, E_RETRY, E_DRAIN) = range(14)
E_OPEN = 14  # an open-loop context's send slot (b: trace entries skipped so far)
E_CL_DRAIN = 15  # an open-loop context's receiving core drains (a: c * cores + core, b: seq)

SWITCH, SERVER = 0, 1


def txn_batch(longest: int) -> int:
    """Transactions drawn ahead per client (``tx_*`` rows) when each takes up to ``longest``
    locks."""
    return 4096 if longest == 1 else 512


class RackArrays(NamedTuple):
    """All state of one run (see the module docstring)."""

    sw_locks: np.ndarray
    sw_regions: np.ndarray
    sw_slots: np.ndarray
    sw_tenants: np.ndarray
    sw_ctl: np.ndarray
    sw_out: np.ndarray
    table_dense: np.ndarray
    table_keys: np.ndarray
    table_values: np.ndarray
    sw_f: np.ndarray
    sw_drops: np.ndarray
    srv: ServerState
    srv_f: np.ndarray
    srv_cores: np.ndarray
    tx_buf: np.ndarray
    part_his: np.ndarray
    part_owners: np.ndarray
    ri: np.ndarray
    rf: np.ndarray
    free: np.ndarray
    ci: np.ndarray
    cf: np.ndarray
    held: np.ndarray
    held_txn: np.ndarray
    cur_lock: np.ndarray
    cur_mode: np.ndarray
    tx_lock: np.ndarray
    tx_mode: np.ndarray
    tx_size: np.ndarray
    tx_start: np.ndarray
    tx_hold: np.ndarray
    hops: np.ndarray
    faults: np.ndarray
    heap: Heap
    uses: np.ndarray
    txns: np.ndarray
    handbacks: np.ndarray
    burst: np.ndarray
    busy: np.ndarray
    cl_tx: np.ndarray
    cl_tx_buf: np.ndarray
    pf: np.ndarray
    pi: np.ndarray
    cnt: np.ndarray


def new_pool(capacity: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``ri``, ``rf`` and the free stack of an empty request pool."""
    ri = np.zeros((capacity, N_RI), dtype=np.int64)
    ri[:, RI_RID] = -1
    return ri, np.zeros((capacity, N_RF)), np.arange(capacity, dtype=np.int64)[::-1].copy()


def grown_pool(rack: RackArrays, room: int) -> RackArrays:
    """``rack``, or a copy whose request pool has at least ``room`` free rows."""
    free_count = int(rack.cnt[K_FREE])
    if free_count >= room:
        return rack
    old = len(rack.ri)
    capacity = max(2 * old, old + room)
    if capacity > RID_MASK + 1:
        raise RuntimeError(f"fast engine: more than {RID_MASK + 1} requests in flight")
    ri, rf, _ = new_pool(capacity)
    ri[:old] = rack.ri
    rf[:old] = rack.rf
    free = np.empty(capacity, dtype=np.int64)
    free[:free_count] = rack.free[:free_count]
    added = np.arange(capacity - 1, old - 1, -1, dtype=np.int64)
    free[free_count:free_count + len(added)] = added
    rack.cnt[K_FREE] = free_count + len(added)
    return rack._replace(ri=ri, rf=rf, free=free)


