"""The plans made on the fly, kept on disk and reused by any later run that would make the
same plan (:func:`sim.core.pilot.make_plan`): a sweep's points, a figure's re-run, a
notebook cell run twice, the same ``netlock sim`` again.

A plan made on the fly is a pure function of its inputs, so it is cached under a hash of
exactly those (:func:`plan_key`): the config without the fields the plan provably does not
read (:data:`NOT_PLAN_INPUTS`), the engine the pilot runs on, the contents of the trace file
a replayed workload reads, and the code that makes it (every source file of ``netlock``,
``planner`` and ``sim``, and the numpy, numba and Python versions behind its random streams
and kernels). A run with a cached plan gives the same results as one that makes the plan
(the entry is the pickled ``(plan, partition)`` the run would make).

Where: ``$NETLOCK_CACHE_DIR/plans``, else ``$XDG_CACHE_HOME/netlock/plans``, else
``~/.cache/netlock/plans``. ``NETLOCK_PLAN_CACHE=off`` turns it off (nothing read or
written). Entries are written atomically (temporary file, then rename); an entry that
cannot be read back (truncated, from another version of Python) is ignored and made again,
never an error; a cache folder that cannot be written is skipped. The folder is kept under
:data:`MAX_BYTES`: the entries used least recently go first.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import pickle
import sys
import tempfile
import time
import weakref
from collections.abc import Iterator
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from netlock import atomic
from netlock.config import Config
from netlock.trace import trace_digest

FORMAT = 2
"""The layout of an entry and its key; changed when either changes."""
NOT_PLAN_INPUTS = (
    ("sim", "duration_s"),
    ("sim", "engine"),
    ("sim", "timeseries_bin_s"),
    ("failures",),
    ("testbed", "description"),
)
"""Config fields a plan made on the fly provably does not read, so runs that differ only in
them share a plan: the pilot runs for ``sim.warmup_s`` and on (never to ``sim.end_s``), on
the engine it is given (not ``sim.engine``), with failures off, and nothing of the plan
reads the time-series bins or the testbed's prose. Every other field is a key."""
MAX_BYTES = 512 << 20
"""The cache folder's size limit, bytes."""
KEPT_READ = 4
"""Entries kept in the process after a read (:func:`load`), the least recently read
dropped beyond (a paper-scale plan is a few MB)."""
OFF_VALUES = ("0", "off", "no", "false")
_SOURCES = ("netlock", "planner", "sim")
_code: list[str] = []
_bypass: list[bool] = []
_read: dict[Path, tuple[tuple[int, int, int, int], object]] = {}
"""Entries read by this process, by path, with their file's identity when last read."""
_inputs_of: dict[int, str] = {}
"""Each live config's plan inputs as text (:func:`inputs_text`), by the config's ``id``; an
entry goes when its config does, before another object can take that ``id``."""


def enabled() -> bool:
    """Whether runs read and write the cache (``NETLOCK_PLAN_CACHE`` and :func:`bypassed`)."""
    if _bypass and _bypass[-1]:
        return False
    return os.environ.get("NETLOCK_PLAN_CACHE", "on").strip().lower() not in OFF_VALUES


@contextlib.contextmanager
def bypassed() -> Iterator[None]:
    """Within the block, plans are neither read from the cache nor written to it (a
    benchmark timing the making of a plan)."""
    _bypass.append(True)
    try:
        yield
    finally:
        _bypass.pop()


def cache_dir() -> Path:
    """The folder of the cached plans (the module docstring says which)."""
    root = os.environ.get("NETLOCK_CACHE_DIR")
    if root:
        return Path(root) / "plans"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "netlock" / "plans"


def plan_inputs(doc: dict) -> dict:
    """A config's document (``Config.to_dict``) as the plan reads it: every field but
    :data:`NOT_PLAN_INPUTS` (``doc`` is changed)."""
    for path in NOT_PLAN_INPUTS:
        parent = doc
        for part in path[:-1]:
            parent = parent[part]
        parent.pop(path[-1])
    return doc


def key_of(inputs: dict, engine: str, files: dict[str, str]) -> str:
    """The hex SHA-256 of a plan's inputs: the config's fields (:func:`plan_inputs`), the
    engine, the input files' digests and the code (:func:`code_digest`)."""
    return _key(_text(inputs), engine, files)


def plan_key(config: Config, engine: str) -> str:
    """The cache key of the plan ``config`` makes on the fly with its pilot on ``engine``."""
    files = {}
    if config.workload.kind == "trace" and config.workload.trace:
        files["workload.trace"] = trace_digest(config.workload.trace)
    return _key(inputs_text(config), engine, files)


def inputs_text(config: Config) -> str:
    """``config``'s plan inputs (:func:`plan_inputs`) as canonical JSON, made once per config
    object (configs are immutable): a run made again with the same config (a re-run in a
    notebook, ``netlock bench``) spent 0.1-0.3 ms of a 2.5 ms cached setup on it (issue 32).
    The files the config names and the code are not in it: :func:`plan_key` reads them
    every time."""
    text = _inputs_of.get(id(config))
    if text is None:
        text = _text(plan_inputs(config.to_dict()))
        _inputs_of[id(config)] = text
        weakref.finalize(config, _inputs_of.pop, id(config), None)
    return text


def _text(inputs: dict) -> str:
    return json.dumps(inputs, sort_keys=True, default=repr)


def _key(inputs_json: str, engine: str, files: dict[str, str]) -> str:
    head = {"format": FORMAT, "engine": engine, "files": files, "code": code_digest()}
    text = f"{_text(head)}\n{inputs_json}"
    return hashlib.sha256(text.encode()).hexdigest()


def code_digest() -> str:
    """A hash of the code a plan comes from: the sources of ``netlock``, ``planner`` and
    ``sim`` and the versions of Python, numpy and numba (read from their metadata: a simpy
    run does not import numba); once per process, about 6 ms of CPU."""
    if not _code:
        digest = hashlib.sha256()
        versions = [sys.version]
        for dist in ("numpy", "numba"):
            with contextlib.suppress(PackageNotFoundError):
                versions.append(f"{dist} {version(dist)}")
        digest.update(repr(versions).encode())
        root = Path(__file__).resolve().parents[2]
        for package in _SOURCES:
            for path in sorted((root / package).rglob("*.py")):
                digest.update(path.relative_to(root).as_posix().encode() + b"\0")
                digest.update(path.read_bytes() + b"\0")
        _code.append(digest.hexdigest())
    return _code[0]


def load(key: str) -> object | None:
    """The entry under ``key``, or None (none, off, or unreadable: made again).

    An entry this process read before is not read again while its file is the same (device,
    inode, size and modification time, which each read sets): the same objects are given
    to every run (runs only read their plans). Reading a TPC-C plan back was 0.2-0.3 ms
    of a cached setup of 2-3 ms (issue 32)."""
    if not enabled():
        return None
    path = cache_dir() / f"{key}.pickle"
    try:
        seen = os.stat(path)
    except OSError:
        _read.pop(path, None)
        return None
    kept = _read.pop(path, None)
    if kept is not None and kept[0] == _identity(seen, seen.st_mtime_ns):
        value = kept[1]
    else:
        try:
            with open(path, "rb") as fh:
                value = pickle.load(fh)
        except FileNotFoundError:
            return None
        except Exception:  # any unreadable entry (truncated, another Python) is a miss
            with contextlib.suppress(OSError):
                path.unlink()
            return None
    now = time.time_ns()
    with contextlib.suppress(OSError):
        os.utime(path, ns=(now, now))
        _read[path] = (_identity(seen, now), value)
        while len(_read) > KEPT_READ:
            _read.pop(next(iter(_read)))
    return value


def _identity(st: os.stat_result, mtime_ns: int) -> tuple[int, int, int, int]:
    return st.st_dev, st.st_ino, st.st_size, mtime_ns


def store(key: str, value: object) -> None:
    """Keep ``value`` under ``key`` (atomically); a folder that cannot be written is
    skipped (the run has its plan either way)."""
    if not enabled():
        return
    folder = cache_dir()
    try:
        atomic.write_with(folder / f"{key}.pickle",
                          lambda tmp: tmp.write_bytes(pickle.dumps(value, protocol=5)))
        prune(folder, MAX_BYTES)
    except OSError:
        return


def prune(folder: Path, max_bytes: int) -> None:
    """Remove the least recently used entries until the folder holds at most ``max_bytes``."""
    entries = []
    for path in folder.glob("*.pickle"):
        with contextlib.suppress(OSError):
            st = path.stat()
            entries.append((st.st_mtime, st.st_size, path))
    total = sum(size for _, size, _ in entries)
    for _, size, path in sorted(entries, key=lambda e: e[0]):
        if total <= max_bytes:
            break
        with contextlib.suppress(OSError):
            path.unlink()
        total -= size


@contextlib.contextmanager
def temporary_cache() -> Iterator[None]:
    """The plan cache on, in a temporary folder (the user's cache is neither read nor
    changed)."""
    saved = {k: os.environ.get(k) for k in ("NETLOCK_CACHE_DIR", "NETLOCK_PLAN_CACHE")}
    with tempfile.TemporaryDirectory() as folder:
        os.environ["NETLOCK_CACHE_DIR"] = folder
        os.environ["NETLOCK_PLAN_CACHE"] = "on"
        try:
            yield
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
