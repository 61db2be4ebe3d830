"""Trace ingest: round trips, and one clear error per kind of bad trace."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from netlock.errors import TraceError
from netlock.trace import read_trace
from tests.planner.traces import trace_frame, write_frame


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_round_trip(tmp_path: Path, suffix: str) -> None:
    frame = trace_frame(10)
    frame["priority"] = np.arange(10) % 2
    trace = read_trace(write_frame(frame, tmp_path / f"t{suffix}"))
    assert np.array_equal(trace.lock_id, frame.lock_id)
    assert np.array_equal(trace.mode, (frame["mode"] == "X").astype(np.int8))
    assert np.array_equal(trace.t_request, frame.t_request)
    assert np.array_equal(trace.t_release, frame.t_release)
    assert np.array_equal(trace.priority, frame.priority)
    assert trace.duration_s == pytest.approx(0.0115)


def test_many_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import netlock.trace as trace_module

    monkeypatch.setattr(trace_module, "_PARQUET_BATCH_ROWS", 7)
    monkeypatch.setattr(trace_module, "_CSV_BLOCK_BYTES", 256)
    monkeypatch.setattr(trace_module, "_CSV_CHUNK_BYTES", 1000)
    frame = trace_frame(200)
    frame.loc[150, "mode"] = "Q"
    for suffix in (".csv", ".parquet"):
        with pytest.raises(TraceError, match=r"row 150: mode: unknown mode.*'Q'"):
            read_trace(write_frame(frame, tmp_path / f"t{suffix}"))
    frame.loc[150, "mode"] = "S"
    assert len(read_trace(write_frame(frame, tmp_path / "ok.csv"))) == 200
    frame["lock_id"] = frame["lock_id"].astype(object)
    frame.loc[170, "lock_id"] = "7.0"
    trace = read_trace(write_frame(frame, tmp_path / "late.csv"))
    assert len(trace) == 200 and trace.lock_id[170] == 7
    assert np.array_equal(trace.t_request, frame["t_request"].to_numpy())
    frame.loc[180, "lock_id"] = "x7"
    with pytest.raises(TraceError, match=r"row 180: lock_id: not a number \(got 'x7'\)"):
        read_trace(write_frame(frame, tmp_path / "late.csv"))
    monkeypatch.setattr(trace_module, "_CSV_CHUNK_BYTES", 20)
    with pytest.raises(TraceError, match="a line is longer than 20 bytes"):
        read_trace(tmp_path / "ok.csv")


CSV_CASES = [
    ("missing column", "lock_id,mode,t_request,t_release,client_id\n1,S,0,1,0\n",
     r"column 'txn_id': missing"),
    ("release before request", "lock_id,mode,t_request,t_release,client_id,txn_id\n"
     "1,S,0,1,0,0\n2,X,2.5,2.0,0,1\n", r"row 1: t_release: 2.0 is before t_request 2.5"),
    ("negative lock", "lock_id,mode,t_request,t_release,client_id,txn_id\n"
     "1,S,0,1,0,0\n1,S,0,1,0,0\n-4,S,0,1,0,0\n", r"row 2: lock_id: must be >= 0 \(got -4"),
    ("fractional lock", "lock_id,mode,t_request,t_release,client_id,txn_id\n"
     "1,S,0,1,0,0\n1.5,S,0,1,0,0\n", r"row 1: lock_id: not an integer \(got 1.5\)"),
    ("text lock", "lock_id,mode,t_request,t_release,client_id,txn_id\n"
     "abc,S,0,1,0,0\n", r"row 0: lock_id: not a number \(got 'abc'\)"),
    ("unknown mode", "lock_id,mode,t_request,t_release,client_id,txn_id\n"
     "1,S,0,1,0,0\n1,W,0,1,0,0\n", r"row 1: mode: unknown mode, expected S or X \(got 'W'\)"),
    ("NaN time", "lock_id,mode,t_request,t_release,client_id,txn_id\n"
     "1,S,0,1,0,0\n1,S,NaN,1,0,0\n", r"row 1: t_request: NaN"),
    ("empty time", "lock_id,mode,t_request,t_release,client_id,txn_id\n"
     "1,S,0,,0,0\n", r"row 0: t_release: missing value"),
    ("infinite time", "lock_id,mode,t_request,t_release,client_id,txn_id\n"
     "1,S,0,inf,0,0\n", r"row 0: t_release: not finite"),
    ("negative priority", "lock_id,mode,t_request,t_release,client_id,txn_id,priority\n"
     "1,S,0,1,0,0,-1\n", r"row 0: priority: must be >= 0"),
    ("no rows", "lock_id,mode,t_request,t_release,client_id,txn_id\n", r"no lock requests"),
]


@pytest.mark.parametrize(("name", "text", "message"), CSV_CASES, ids=[c[0] for c in CSV_CASES])
def test_bad_csv_names_file_row_and_column(tmp_path: Path, name: str, text: str,
                                           message: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(TraceError) as err:
        read_trace(path)
    msg = str(err.value)
    assert msg.startswith(f"{path}: ") and "\n" not in msg
    assert re.search(message, msg), msg


def test_first_problem_in_file_order_wins(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("lock_id,mode,t_request,t_release,client_id,txn_id\n"
                    "1,S,0,1,0,0\n1,S,5,1,0,0\n-1,Q,0,1,0,0\n")
    with pytest.raises(TraceError, match=r"row 1: t_release"):
        read_trace(path)


@pytest.mark.parametrize(("column", "value", "message"), [
    ("lock_id", 2.5, r"row 3: lock_id: not an integer"),
    ("lock_id", np.nan, r"row 3: lock_id: missing value \(empty, null or NaN\)"),
    ("t_request", np.nan, r"row 3: t_request: missing value \(empty, null or NaN\)"),
    ("mode", "x", r"row 3: mode: unknown mode"),
    ("mode", None, r"row 3: mode: missing value"),
])
def test_bad_parquet(tmp_path: Path, column: str, value: object, message: str) -> None:
    frame = trace_frame(6)
    if column == "lock_id":
        frame["lock_id"] = frame["lock_id"].astype(float)
    frame[column] = frame[column].astype(object) if column == "mode" else frame[column]
    frame.loc[3, column] = value
    with pytest.raises(TraceError, match=message):
        read_trace(write_frame(frame, tmp_path / "bad.parquet"))


def test_parquet_nan_that_is_not_null(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    frame = trace_frame(6)
    release = frame["t_release"].to_numpy().copy()
    release[4] = np.nan
    table = pa.Table.from_pandas(frame.drop(columns="t_release"), preserve_index=False)
    table = table.append_column("t_release", pa.array(release, from_pandas=False))
    pq.write_table(table, tmp_path / "nan.parquet")
    with pytest.raises(TraceError, match=r"row 4: t_release: NaN"):
        read_trace(tmp_path / "nan.parquet")


def test_whole_float_lock_ids_are_accepted(tmp_path: Path) -> None:
    frame = trace_frame(4)
    frame["lock_id"] = frame["lock_id"].astype(float)
    assert read_trace(write_frame(frame, tmp_path / "f.parquet")).lock_id.dtype == np.int64


def test_file_level_errors(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match=r"unknown trace format '\.txt'"):
        read_trace(tmp_path / "t.txt")
    with pytest.raises(TraceError, match="no such file"):
        read_trace(tmp_path / "missing.csv")
    (tmp_path / "junk.parquet").write_bytes(b"not parquet")
    with pytest.raises(TraceError, match="cannot read as Parquet"):
        read_trace(tmp_path / "junk.parquet")
    (tmp_path / "ragged.csv").write_text("lock_id,mode,t_request,t_release,client_id,txn_id\n"
                                         "1,S,0,1,0\n")
    with pytest.raises(TraceError, match=r"ragged\.csv"):
        read_trace(tmp_path / "ragged.csv")


def test_extra_columns_are_ignored(tmp_path: Path) -> None:
    frame = trace_frame(4)
    frame["note"] = "hello"
    frame["tenant"] = 3
    assert len(read_trace(write_frame(frame, tmp_path / "t.csv"))) == 4
    pd.testing.assert_index_equal(frame.columns[:6], trace_frame(4).columns)


def test_csv_whole_float_lock_ids_fall_back_to_text(tmp_path: Path) -> None:
    path = tmp_path / "floats.csv"
    path.write_text("lock_id,mode,t_request,t_release,client_id,txn_id\n"
                    "1,S,0,1,0,0\n2.0,X,0,1,0,0\n3,S,0.5,2,0,1\n")
    trace = read_trace(path)
    assert list(trace.lock_id) == [1, 2, 3] and list(trace.mode) == [0, 1, 0]
    assert list(trace.t_release) == [1.0, 1.0, 2.0]
