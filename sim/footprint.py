"""What a simulation (or a generated trace) will allocate, estimated from its config alone.

The sizes are those of the arrays the engines allocate per client, per lock and per slot,
with their shapes taken from the engines' own constants, so that ``netlock config check``,
``sim``, ``sweep`` and ``trace gen`` refuse a config that cannot fit in memory
(:func:`netlock.memory.check_fits`) before any of it is allocated:

- per client, fast engine (:func:`sim.fast.rack_build.assemble`): the client rows (``ci``,
  ``cf``), its held and current locks, its next ``txn_batch`` transactions (``tx_*``), and
  its share of the request pool, event heap, hop delays, lock-server queues and recorder
  rows, all sized as multiples of the clients' most locks in flight (a timed trace replay
  adds each batched transaction's start and hold, in either engine);
- per client, simpy engine (:mod:`sim.clients`): its next :data:`sim.core.rows.TXN_BATCH`
  transactions plus the Python objects of a client (its process, random generator and
  machine), measured at about 20 KB;
- per lock of the microbenchmark: its popularity and the plan's columns over every lock it
  can draw (:func:`sim.core.allocation.every_lock`, about 13 eight-byte columns), plus the Zipf
  sampler's cumulative distribution (two eight-byte columns while it is built);
- per switch slot: the data plane's register arrays (:mod:`netlock.dataplane.registers`).

These are the arrays that stand for the whole run: what a run records (its granted requests,
its warm-up trace) grows with simulated time and comes on top, so the check refuses the runs
that could not even start, not every run that will not finish.
"""

from __future__ import annotations

from netlock.config import Config
from netlock.config.derived import most_locks_per_txn
from netlock.dataplane.registers import N_LOCK_COLS, N_OUT_COLS, N_REGION_COLS, N_SLOT_COLS
from netlock.lockserver.server_state import N_LK, N_NODE, N_Q
from netlock.memory import Need
from sim.core.rows import TXN_BATCH, TXN_DTYPE, USE_DTYPE
from sim.fast.state import N_CF, N_CI, N_RF, N_RI, txn_batch

WORD = 8
SIMPY_CLIENT_OBJECT_BYTES = 20_000
"""A simpy client's Python objects (process, generator frames, random generator, machine)."""
MICRO_LOCK_BYTES = 13 * WORD
ZIPF_LOCK_BYTES = 2 * WORD
SERVER_BYTES = 57_000
"""A simpy lock server's Python objects (its lock-server state, links and cores), measured
with tracemalloc over 1,000 ``sim.managers.server.manager.Server`` of 8 cores."""
TIMESERIES_BIN_BYTES = 100
"""One bin of one tenant's throughput series (:func:`sim.core.metrics.timeseries`): its
edge, two histogram counts and four columns, held twice while concatenated."""
TRACE_REQUEST_BYTES = 150
"""A generated trace's six columns (41 bytes a request), held about three times over while
they are drawn, cut to length and sorted (:func:`sim.workloads.tracegen.generate_trace`)."""


def txn_locks(config: Config) -> int:
    """The most locks one transaction takes, from the config (trace workloads: 1; their
    transactions are bounded by the trace file)."""
    return most_locks_per_txn(config) or 1


def fast_client_bytes(longest: int, priorities: int) -> int:
    """Bytes the fast engine allocates per client whose transactions take up to ``longest``
    locks (the shapes of :func:`sim.fast.rack_build.assemble`)."""
    batch = txn_batch(longest)
    rows = (N_CI + N_CF + 3 * longest) * WORD + batch * (longest * (WORD + 1) + 4)
    in_flight = longest + 2
    pool = 8 * in_flight * ((N_RI + N_RF + 1) * WORD + 7 * WORD)
    hops = 32 * in_flight * WORD
    server = (4 * in_flight * (N_LK + priorities * (3 * N_Q + 2)) * WORD
              + 8 * in_flight * N_NODE * WORD)
    records = (longest + 1) * (USE_DTYPE.itemsize + TXN_DTYPE.itemsize)
    return rows + pool + hops + server + records


def simpy_client_bytes(longest: int) -> int:
    """Bytes the simpy engine allocates per client: its batch of transactions (lock ids and
    modes, offsets, client ids) and its Python objects."""
    return TXN_BATCH * (longest * (WORD + 1) + 2 * WORD) + SIMPY_CLIENT_OBJECT_BYTES


def slot_bytes(priorities: int) -> int:
    """The data plane's bytes per switch slot (its lock, region, slot and output rows)."""
    return (N_LOCK_COLS + priorities * N_REGION_COLS + N_SLOT_COLS + 2 * N_OUT_COLS) * WORD


def workload_needs(config: Config) -> list[Need]:
    """The workload generator's own arrays (the Zipf sampler's, per lock)."""
    wl = config.workload
    if wl.kind == "micro" and wl.zipf > 0:
        return [Need(f"workload.locks={wl.locks}", "the Zipf sampler",
                     wl.locks * ZIPF_LOCK_BYTES)]
    return []


def run_needs(config: Config, engine: str | None = None) -> list[Need]:
    """What simulating ``config`` on ``engine`` (default: its ``sim.engine``) allocates."""
    engine = engine or config.sim.engine
    wl, geometry = config.workload, config.geometry
    longest = txn_locks(config)
    per_client = (fast_client_bytes(longest, geometry.priorities) if engine == "fast"
                  else simpy_client_bytes(longest))
    if wl.timed_replay:
        per_client += 2 * WORD * (txn_batch(longest) if engine == "fast" else TXN_BATCH)
    slots = geometry.total_slots
    needs = [Need(f"workload.clients={wl.clients}", f"client state ({engine} engine)",
                  wl.clients * per_client),
             Need(f"switch.arrays ({slots} slots)", "the switch's slot registers",
                  slots * slot_bytes(geometry.priorities)),
             *workload_needs(config)]
    servers = config.servers
    needs.append(Need(f"servers.count={servers.count}", "the lock servers' state",
                      servers.count * (SERVER_BYTES + servers.cores * WORD)))
    if servers.count:
        needs.append(Need(f"servers.cores={servers.cores}", "the lock servers' cores",
                          servers.count * servers.cores * 2 * WORD))
    bins = config.sim.end_s / config.sim.timeseries_bin_s
    needs.append(Need(f"sim.timeseries_bin_s={config.sim.timeseries_bin_s:g}",
                      f"{bins:.3g} bins of the throughput series",
                      bins * max(len(config.tenants), 1) * TIMESERIES_BIN_BYTES))
    if wl.kind == "micro":
        needs.append(Need(f"workload.locks={wl.locks}", "the per-lock popularity and plan "
                          "columns", wl.locks * MICRO_LOCK_BYTES))
    return needs


def trace_needs(config: Config, requests: int) -> list[Need]:
    """What ``netlock trace gen`` allocates for ``requests`` rows of ``config``'s workload."""
    return [Need(f"--requests={requests}", "the trace's columns",
                 requests * TRACE_REQUEST_BYTES),
            Need(f"workload.clients={config.workload.clients}", "the clients' clocks",
                 config.workload.clients * 10 * WORD),
            *workload_needs(config)]
