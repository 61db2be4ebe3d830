"""Recorder chunks, recycled between the runs of one process.

A run writes a row per granted request and per committed transaction (70 bytes per request)
into chunks of fresh memory, and fresh memory costs a page fault and the kernel's zeroing of
every page it touches: on virtual machines that hand freed memory back to their host, about
a fifth of the engine's time. A sweep runs many models one after the other in each worker
process, so when a model is gone its chunks are kept (up to :data:`SPARE_BYTES`) and given
to the next model. Results never point into a chunk: the frames are copies.
"""

from __future__ import annotations

import threading

import numpy as np

SPARE_BYTES = 1 << 30
"""Most bytes of chunks kept for later runs."""

_spare: list[np.ndarray] = []
_lock = threading.Lock()


def take(rows: int, dtype: np.dtype) -> np.ndarray:
    """A chunk of at least ``rows`` rows of ``dtype``, uninitialised (a spare one if any)."""
    with _lock:
        for j, chunk in enumerate(_spare):
            if chunk.dtype == dtype and len(chunk) >= rows:
                return _spare.pop(j)
    return np.empty(rows, dtype=dtype)


def give_back(chunks: list[np.ndarray]) -> None:
    """Keep the chunks of a model that is gone for later runs, up to :data:`SPARE_BYTES`."""
    with _lock:
        held = sum(chunk.nbytes for chunk in _spare)
        for chunk in chunks:
            if held + chunk.nbytes > SPARE_BYTES:
                break
            _spare.append(chunk)
            held += chunk.nbytes


def spare_bytes() -> int:
    """Bytes of chunks kept for later runs."""
    with _lock:
        return sum(chunk.nbytes for chunk in _spare)
