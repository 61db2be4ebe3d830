"""One writer at a time for a switch's state file and its push journal.

Every command that writes an emulated switch's state file (or a real switch's push journal)
holds an exclusive ``fcntl.flock`` on a sidecar ``FILE.lock`` for the whole command, so two
pushes, or a push and a replay, cannot interleave their saves and both report success. The
lock file records the holder's pid and command line for the refusal message; it is left in
place afterwards (removing it would let a waiting writer lock a file no one else sees). The
kernel drops the lock when the holder exits, however it exits, so a killed command never
leaves a stale lock behind.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from netlock.errors import TargetError

POLL_S = 0.05
HOLDER_BYTES = 512


def lock_path(path: Path) -> Path:
    return path.with_name(path.name + ".lock")


def _holder(fd: int) -> str:
    """What the lock file says about its holder (``pid N (command)``), or a plain phrase."""
    try:
        text = os.pread(fd, HOLDER_BYTES, 0).decode("utf-8", "replace").strip()
    except OSError:
        text = ""
    return text or "another process"


@contextlib.contextmanager
def exclusive(path: Path, command: str, wait: bool = False) -> Iterator[None]:
    """Hold the writer's lock on ``path`` (a state file or journal) for the block.

    When another process holds it: wait for it with ``wait``, else raise one TargetError
    line naming the holder.
    """
    lock = lock_path(path)
    lock.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not wait:
                    raise TargetError(f"{path}: in use by {_holder(fd)}; try again when it "
                                      f"is done, or pass --wait") from None
                time.sleep(POLL_S)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} ({command})\n".encode()[:HOLDER_BYTES], 0)
        yield
    finally:
        os.close(fd)


def command_line() -> str:
    """This process's command, for the holder line (``netlock push plan.yaml ...``)."""
    program = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "python"
    return " ".join([program, *sys.argv[1:]])[:200]


@contextlib.contextmanager
def writers(paths: list[Path | None], wait: bool = False) -> Iterator[None]:
    """Hold the writer's lock on each given path (None ones are skipped), in order."""
    with contextlib.ExitStack() as stack:
        for path in dict.fromkeys(p for p in paths if p is not None):
            stack.enter_context(exclusive(path, command_line(), wait))
        yield
