"""Atomic file output: write to a temporary sibling, fsync, then rename over the target.

A crash or a validation error never leaves a half-written result behind.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path next to ``target``; on success rename it onto ``target``.

    The caller writes the temporary path with any library (pandas, pyarrow, matplotlib).
    On an exception the temporary file is removed and ``target`` is left untouched.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=target.suffix, dir=target.parent)
    os.close(fd)
    os.chmod(tmp, 0o666 & ~_umask())
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        with open(tmp_path, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp_path, target)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text(target: str | os.PathLike[str], text: str) -> None:
    """Atomically replace ``target`` with ``text`` (UTF-8)."""
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_with(target: str | os.PathLike[str], writer: Callable[[Path], object]) -> None:
    """Atomically produce ``target`` by calling ``writer(tmp_path)``."""
    with atomic_path(target) as tmp:
        writer(tmp)
