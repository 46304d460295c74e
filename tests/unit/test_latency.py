"""Unit tests of pytest_netload.measure.latency: LatencyResult, percentiles, IPDV, HdrHistogram exchange."""

from __future__ import annotations

import dataclasses
import json
import math
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_netload.errors import NetloadConfigError, NetloadEnvironmentError
from pytest_netload.measure import stats
from pytest_netload.measure.histogram import LogHistogram
from pytest_netload.measure.latency import (
    DEFAULT_PERCENTILES,
    LatencyResult,
    Percentile,
    from_hdr,
    to_hdr,
)

N_BUCKETS = 2560  # NETLOAD_HIST_BUCKETS


def lower_bounds(n: int = N_BUCKETS) -> np.ndarray:
    """The engine's bucket layout (native/src/hist.c), rebuilt for pure-Python tests."""
    i = np.arange(n, dtype=np.uint64)
    k = np.maximum(i, 128) - 128
    above = (k % 64 + 64) << (k // 64 + 1)
    return np.where(i < 128, i, above).astype(np.uint64)


LOWER = lower_bounds()


def histogram_of(values: np.ndarray) -> LogHistogram:
    idx = np.searchsorted(LOWER, np.asarray(values, dtype=np.uint64), side="right") - 1
    counts = np.bincount(np.minimum(idx, N_BUCKETS - 1), minlength=N_BUCKETS).astype(np.uint64)
    return LogHistogram(counts, LOWER)


@pytest.fixture(scope="module")
def values() -> np.ndarray:
    rng = np.random.default_rng(5)
    return np.floor(rng.lognormal(math.log(12_000), 0.3, 100_003))


@pytest.fixture(scope="module")
def result(values: np.ndarray) -> LatencyResult:
    return LatencyResult(
        histogram_of(values), clock="tsc-software", resolution_ns=0.5, samples=values.size,
        duplicates=0, reordered=3, jitter_ns=812,
    )


def empty() -> LatencyResult:
    return LatencyResult(histogram_of(np.array([], dtype=np.uint64)), clock="tsc-software")


# ---- percentiles ----------------------------------------------------------------------


def test_percentiles_against_numpy(result: LatencyResult, values: np.ndarray) -> None:
    assert result.count == values.size
    for pct in result.percentiles():
        exact = float(np.percentile(values, pct.p, method="inverted_cdf"))
        assert abs(pct.value_ns - exact) <= exact / 128
        assert pct.ci_low_ns <= exact <= pct.ci_high_ns
        assert pct.ci_low_ns <= pct.value_ns <= pct.ci_high_ns
        assert pct.confidence == 0.95 and pct.has_ci
    assert [p.p for p in result.percentiles()] == list(DEFAULT_PERCENTILES)
    assert result.min_ns <= values.min() and values.max() <= result.max_ns
    assert result.mean_ns == pytest.approx(values.mean(), rel=1 / 128)


def test_p100_is_the_maximum(result: LatencyResult, values: np.ndarray) -> None:
    top = result.percentile(100)
    assert top.value_ns == result.max_ns >= values.max()
    assert top.ci_low_ns <= values.max() <= top.ci_high_ns
    assert top.coverage is None and not top.has_ci
    assert str(top).startswith("max ")


def test_small_sample_ci_is_flagged() -> None:
    r = LatencyResult(histogram_of(np.arange(1000, 1050)))
    p99 = r.percentile(99)
    assert not p99.has_ci
    assert p99.coverage is not None and p99.coverage < 0.95
    assert (p99.ci_low_ns, p99.ci_high_ns) == (r.min_ns, r.max_ns)
    assert "no 95% CI" in str(p99)
    assert r.percentile(50).has_ci


def test_single_sample_and_all_equal() -> None:
    one = LatencyResult(histogram_of(np.array([42])))
    assert one.count == 1
    p = one.percentile(50)
    assert p.value_ns == 42 and not p.has_ci
    assert one.percentile(100).value_ns == 42 == one.min_ns == one.max_ns
    same = LatencyResult(histogram_of(np.full(5000, 100)))
    for pct in same.percentiles():
        assert (pct.value_ns, pct.ci_low_ns, pct.ci_high_ns) == (100, 100, 100)
    assert same.mean_ns == 100


@pytest.mark.parametrize("p", [0, -1, 100.5, 1000, float("nan"), float("inf"), True, "50"])
def test_percentile_out_of_range(result: LatencyResult, p: object) -> None:
    with pytest.raises(NetloadConfigError, match=r"percentile .*\(0, 100\]"):
        result.percentile(p)  # type: ignore[arg-type]


def test_bad_confidence(result: LatencyResult) -> None:
    for p in (50, 100):
        with pytest.raises(NetloadConfigError, match="confidence 1.5"):
            result.percentile(p, confidence=1.5)


@settings(max_examples=40, deadline=None)
@given(
    data=st.lists(st.integers(0, 10**9), min_size=1, max_size=500),
    p=st.floats(0.01, 100),
)
def test_percentile_brackets_the_ranked_value(data: list[int], p: float) -> None:
    x = np.sort(np.asarray(data, dtype=np.uint64))
    r = LatencyResult(histogram_of(x))
    pct = r.percentile(p)
    ref = int(x[-1]) if p == 100 else int(x[stats.quantile_rank(x.size, p / 100)])
    assert pct.ci_low_ns <= ref <= pct.ci_high_ns
    assert pct.ci_low_ns <= pct.value_ns <= pct.ci_high_ns


# ---- empty results --------------------------------------------------------------------


def test_empty_result_says_so() -> None:
    r = empty()
    assert r.count == 0 and r.empty
    for call in (lambda: r.percentile(50), lambda: r.percentiles(), lambda: r.min_ns,
                 lambda: r.max_ns, lambda: r.mean_ns, lambda: r.percentile(100)):
        with pytest.raises(NetloadConfigError, match="no latency samples: nothing of this stream"):
            call()
    assert str(r).startswith("no samples")
    assert "nan" not in str(r).lower()
    d = r.as_dict()
    assert d["count"] == 0
    assert d["min_ns"] is None and d["max_ns"] is None and d["mean_ns"] is None
    assert set(d["percentiles"].values()) == {None}
    assert "NaN" not in json.dumps(d)


# ---- output ---------------------------------------------------------------------------


def test_str_one_line(result: LatencyResult) -> None:
    text = str(result)
    assert "\n" not in text
    assert text.startswith("p50 ")
    p50 = result.percentile(50)
    us = f"{p50.value_ns / 1e3:.1f}us [{p50.ci_low_ns / 1e3:.1f}, {p50.ci_high_ns / 1e3:.1f}]"
    assert f"p50 {us}" in text
    assert " p99 " in text and " p99.9 " in text and " max " in text
    assert f"n={result.count:,}" in text
    assert "jitter 812ns" in text
    assert text.endswith("tsc-software (resolution 0.5ns)")


def test_as_dict_is_json_ready(result: LatencyResult) -> None:
    d = result.as_dict()
    again = json.loads(json.dumps(d, allow_nan=False))
    assert again == d
    assert d["count"] == result.count and isinstance(d["count"], int)
    assert d["percentiles"]["p99.9"]["value_ns"] == result.percentile(99.9).value_ns
    assert d["clock"] == "tsc-software" and d["resolution_ns"] == 0.5
    assert d["reordered"] == 3 and d["jitter_ns"] == 812.0 and d["ipdv_ns"] is None


def test_frozen(result: LatencyResult) -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.clock = "x"  # type: ignore[misc]
    p = Percentile(50, 1.0, 0.5, 1.5, 0.95, 0.96)
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.value_ns = 2.0  # type: ignore[misc]


def test_metadata_validation(values: np.ndarray) -> None:
    h = histogram_of(values)
    with pytest.raises(NetloadConfigError, match="samples 5: .* holds 100003"):
        LatencyResult(h, samples=5)
    with pytest.raises(NetloadConfigError, match="duplicates -1"):
        LatencyResult(h, duplicates=-1)
    with pytest.raises(NetloadConfigError, match="resolution_ns nan"):
        LatencyResult(h, resolution_ns=float("nan"))
    with pytest.raises(NetloadConfigError, match="LogHistogram"):
        LatencyResult(values)  # type: ignore[arg-type]
    with pytest.raises(NetloadConfigError, match="empty"):
        LatencyResult(h, delays_ns=np.array([]))


# ---- IPDV -----------------------------------------------------------------------------


def test_ipdv() -> None:
    delays = np.array([100, 110, np.nan, 130, 125, 125, 140], dtype=float)
    r = LatencyResult(histogram_of(np.nan_to_num(delays)), delays_ns=delays)
    np.testing.assert_array_equal(r.ipdv_values_ns(), [10, -5, 0, 15])
    assert r.ipdv_ns(50).value_ns == 0  # rank ceil(2) - 1 = 1 of [-5, 0, 10, 15]
    assert r.ipdv_ns(100).value_ns == 15
    assert not r.ipdv_ns(50).has_ci  # 4 pairs are too few for 95 %
    assert r.delays_ns is not None and not r.delays_ns.flags.writeable
    delays[0] = 0  # the result keeps its own copy
    assert r.delays_ns[0] == 100
    assert set(r.as_dict()["ipdv_ns"]) == {"p50", "p90", "p99", "p99.9", "p99.99"}


def test_ipdv_large_sample_has_ci() -> None:
    rng = np.random.default_rng(9)
    delays = rng.normal(20_000, 500, 5000)
    delays[rng.choice(5000, 50, replace=False)] = np.nan
    r = LatencyResult(histogram_of(np.floor(delays[~np.isnan(delays)])), delays_ns=delays)
    ipdv = stats.ipdv(delays)
    pct = r.ipdv_ns(99)
    assert pct.has_ci
    assert pct.value_ns == np.percentile(ipdv, 99, method="inverted_cdf")
    assert pct.ci_low_ns <= pct.value_ns <= pct.ci_high_ns


def test_ipdv_missing_or_impossible() -> None:
    with pytest.raises(NetloadConfigError, match="no per-packet delays"):
        LatencyResult(histogram_of(np.array([5]))).ipdv_ns(50)
    r = LatencyResult(histogram_of(np.array([5, 7])), delays_ns=np.array([5, np.nan, 7]))
    with pytest.raises(NetloadConfigError, match="no IPDV"):
        r.ipdv_ns(50)
    assert r.as_dict()["ipdv_ns"] is None
    with pytest.raises(NetloadConfigError, match="percentile 0"):
        r.ipdv_ns(0)


# ---- HdrHistogram ---------------------------------------------------------------------


def test_hdr_round_trip(result: LatencyResult) -> None:
    pytest.importorskip("hdrh")
    from hdrh.histogram import HdrHistogram  # type: ignore[import-untyped,unused-ignore]

    text = to_hdr(result)
    assert isinstance(text, str) and text.startswith("HISTF")
    counts = from_hdr(text, LOWER)
    np.testing.assert_array_equal(counts, result.histogram.counts)  # exact, bucket by bucket
    back = LatencyResult(LogHistogram(counts, LOWER))
    assert back.count == result.count
    hdr = HdrHistogram.decode(text)
    assert hdr.get_total_count() == result.count
    for p in (50, 90, 99, 99.9, 99.99):
        ours = result.percentile(p).value_ns
        assert back.percentile(p).value_ns == ours
        assert hdr.get_value_at_percentile(p) == pytest.approx(ours, rel=0.01)


def test_hdr_from_raw_values_and_coarser_layouts() -> None:
    pytest.importorskip("hdrh")
    from hdrh.histogram import HdrHistogram  # type: ignore[import-untyped,unused-ignore]

    rng = np.random.default_rng(1)
    x = np.floor(rng.exponential(30_000, 20_000)).astype(np.int64) + 1
    fine = HdrHistogram(1, 10**11, 2)
    coarse = HdrHistogram(1, 10**11, 1)  # 16 sub-buckets a power of two: coarser than ours
    for v in x.tolist():
        fine.record_value(v)
        coarse.record_value(v)
    np.testing.assert_array_equal(from_hdr(fine.encode(), LOWER), histogram_of(x).counts)
    counts = from_hdr(coarse.encode(), LOWER)
    assert int(counts.sum()) == x.size
    r = LatencyResult(LogHistogram(counts, LOWER))
    for p in (50, 99):
        exact = float(np.percentile(x, p, method="inverted_cdf"))
        assert r.percentile(p).value_ns == pytest.approx(exact, rel=1 / 16 + 1 / 64)


def test_hdr_empty_and_huge_values() -> None:
    pytest.importorskip("hdrh")
    np.testing.assert_array_equal(from_hdr(to_hdr(empty()), LOWER), np.zeros(N_BUCKETS))
    big = histogram_of(np.array([3 * 10**12, 5, 5]))  # 50 min: past the default 10**11 ns
    np.testing.assert_array_equal(from_hdr(to_hdr(big), LOWER), big.counts)


def test_hdr_bad_input() -> None:
    pytest.importorskip("hdrh")
    with pytest.raises(NetloadConfigError, match="not an encoded HdrHistogram"):
        from_hdr("garbage!!", LOWER)
    with pytest.raises(NetloadConfigError, match="not an encoded HdrHistogram"):
        from_hdr("aGVsbG8gd29ybGQgaGVsbG8gd29ybGQgaGVsbG8gd29ybGQ=", LOWER)
    with pytest.raises(NetloadConfigError, match="lower_ns"):
        from_hdr(to_hdr(empty()), LOWER.astype(float))
    with pytest.raises(NetloadConfigError, match="increase strictly"):
        from_hdr(to_hdr(empty()), LOWER[::-1].copy())


def test_hdr_missing_package(monkeypatch: pytest.MonkeyPatch, result: LatencyResult) -> None:
    monkeypatch.setitem(sys.modules, "hdrh.histogram", None)
    with pytest.raises(NetloadEnvironmentError, match=r"pip install 'pytest-netload\[hdr\]'"):
        to_hdr(result)
    with pytest.raises(NetloadEnvironmentError, match=r"pip install 'pytest-netload\[hdr\]'"):
        from_hdr("HISTF", LOWER)


def test_merging_results_adds_histograms_and_counters() -> None:
    a = LatencyResult(histogram_of(np.array([10, 20], dtype=np.uint64)), clock="tsc-software",
                      samples=2, duplicates=1, reordered=0, jitter_ns=3.0)
    b = LatencyResult(histogram_of(np.array([30], dtype=np.uint64)), clock="tsc-software",
                      samples=1, duplicates=0, reordered=2, jitter_ns=5.0)
    m = LatencyResult.merge([a, b])
    assert m.count == 3 and m.duplicates == 1 and m.reordered == 2 and m.jitter_ns == 5.0
    with pytest.raises(NetloadConfigError, match="no latency results"):
        LatencyResult.merge([])
