"""Unit tests of pytest_netload.measure.stats: order-statistic CIs, histogram quantiles, jitter, loss."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom, lognorm  # type: ignore[import-untyped,unused-ignore]

from pytest_netload.errors import NetloadConfigError
from pytest_netload.measure import stats
from pytest_netload.measure.histogram import LogHistogram

N_BUCKETS = 2560  # NETLOAD_HIST_BUCKETS


def lower_bounds(n: int = N_BUCKETS) -> np.ndarray:
    """The engine's bucket layout, rebuilt for pure-Python tests (native/src/hist.c).

    Below 128 one bucket per ns; above, each power of two split into 64 equal buckets.
    """
    out = np.zeros(n, dtype=np.uint64)
    for i in range(n):
        if i < 128:
            out[i] = i
        else:
            b, sub = (i - 128) // 64 + 1, (i - 128) % 64 + 64
            out[i] = sub << b
    return out


LOWER = lower_bounds()


def histogram_of(values: np.ndarray) -> LogHistogram:
    """Whole-ns values into the engine's buckets (clamped at the top, as the engine does)."""
    idx = np.searchsorted(LOWER, np.asarray(values, dtype=np.uint64), side="right") - 1
    counts = np.bincount(np.minimum(idx, N_BUCKETS - 1), minlength=N_BUCKETS).astype(np.uint64)
    return LogHistogram(counts, LOWER)


def hq(h: LogHistogram, q: float) -> float:
    return stats.hist_quantile(h.counts, h.lower_ns, h.upper_ns, q)


def hq_ci(h: LogHistogram, q: float, c: float = 0.95) -> tuple[float, float, float]:
    return stats.hist_quantile_ci(h.counts, h.lower_ns, h.upper_ns, q, c)


def test_helper_layout_matches_the_engine() -> None:
    pytest.importorskip("pytest_netload_engine._netload_native", reason="native engine not built")
    from pytest_netload.engine import facade

    np.testing.assert_array_equal(facade.hist_lower_bounds_ns(), LOWER)


def test_helper_layout_spot_values() -> None:
    assert LOWER[127] == 127 and LOWER[128] == 128 and LOWER[129] == 130
    assert LOWER[191] == 254 and LOWER[192] == 256 and LOWER[193] == 260
    widths = np.diff(LOWER.astype(np.float64))
    assert np.all(widths[128:] <= LOWER[128:-1] / 64)  # the 1/64 relative bound


# ---- percentile_ci --------------------------------------------------------------------


def test_ci_coverage_matches_hand_binomial() -> None:
    # n = 10, median, ranks (1, 8): miss when B <= 1 or B >= 9, B ~ Bin(10, 1/2).
    tail = Fraction(1 + 10, 1024)
    assert stats.ci_coverage(10, 0.5, 1, 8) == pytest.approx(float(1 - 2 * tail), abs=1e-12)
    assert stats.percentile_ci(10, 0.5) == (1, 8)


def test_median_of_100() -> None:
    lo, hi = stats.percentile_ci(100, 0.5)
    cov = stats.ci_coverage(100, 0.5, lo, hi)
    assert cov >= 0.95
    # nothing narrower by one rank at either end still reaches 95 %
    assert stats.ci_coverage(100, 0.5, lo + 1, hi) < 0.95
    assert stats.ci_coverage(100, 0.5, lo, hi - 1) < 0.95
    # the textbook equal-tailed interval is ranks 40..61 (1-based): ours is inside it
    assert 39 <= lo and hi <= 60


@pytest.mark.parametrize(("n", "q"), [(1, 0.5), (2, 0.5), (5, 0.5), (200, 0.99), (298, 0.99)])
def test_too_small_gives_whole_sample_flagged(n: int, q: float) -> None:
    assert stats.percentile_ci(n, q) == (0, n - 1)
    assert stats.ci_coverage(n, q, 0, n - 1) < 0.95


def test_p99_needs_299_samples_at_95() -> None:
    # 1 - 0.99**n - 0.01**n >= 0.95 first at n = 299 (upper end must be the maximum)
    lo, hi = stats.percentile_ci(299, 0.99)
    assert hi == 298 and stats.ci_coverage(299, 0.99, lo, hi) >= 0.95


@settings(max_examples=150, deadline=None)
@given(
    n=st.integers(1, 20_000),
    q=st.floats(0.001, 0.999),
    c=st.floats(0.5, 0.999),
)
def test_percentile_ci_properties(n: int, q: float, c: float) -> None:
    lo, hi = stats.percentile_ci(n, q, c)
    assert 0 <= lo <= hi <= n - 1
    best = stats.ci_coverage(n, q, 0, n - 1)
    if best < c - 1e-12:
        assert (lo, hi) == (0, n - 1)
        return
    assert stats.ci_coverage(n, q, lo, hi) >= c - 1e-12
    assert lo < hi
    # locally smallest: neither end can move inward one rank
    if lo + 1 < hi:
        assert stats.ci_coverage(n, q, lo + 1, hi) < c
        assert stats.ci_coverage(n, q, lo, hi - 1) < c
    # the estimate's rank lies inside
    assert lo <= stats.quantile_rank(n, q) <= hi


@pytest.mark.parametrize("q", [0.5, 0.9, 0.95])
def test_ci_coverage_by_simulation(q: float) -> None:
    """2000 samples of 200 exponentials: the CI holds the true quantile ~95 % of the time."""
    rng = np.random.default_rng(20240601)
    x = np.sort(rng.exponential(size=(2000, 200)), axis=1)
    true_q = -math.log1p(-q)
    lo, hi = stats.percentile_ci(200, q)
    inside = float(np.mean((x[:, lo] <= true_q) & (true_q <= x[:, hi])))
    nominal = stats.ci_coverage(200, q, lo, hi)
    assert nominal >= 0.95
    assert inside >= 0.93
    assert abs(inside - nominal) < 4 * math.sqrt(nominal * (1 - nominal) / 2000)


def test_hist_ci_coverage_by_simulation() -> None:
    """Binned whole-ns lognormal samples: the bucket-widened CI covers at least as often."""
    rng = np.random.default_rng(7)
    q, reps, n = 0.9, 1000, 200
    mu, sigma = math.log(20_000), 0.5
    true_q = math.floor(lognorm.ppf(q, sigma, scale=math.exp(mu)))
    data = np.floor(rng.lognormal(mu, sigma, size=(reps, n)))
    hits = 0
    for row in data:
        _, low, high = hq_ci(histogram_of(row), q)
        hits += low <= true_q <= high
    assert hits / reps >= 0.93


# ---- quantile ranks and histogram quantiles -------------------------------------------


def test_quantile_rank_convention() -> None:
    assert stats.quantile_rank(100, 0.5) == 49  # ceil(50) - 1
    assert stats.quantile_rank(100, 0.07) == 6  # 0.07 * 100 is 7.000000000000001 in floats
    assert stats.quantile_rank(101, 0.5) == 50
    assert stats.quantile_rank(1, 0.999) == 0
    assert stats.quantile_rank(1000, 0.999) == 998


@pytest.mark.parametrize(
    "draw",
    [
        lambda rng, n: rng.lognormal(math.log(10_000), 0.7, n),
        lambda rng, n: rng.exponential(50_000, n),
        lambda rng, n: rng.uniform(0, 3_000, n),
    ],
    ids=["lognormal", "exponential", "uniform"],
)
def test_hist_quantile_against_numpy(draw) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(11)
    # n prime: q * n is never a whole number, where numpy's float rounding of q * n - 1 can
    # pick the next rank (0.999 * 20000 - 1 = 19979.000000000004 -> 19980)
    x = np.floor(draw(rng, 20_011))
    h = histogram_of(x)
    for q in (0.01, 0.1, 0.5, 0.9, 0.99, 0.999):
        exact = float(np.percentile(x, 100 * q, method="inverted_cdf"))
        est = hq(h, q)
        assert abs(est - exact) <= exact / 128 + 1e-9, q  # half a bucket
        linear = float(np.percentile(x, 100 * q))  # numpy's default method
        if 0.05 <= q <= 0.99:
            assert abs(est - linear) <= linear / 64, q
        _, low, high = hq_ci(h, q)
        assert low <= est <= high
        assert low <= exact <= high


@settings(max_examples=100, deadline=None)
@given(
    values=st.lists(st.integers(0, 10**10), min_size=1, max_size=300),
    q=st.floats(0.001, 0.999),
)
def test_hist_quantile_is_bucket_of_ranked_value(values: list[int], q: float) -> None:
    x = np.sort(np.asarray(values, dtype=np.uint64))
    h = histogram_of(x)
    n = len(values)
    est, low, high = hq_ci(h, q)
    ref = int(x[stats.quantile_rank(n, q)])
    b = int(np.searchsorted(LOWER, ref, side="right") - 1)
    assert est == (float(h.lower_ns[b]) + float(h.upper_ns[b]) - 1) / 2
    assert est == h.quantile_ns(q)  # the same convention as LogHistogram
    lo, hi = stats.percentile_ci(n, q)
    assert low <= x[lo] and x[hi] <= high
    assert low <= est <= high


def test_log_histogram_quantile_is_hist_quantile() -> None:
    """One implementation: LogHistogram.quantile_ns is stats.hist_quantile, also where
    q * n lies a hair above a whole number in floats (0.07 * 100 = 7.000000000000001)."""
    h = histogram_of(np.arange(1, 101))  # one-ns buckets: the estimate is the value
    assert h.quantile_ns(0.07) == hq(h, 0.07) == 7.0  # rank ceil(7) - 1 = 6
    assert h.quantile_ns(0.5) == hq(h, 0.5) == 50.0
    assert h.quantile_ns(1.0) == 100.0  # q = 1: the highest bucket in use
    with pytest.raises(NetloadConfigError, match=r"give a share in \(0, 1\]"):
        h.quantile_ns(0)


def test_single_sample() -> None:
    h = histogram_of(np.array([1001]))
    est, low, high = hq_ci(h, 0.5)
    assert low == 1000 and high == 1007  # bucket [1000, 1008): width 8 from 512 to 1023
    assert est == 1003.5
    assert stats.percentile_ci(1, 0.5) == (0, 0)


def test_all_values_equal() -> None:
    h = histogram_of(np.full(10_000, 77))
    for q in (0.01, 0.5, 0.999):
        assert hq_ci(h, q) == (77.0, 77.0, 77.0)


def test_empty_histogram_raises() -> None:
    h = histogram_of(np.array([], dtype=np.uint64))
    with pytest.raises(NetloadConfigError, match="no samples"):
        hq(h, 0.5)


@pytest.mark.parametrize("q", [0, 1, -0.5, 1.5, float("nan"), float("inf"), True, "0.5"])
def test_quantile_out_of_range(q: object) -> None:
    h = histogram_of(np.array([5, 6]))
    with pytest.raises(NetloadConfigError, match=r"quantile .*\(0, 1\)"):
        stats.hist_quantile(h.counts, h.lower_ns, h.upper_ns, q)  # type: ignore[arg-type]
    with pytest.raises(NetloadConfigError, match="quantile"):
        stats.percentile_ci(10, q)  # type: ignore[arg-type]


@pytest.mark.parametrize("c", [0, 1, 95, -0.1, float("nan")])
def test_confidence_out_of_range(c: float) -> None:
    with pytest.raises(NetloadConfigError, match=f"confidence {c!r}"):
        stats.percentile_ci(100, 0.5, c)
    with pytest.raises(NetloadConfigError, match="confidence"):
        stats.clopper_pearson_upper(0, 100, c)


def test_bad_histograms() -> None:
    low = np.array([0.0, 1.0, 2.0])
    up = np.array([1.0, 2.0, 3.0])
    with pytest.raises(NetloadConfigError, match=r"counts\[1\] = -1 is negative"):
        stats.hist_quantile(np.array([1, -1, 2]), low, up, 0.5)
    with pytest.raises(NetloadConfigError, match="3 counts for 2 lower"):
        stats.hist_quantile(np.array([1, 1, 2]), low[:2], up, 0.5)
    with pytest.raises(NetloadConfigError, match="non-empty"):
        stats.hist_quantile(np.array([], dtype=int), low[:0], up[:0], 0.5)
    with pytest.raises(NetloadConfigError, match="overlap or are out of order"):
        stats.hist_quantile(np.array([1, 1, 2]), low[::-1], up[::-1], 0.5)
    with pytest.raises(NetloadConfigError, match="whole numbers"):
        stats.hist_quantile(np.array([1.5, 1, 2]), low, up, 0.5)


@pytest.mark.parametrize(
    ("n", "name"), [(0, "sample size n 0"), (-3, "sample size n -3"), (2.5, "sample size n 2.5")]
)
def test_bad_sample_size(n: object, name: str) -> None:
    with pytest.raises(NetloadConfigError, match=name):
        stats.percentile_ci(n, 0.5)  # type: ignore[arg-type]


def test_ci_coverage_rank_checks() -> None:
    with pytest.raises(NetloadConfigError, match=r"ranks \(5, 3\)"):
        stats.ci_coverage(10, 0.5, 5, 3)
    with pytest.raises(NetloadConfigError, match=r"ranks \(0, 10\)"):
        stats.ci_coverage(10, 0.5, 0, 10)


def test_sample_quantile_ci() -> None:
    x = np.arange(1000, dtype=float)[::-1]
    est, low, high = stats.sample_quantile_ci(x, 0.5)
    lo, hi = stats.percentile_ci(1000, 0.5)
    assert (est, low, high) == (499.0, float(lo), float(hi))
    with pytest.raises(NetloadConfigError, match="empty"):
        stats.sample_quantile_ci([], 0.5)


# ---- RFC 3550 jitter ------------------------------------------------------------------


def test_rfc3550_worked_example() -> None:
    # transit 10, 12, 11, 15 -> D = 2, -1, 4; J = 0 + (2 - 0)/16 = 0.125,
    # 0.125 + (1 - 0.125)/16 = 0.1796875, 0.1796875 + (4 - 0.1796875)/16 = 0.41845703125
    series = stats.rfc3550_jitter_series(np.array([10, 12, 11, 15]))
    np.testing.assert_array_equal(series, [0.125, 0.1796875, 0.41845703125])
    assert stats.rfc3550_jitter([10, 12, 11, 15]) == 0.41845703125


def test_rfc3550_matches_the_recurrence_and_converges() -> None:
    rng = np.random.default_rng(3)
    t = rng.normal(10_000, 300, 500)
    j, ref = 0.0, []
    for d in np.diff(t):
        j += (abs(d) - j) / 16
        ref.append(j)
    np.testing.assert_allclose(stats.rfc3550_jitter_series(t), ref, rtol=1e-12)
    # transit alternating by a: J after k differences is a * (1 - (15/16)**k)
    alt = np.tile([100.0, 140.0], 100)
    assert stats.rfc3550_jitter(alt) == pytest.approx(40 * (1 - (15 / 16) ** 199))
    assert stats.rfc3550_jitter(np.full(50, 7.0)) == 0.0


def test_rfc3550_degenerate() -> None:
    with pytest.raises(NetloadConfigError, match="at least two"):
        stats.rfc3550_jitter([5])
    with pytest.raises(NetloadConfigError, match="empty"):
        stats.rfc3550_jitter([])
    with pytest.raises(NetloadConfigError, match=r"transit_ns\[1\] = nan"):
        stats.rfc3550_jitter([1, float("nan"), 3])


# ---- RFC 5481 IPDV and PDV ------------------------------------------------------------


def test_rfc5481_worked_example() -> None:
    d = np.array([100, 110, np.nan, 130, 125, 125])
    # pairs (100, 110) -> 10; two pairs touch the loss; (130, 125) -> -5; (125, 125) -> 0
    np.testing.assert_array_equal(stats.ipdv(d), [10, -5, 0])
    # PDV = D - min(D) over the arrived packets
    np.testing.assert_array_equal(stats.pdv(d), [0, 10, 30, 25, 25])


def test_ipdv_pdv_degenerate() -> None:
    assert stats.ipdv([5.0]).size == 0
    np.testing.assert_array_equal(stats.pdv([5.0]), [0.0])
    assert stats.ipdv([np.nan, np.nan]).size == 0
    assert stats.pdv([np.nan, np.nan]).size == 0
    assert stats.ipdv([1, np.nan, 3]).size == 0
    with pytest.raises(NetloadConfigError, match="empty"):
        stats.ipdv([])
    with pytest.raises(NetloadConfigError, match=r"delays_ns\[0\] = inf"):
        stats.pdv([np.inf, 1])
    with pytest.raises(NetloadConfigError, match="1-D"):
        stats.ipdv([[1, 2]])


# ---- Clopper-Pearson ------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 10, 1000, 10**6])
def test_clopper_pearson_zero_lost(n: int) -> None:
    upper = stats.clopper_pearson_upper(0, n)
    assert upper == pytest.approx(1 - 0.05 ** (1 / n), rel=1e-9)
    if n >= 1000:
        assert upper == pytest.approx(3 / n, rel=0.01)  # the rule of three


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 10**7), share=st.floats(0, 0.999), c=st.floats(0.5, 0.999))
def test_clopper_pearson_definition(n: int, share: float, c: float) -> None:
    lost = int(share * n)
    upper = stats.clopper_pearson_upper(lost, n, c)
    assert lost / n <= upper <= 1
    # P(Bin(n, upper) <= lost) = 1 - c
    assert binom.cdf(lost, n, upper) == pytest.approx(1 - c, rel=1e-6, abs=1e-9)


def test_clopper_pearson_edges() -> None:
    assert stats.clopper_pearson_upper(7, 7) == 1.0
    with pytest.raises(NetloadConfigError, match="lost packets 8: more than the 7 sent"):
        stats.clopper_pearson_upper(8, 7)
    with pytest.raises(NetloadConfigError, match="packets sent n 0"):
        stats.clopper_pearson_upper(0, 0)
    with pytest.raises(NetloadConfigError, match="lost packets -1"):
        stats.clopper_pearson_upper(-1, 7)
