"""Fresh copies of a large constant array whose pages cost nothing until written.

A switch of the paper's geometry has about 18 MB of register rows per priority class whose
empty values are not all zero (a free lock row's id is -1, an empty region's bounds -1 and
-2); writing them at every construction was most of a cached run's setup (issue 32). Here a
process that keeps building switches of one geometry writes the empty rows once into an
in-memory file, and every later copy maps that file privately: the operating system copies
a 4 KB page only when it is first written, so a switch pays for the rows it uses, and its
contents are those of a written copy. A copy-on-write page costs about 2 us when first
written (measured on a 2-core VM), several times what writing it afresh does, so a caller
that will write much of the array asks for a written copy. Where in-memory files do not
exist (not Linux), every copy is written.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Callable, Hashable

import numpy as np

MIN_BYTES = 1 << 20
"""Smaller arrays are written: a mapping's fixed cost is no saving below a few hundred pages."""
TEMPLATE_AFTER = 2
"""Copies of a key written before its file is made: one run builds at most two switches
(the pilot's and its own), and the file (about 7 ms for 18 MB, a written copy 1-3 ms) pays
back only over several more."""

MAX_FILES = 12
"""Files kept (the least recently used closed beyond): a switch geometry has three (locks,
regions, slots; 18-34 MB in all at 100K slots), and a sweep over many geometries must not
hold one set for each. A mapping made from a closed file stays valid."""

_made: dict[Hashable, int] = {}
_files: dict[Hashable, tuple[int, tuple[int, ...], np.dtype]] = {}


def blank_copy(key: Hashable, make: Callable[[], np.ndarray], written: bool = False) -> np.ndarray:
    """A writable C-contiguous array equal to ``make()`` (the same for every call with
    ``key``): written afresh when ``written`` (the caller will write much of it) or while
    the key is new to the process, else a private copy-on-write mapping of one written
    copy."""
    kept = _files.get(key)
    if kept is None or written:
        array = np.ascontiguousarray(make())
        if kept is None and not written and array.nbytes >= MIN_BYTES and _can_map():
            _made[key] = _made.get(key, 0) + 1
            if _made[key] > TEMPLATE_AFTER:
                _files[key] = (_file_of(array), array.shape, array.dtype)
                if len(_files) > MAX_FILES:
                    os.close(_files.pop(next(iter(_files)))[0])
        return array
    _files[key] = _files.pop(key)
    fd, shape, dtype = kept
    pages = mmap.mmap(fd, int(np.prod(shape)) * dtype.itemsize, access=mmap.ACCESS_COPY)
    return np.frombuffer(pages, dtype=dtype).reshape(shape)


def _can_map() -> bool:
    return hasattr(os, "memfd_create")


def _file_of(array: np.ndarray) -> int:
    """An in-memory file holding ``array``'s bytes (open for the rest of the process)."""
    fd = os.memfd_create("netlock-blank-rows", os.MFD_CLOEXEC)
    data = memoryview(array).cast("B")
    done = 0
    while done < len(data):
        done += os.write(fd, data[done:])
    return fd
