"""Arrays cross the engine's channel unchanged, whole or as their non-zero entries."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_netload.engine.wire import SPARSE_MIN_ITEMS, pack_array, unpack_array


@settings(max_examples=60, deadline=None)
@given(rows=st.integers(0, 40), cols=st.integers(1, 300), share=st.floats(0, 1),
       dtype=st.sampled_from(["<u8", "<i4", "<f8", "<u2"]), seed=st.integers(0, 2**32 - 1))
def test_round_trip_is_exact(rows: int, cols: int, share: float, dtype: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    arr = np.zeros((rows, cols), dtype=dtype)
    mask = rng.random(arr.shape) < share
    arr[mask] = rng.integers(1, 1000, size=int(mask.sum())).astype(dtype)
    back = unpack_array(pack_array(arr))
    assert back.dtype == arr.dtype and back.shape == arr.shape
    assert np.array_equal(back, arr)
    assert not np.shares_memory(back, arr)  # the client's copy is its own


def test_a_mostly_empty_histogram_table_travels_as_its_entries() -> None:
    hist = np.zeros((10_000, 2560), dtype=np.uint64)  # 10,000 streams' latency buckets
    hist[:, 100:104] = 7
    packed = pack_array(hist)
    assert "data" not in packed
    assert len(packed["index"]) + len(packed["values"]) == 16 * 40_000  # not 205 MB
    back = unpack_array(packed)
    assert np.array_equal(back, hist) and back.dtype == np.uint64


def test_dense_small_and_structured_arrays_travel_whole() -> None:
    dense = np.arange(1, SPARSE_MIN_ITEMS + 1, dtype=np.uint64)
    small = np.zeros(SPARSE_MIN_ITEMS - 1, dtype=np.uint64)
    rec = np.zeros(SPARSE_MIN_ITEMS * 2, dtype=[("packets", "<u8"), ("lost", "<u8")])
    for arr in (dense, small, rec):
        packed = pack_array(arr)
        assert "data" in packed and "index" not in packed
        assert np.array_equal(unpack_array(packed), arr)


@pytest.mark.parametrize("shape", [(0,), (0, 2560), (SPARSE_MIN_ITEMS,)])
def test_empty_and_all_zero(shape: tuple[int, ...]) -> None:
    arr = np.zeros(shape, dtype=np.uint64)
    back = unpack_array(pack_array(arr))
    assert back.shape == arr.shape and not back.any()
