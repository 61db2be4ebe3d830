"""Atomic file output: write to a temporary sibling, fsync, rename over the target, fsync the
folder.

A crash or a validation error never leaves a half-written result behind, and once the call
returns the new file survives a power cut (the rename is in the folder, so the folder is
synced too). The temporary file is created with mode 0666 and the kernel applies the umask,
so the process-wide umask is never changed (which would race with other threads).
"""

from __future__ import annotations

import contextlib
import os
import secrets
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
    tmp_path = _new_sibling(target)
    try:
        yield tmp_path
        with open(tmp_path, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp_path, target)
        sync_folder(target.parent)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def _new_sibling(target: Path) -> Path:
    """A new empty file beside ``target`` (mode 0666 less the umask), named so that no
    other writer picks the same name."""
    for _ in range(100):
        tmp = target.parent / f".{target.name}.{secrets.token_hex(6)}{target.suffix}"
        try:
            os.close(os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
        except FileExistsError:
            continue
        return tmp
    raise FileExistsError(f"{target.parent}: no free temporary name beside {target.name}")


def sync_folder(folder: Path) -> None:
    """Make a rename or a new file in ``folder`` durable (fsync of the folder itself)."""
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_text(target: str | os.PathLike[str], text: str) -> None:
    """Atomically replace ``target`` with ``text`` (UTF-8)."""
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_with(target: str | os.PathLike[str], writer: Callable[[Path], object]) -> None:
    """Atomically produce ``target`` by calling ``writer(tmp_path)``."""
    with atomic_path(target) as tmp:
        writer(tmp)
