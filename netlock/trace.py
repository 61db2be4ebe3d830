"""The workload trace: its format, validation, reader and writer (CSV or Parquet, by extension).

The format is in docs/formats.md ("Workload trace"): one row per lock request with
``lock_id``, ``mode`` (S / X), ``t_request`` and ``t_release`` (s), ``client_id`` and
``txn_id``, optionally ``tenant`` and ``priority``. The planner reads traces, the simulator
replays and generates them (:mod:`sim.workloads.tracegen`), the hardware runner replays them.

Files are read in chunks with pyarrow (imported by the first read or write: a run that
replays no trace file never needs it), so memory stays at the few columns planning keeps
(25 bytes per request). Every chunk is validated before it is kept; the first problem in
file order becomes one :class:`TraceError` naming the file, the row (0-based data row,
header excluded) and the column. ``client_id`` and ``txn_id`` are required by the format
but unused by planning, so only their presence is checked.
"""

from __future__ import annotations

import csv
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from netlock import atomic
from netlock.errors import TraceError
from netlock.inputs import input_file
from netlock.packets import EXCLUSIVE, SHARED

if TYPE_CHECKING:
    import pyarrow as pa

REQUIRED_COLUMNS = ("lock_id", "mode", "t_request", "t_release", "client_id", "txn_id")
CSV_SUFFIXES = (".csv",)
PARQUET_SUFFIXES = (".parquet", ".pq")
MODE_LETTERS = {SHARED: "S", EXCLUSIVE: "X"}
"""How a trace file spells each mode code (:class:`netlock.packets.Mode`)."""
_MODE_CODES = {letter: code for code, letter in MODE_LETTERS.items()}
_CSV_CHUNK_BYTES = 64 << 20
_CSV_BLOCK_BYTES = 1 << 20
_PARQUET_BATCH_ROWS = 1 << 20


@dataclass(frozen=True, eq=False)
class Trace:
    """The columns of a validated trace that planning needs.

    ``mode`` is int8 (:data:`MODE_LETTERS`: 0 = S, 1 = X); times are float64 seconds;
    ``priority`` is None when the trace has no priority column (every request is then
    priority 0).
    """

    source: str
    lock_id: np.ndarray
    mode: np.ndarray
    t_request: np.ndarray
    t_release: np.ndarray
    priority: np.ndarray | None = None
    txn: np.ndarray | None = None
    """Per request, its transaction: ``client_id`` and ``txn_id`` combined into one int64
    key (requests of one transaction share it), or None where a trace was built without
    them; the planner's closed-loop model reads a transaction's locks from it."""

    def __len__(self) -> int:
        return len(self.lock_id)

    @property
    def duration_s(self) -> float:
        """D = max(t_release) - min(t_request), the span r_i is measured over, s."""
        return float(self.t_release.max() - self.t_request.min())


def trace_format(path: Path) -> str:
    """``csv`` or ``parquet`` from the file name; anything else is a TraceError."""
    suffix = path.suffix.lower()
    if suffix in CSV_SUFFIXES:
        return "csv"
    if suffix in PARQUET_SUFFIXES:
        return "parquet"
    raise TraceError(f"{path}: unknown trace format {suffix or '(no extension)'!r}; "
                     f"use .csv or .parquet")


def _arrow() -> None:
    """Import pyarrow (``pa``, ``pacsv``, ``pq``) for this module's readers and writers."""
    global pa, pacsv, pq
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    # pyarrow's CSV reader would otherwise start a thread watching for Ctrl-C that a process
    # exiting right after a refused trace can still hold: C++ then aborts the exit
    # ("terminate called without an active exception", exit 134). Ctrl-C is the command
    # line's (netlock.cli.interrupt), seen between the reader's blocks of _CSV_BLOCK_BYTES.
    pa.enable_signal_handlers(False)


def read_trace(path: str | Path) -> Trace:
    """Read and validate a whole trace; any problem is a one-line :class:`TraceError`."""
    _arrow()
    path = Path(path)
    fmt = trace_format(path)
    input_file(path, TraceError, "trace")
    chunks = _csv_chunks(path) if fmt == "csv" else _parquet_chunks(path)
    columns = _Columns(_expected_rows(path, fmt))
    for batch in chunks:
        columns.add(_validated(batch, path, columns.rows))
    if columns.rows == 0:
        raise TraceError(f"{path}: the trace has no lock requests")
    cols = columns.arrays()
    trace = Trace(source=str(path), lock_id=cols["lock_id"], mode=cols["mode"],
                  t_request=cols["t_request"], t_release=cols["t_release"],
                  priority=cols.get("priority"),
                  txn=transaction_keys(cols["client_id"], cols["txn_id"]))
    span = trace.duration_s
    rate = len(trace) / span if span > 0 else 0.0
    if not (np.isfinite(len(trace) * span * 1e6) and np.isfinite(rate)):
        raise TraceError(f"{path}: t_request, t_release: the trace spans {span:g} s: its "
                         f"{len(trace):,} requests' rates and hold times (in us) are not finite "
                         f"numbers (times are seconds)")
    return trace


def transaction_keys(client_id: np.ndarray, txn_id: np.ndarray) -> np.ndarray:
    """One int64 per request naming its transaction: ``txn_id`` alone when it never repeats
    across clients, else the dense rank of the (client_id, txn_id) pair."""
    by_txn = np.argsort(txn_id, kind="stable")
    t, c = txn_id[by_txn], client_id[by_txn]
    if not np.any((t[1:] == t[:-1]) & (c[1:] != c[:-1])):
        return txn_id
    order = np.lexsort((txn_id, client_id))
    key = np.stack([client_id[order], txn_id[order]])
    starts = np.r_[True, np.any(key[:, 1:] != key[:, :-1], axis=0)]
    out = np.empty(len(order), dtype=np.int64)
    out[order] = np.cumsum(starts) - 1
    return out


class _Columns:
    """Chunks copied into arrays allocated once for the expected row count (grown if it
    was too small): large fresh allocations, not parsing, dominate at 10M+ rows."""

    def __init__(self, expected_rows: int) -> None:
        self.rows = 0
        self.capacity = max(expected_rows, 1)
        self.data: dict[str, np.ndarray] = {}

    def add(self, chunk: dict[str, np.ndarray]) -> None:
        n = len(chunk["lock_id"])
        if not self.data:
            self.data = {k: np.empty(max(self.capacity, n), v.dtype) for k, v in chunk.items()}
        elif self.rows + n > len(self.data["lock_id"]):
            size = max(2 * len(self.data["lock_id"]), self.rows + n)
            self.data = {k: np.concatenate([v[:self.rows], np.empty(size - self.rows, v.dtype)])
                         for k, v in self.data.items()}
        for k, v in chunk.items():
            self.data[k][self.rows:self.rows + n] = v
        self.rows += n

    def arrays(self) -> dict[str, np.ndarray]:
        return {k: v[:self.rows] for k, v in self.data.items()}


def write_trace(columns: dict[str, np.ndarray], path: str | Path) -> None:
    """Write a trace's columns atomically as CSV or Parquet (by extension); ``mode`` codes
    are written as their letters (S / X)."""
    _arrow()
    path = Path(path)
    fmt = trace_format(path)
    letters = [MODE_LETTERS[code] for code in sorted(MODE_LETTERS)]
    modes = pa.DictionaryArray.from_arrays(pa.array(columns["mode"].astype(np.int32)),
                                           pa.array(letters))
    table = pa.table({name: (modes if name == "mode" else pa.array(values))
                      for name, values in columns.items()})
    try:
        if fmt == "csv":
            atomic.write_with(path, lambda tmp: pacsv.write_csv(table, tmp))
        else:
            atomic.write_with(path, lambda tmp: pq.write_table(table, tmp))
    except OSError as exc:
        raise TraceError(f"{path}: cannot write: {exc.strerror or exc}") from None


def _expected_rows(path: Path, fmt: str) -> int:
    """Rows in a Parquet file (from its footer), or a CSV's size / 40 bytes per row."""
    if fmt == "parquet":
        try:
            return pq.ParquetFile(path).metadata.num_rows
        except (OSError, pa.ArrowException):
            return 0
    return path.stat().st_size // 40


def trace_digest(path: str | Path) -> str:
    """``sha256:<hex>`` of the file's bytes, recorded in the plan's inputs."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(1 << 22):
            digest.update(block)
    return f"sha256:{digest.hexdigest()}"


def _check_columns(path: Path, names: list[str]) -> list[str]:
    """The columns to read; a missing or repeated required column is a TraceError."""
    for name in sorted(set(names)):
        if names.count(name) > 1 and name in (*REQUIRED_COLUMNS, "priority"):
            raise TraceError(f"{path}: column {name!r}: appears {names.count(name)} times")
    if {"rate_rps", "contention"} <= set(names) and "t_request" not in names:
        raise TraceError(f"{path}: a per-lock counter table (netlock stats --out), not a "
                         f"trace: it holds only the switch's locks and no request times; "
                         f"netlock autopilot re-plans from the switch's and the lock "
                         f"servers' counters, netlock plan reads traces (docs/formats.md)")
    for name in REQUIRED_COLUMNS:
        if name not in names:
            raise TraceError(f"{path}: column {name!r}: missing (the trace has "
                             f"{', '.join(map(repr, names)) or 'no columns'})")
    return [*REQUIRED_COLUMNS, *(["priority"] if "priority" in names else [])]


def _csv_header(path: Path) -> list[str]:
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            return next(csv.reader(fh), [])
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise TraceError(f"{path}: cannot read the CSV header: {exc}") from None


def _csv_blocks(path: Path) -> Iterator[pa.Buffer]:
    """The rows after the header in pieces of about ``_CSV_CHUNK_BYTES`` cut at line ends,
    so each parses on its own with every core and memory stays bounded. A piece is a view
    of one reused buffer, valid until the next is requested. Traces hold numbers and S/X
    only: no quoted field spans lines."""
    buf = bytearray(_CSV_CHUNK_BYTES)
    view = memoryview(buf)
    with open(path, "rb") as fh:
        fh.readline()
        kept = 0
        while got := fh.readinto(view[kept:]):
            end = kept + got
            cut = buf.rfind(b"\n", 0, end) + 1
            if cut == 0 and end == len(buf):
                raise TraceError(f"{path}: a line is longer than {_CSV_CHUNK_BYTES} bytes")
            if cut:
                yield pa.py_buffer(view[:cut])
                buf[:end - cut] = buf[cut:end]
            kept = end - cut
        if buf[:kept].strip():
            yield pa.py_buffer(view[:kept])


def _csv_chunks(path: Path) -> Iterator[pa.RecordBatch]:
    """Typed batches; if a value does not parse as its type, the rest of the file is read
    as text so that :func:`_validated` can name the bad row (or accept, e.g., ``3.0``)."""
    names = _csv_header(path)
    columns = _check_columns(path, names)
    types = {"lock_id": pa.int64(), "t_request": pa.float64(), "t_release": pa.float64(),
             "mode": pa.dictionary(pa.int32(), pa.string()), "priority": pa.int64(),
             "client_id": pa.int64(), "txn_id": pa.int64()}
    typed = pacsv.ConvertOptions(column_types={c: types[c] for c in columns},
                                 include_columns=columns, null_values=[""],
                                 strings_can_be_null=False)
    rows = 0
    try:
        for block in _csv_blocks(path):
            table = pacsv.read_csv(pa.BufferReader(block), read_options=pacsv.ReadOptions(
                use_threads=True, block_size=_CSV_BLOCK_BYTES, column_names=names),
                convert_options=typed)
            for batch in table.to_batches():
                yield batch
                rows += batch.num_rows
        return
    except pa.ArrowInvalid:
        pass
    except (OSError, pa.ArrowException) as exc:
        raise TraceError(f"{path}: cannot read as CSV: {exc}") from None
    text = pacsv.ConvertOptions(column_types={c: pa.string() for c in columns},
                                include_columns=columns, null_values=[""],
                                strings_can_be_null=True)
    seen = 0
    try:
        for batch in pacsv.open_csv(path, convert_options=text):
            if seen + batch.num_rows > rows:
                yield batch.slice(max(rows - seen, 0))
            seen += batch.num_rows
    except (OSError, pa.ArrowException) as exc:
        first = str(exc).strip().splitlines()[0]
        raise TraceError(f"{path}: malformed CSV after row {seen}: {first}") from None


def _parquet_chunks(path: Path) -> Iterator[pa.RecordBatch]:
    try:
        pfile = pq.ParquetFile(path)
    except (OSError, pa.ArrowException) as exc:
        raise TraceError(f"{path}: cannot read as Parquet: {exc}") from None
    columns = _check_columns(path, list(pfile.schema_arrow.names))
    try:
        yield from pfile.iter_batches(batch_size=_PARQUET_BATCH_ROWS, columns=columns)
    except (OSError, pa.ArrowException) as exc:
        raise TraceError(f"{path}: cannot read as Parquet: {exc}") from None


class _Problems:
    """Collects the earliest bad row of one chunk across all columns."""

    def __init__(self, path: Path, offset: int) -> None:
        self.path, self.offset = path, offset
        self.best: tuple[int, str] | None = None

    def check(self, bad: np.ndarray, column: str, what: str, values: object = None) -> None:
        if not bad.any():
            return
        i = int(np.argmax(bad))
        if self.best is not None and i >= self.best[0]:
            return
        got = "" if values is None else f" (got {_show(values, i)})"
        self.best = (i, f"{column}: {what}{got}")

    def raise_first(self) -> None:
        if self.best is not None:
            i, msg = self.best
            raise TraceError(f"{self.path}: row {self.offset + i}: {msg}")


def _show(values: object, i: int) -> str:
    value = values[i] if not isinstance(values, pa.Array) else values[i].as_py()
    return repr(value.item() if hasattr(value, "item") else value)


def _validated(batch: pa.RecordBatch, path: Path, offset: int) -> dict[str, np.ndarray]:
    """The chunk's columns as numpy arrays, or a TraceError for its first bad row."""
    problems = _Problems(path, offset)
    out = {
        "lock_id": _integers(batch.column("lock_id"), "lock_id", problems),
        "mode": _modes(batch.column("mode"), problems),
        "t_request": _floats(batch.column("t_request"), "t_request", problems),
        "t_release": _floats(batch.column("t_release"), "t_release", problems),
    }
    for name in ("client_id", "txn_id"):
        out[name] = _integers(batch.column(name), name, problems)
    if "priority" in batch.schema.names:
        out["priority"] = _integers(batch.column("priority"), "priority", problems)
    before = out["t_release"] < out["t_request"]
    if before.any():
        i = int(np.argmax(before))
        problems.check(before, "t_release", f"{out['t_release'][i].item()!r} is before t_request "
                                            f"{out['t_request'][i].item()!r}")
    problems.raise_first()
    return out


def _nulls(arr: pa.Array) -> np.ndarray:
    return arr.is_null().to_numpy(zero_copy_only=False)


def _numeric(arr: pa.Array, column: str, problems: _Problems) -> np.ndarray:
    """Any arrow column as float64, flagging empty and unparsable values."""
    if arr.null_count:
        problems.check(_nulls(arr), column, "missing value (empty, null or NaN)")
    if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type) or \
            pa.types.is_dictionary(arr.type):
        import pandas as pd

        text = arr.cast(pa.string()).to_pandas()
        values = pd.to_numeric(text, errors="coerce").to_numpy(dtype=np.float64)
        unparsable = np.isnan(values) & text.notna().to_numpy() & \
            ~text.str.strip().str.lower().isin(["nan", "-nan", "+nan"]).to_numpy()
        problems.check(unparsable, column, "not a number", text.to_numpy())
        return values
    if not (pa.types.is_integer(arr.type) or pa.types.is_floating(arr.type)):
        problems.check(np.ones(len(arr), dtype=bool), column, f"expected numbers, the "
                       f"column holds {arr.type}")
        return np.zeros(len(arr))
    return arr.to_numpy(zero_copy_only=False).astype(np.float64, copy=False)


def _integers(arr: pa.Array, column: str, problems: _Problems) -> np.ndarray:
    """An integer >= 0 column as int64."""
    if pa.types.is_integer(arr.type) and not arr.null_count:
        values = arr.to_numpy().astype(np.int64, copy=False)
        problems.check(values < 0, column, "must be >= 0", values)
        return values
    floats = _numeric(arr, column, problems)
    problems.check(np.isnan(floats) & ~_nulls(arr), column, "NaN")
    ok = np.isfinite(floats)
    problems.check(ok & (floats != np.floor(np.where(ok, floats, 0))), column,
                   "not an integer", floats)
    problems.check(ok & (floats < 0), column, "must be >= 0", floats)
    problems.check(ok & (floats >= 2.0**63), column, "too large for a 64-bit integer", floats)
    return np.where(ok & (np.abs(floats) < 2.0**63), floats, 0).astype(np.int64)


def _floats(arr: pa.Array, column: str, problems: _Problems) -> np.ndarray:
    """A finite float column (seconds) as float64."""
    values = _numeric(arr, column, problems)
    bad = ~np.isfinite(values)
    if bad.any():
        nulls = _nulls(arr) if arr.null_count else np.zeros(len(values), dtype=bool)
        problems.check(np.isnan(values) & ~nulls, column, "NaN")
        problems.check(np.isinf(values), column, "not finite", values)
    return values


def _modes(arr: pa.Array, problems: _Problems) -> np.ndarray:
    """The mode column as int8 codes (:data:`MODE_LETTERS`)."""
    if arr.null_count:
        problems.check(_nulls(arr), "mode", "missing value (empty or null)")
    if not pa.types.is_dictionary(arr.type):
        if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
            problems.check(np.ones(len(arr), dtype=bool), "mode",
                           f"expected S or X, the column holds {arr.type}")
            return np.zeros(len(arr), dtype=np.int8)
        arr = arr.dictionary_encode()
    names = arr.dictionary.to_pylist()
    lut = np.array([_MODE_CODES.get(name, -1) for name in names] or [-1], dtype=np.int8)
    codes = (arr.indices.fill_null(0) if arr.null_count else arr.indices).to_numpy()
    modes = lut[codes]
    unknown = modes < 0
    if unknown.any():
        problems.check(unknown, "mode", "unknown mode, expected S or X",
                       np.array(names, dtype=object)[codes])
    return np.maximum(modes, 0)
