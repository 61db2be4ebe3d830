"""Refusing work that cannot fit in memory, before anything is allocated.

A command that sizes arrays from the user's numbers (``workload.clients``, ``--slots``,
``--requests``) first adds up what they will take (:class:`Need`, estimated by the package
that allocates them) and compares it with the memory this machine has available, so that a
typo such as ``workload.clients=1000000000`` is one line naming the key, not a
``MemoryError`` minutes later. ``netlock config check`` asks every installed package through
the ``netlock.footprints`` entry-point group (each entry is ``needs(config) -> list[Need]``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import TYPE_CHECKING

from netlock.errors import ConfigError, NetlockError

if TYPE_CHECKING:
    from netlock.config import Config

GB = 1e9
MEMINFO = "/proc/meminfo"


@dataclass(frozen=True)
class Need:
    """Memory one input asks for: ``subject`` (a config key or flag with its value, such as
    ``workload.clients=1000000``) needs ``bytes`` for ``what``."""

    subject: str
    what: str
    bytes: float


def available_bytes() -> int | None:
    """Memory this machine can give a new allocation now: MemAvailable from /proc/meminfo
    (Linux), else the free physical pages; None when neither is known."""
    try:
        with open(MEMINFO, encoding="ascii") as fh:
            for line in fh:
                name, _, rest = line.partition(":")
                if name == "MemAvailable":
                    return int(rest.split()[0]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        return None


def check_fits(needs: Iterable[Need], error: type[NetlockError] = ConfigError,
               prefix: str = "") -> None:
    """Raise ``error`` naming the largest need when all of them together exceed
    :func:`available_bytes`; ``prefix`` (e.g. ``"--grid switch.slots=9"``) leads the line."""
    needs = [n for n in needs if n.bytes > 0]
    have = available_bytes()
    total = sum(n.bytes for n in needs)
    if have is None or total <= have:
        return
    big = max(needs, key=lambda n: n.bytes)
    overall = f" (~{_gb(total)} in all)" if total > 1.1 * big.bytes else ""
    raise error(f"{prefix}{big.subject} needs ~{_gb(big.bytes)} for {big.what}"
                f"{overall}, this machine has {_gb(have)} available")


def _gb(size: float) -> str:
    if size >= 100 * GB:
        return f"{size / GB:,.0f} GB"
    return f"{size / GB:.3g} GB" if size >= 0.1 * GB else f"{size / 1e6:.3g} MB"


def config_needs(config: Config) -> list[Need]:
    """What running ``config`` needs, from every package in ``netlock.footprints``."""
    needs: list[Need] = []
    for ep in sorted(entry_points(group="netlock.footprints"), key=lambda e: e.name):
        needs.extend(ep.load()(config))
    return needs
