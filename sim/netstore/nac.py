"""Network-aware caching (NetStore, section 3.2): the controller's replica directory and the
data servers' caches.

The controller keeps, per cached key, a version and the data servers holding a replica of
that version; a write drops the key's entry, and the next read creates it again under a new,
larger version, so a server's copy is current exactly when its version matches the
controller's (no invalidation messages). For a cross-pod read the controller names a replica
in the reader's rack, else in its pod, else the key's home server. A server keeps what it
reads. Both sides are bounded: the directory evicts by the clock algorithm, the servers at
random (section 3.2).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class _Entry:
    version: int
    hosts: set[int] = field(default_factory=set)
    referenced: bool = False


class ReplicaDirectory:
    """The controller's metadata cache: key -> (version, replica holders), clock-evicted (an
    entry used again since the hand last passed it gets a second chance)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._entries: dict[int, _Entry] = {}
        self._ring: list[int] = []
        self._hand = 0
        self._versions = 0

    def __len__(self) -> int:
        return len(self._entries)

    def version(self, key: int) -> int | None:
        entry = self._entries.get(key)
        return None if entry is None else entry.version

    def holders(self, key: int) -> set[int]:
        entry = self._entries.get(key)
        return set() if entry is None else set(entry.hosts)

    def record_read(self, key: int, reader: int) -> int:
        """``reader`` now holds ``key``: the version it holds (a new one if the key had no
        entry)."""
        entry = self._entries.get(key)
        if entry is None:
            if len(self._entries) >= self.capacity:
                self._evict()
            self._versions += 1
            entry = self._entries[key] = _Entry(self._versions)
            self._ring.append(key)
        else:
            entry.referenced = True
        entry.hosts.add(reader)
        return entry.version

    def invalidate(self, key: int) -> None:
        """A write to ``key``: every replica of it is stale from now on."""
        if self._entries.pop(key, None) is not None:
            self._ring.remove(key)
            self._hand = self._hand % len(self._ring) if self._ring else 0

    def touch(self, key: int) -> None:
        entry = self._entries.get(key)
        if entry is not None:
            entry.referenced = True

    def _evict(self) -> None:
        while True:
            self._hand %= len(self._ring)
            key = self._ring[self._hand]
            entry = self._entries[key]
            if entry.referenced:
                entry.referenced = False
                self._hand += 1
                continue
            del self._entries[key]
            self._ring.pop(self._hand)
            return


class ServerCache:
    """One data server's cache of values it read: key -> version, random eviction."""

    def __init__(self, capacity: int, rng: np.random.Generator) -> None:
        self.capacity = capacity
        self._version: dict[int, int] = {}
        self._keys: list[int] = []
        self._rng = rng

    def __len__(self) -> int:
        return len(self._keys)

    def holds(self, key: int, version: int | None) -> bool:
        """Whether this server has ``key`` at ``version`` (None: no current version)."""
        return version is not None and self._version.get(key) == version

    def store(self, key: int, version: int) -> None:
        if key not in self._version:
            if len(self._keys) >= self.capacity:
                slot = int(self._rng.integers(len(self._keys)))
                del self._version[self._keys[slot]]
                self._keys[slot] = self._keys[-1]
                self._keys.pop()
            self._keys.append(key)
        self._version[key] = version


def replica_source(reader: int, home: int, holders: set[int], rack_of, pod_of) -> int:
    """Where a read by ``reader`` of a key homed at ``home`` fetches from: for a cross-pod
    read, a holder in the reader's rack, else in its pod (the lowest-numbered, so the choice
    is reproducible), else the home server; other reads go home."""
    if pod_of(reader) == pod_of(home):
        return home
    for same in (rack_of, pod_of):
        near = sorted(h for h in holders if h != reader and same(h) == same(reader))
        if near:
            return near[0]
    return home


class NetworkAwareCache:
    """NAC at the controller and the data servers of one fabric: where each granted operation
    reads from, and the bookkeeping of versions and replicas."""

    def __init__(self, fabric, directory_entries: int, server_entries: int,
                 rng: np.random.Generator) -> None:
        self.fabric = fabric
        self.directory = ReplicaDirectory(directory_entries)
        self.caches = [ServerCache(server_entries, rng) for _ in range(fabric.hosts)]
        self.local_hits = 0
        self.replica_reads = 0

    def on_grant(self, key: int, exclusive: bool, reader: int, home: int) -> tuple[int, int]:
        """``(source, version)`` for a granted operation by coordinator ``reader`` on ``key``
        (homed at ``home``): the server its data comes from (``reader`` itself for a hit in
        its own cache) and the version the reader will hold (0 for a write)."""
        if exclusive:
            self.directory.invalidate(key)
            return home, 0
        version = self.directory.version(key)
        if self.caches[reader].holds(key, version):
            self.directory.touch(key)
            self.local_hits += 1
            return reader, 0
        source = home
        if version is not None:
            near = replica_source(reader, home, self.directory.holders(key),
                                  self.fabric.tor_of, self.fabric.pod_of)
            if near != home and self.caches[near].holds(key, version):
                source = near
                self.replica_reads += 1
        return source, self.directory.record_read(key, reader)

    def on_read_done(self, key: int, reader: int, version: int) -> None:
        """The reader keeps the value it read."""
        if version:
            self.caches[reader].store(key, version)
