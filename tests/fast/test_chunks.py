"""Recorder chunks: recycled between runs of a process, never shared with results."""

from __future__ import annotations

import gc

import numpy as np
import pandas as pd

from sim.core.metrics import USE_DTYPE
from sim.fast import chunks
from sim.fast.fast_model import ROW_CHUNK
from sim.fast.simulate_fast import build
from tests.sim.helpers import config


def run_model(duration_us: float = 1500.0):
    model = build(config("micro-exclusive", sim__duration_s=0.002, sim__warmup_s=0.0))
    model.advance(duration_us)
    return model


def test_a_gone_models_chunks_serve_the_next_model_with_the_same_results(monkeypatch):
    monkeypatch.setattr(chunks, "_spare", [])
    first = run_model()
    frame = first.requests_frame()
    addresses = {chunk.ctypes.data for chunk in first.owned}
    del first
    gc.collect()
    assert chunks.spare_bytes() > 0
    second = run_model()
    assert addresses & {chunk.ctypes.data for chunk in second.owned}
    pd.testing.assert_frame_equal(second.requests_frame(), frame)


def test_results_never_point_into_a_chunk():
    model = run_model()
    requests, txns = model.requests_frame(), model.txns_frame()
    assert len(requests) and len(txns)
    for frame in (requests, txns):
        for column in frame.columns:
            values = frame[column].to_numpy()
            assert not any(np.shares_memory(values, chunk) for chunk in model.owned), column


def test_spare_chunks_are_capped(monkeypatch):
    monkeypatch.setattr(chunks, "_spare", [])
    monkeypatch.setattr(chunks, "SPARE_BYTES", 3 * ROW_CHUNK * USE_DTYPE.itemsize)
    chunks.give_back([np.empty(ROW_CHUNK, dtype=USE_DTYPE) for _ in range(5)])
    assert chunks.spare_bytes() == 3 * ROW_CHUNK * USE_DTYPE.itemsize
    big = chunks.take(ROW_CHUNK, USE_DTYPE)
    assert chunks.spare_bytes() == 2 * ROW_CHUNK * USE_DTYPE.itemsize
    bigger = chunks.take(2 * ROW_CHUNK, USE_DTYPE)
    assert len(big) == ROW_CHUNK and len(bigger) == 2 * ROW_CHUNK
    assert chunks.spare_bytes() == 2 * ROW_CHUNK * USE_DTYPE.itemsize
