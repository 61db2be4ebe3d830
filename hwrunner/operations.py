"""Switch operations as values: register writes and table entry add/modify/delete.

Each operation is one batch on one table: columns of keys and values (int64 numpy arrays,
one row per entry), so a 100K-lock plan is a handful of values rather than a million objects.
Names are the profile's (short) names; drivers resolve them against the program. A driver
asks for a batch to be applied whole or not at all, but the push never assumes it was (see
:mod:`hwrunner.driver`).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from hwrunner.bfrt_info import REGISTER_INDEX

_INT = np.int64


def _column(values: object) -> np.ndarray:
    arr = np.asarray(values, dtype=_INT)
    if arr.ndim != 1:
        raise ValueError(f"expected a 1-D column, got shape {arr.shape}")
    return arr


@dataclass(frozen=True)
class KeyColumn:
    """One key field over the batch: exact ``value``; ternary ``value``/``mask``;
    range ``value`` (low) .. ``high`` (inclusive)."""

    name: str
    value: np.ndarray
    mask: np.ndarray | None = None
    high: np.ndarray | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "value", _column(self.value))
        for extra in ("mask", "high"):
            if getattr(self, extra) is not None:
                object.__setattr__(self, extra, _column(getattr(self, extra)))

    @property
    def match(self) -> str:
        if self.mask is not None:
            return "ternary"
        return "range" if self.high is not None else "exact"

    def render(self, i: int) -> str:
        if self.mask is not None:
            return f"{self.name}={self.value[i]:#x}&&&{self.mask[i]:#x}"
        if self.high is not None:
            return f"{self.name}={self.value[i]}..{self.high[i]}"
        return f"{self.name}={self.value[i]}"

    def take(self, rows: slice | np.ndarray) -> KeyColumn:
        return KeyColumn(self.name, self.value[rows],
                         None if self.mask is None else self.mask[rows],
                         None if self.high is None else self.high[rows])

    def same(self, other: KeyColumn) -> bool:
        return (self.name == other.name and np.array_equal(self.value, other.value)
                and _same(self.mask, other.mask) and _same(self.high, other.high))


def _same(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    return (a is None and b is None) or (a is not None and b is not None
                                         and np.array_equal(a, b))


@dataclass(frozen=True)
class DataColumn:
    """One data field (register field or action parameter) over the batch."""

    name: str
    value: np.ndarray

    def __post_init__(self) -> None:
        object.__setattr__(self, "value", _column(self.value))

    def take(self, rows: slice | np.ndarray) -> DataColumn:
        return DataColumn(self.name, self.value[rows])

    def render(self, i: int) -> str:
        if self.name.lower().endswith("ip"):
            return f"{self.name}={ipv4(self.value[i])}"
        return f"{self.name}={self.value[i]}"


@dataclass(frozen=True, eq=False)
class Operation:
    """Base of every batch: ``table`` is the profile's name for the target table."""

    table: str
    keys: tuple[KeyColumn, ...]
    data: tuple[DataColumn, ...] = ()
    action: str | None = None
    kind: str = field(default="", init=False)

    def __post_init__(self) -> None:
        lengths = {len(c.value) for c in (*self.keys, *self.data)}
        if len(lengths) > 1:
            raise ValueError(f"{self.table}: columns of unequal length {sorted(lengths)}")

    def __len__(self) -> int:
        return len(self.keys[0].value) if self.keys else 0

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Operation):
            return NotImplemented
        return (type(self) is type(other) and self.table == other.table
                and self.action == other.action and len(self.keys) == len(other.keys)
                and len(self.data) == len(other.data)
                and all(a.same(b) for a, b in zip(self.keys, other.keys, strict=True))
                and all(a.name == b.name and np.array_equal(a.value, b.value)
                        for a, b in zip(self.data, other.data, strict=True)))

    __hash__ = None  # type: ignore[assignment]

    def take(self, rows: slice | np.ndarray) -> Operation:
        """The same operation restricted to ``rows``."""
        return type(self)(self.table, tuple(k.take(rows) for k in self.keys),
                          tuple(d.take(rows) for d in self.data), self.action)

    def chunks(self, size: int) -> Iterator[Operation]:
        """Split into batches of at most ``size`` rows (one BFRuntime WriteRequest each)."""
        for start in range(0, len(self), size):
            yield self.take(slice(start, start + size))

    def data_value(self, name: str) -> np.ndarray:
        return next(d.value for d in self.data if d.name == name)

    def key_value(self, name: str) -> np.ndarray:
        return next(k.value for k in self.keys if k.name == name)

    def render_row(self, i: int) -> str:
        keys = ", ".join(k.render(i) for k in self.keys)
        data = ", ".join(d.render(i) for d in self.data)
        action = f" {self.action}(" + data + ")" if self.action else (f" <- {data}" if data
                                                                         else "")
        return f"{self.kind} {self.table}[{keys}]{action}"


@dataclass(frozen=True, eq=False)
class RegisterWrite(Operation):
    """Write register fields at ``$REGISTER_INDEX`` rows (all pipes)."""

    kind: str = field(default="write", init=False)

    @classmethod
    def of(cls, table: str, index: object, **fields: object) -> RegisterWrite:
        idx = _column(index)
        cols = tuple(DataColumn(name, np.full(idx.shape, v, dtype=_INT) if np.ndim(v) == 0 else v)
                     for name, v in fields.items())
        return cls(table, (KeyColumn(REGISTER_INDEX, idx),), cols)

    @property
    def index(self) -> np.ndarray:
        return self.keys[0].value


@dataclass(frozen=True, eq=False)
class EntryAdd(Operation):
    """Add match-action entries (fails on an existing key)."""

    kind: str = field(default="add", init=False)


@dataclass(frozen=True, eq=False)
class EntryModify(Operation):
    """Change the action data of existing entries."""

    kind: str = field(default="modify", init=False)


@dataclass(frozen=True, eq=False)
class EntryDelete(Operation):
    """Delete entries by key (data and action are unused)."""

    kind: str = field(default="delete", init=False)


def count_rows(ops: object) -> int:
    """Total entries over ``ops`` (what ``"operations"`` in the push JSON counts)."""
    return sum(len(op) for op in ops)  # type: ignore[attr-defined]


def ipv4(value: int) -> str:
    return str(ipaddress.IPv4Address(int(value)))
