"""The driver interface every switch target implements (emulated or BFRuntime).

A driver sends one batch (:class:`~hwrunner.operations.Operation`) at a time and asks for it
to be applied whole or not at all (BFRuntime's ROLLBACK_ON_ERROR; the emulator checks a batch
before changing anything). Callers do not rely on that: a crash, a lost connection or a
switch that continues on error can leave any part of a batch applied, so the push reads the
switch back before acting again. A driver reads state back from the hardware: registers as
one value per pipe, match tables as their full list of entries. Names are the profile's short
names; the driver resolves them against the program it talks to and rejects unknown or
ambiguous ones with a TargetError.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from hwrunner.bfrt_info import Schema
from hwrunner.operations import EntryAdd, Operation
from hwrunner.profile import SwitchProfile


class Driver(Protocol):
    """One connected switch target."""

    target: str
    """``emulator`` or ``grpc://host:port`` (what the push JSON reports)."""
    schema: Schema
    profile: SwitchProfile
    """The profile the target runs with (named, saved with the emulator, or chosen from a
    BFRuntime device's program)."""
    pipes: int
    batches_sent: int

    def write(self, op: Operation) -> None:
        """Apply one batch on all pipes; on a TargetError, any part of it may be applied."""

    def read_registers(self, table: str, fields: Sequence[str],
                       index: np.ndarray) -> dict[str, np.ndarray]:
        """``{field: int64 array (pipes, len(index))}`` read from the hardware."""

    def read_entries(self, table: str, keys: Sequence[str], data: Sequence[str]) -> EntryAdd:
        """Every entry of a match table: key columns (with masks/highs for ternary/range
        keys) and action-data columns named as asked, as one EntryAdd value."""

    def close(self) -> None:
        """Release the connection (the emulator saves nothing here)."""


def same_on_all_pipes(values: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Rows whose value equals ``expected`` on every pipe (``values`` is pipes x rows)."""
    return np.all(values == expected[None, :], axis=0)
