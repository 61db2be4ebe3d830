"""The configuration schema: one frozen, validated :class:`Config` per run.

These dataclasses are the reference for every config key: the type, the default, the
allowed range and the help text (with units) are declared here and nowhere else.
``netlock config keys`` prints them. Defaults describe the paper's testbed (design notes,
"Testbed parameters"); the loader (:mod:`netlock.config.load`) checks types, ranges and
unknown keys, and :mod:`netlock.config.cross_field` the rules that tie several keys together.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from netlock.config.managers import Manager
from netlock.config.schema_keys import key
from netlock.geometry import RegisterArray, SwitchGeometry

DATA_READ_HOPS = 4
"""TPC-C transactions read their rows once locked: one round trip to a database server
(client -> switch -> server and back). Microbenchmark and trace replays model locks only."""
PAPER_ARRAY_SIZE = 25_000


@dataclass(frozen=True)
class Testbed:
    """Which testbed the numbers describe."""

    name: str = key("paper", "short name of the testbed profile")
    description: str = key("", "free text: where the numbers come from")


@dataclass(frozen=True)
class SlotArray:
    """One register array holding shared-queue slots."""

    stage: int = field(metadata={"help": "pipeline stage holding the array", "min": 0})
    size: int = field(metadata={"help": "slots in the array (20 B each on Tofino)", "min": 1})


def _paper_arrays() -> tuple[SlotArray, ...]:
    return tuple(SlotArray(stage=s, size=PAPER_ARRAY_SIZE) for s in range(2, 6))


@dataclass(frozen=True)
class Switch:
    """The lock switch: shared-queue memory, pipeline and processing speed."""

    slots: int = key(100_000, "shared-queue slots the allocation may use (0 = no switch "
                     "slots); at most the register arrays' total", min=0)
    stages: int = key(12, "pipeline stages of the target", min=1)
    priorities: int = key(1, "priority classes; one queue per group of stages, so at most "
                          "the number of distinct stages holding slot arrays", min=1)
    pipes: int = key(4, "independent pipelines (ingress/egress pairs) in the switch", min=1)
    arrays: tuple[SlotArray, ...] = field(
        default_factory=_paper_arrays,
        metadata={"help": "register arrays pooled into the shared queue, list of {stage, size}"})
    pass_us: float = key(0.3, "processing time of one pipeline pass (a resubmit is another), "
                         "us", min=0.0)
    rate_pps: float = key(4.0e9, "packets per second the switch can process", above=0.0)
    quota_action: str = key("drop", "what happens to a request over its tenant's quota",
                            choices=("drop", "defer"))
    quota_window_us: float = key(100.0, "window over which tenant request counters are "
                                 "compared with quotas, us", above=0.0)
    release_check: str = key("owner", "how the switch checks a release: owner (it names its "
                             "grant's queue slot, whose owner must match: duplicated and "
                             "stale releases are dropped) or none (the paper's rule: a shared "
                             "release dequeues the head, whoever holds it)",
                             choices=("owner", "none"))


@dataclass(frozen=True)
class Servers:
    """The lock servers that hold locks not in the switch and buffer overflow."""

    count: int = key(2, "lock servers (0 with switch slots only where no lock's queue can "
                     "overflow: policy.allocation even on a micro workload, at least "
                     "workload.clients slots a lock)", min=0)
    cores: int = key(8, "CPU cores per lock server (RSS spreads requests over them; "
                     "capacity scales with them)", min=1)
    rate_rps: float = key(18.0e6, "lock requests (an acquire with its release) one server "
                          "completes per second with rate_cores cores busy, rps", above=0.0)
    rate_cores: int = key(8, "cores the server had when rate_rps was measured; one core "
                          "completes rate_rps / rate_cores", min=1)
    partition: str = key("hash", "how locks not in the switch are split over servers",
                         choices=("hash", "range"))
    tx_burst: int = key(1, "packets a server core sends in one TX burst: a grant or "
                        "push-back waits until its core's burst fills or the drain timer "
                        "fires (netlock.lockserver.txburst); 1 sends each packet at once",
                        min=1)
    tx_drain_us: float = key(0.0, "period of a server core's TX drain timer, us; 0 sends "
                             "each packet at once", min=0.0)
    rx_ring: int = key(0, "packets a server core's RX rings hold; a request that finds "
                       "them full is dropped (netlock.lockserver.rxring); 0 = no bound", min=0)

    @property
    def packet_us(self) -> float:
        """CPU time one core spends on one packet (us): a lock request is an acquire and
        its release, and each costs the same work (the DPDK server parses, looks the lock
        up and answers either)."""
        return self.rate_cores * 1e6 / (2.0 * self.rate_rps)

    @property
    def capacity_rps(self) -> float:
        """Lock requests one server completes per second with all ``cores`` busy (rps)."""
        return self.rate_rps * self.cores / self.rate_cores


@dataclass(frozen=True)
class Clients:
    """The client machines that run the workload's client processes."""

    machines: int = key(10, "client machines; workload.clients transaction contexts are "
                        "spread over them round-robin", min=1)
    rate_rps: float = key(18.0e6, "lock requests one client machine can generate per "
                          "second, shared by its contexts, rps", above=0.0)
    timeout_us: float = key(400.0, "an attempt of several locks not fully granted this long "
                            "after it started (or two think times, if longer) releases what "
                            "it holds and is retried, us", above=0.0)
    backoff_slot_us: float = key(30.0, "one slot of the random back-off before a retry, us",
                                 min=0.0)
    backoff_slots: int = key(10, "the back-off is uniform over 0 .. backoff_slots - 1 slots",
                             min=1)
    tx_us: float = key(0.0, "client software and NIC time from handing a packet to the NIC "
                       "driver to its leaving the machine, per packet, us", min=0.0)
    rx_us: float = key(0.0, "client NIC and software time from a packet's arrival at the "
                       "machine to the client acting on it, per packet, us", min=0.0)
    send_limit_per_ms: int = key(0, "open loop when > 0 (microbenchmark only): each "
                                 "transaction context sends its next one-lock request "
                                 "without waiting for grants, at most this many per ms "
                                 "(the authors' wpkts_send_limit_ms, netlock.client); "
                                 "0 = closed loop", min=0)
    skip_held: bool = key(False, "open loop: a context skips a request for a lock it "
                          "already has a request on (the authors' SYNCHRONOUS mode)")
    rx_cores: int = key(1, "open loop: receiving cores per client machine; a grant's "
                        "release leaves through its core's TX burst", min=1)
    tx_burst: int = key(1, "open loop: packets a receiving core sends in one TX burst "
                        "(netlock.lockserver.txburst's rule); 1 sends each release at once",
                        min=1)
    tx_drain_us: float = key(0.0, "open loop: period of a receiving core's TX drain timer, "
                             "us; 0 sends each release at once", min=0.0)


@dataclass(frozen=True)
class NetworkConfig:
    """The rack network between clients, switch and lock servers."""

    rtt_us: float = key(5.0, "client-switch-client round trip, us", min=0.0)
    jitter_us: float = key(0.5, "standard deviation of per-packet delay noise, us", min=0.0)
    loss: float = key(0.0, "per-packet loss probability", min=0.0, below=1.0)
    duplicate: float = key(0.0, "per-packet probability that a client<->switch hop delivers "
                           "the packet twice (the copy trails it by one more hop delay); "
                           "none for the RDMA designs (dslr, drtm, rdma-cas) and concordia, "
                           "entered in the client's library and riding reliable connections",
                           min=0.0, below=1.0)
    reorder: float = key(0.0, "per-packet probability that a client<->switch hop holds the "
                         "packet back by an extra delay, so later packets overtake it (not "
                         "for the designs in the client's library, as network.duplicate)",
                         min=0.0, below=1.0)
    reorder_delay_us: float = key(10.0, "mean of the exponential extra delay of a reordered "
                                  "packet, us", above=0.0)
    one_rtt: bool = key(False, "the switch forwards grants to the database server so a "
                        "transaction completes in one round trip")


@dataclass(frozen=True)
class Lease:
    """Leases: how crashed holders, lost packets and deadlocks are recovered."""

    us: float = key(2000.0, "lease length: a holder older than this is cleared, us", above=0.0)
    sweep_us: float = key(500.0, "period at which the control plane polls for expired "
                          "holders, us", above=0.0)


@dataclass(frozen=True)
class Policy:
    """How switch memory is allocated to locks."""

    allocation: str = key("knapsack", "which locks get switch slots: knapsack (Algorithm 3), "
                          "random, or even (every lock of the workload an equal share, as "
                          "the authors' controller sets up the microbenchmarks)",
                          choices=("knapsack", "random", "even"))
    contention: str = key("max", "statistic of measured concurrency used as c_i: the "
                          "maximum or a percentile",
                          choices=("max", "p999", "p99", "p95", "p90", "p75", "p50"))
    coarse_group: int = key(1, "locks merged into one coarse-grained lock for uniform "
                            "workloads (1 = off)", min=1)
    plan: str | None = field(default=None, metadata={
        "help": "plan file made by netlock plan, used instead of planning on the fly from a "
                "warm-up run; relative paths are resolved against the config file",
        "path": True})


MAX_SIM_S = 3600.0
"""The longest simulated span a run may ask for, s: far past what finishes (a simulated
second of the paper's rack is about 10^8 events)."""
MAX_SEED = 2**63 - 1
"""Seeds reach the engines' int64 arrays and numpy's generators."""


@dataclass(frozen=True)
class Sim:
    """The simulation run: time span, seed and engine."""

    duration_s: float = key(0.02, "simulated time measured, after the warm-up, s (at most "
                            "an hour: the engines simulate about a millisecond of a busy "
                            "rack per wall second)", above=0.0, max=MAX_SIM_S)
    warmup_s: float = key(0.002, "simulated time run before the measured duration and "
                          "discarded from the measurements, s", min=0.0, max=MAX_SIM_S)
    seed: int = key(1, "random seed of the run (a 64-bit signed integer, >= 0)", min=0,
                    max=MAX_SEED)
    engine: str = key("simpy", "simulation engine", choices=("simpy", "fast"))
    timeseries_bin_s: float = key(0.001, "width of the throughput-over-time bins, s",
                                  above=0.0)

    @property
    def end_s(self) -> float:
        """Where the run ends, s: the warm-up, then the measured ``duration_s``. Failure
        and tenant start times count from the start of the run, warm-up included."""
        return self.warmup_s + self.duration_s


@dataclass(frozen=True)
class WorkloadConfig:
    """What the clients ask for."""

    kind: str = key("micro", "microbenchmark, TPC-C NewOrder, a recorded trace, or shared "
                    "and node-private data (sharing)",
                    choices=("micro", "tpcc", "trace", "sharing"))
    clients: int = key(10, "client processes issuing transactions (closed loop each)", min=1)
    locks: int = key(5000, "locks the microbenchmark draws from", min=1)
    mode: str = key("X", "lock mode of microbenchmark requests: S, X or mixed",
                    choices=("S", "X", "mixed"))
    shared_fraction: float = key(0.5, "fraction of shared requests when mode is mixed",
                                 min=0.0, max=1.0)
    think_time_us: float = key(0.0, "time a transaction holds its locks after the last "
                               "grant before releasing, us", min=0.0)
    zipf: float = key(0.0, "Zipf exponent of lock popularity (0 = uniform)", min=0.0)
    locks_per_txn: int = key(1, "locks per microbenchmark transaction", min=1)
    sharing_ratio: float = key(0.0, "sharing: fraction of requests on the data all nodes "
                               "share; the rest lock their node's private data",
                               min=0.0, max=1.0)
    shared_locks: int = key(64_000, "sharing: locks (cache blocks) of the shared data; each "
                            "client machine also has workload.locks private ones", min=1)
    generator: str = key("sketch", "TPC-C generator: dslr (DSLR's full mix, the traces the "
                         "authors replay; all clients share workload.warehouses warehouses), "
                         "dslr_uniform (the same transactions on uniform lock ids over 7M, "
                         "the client's TPCC_UNIFORMBENCHMARK) or sketch (NewOrder only, field "
                         "locks, warehouses per machine)",
                         choices=("sketch", "dslr", "dslr_uniform"))
    warehouses: int = key(10, "TPC-C warehouses: per client machine (sketch) or in all "
                          "(dslr)", min=1)
    ol_cnt_min: int = key(5, "fewest order lines (items) per NewOrder", min=1, max=15)
    ol_cnt_max: int = key(15, "most order lines (items) per NewOrder (TPC-C: 5..15)",
                          min=1, max=15)
    insert_locks: str = key("district", "what a TPC-C insert locks: the district's insert "
                            "point (as a 2PL engine's key-range lock), the fresh row, or the "
                            "whole table", choices=("row", "district", "table"))
    trace: str | None = field(default=None, metadata={
        "help": "trace file (CSV or Parquet) when kind is trace; relative paths are "
                "resolved against the config file", "path": True})
    rate_rps: float = key(0.0, "offered load cap per client process, rps (0 = closed "
                          "loop as fast as possible)", min=0.0)
    replay: str = key("timed", "how a trace (kind trace) is replayed: timed (each "
                      "transaction no earlier than its recorded start, holding its locks "
                      "for its recorded hold; the run ends when the trace does) or loop "
                      "(closed loop with think_time_us, starting over at the end)",
                      choices=("timed", "loop"))

    @property
    def timed_replay(self) -> bool:
        """Whether the clients replay a trace's timing (``sim.workloads.replay``)."""
        return self.kind == "trace" and self.replay == "timed"


@dataclass(frozen=True)
class Tenant:
    """One tenant: a share of the clients, a priority class and a quota."""

    id: int = key(0, "tenant number (the trace's tenant column)", min=0)
    clients: int = key(0, "client processes of this tenant (0 = every client no other "
                        "tenant claims)", min=0)
    priority: int = key(0, "priority class, 0 = highest; below switch.priorities", min=0)
    quota_rps: float = key(0.0, "lock requests per second the tenant may send "
                           "(0 = unlimited), rps", min=0.0)
    start_s: float = key(0.0, "simulated time at which the tenant starts sending, s", min=0.0)


@dataclass(frozen=True)
class ServerFailure:
    """A lock server that fails; its partition is reassigned."""

    server: int = field(metadata={"help": "index of the failing lock server", "min": 0})
    at_s: float = field(metadata={"help": "simulated time of the failure, s", "min": 0.0})


@dataclass(frozen=True)
class Failures:
    """Injected failures."""

    switch_fail_s: float | None = key(None, "simulated time the switch stops, s "
                                      "(null = never)", min=0.0)
    switch_restart_s: float | None = key(None, "simulated time the switch comes back with "
                                         "empty state, s (null = never)", min=0.0)
    switch_mode: str = key("stop", "what a switch failure does: stop (the paper's Figure "
                           "15: the switch processes no packet until it restarts with empty "
                           "registers), servers (the lock servers serve its locks meanwhile) "
                           "or backup (a backup switch takes its locks over)",
                           choices=("stop", "servers", "backup"))
    server_failures: tuple[ServerFailure, ...] = field(
        default=(), metadata={"help": "lock server failures, list of {server, at_s}"})


@dataclass(frozen=True)
class Config:
    """Everything one run needs: testbed, switch, servers, workload, policies and the seed.

    Build it with :func:`netlock.config.load_config` or :func:`netlock.config.config_from_dict`;
    derive variants with :func:`netlock.config.override_config` (the loader sits above this
    module). Instances are immutable and always valid.
    """

    testbed: Testbed = field(default_factory=Testbed, metadata={"help": "the testbed profile"})
    switch: Switch = field(default_factory=Switch, metadata={"help": "the lock switch"})
    servers: Servers = field(default_factory=Servers, metadata={"help": "the lock servers"})
    clients: Clients = field(default_factory=Clients, metadata={"help": "the client machines"})
    network: NetworkConfig = field(default_factory=NetworkConfig,
                                   metadata={"help": "the rack network"})
    lease: Lease = field(default_factory=Lease, metadata={"help": "leases and client retries"})
    policy: Policy = field(default_factory=Policy, metadata={"help": "memory allocation policy"})
    sim: Sim = field(default_factory=Sim, metadata={"help": "the simulation run"})
    workload: WorkloadConfig = field(default_factory=WorkloadConfig,
                                     metadata={"help": "the workload"})
    tenants: tuple[Tenant, ...] = field(
        default=(Tenant(),),
        metadata={"help": "tenants, list of {id, clients, priority, quota_rps, start_s}; "
                          "default: tenant 0 with every client"})
    failures: Failures = field(default_factory=Failures, metadata={"help": "injected failures"})
    manager: Manager = field(default_factory=Manager,
                             metadata={"help": "the lock manager design and its parameters"})
    source: str = field(default="<dict>", init=False, compare=False, repr=False)

    @property
    def seed(self) -> int:
        """The run's random seed (``sim.seed``)."""
        return self.sim.seed

    @cached_property
    def geometry(self) -> SwitchGeometry:
        """The shared queue's register arrays, stages and priorities."""
        return SwitchGeometry(
            arrays=tuple(RegisterArray(stage=a.stage, size=a.size) for a in self.switch.arrays),
            stages=self.switch.stages,
            priorities=self.switch.priorities,
        )

    @property
    def client_rtt_us(self) -> float:
        """A request's round trip as its client sees it: the network's client-switch-client
        round trip plus the client's send and receive processing, us."""
        return self.network.rtt_us + self.clients.tx_us + self.clients.rx_us

    @property
    def fetch_hops(self) -> int:
        """Hops of a transaction's data read after its last grant: TPC-C reads its rows
        once locked, one round trip to a database server (client -> switch -> server and
        back: 4 hops), unless ``network.one_rtt`` has the switch forward grants to the
        database server; the other workloads model locks only. The simulator's and the
        planner's one definition."""
        if self.workload.kind != "tpcc" or self.network.one_rtt:
            return 0
        return DATA_READ_HOPS

    def read_us(self, fetch_hops: int) -> float:
        """A client's data read after its grants: ``fetch_hops`` one-way hops of the rack
        network (half its round trip each), us."""
        return fetch_hops * self.network.rtt_us / 2.0

    def hold_time_us(self, fetch_hops: int = 0) -> float:
        """Expected time a one-lock request occupies its queue slot: the grant's and the
        release's hops with the client's receive and send processing, its data read
        (``fetch_hops`` hops) and its think time, us. The planner's T and the simulator's
        hold; one definition for both, and for the trace generator's holds."""
        return self.client_rtt_us + self.read_us(fetch_hops) + self.workload.think_time_us

    @property
    def tenant_clients(self) -> tuple[int, ...]:
        """Client processes of each tenant, in ``tenants`` order, with the 0 share resolved."""
        claimed = sum(t.clients for t in self.tenants)
        rest = self.workload.clients - claimed
        return tuple(t.clients if t.clients else rest for t in self.tenants)

    @property
    def client_tenants(self) -> tuple[int, ...]:
        """The tenant id of each client process ``0 .. workload.clients - 1``."""
        return tuple(t.id for t, n in zip(self.tenants, self.tenant_clients, strict=True)
                     for _ in range(n))

    def to_dict(self) -> dict[str, Any]:
        """The fully resolved config as plain data; ``config_from_dict`` reads it back."""
        from netlock.config.typed import to_plain

        return to_plain(self)
