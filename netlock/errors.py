"""User-facing errors: one clear line, naming the file, row or field, and what is wrong.

The CLI turns any :class:`NetlockError` into that line on stderr and exit code 2; every
reader of user input (configs, traces, plans, packets, switch targets) raises one.
"""

from __future__ import annotations


class NetlockError(Exception):
    """Bad input or an unusable target; ``str(err)`` is the whole message a user sees."""

    exit_code = 2

    def __str__(self) -> str:
        """The message on one line (a library's text inside it, pyarrow's say, may span
        several)."""
        return " ".join(super().__str__().split())


class ConfigError(NetlockError):
    """A config file or ``--set`` override is invalid."""


class TraceError(NetlockError):
    """A workload trace is malformed."""


class PlanError(NetlockError):
    """A plan file is malformed or inconsistent with its switch geometry."""


class PacketError(NetlockError):
    """Bytes that do not parse as a NetLock packet."""


class ControlPlaneError(NetlockError):
    """The switch refuses a control-plane operation (bad bounds, busy lock, unknown lock)."""


class TargetError(NetlockError):
    """A switch target cannot be reached or does not match its profile."""


def where(path: object, field: str | None = None, row: int | None = None) -> str:
    """Format a location prefix such as ``plan.yaml: row 7: entries.left``."""
    parts = [str(path)]
    if row is not None:
        parts.append(f"row {row}")
    if field:
        parts.append(field)
    return ": ".join(parts)


class OutputError(NetlockError):
    """An output cannot be written (a read-only or full filesystem, a file where a folder
    should be); nothing partial is left behind."""
