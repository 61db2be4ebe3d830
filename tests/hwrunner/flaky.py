"""A driver wrapper that fails writes or corrupts reads where a test says."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hwrunner.emulator import EmulatedSwitch
from hwrunner.operations import Operation
from netlock.errors import TargetError


class Flaky:
    """A driver that fails (or corrupts reads) where a test says."""

    def __init__(self, inner: EmulatedSwitch, fail: Callable[[Operation], bool] | None = None,
                 times: int = 1, error: BaseException | None = None,
                 corrupt: Callable[[str, np.ndarray, dict], None] | None = None) -> None:
        self.inner = inner
        self.fail = fail
        self.times = times
        self.error = error or TargetError("injected: switch rejected the batch")
        self.corrupt = corrupt

    def __getattr__(self, name: str):
        return getattr(self.inner, name)

    def write(self, op: Operation) -> None:
        if self.fail is not None and self.times > 0 and self.fail(op):
            self.times -= 1
            raise self.error
        self.inner.write(op)

    def read_registers(self, table, fields, index):
        out = self.inner.read_registers(table, fields, index)
        if self.corrupt is not None:
            self.corrupt(table, np.asarray(index), out)
        return out


def table_is(name: str, kind: str | None = None) -> Callable[[Operation], bool]:
    return lambda op: op.table == name and (kind is None or op.kind == kind)
