"""A run's fixed CPU (issue 32): the summary is computed from the recorded numpy columns and the
DataFrames are made only when read, so a run reported by its summary alone imports neither
pandas nor pyarrow; numba's first use does not import ``scipy.linalg``. Neither changes a
result."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd

from sim.core.rows import Columns
from sim.fast.simulate_fast import build, summarise
from tests.sim.helpers import CONFIGS, config

HEAVY = ("pandas", "pyarrow", "scipy.linalg", "matplotlib", "simpy")


def test_a_fast_run_reported_by_its_summary_imports_no_table_library():
    probe = f"""
import json, sys
from netlock.cli import main
sys.argv = ["netlock", "sim", {str(CONFIGS / "micro-exclusive.yaml")!r}, "--engine", "fast",
            "--set", "sim.duration_s=0.0002", "--json"]
try:
    main()
except SystemExit:
    pass
print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)), file=sys.stderr)
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True)
    assert done.stderr.strip().splitlines()[-1] == "[]"
    assert '"granted"' in done.stdout


def _finished(**overrides):
    cfg = config("micro-exclusive", sim__duration_s=0.0005, sim__warmup_s=0.0002, **overrides)
    model = build(cfg)
    end_us = cfg.sim.end_s * 1e6
    model.advance(end_us)
    model.close(end_us)
    return model


def _frames_only(model) -> None:
    """Hand ``summarise`` the model's tables as DataFrames, as the engines did before."""
    for name in ("requests", "txns", "handbacks"):
        table = getattr(model, f"{name}_columns")()
        setattr(model, f"{name}_columns", lambda table=table: table.frame())


def test_the_summary_from_columns_is_the_summary_from_dataframes():
    lossy = {"network__loss": 1e-3}
    for overrides in ({}, lossy):
        model = _finished(**overrides)
        from_columns = summarise(model, 0.0)
        _frames_only(model)
        from_frames = summarise(model, 0.0)
        assert from_columns.summary == from_frames.summary
        assert from_columns.summary["granted"] > 1000
        for name in ("requests", "txns", "timeseries"):
            lazy, eager = getattr(from_columns, name), getattr(from_frames, name)
            assert isinstance(lazy, pd.DataFrame)
            pd.testing.assert_frame_equal(lazy, eager)
        assert from_columns.requests is from_columns.requests


def test_the_lazy_tables_are_written(tmp_path):
    result = summarise(_finished(), 0.0)
    written = result.write(tmp_path / "run")
    assert {p.name for p in written} >= {"requests.parquet", "txns.parquet",
                                          "timeseries.parquet", "summary.json"}
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "run" / "requests.parquet"),
                                  result.requests)


def test_columns_of_records_and_their_frame():
    records = np.array([(1.5, 3), (2.5, 4)], dtype=[("t_us", np.float64), ("lock", np.int64)])
    table = Columns.of_records(records)
    assert len(table) == 2
    assert table["lock"].tolist() == [3, 4]
    frame = table.frame()
    assert list(frame.columns) == ["t_us", "lock"]
    assert list(frame.dtypes) == [np.float64, np.int64]
    assert len(Columns.of_records(records[:0])) == 0


def test_numbas_first_use_leaves_scipy_linalg_until_blas_is_used():
    """numba's BLAS check is answered without importing ``scipy.linalg``; compiled code that
    does use BLAS still gets it (numba's own check runs then)."""
    probe = """
import sys
import numpy as np
from netlock.dataplane import _kernel_jit
numba = _kernel_jit._numba()
from numba.np import arraymath, linalg
print("scipy.linalg" in sys.modules, arraymath._HAVE_BLAS,
      arraymath.ensure_blas is linalg.ensure_blas)
dot = numba.njit(lambda a, b: np.dot(a, b))
a = np.arange(6.0).reshape(2, 3)
print(np.array_equal(dot(a, a.T), a @ a.T), "scipy.linalg" in sys.modules)
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True)
    assert done.stdout.split() == ["False", "True", "True", "True", "True"]
