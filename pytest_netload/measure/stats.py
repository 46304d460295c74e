"""Statistics over latency samples and loss counts: numpy/scipy only, no I/O, no pytest.

Every estimator states its method and source:

- Quantiles use the inverse of the empirical CDF (Hyndman & Fan 1996, definition 1;
  numpy's ``method="inverted_cdf"``): the q-quantile of n sorted values is the value of
  0-based rank ``ceil(q * n) - 1``.
- Confidence intervals for a quantile are distribution-free, from order statistics and the
  binomial distribution (:func:`percentile_ci`).
- Histogram quantiles (:func:`hist_quantile`, :func:`hist_quantile_ci`) work on whole-ns
  values, as the engine records them: bucket i holds the integers ``lower_ns[i]`` ..
  ``upper_ns[i] - 1`` (``upper_ns`` is exclusive, as :attr:`LogHistogram.upper_ns` gives it).
- Jitter is RFC 3550 §6.4.1; IPDV and PDV are RFC 5481 §4.1 and §4.2.
- Loss-ratio bounds are Clopper-Pearson (exact binomial).

Bad input raises :class:`~pytest_netload.errors.NetloadConfigError` naming the value; no
function returns NaN.
"""

from __future__ import annotations

import math
import numbers
import operator
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import NetloadConfigError

__all__ = [
    "ci_coverage",
    "clopper_pearson_upper",
    "hist_quantile",
    "hist_quantile_ci",
    "ipdv",
    "pdv",
    "percentile_ci",
    "quantile_rank",
    "rfc3550_jitter",
    "rfc3550_jitter_series",
    "sample_quantile_ci",
]

FloatArray = npt.NDArray[np.float64]


# scipy is imported where it is used: it takes ~0.7 s to import, which every pytest
# session (and every engine host) would pay before its first test otherwise.


def _binom() -> Any:
    from scipy.stats import binom  # type: ignore[import-untyped,unused-ignore]

    return binom


# q * n is compared with the nearest integer at this relative tolerance, so that a share
# such as 0.07 (stored as 0.07000000000000000666) of n = 100 gives rank 6, not 7.
_RANK_RTOL = 1e-12
# Coverage comparisons allow for the rounding of scipy's binomial CDF.
_COVERAGE_ATOL = 1e-12


# ---- validation -----------------------------------------------------------------------


def _count(name: str, value: object, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise NetloadConfigError(f"{name} {value!r}: give a whole number >= {minimum}")
    n = operator.index(value)
    if n < minimum:
        raise NetloadConfigError(f"{name} {value!r}: give a whole number >= {minimum}")
    return n


def _share(name: str, value: object, example: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise NetloadConfigError(f"{name} {value!r}: give a number in (0, 1), e.g. {example}")
    x = float(value)
    if not 0.0 < x < 1.0:
        raise NetloadConfigError(f"{name} {value!r}: give a number in (0, 1), e.g. {example}")
    return x


def _quantile(q: object) -> float:
    return _share("quantile", q, "0.99 for p99")


def _confidence(confidence: object) -> float:
    return _share("confidence", confidence, "0.95")


def _values(name: str, values: Any, *, allow_nan: bool = False) -> FloatArray:
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise NetloadConfigError(f"{name}: not an array of numbers ({exc})") from None
    if arr.ndim != 1:
        raise NetloadConfigError(f"{name}: give a 1-D array, got shape {arr.shape}")
    if arr.size == 0:
        raise NetloadConfigError(f"{name}: the array is empty; give at least one value")
    bad = np.isinf(arr) if allow_nan else ~np.isfinite(arr)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        what = "infinite" if allow_nan else "not finite"
        raise NetloadConfigError(f"{name}[{i}] = {arr[i].item()!r} is {what}")
    return arr


def _histogram(
    counts: Any, lower_ns: Any, upper_ns: Any
) -> tuple[npt.NDArray[np.int64], FloatArray, FloatArray]:
    c = np.asarray(counts)
    if c.ndim != 1 or c.size == 0:
        raise NetloadConfigError(f"histogram counts: give a non-empty 1-D array, got shape {c.shape}")
    if c.dtype.kind == "f":
        if not np.all(np.isfinite(c)) or np.any(c != np.floor(c)):
            raise NetloadConfigError("histogram counts: give whole numbers (counts are integers)")
    elif c.dtype.kind not in "iu":
        raise NetloadConfigError(f"histogram counts: give integers, got dtype {c.dtype}")
    if np.any(c < 0):
        i = int(np.flatnonzero(c < 0)[0])
        raise NetloadConfigError(f"histogram counts[{i}] = {c[i].item()!r} is negative")
    lower = _values("histogram lower_ns", lower_ns)
    upper = _values("histogram upper_ns", upper_ns)
    if lower.shape != c.shape or upper.shape != c.shape:
        raise NetloadConfigError(
            f"histogram: {c.size} counts for {lower.size} lower and {upper.size} upper bounds"
        )
    if np.any(upper <= lower):
        i = int(np.flatnonzero(upper <= lower)[0])
        raise NetloadConfigError(
            f"histogram bucket {i}: upper bound {upper[i].item()!r} is not above "
            f"lower {lower[i].item()!r}"
        )
    if np.any(lower[1:] < upper[:-1]):
        i = int(np.flatnonzero(lower[1:] < upper[:-1])[0])
        raise NetloadConfigError(
            f"histogram buckets {i} and {i + 1} overlap or are out of order "
            f"([{lower[i].item()!r}, {upper[i].item()!r}) then "
            f"[{lower[i + 1].item()!r}, {upper[i + 1].item()!r}))"
        )
    return c.astype(np.int64), lower, upper


# ---- order-statistic confidence intervals ---------------------------------------------


def quantile_rank(n: int, q: float) -> int:
    """0-based rank of the q-quantile among n sorted values: ``ceil(q * n) - 1``.

    The inverse empirical CDF (Hyndman & Fan 1996, definition 1; numpy's
    ``method="inverted_cdf"``): the smallest value with at least a share q of the sample at
    or below it. q * n within a relative 1e-12 of a whole number counts as that number.
    """
    n = _count("sample size n", n, 1)
    q = _quantile(q)
    k = q * n
    nearest = round(k)
    if abs(k - nearest) <= _RANK_RTOL * max(k, 1.0):
        k = float(nearest)
    return min(max(math.ceil(k) - 1, 0), n - 1)


def ci_coverage(n: int, q: float, lo: int, hi: int) -> float:
    """Probability that order statistics of ranks lo..hi (0-based) enclose the q-quantile.

    With B ~ Binomial(n, q) the number of sample values below the true quantile,
    ``P(X(lo) <= x_q <= X(hi)) = P(lo < B <= hi) = F(hi) - F(lo)`` for a continuous
    distribution (Conover, *Practical Nonparametric Statistics*, 3rd ed., §3.2); for a
    discrete one (e.g. whole-ns latencies) it is a lower bound.
    """
    n = _count("sample size n", n, 1)
    q = _quantile(q)
    lo = _count("rank lo", lo)
    hi = _count("rank hi", hi)
    if not lo <= hi <= n - 1:
        raise NetloadConfigError(f"ranks ({lo}, {hi}): need 0 <= lo <= hi <= n - 1 = {n - 1}")
    # 1 - P(B <= lo) - P(B > hi): the two tails, each computed where it is small.
    return float(max(0.0, 1.0 - _binom().cdf(lo, n, q) - _binom().sf(hi, n, q)))


def _largest_with_cdf_at_most(budget: float, n: int, q: float) -> int:
    k = int(_binom().ppf(budget, n, q))
    while k >= 0 and _binom().cdf(k, n, q) > budget:
        k -= 1
    while k + 1 <= n - 1 and _binom().cdf(k + 1, n, q) <= budget:
        k += 1
    return k


def _smallest_with_sf_at_most(budget: float, n: int, q: float) -> int:
    k = int(_binom().isf(budget, n, q))
    while k <= n - 1 and _binom().sf(k, n, q) > budget:
        k += 1
    while k - 1 >= 0 and _binom().sf(k - 1, n, q) <= budget:
        k -= 1
    return k


def percentile_ci(n: int, q: float, confidence: float = 0.95) -> tuple[int, int]:
    """Distribution-free confidence interval for the q-quantile, as 0-based ranks (lo, hi).

    Method: order-statistic interval from the binomial distribution (Hahn & Meeker,
    *Statistical Intervals*, 1991, §5.2; Conover, *Practical Nonparametric Statistics*,
    3rd ed., 1999, §3.2). The true quantile lies between the sorted values of ranks lo and
    hi with probability :func:`ci_coverage` ``(n, q, lo, hi)``, whatever the distribution.

    The pair is chosen equal-tailed first: each tail (the interval lying wholly above or
    wholly below the quantile) gets at most ``(1 - confidence) / 2``; where one tail cannot
    get that small at this n (the sample's extreme value is the best there is), the other
    tail gets the rest of ``1 - confidence``. Then slack from the binomial's discreteness is
    spent: an end moves inward one rank at a time while the coverage stays >= confidence
    (the move that keeps more coverage first).

    When n is too small for any interval to reach the confidence (e.g. p99 with n < 299 at
    95 %), the result is ``(0, n - 1)``: the whole sample, whose coverage
    :func:`ci_coverage` reports below ``confidence``; callers must flag it.
    """
    n = _count("sample size n", n, 1)
    q = _quantile(q)
    c = _confidence(confidence)
    alpha = 1.0 - c
    tail_low_min = float(_binom().cdf(0, n, q))  # lo = 0: all n values above the quantile
    tail_high_min = float(_binom().sf(n - 1, n, q))  # hi = n - 1: all n values below it
    if n == 1 or tail_low_min + tail_high_min > alpha + _COVERAGE_ATOL:
        return 0, n - 1
    budget_low = budget_high = alpha / 2
    if tail_low_min > budget_low:
        budget_low, budget_high = tail_low_min, alpha - tail_low_min
    elif tail_high_min > budget_high:
        budget_low, budget_high = alpha - tail_high_min, tail_high_min
    lo = max(_largest_with_cdf_at_most(budget_low, n, q), 0)
    hi = min(_smallest_with_sf_at_most(budget_high, n, q), n - 1)
    if hi <= lo or ci_coverage(n, q, lo, hi) < c - _COVERAGE_ATOL:
        return 0, n - 1
    while True:
        moves = [
            (ci_coverage(n, q, a, b), a, b)
            for a, b in ((lo + 1, hi), (lo, hi - 1))
            if a < b
        ]
        moves = [m for m in moves if m[0] >= c - _COVERAGE_ATOL]
        if not moves:
            return lo, hi
        _, lo, hi = max(moves)


def sample_quantile_ci(
    values: Any, q: float, confidence: float = 0.95
) -> tuple[float, float, float]:
    """(estimate, low, high) of the q-quantile of raw values.

    The estimate is the inverse empirical CDF (:func:`quantile_rank`); low and high are the
    sorted values of the ranks :func:`percentile_ci` gives (the whole sample's range when n
    is too small for the confidence: check :func:`ci_coverage`).
    """
    x = np.sort(_values("values", values))
    n = int(x.size)
    lo, hi = percentile_ci(n, q, confidence)
    return float(x[quantile_rank(n, q)]), float(x[lo]), float(x[hi])


# ---- histogram quantiles --------------------------------------------------------------


def _bucket_of_rank(cum: npt.NDArray[np.int64], rank: int) -> int:
    # Bucket i holds ranks cum[i-1] .. cum[i] - 1: the first bucket whose cum exceeds rank.
    return int(np.searchsorted(cum, rank, side="right"))


def hist_quantile(counts: Any, lower_ns: Any, upper_ns: Any, q: float) -> float:
    """The q-quantile (0 < q < 1) of a histogram of whole-ns values, in ns.

    Bucket i holds the integers ``lower_ns[i]`` .. ``upper_ns[i] - 1`` (upper bounds are
    exclusive). The estimate is the midpoint of those integers, ``(lower + upper - 1) / 2``,
    in the bucket holding the value of rank ``ceil(q * n) - 1`` (:func:`quantile_rank`). The
    one histogram quantile of the package: :meth:`LogHistogram.quantile_ns` and
    :meth:`LatencyResult.percentile` call it. Exact for one-ns buckets; elsewhere off by at
    most half a bucket (< 1/128 of the value in the engine's layout above 128 ns).
    """
    return hist_quantile_ci(counts, lower_ns, upper_ns, q)[0]


def hist_quantile_ci(
    counts: Any, lower_ns: Any, upper_ns: Any, q: float, confidence: float = 0.95
) -> tuple[float, float, float]:
    """(estimate, low, high) in ns: the q-quantile and its confidence interval.

    The ranks (lo, hi) of :func:`percentile_ci` are mapped to buckets: low is the lower bound
    of the bucket holding rank lo, high the largest integer of the bucket holding rank hi
    (``upper - 1``). The sample values of those ranks lie inside [low, high] whatever the
    histogram's quantisation, so the interval covers both sampling and binning. When n is
    too small for the confidence the interval spans the whole sample: check
    :func:`ci_coverage` with ``n = sum(counts)``.
    """
    c, lower, upper = _histogram(counts, lower_ns, upper_ns)
    q = _quantile(q)
    confidence = _confidence(confidence)
    cum = np.cumsum(c)
    n = int(cum[-1])
    if n == 0:
        raise NetloadConfigError("histogram has no samples: no quantile of an empty sample")
    lo, hi = percentile_ci(n, q, confidence)
    est = _bucket_of_rank(cum, quantile_rank(n, q))
    b_lo, b_hi = _bucket_of_rank(cum, lo), _bucket_of_rank(cum, hi)
    return (
        float((lower[est] + upper[est] - 1) / 2),
        float(lower[b_lo]),
        float(upper[b_hi] - 1),
    )


# ---- jitter and delay variation -------------------------------------------------------


def rfc3550_jitter_series(transit_ns: Any) -> FloatArray:
    """Every value of the RFC 3550 interarrival jitter estimator, in ns.

    RFC 3550 §6.4.1: with ``D = transit[i] - transit[i-1]`` over consecutive arrivals,
    ``J += (|D| - J) / 16`` starting from J = 0; element i - 1 of the result is J after
    arrival i (so n transit times give n - 1 values). Computed as the equivalent first-order
    filter ``J[i] = |D[i]| / 16 + 15/16 * J[i-1]`` (scipy.signal.lfilter). Transit times are
    in arrival order (the RFC's order); at least two are needed.
    """
    t = _values("transit_ns", transit_ns)
    if t.size < 2:
        raise NetloadConfigError(
            "transit_ns: jitter needs at least two arrivals, got 1 (no transit difference)"
        )
    d = np.abs(np.diff(t))
    from scipy import signal  # type: ignore[import-untyped,unused-ignore]

    series: FloatArray = np.asarray(signal.lfilter([1.0 / 16], [1.0, -15.0 / 16], d), np.float64)
    return series


def rfc3550_jitter(transit_ns: Any) -> float:
    """The RFC 3550 §6.4.1 interarrival jitter after the last arrival, in ns.

    See :func:`rfc3550_jitter_series`. The engine keeps the RFC's integer form (appendix A.8:
    J scaled by 16 and rounded), so its value may differ from this one by under 1 ns.
    """
    return float(rfc3550_jitter_series(transit_ns)[-1])


def ipdv(delays_ns: Any) -> FloatArray:
    """RFC 5481 §4.1 inter-packet delay variation: ``D[i] - D[i-1]``, in ns.

    ``delays_ns`` are one-way delays in sequence (sending) order, NaN for a lost packet.
    Only consecutive pairs where both packets arrived count (§4.1: a loss leaves the pair's
    IPDV undefined); the result holds those differences in order, empty when there are none.
    """
    d = _values("delays_ns", delays_ns, allow_nan=True)
    both = ~np.isnan(d[1:]) & ~np.isnan(d[:-1])
    out: FloatArray = (d[1:] - d[:-1])[both]
    return out


def pdv(delays_ns: Any) -> FloatArray:
    """RFC 5481 §4.2 packet delay variation: ``D[i] - min(D)``, in ns, for arrived packets.

    ``delays_ns`` as for :func:`ipdv` (NaN for a lost packet); the result holds one value per
    arrived packet in order, empty when none arrived.
    """
    d = _values("delays_ns", delays_ns, allow_nan=True)
    got = d[~np.isnan(d)]
    if got.size == 0:
        return got
    out: FloatArray = got - got.min()
    return out


# ---- loss -----------------------------------------------------------------------------


def clopper_pearson_upper(lost: int, n: int, confidence: float = 0.95) -> float:
    """One-sided upper confidence bound on a loss ratio, Clopper-Pearson (exact binomial).

    The bound p_u solves ``P(Binomial(n, p_u) <= lost) = 1 - confidence``, i.e. the
    ``confidence`` quantile of Beta(lost + 1, n - lost) (Clopper & Pearson 1934; Hahn &
    Meeker §6.2). With 0 lost it is ``1 - (1 - confidence) ** (1 / n)``, about 3 / n at 95 %
    (the "rule of three"); with every packet lost it is 1.
    """
    n = _count("packets sent n", n, 1)
    lost = _count("lost packets", lost)
    c = _confidence(confidence)
    if lost > n:
        raise NetloadConfigError(f"lost packets {lost}: more than the {n} sent")
    if lost == n:
        return 1.0
    from scipy.stats import beta  # type: ignore[import-untyped,unused-ignore]

    return float(beta.ppf(c, lost + 1, n - lost))
