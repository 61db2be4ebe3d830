"""Config sections of the lock managers the simulator compares NetLock against.

``manager.kind`` picks the design; each design's own parameters live in its subsection, and
the RDMA NICs and server CPU costs that several designs share in ``manager.rdma`` and
``manager.server``. Defaults are the RDMA testbed of the paper's comparison (section 6.1)
as ``configs/testbed/rdma.yaml`` derives them; that file says where each number comes from.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from netlock.config.schema_keys import key

MANAGER_KINDS = ("netlock", "dslr", "drtm", "netchain", "server-tcp", "server-rdma",
                 "rdma-cas", "declock", "concordia")
"""The lock managers the simulator models (``manager.kind``)."""
SERVER_KINDS = ("dslr", "drtm", "server-tcp", "server-rdma", "rdma-cas", "declock")
"""Designs whose lock state lives on the lock servers (``servers.count`` of them)."""
RDMA_VERB_KINDS = ("dslr", "drtm", "rdma-cas", "declock")
"""Designs whose clients take locks with one-sided RDMA verbs over reliable connections."""


@dataclass(frozen=True)
class Rdma:
    """RDMA NICs (RNICs): one per lock server (memory node) and one per client machine."""

    verb_rate_ops: float = key(26.0e6, "verbs (READ, WRITE, CAS, FAA, SEND) one RNIC "
                               "handles per second, each direction, ops/s", above=0.0)
    atomic_us: float = key(0.37, "time an atomic (CAS, FAA) holds its 8-byte address in the "
                           "target RNIC; atomics on one address are serialised, us", min=0.0)


@dataclass(frozen=True)
class ServerCentric:
    """The server-centric lock manager: a FIFO queue per lock on the lock servers."""

    tcp_message_us: float = key(4.76, "server CPU time per message (request, grant, "
                                "release) over kernel TCP, us", min=0.0)
    rdma_message_us: float = key(0.139, "server CPU time per message over RDMA "
                                 "send/receive, us", min=0.0)


@dataclass(frozen=True)
class Dslr:
    """DSLR: Lamport-bakery tickets by RDMA fetch-and-add on a 64-bit lock word."""

    lease_us: float = key(10_000.0, "a waiter that sees the counters ahead of it unchanged "
                          "for 2 x lease_us per request ahead resets them (recovers a dead "
                          "holder); holders stop using a lock within 2 x lease_us, us",
                          above=0.0)
    counter_limit: int = key(32_768, "ticket value at which either max field freezes the "
                             "word: a request that finds it so undoes its ticket and waits, "
                             "and the client that drew the last ticket resets the word once "
                             "every ticket is released or the counters stand still (the "
                             "lease rule)", min=2, max=65_535)


@dataclass(frozen=True)
class Drtm:
    """DrTM: CAS lock word (lock bit, owner, shared-lease end), no queue."""

    read_lease_us: float = key(400.0, "a shared lock's lease: it is granted until then "
                               "and needs no release, us", above=0.0)
    backoff_base_us: float = key(10.0, "first randomised back-off window after a failed "
                                 "attempt; it doubles per failure of the transaction, us",
                                 min=0.0)
    backoff_max_us: float = key(10_000.0, "largest back-off window, us", min=0.0)


@dataclass(frozen=True)
class NetChain:
    """NetChain as a lock service: test-and-set registers along a chain of switches."""

    chain_length: int = key(1, "switches in the chain a write traverses (1: the paper's "
                            "one-switch testbed)", min=1)


@dataclass(frozen=True)
class RdmaCas:
    """Client-centric RDMA locks: X by CAS on the high half, S by FAA on the low half."""

    backoff_us: float = key(0.0, "wait before re-trying a failed CAS or re-reading a "
                            "shared lock's exclusive half, us", min=0.0)


@dataclass(frozen=True)
class Concordia:
    """Concordia: in-switch reader-writer locks for the hottest cache blocks, home agents
    (one per client machine, a memory node) for the rest; no queue, failed ACKs."""

    switch_blocks: int = key(375_000, "cache blocks whose lock and metadata the switch can "
                             "own (0: every block stays with its home agent, the seed's "
                             "Concordia-base)", min=0)
    epoch_us: float = key(10_000.0, "ownership-migration epoch: at its end the hottest "
                          "blocks move into the switch, us", above=0.0)
    top_k: int = key(1000, "blocks each home agent moves into the switch per epoch (its "
                     "top-k hottest)", min=0)
    home_agent_cores: int = key(1, "cores of each home agent", min=1)
    home_message_us: float = key(0.22, "home-agent CPU time per message received or sent, "
                                 "us", min=0.0)
    request_timeout_rtt: float = key(6.0, "a lock request unanswered for this many round "
                                     "trips (network.rtt_us) is sent again", above=0.0)
    unlock_timeout_rtt: float = key(3.0, "an unlock unacknowledged for this many round "
                                    "trips is sent again", above=0.0)
    backoff_spins: int = key(100, "PAUSE instructions per unit of the back-off after an "
                             "abort: the wait is backoff_spins x 2^shifts x pause_us (GAM's "
                             "transaction engine)", min=0)
    pause_us: float = key(0.0045, "duration of one PAUSE instruction, us", min=0.0)


@dataclass(frozen=True)
class Manager:
    """Which lock manager the rack runs, and the parameters of each design."""

    kind: str = key("netlock", "the lock manager: " + " | ".join(MANAGER_KINDS),
                    choices=MANAGER_KINDS)
    rdma: Rdma = field(default_factory=Rdma, metadata={"help": "RDMA NICs"})
    server: ServerCentric = field(default_factory=ServerCentric,
                                  metadata={"help": "server-centric lock manager"})
    dslr: Dslr = field(default_factory=Dslr, metadata={"help": "DSLR"})
    drtm: Drtm = field(default_factory=Drtm, metadata={"help": "DrTM"})
    netchain: NetChain = field(default_factory=NetChain, metadata={"help": "NetChain"})
    rdma_cas: RdmaCas = field(default_factory=RdmaCas,
                              metadata={"help": "client-centric RDMA CAS/FAA locks"})
    concordia: Concordia = field(default_factory=Concordia,
                                 metadata={"help": "Concordia in-switch reader-writer locks"})
