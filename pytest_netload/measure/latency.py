"""Latency of one stream: percentiles with confidence intervals, jitter, IPDV, HDR export.

A :class:`LatencyResult` wraps the engine's latency histogram (whole ns, the log-linear
layout of ``native/src/hist.c``) and what the engine says about how it measured. Methods are
those of :mod:`pytest_netload.measure.stats`: quantiles by the inverse empirical CDF, read as the
midpoint of the histogram bucket that holds them, with a distribution-free order-statistic
confidence interval widened to bucket bounds (so it covers sampling *and* binning).

An empty result (nothing of the stream arrived) says so: its percentiles raise
:class:`~pytest_netload.errors.NetloadConfigError`, ``str()`` reads "no samples" and
``as_dict()`` holds ``None``; nothing here returns NaN.
"""

from __future__ import annotations

import importlib
import math
import numbers
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import format as fmt
from ..errors import NetloadConfigError, NetloadEnvironmentError
from ..extras import require
from . import stats
from .histogram import LogHistogram

__all__ = [
    "DEFAULT_PERCENTILES",
    "HDR_HIGHEST_NS",
    "HDR_SIGNIFICANT_DIGITS",
    "LatencyResult",
    "Percentile",
    "from_hdr",
    "to_hdr",
]

#: Percentiles reported by default (p in (0, 100]).
DEFAULT_PERCENTILES: tuple[float, ...] = (50, 90, 99, 99.9, 99.99)
#: HdrHistogram export: values 1 ns .. 100 s at 2 significant digits (finer than our buckets).
HDR_HIGHEST_NS = 10**11
HDR_SIGNIFICANT_DIGITS = 2

_SUMMARY_PERCENTILES: tuple[float, ...] = (50, 99, 99.9)
_NO_SAMPLES = (
    "no latency samples: nothing of this stream was received with a timestamp "
    "(check the loss counters and that the stream carries latency signatures)"
)


def _check_p(p: object) -> float:
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0 < float(p) <= 100:
        raise NetloadConfigError(
            f"percentile {p!r}: give p in (0, 100], e.g. 99.9 (100 is the maximum)"
        )
    return float(p)


def _check_confidence(confidence: object) -> float:
    if (
        isinstance(confidence, bool)
        or not isinstance(confidence, numbers.Real)
        or not 0 < float(confidence) < 1
    ):
        raise NetloadConfigError(f"confidence {confidence!r}: give a number in (0, 1), e.g. 0.95")
    return float(confidence)


def _label(p: float) -> str:
    return f"p{p:g}"


@dataclass(frozen=True)
class Percentile:
    """A percentile in ns with its confidence interval.

    ``coverage`` is the interval's actual probability of holding the true percentile
    (:func:`stats.ci_coverage`, at least ``confidence`` unless the sample was too small: then
    the interval is the whole sample and :attr:`has_ci` is False). For p = 100 the value is
    the sample maximum, the interval only the histogram bucket holding it, and ``coverage``
    is None: no sample bounds a population's maximum.
    """

    p: float
    value_ns: float
    ci_low_ns: float
    ci_high_ns: float
    confidence: float
    coverage: float | None = None

    @property
    def has_ci(self) -> bool:
        """True when [ci_low_ns, ci_high_ns] is a confidence interval at ``confidence``."""
        return self.coverage is not None and self.coverage >= self.confidence - 1e-12

    def __str__(self) -> str:
        name = "max" if self.p == 100 else _label(self.p)
        if self.p == 100:
            return f"{name} {fmt.time_ns(self.value_ns)}"
        if not self.has_ci:
            return (f"{name} {fmt.time_ns(self.value_ns)} "
                    f"[no {fmt.percent(self.confidence)} CI: too few samples]")
        return f"{name} {fmt.band(self.value_ns, self.ci_low_ns, self.ci_high_ns, 'ns')}"

    def as_dict(self) -> dict[str, float | None]:
        return {
            "p": self.p,
            "value_ns": self.value_ns,
            "ci_low_ns": self.ci_low_ns,
            "ci_high_ns": self.ci_high_ns,
            "confidence": self.confidence,
            "coverage": self.coverage,
        }


def _nonneg_int(name: str, value: object) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or int(value) < 0:
        raise NetloadConfigError(f"{name} {value!r}: give a whole number >= 0")


def _nonneg_float(name: str, value: object) -> None:
    if value is None:
        return
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not math.isfinite(float(value))
        or float(value) < 0
    ):
        raise NetloadConfigError(f"{name} {value!r}: give a finite number >= 0")


@dataclass(frozen=True, eq=False)
class LatencyResult:
    """One stream's latency: the engine's histogram (ns) and how it was measured.

    ``clock`` names the timestamp source (e.g. "tsc-software"), ``resolution_ns`` its tick;
    ``samples`` is the engine's count of timestamped arrivals (must equal the histogram's
    total); ``duplicates`` and ``reordered`` its sequence counters; ``jitter_ns`` the
    engine's RFC 3550 interarrival jitter; ``delays_ns`` optional per-packet one-way delays in
    sequence order, NaN for a lost packet, for RFC 5481 IPDV.
    """

    histogram: LogHistogram = field(repr=False)
    clock: str | None = None
    resolution_ns: float | None = None
    samples: int | None = None
    duplicates: int | None = None
    reordered: int | None = None
    jitter_ns: float | None = None
    delays_ns: npt.NDArray[np.float64] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.histogram, LogHistogram):
            raise NetloadConfigError(
                f"latency histogram: give a LogHistogram, got {type(self.histogram).__name__}"
            )
        if np.any(np.asarray(self.histogram.counts) < 0):
            raise NetloadConfigError("latency histogram: negative counts")
        _nonneg_float("resolution_ns", self.resolution_ns)
        _nonneg_float("jitter_ns", self.jitter_ns)
        for name in ("samples", "duplicates", "reordered"):
            _nonneg_int(name, getattr(self, name))
        if self.samples is not None and int(self.samples) != self.count:
            raise NetloadConfigError(
                f"samples {self.samples}: the engine counted that many timestamped arrivals "
                f"but the histogram holds {self.count}"
            )
        if self.delays_ns is not None:
            delays = np.array(self.delays_ns, dtype=np.float64)  # a private, read-only copy
            stats.ipdv(delays)  # validates: 1-D, non-empty, no infinities
            delays.setflags(write=False)
            object.__setattr__(self, "delays_ns", delays)

    # ---- summary statistics (bounds from the histogram's buckets) --------------------

    @property
    def count(self) -> int:
        """Timestamped arrivals in the histogram."""
        return self.histogram.total

    @property
    def empty(self) -> bool:
        return self.count == 0

    def _need_samples(self) -> None:
        if self.empty:
            raise NetloadConfigError(_NO_SAMPLES)

    @property
    def min_ns(self) -> int:
        """Lower bound of the smallest latency's bucket (exact below 128 ns)."""
        self._need_samples()
        return self.histogram.min_ns

    @property
    def max_ns(self) -> int:
        """Largest value the largest latency's bucket holds (exact below 128 ns)."""
        self._need_samples()
        return self.histogram.max_ns

    @property
    def mean_ns(self) -> float:
        """Mean of bucket midpoints weighted by count (within half a bucket of the mean)."""
        self._need_samples()
        return self.histogram.mean_ns

    # ---- percentiles ------------------------------------------------------------------

    def percentile(self, p: float, confidence: float = 0.95) -> Percentile:
        """The p-th percentile (0 < p <= 100) with its confidence interval, in ns.

        Estimate: midpoint of the bucket holding rank ``ceil(p/100 * n) - 1``; interval:
        :func:`stats.hist_quantile_ci`. p = 100 gives the maximum (see :class:`Percentile`).
        """
        p = _check_p(p)
        confidence = _check_confidence(confidence)
        self._need_samples()
        if p == 100:
            top = int(np.flatnonzero(self.histogram.counts)[-1])
            return Percentile(
                p, float(self.max_ns), float(self.histogram.lower_ns[top]),
                float(self.max_ns), confidence, None,
            )
        q = p / 100
        h = self.histogram
        value, low, high = stats.hist_quantile_ci(h.counts, h.lower_ns, h.upper_ns, q, confidence)
        lo, hi = stats.percentile_ci(self.count, q, confidence)
        coverage = stats.ci_coverage(self.count, q, lo, hi)
        return Percentile(p, value, low, high, confidence, coverage)

    def percentiles(
        self, ps: tuple[float, ...] = DEFAULT_PERCENTILES, confidence: float = 0.95
    ) -> tuple[Percentile, ...]:
        return tuple(self.percentile(p, confidence) for p in ps)

    # ---- delay variation --------------------------------------------------------------

    def ipdv_values_ns(self) -> npt.NDArray[np.float64]:
        """RFC 5481 IPDV of consecutive arrived pairs (:func:`stats.ipdv`), in ns."""
        if self.delays_ns is None:
            raise NetloadConfigError(
                "no per-packet delays: IPDV needs delays_ns (one-way delays in sequence order)"
            )
        return stats.ipdv(self.delays_ns)

    def ipdv_ns(self, p: float, confidence: float = 0.95) -> Percentile:
        """The p-th percentile (0 < p <= 100) of the signed RFC 5481 IPDV, in ns.

        From the raw values: the inverse empirical CDF and the order-statistic interval of
        :func:`stats.sample_quantile_ci` (no binning). p = 100 is the largest IPDV.
        """
        p = _check_p(p)
        confidence = _check_confidence(confidence)
        values = self.ipdv_values_ns()
        if values.size == 0:
            raise NetloadConfigError(
                "no IPDV: no two packets consecutive in sequence both arrived"
            )
        if p == 100:
            top = float(values.max())
            return Percentile(p, top, top, top, confidence, None)
        q = p / 100
        value, low, high = stats.sample_quantile_ci(values, q, confidence)
        lo, hi = stats.percentile_ci(int(values.size), q, confidence)
        return Percentile(
            p, value, low, high, confidence, stats.ci_coverage(int(values.size), q, lo, hi)
        )

    # ---- output -----------------------------------------------------------------------

    def as_dict(self, ps: tuple[float, ...] = DEFAULT_PERCENTILES) -> dict[str, Any]:
        """Plain, JSON-ready values; None where there is nothing to report."""
        empty = self.empty
        ipdv: dict[str, Any] | None = None
        if self.delays_ns is not None and self.ipdv_values_ns().size:
            ipdv = {_label(p): self.ipdv_ns(p).as_dict() for p in ps}
        return {
            "count": self.count,
            "min_ns": None if empty else self.min_ns,
            "max_ns": None if empty else self.max_ns,
            "mean_ns": None if empty else self.mean_ns,
            "percentiles": {
                _label(p): None if empty else self.percentile(p).as_dict() for p in ps
            },
            "clock": self.clock,
            "resolution_ns": None if self.resolution_ns is None else float(self.resolution_ns),
            "samples": None if self.samples is None else int(self.samples),
            "duplicates": None if self.duplicates is None else int(self.duplicates),
            "reordered": None if self.reordered is None else int(self.reordered),
            "jitter_ns": None if self.jitter_ns is None else float(self.jitter_ns),
            "ipdv_ns": ipdv,
        }

    @classmethod
    def merge(cls, parts: Sequence[LatencyResult]) -> LatencyResult:
        """One result over several runs or trials of a stream: histograms and sequence
        counters add up; the clock, tick and RFC 3550 jitter are the last part's; raw
        delays survive only when there is one part."""
        if not parts:
            raise NetloadConfigError("no latency results to merge")
        hist = parts[0].histogram
        for p in parts[1:]:
            hist = hist.merge(p.histogram)
        last = parts[-1]
        return cls(hist, clock=last.clock, resolution_ns=last.resolution_ns, samples=hist.total,
                   duplicates=sum(p.duplicates or 0 for p in parts),
                   reordered=sum(p.reordered or 0 for p in parts), jitter_ns=last.jitter_ns,
                   delays_ns=last.delays_ns if len(parts) == 1 else None)

    def histogram_dict(self) -> dict[str, list[int]]:
        """The non-empty buckets, JSON-ready: [lower_ns, upper_ns) and their counts."""
        h = self.histogram
        nz = np.nonzero(np.asarray(h.counts))[0]
        return {"lower_ns": [int(v) for v in np.asarray(h.lower_ns)[nz]],
                "upper_ns": [int(v) for v in np.asarray(h.upper_ns)[nz]],
                "counts": [int(v) for v in np.asarray(h.counts)[nz]]}

    def __str__(self) -> str:
        parts: list[str]
        if self.empty:
            parts = ["no samples (nothing of this stream was received)"]
        else:
            parts = [str(self.percentile(p)) for p in (*_SUMMARY_PERCENTILES, 100)]
            parts.append(f"n={fmt.count(self.count)}")
            if self.jitter_ns is not None:
                parts.append(f"jitter {fmt.time_ns(float(self.jitter_ns))}")
        if self.clock is not None:
            parts.append(self.clock)
        if self.resolution_ns is not None:
            parts.append(f"(resolution {fmt.time_ns(self.resolution_ns)})")
        return " ".join(parts)


# ---- HdrHistogram exchange ------------------------------------------------------------


def _hdrh() -> Any:
    return require("hdrh.histogram", "hdr", "HdrHistogram export")


def to_hdr(result: LatencyResult | LogHistogram) -> str:
    """The latency histogram in HdrHistogram's encoded form (compressed, base64; V2).

    Each bucket's count is recorded at the bucket's middle whole ns, ``(lower + upper - 1)
    // 2``, into an ``HdrHistogram(1, 10**11, 2)``: its buckets are at least as fine as ours
    everywhere, so :func:`from_hdr` gets our counts back exactly. The highest trackable value
    grows past 10**11 ns when a latency needs it.
    """
    hist = result.histogram if isinstance(result, LatencyResult) else result
    counts = np.asarray(hist.counts)
    used = np.flatnonzero(counts)
    values = (hist.lower_ns[used].astype(np.int64) + hist.upper_ns[used].astype(np.int64) - 1) // 2
    highest = max(HDR_HIGHEST_NS, int(values.max()) if values.size else 0)
    hdr = _hdrh().HdrHistogram(1, highest, HDR_SIGNIFICANT_DIGITS)
    for value, count in zip(values.tolist(), counts[used].tolist(), strict=True):
        if not hdr.record_value(value, count):
            raise NetloadConfigError(f"HdrHistogram refused {count} values of {value} ns")
    encoded: bytes = hdr.encode()
    return encoded.decode("ascii")


def from_hdr(text: str | bytes, lower_ns: Any) -> npt.NDArray[np.uint64]:
    """Counts in our bucket layout (``lower_ns``) from an encoded HdrHistogram of ns.

    Each recorded HDR value range goes to the bucket holding it; where a range is coarser than
    our buckets (fewer significant digits, a larger lowest value), its whole count goes to
    the bucket holding the range's middle value: counts are never split. Values past the last
    bucket land in it, as the engine clamps them.
    """
    lower = np.asarray(lower_ns)
    if lower.ndim != 1 or lower.size == 0 or lower.dtype.kind not in "iu":
        raise NetloadConfigError(
            f"lower_ns: give a non-empty 1-D integer array of bucket lower bounds "
            f"(e.g. facade.hist_lower_bounds_ns()), got shape {lower.shape} dtype {lower.dtype}"
        )
    if np.any(np.diff(lower.astype(np.int64)) <= 0):
        raise NetloadConfigError("lower_ns: bucket lower bounds must increase strictly")
    module = _hdrh()
    codec = importlib.import_module("hdrh.codec")
    try:
        hdr = module.HdrHistogram.decode(text)
    except (
        ValueError, TypeError, zlib.error,
        codec.HdrCookieException, codec.HdrLengthException, codec.HdrHistogramSettingsException,
    ) as exc:
        raise NetloadConfigError(
            f"not an encoded HdrHistogram ({type(exc).__name__}: {exc}); "
            "give the text of HdrHistogram.encode() or to_hdr()"
        ) from None
    counts = np.zeros(lower.size, dtype=np.uint64)
    first = int(lower[0])
    for item in hdr.get_recorded_iterator():
        high = int(item.value_iterated_to)
        low = int(hdr.get_lowest_equivalent_value(high))
        idx = np.searchsorted(lower, [low, high], side="right") - 1
        if idx[0] < 0:
            raise NetloadConfigError(
                f"HdrHistogram values {low}..{high} ns lie below the first bucket ({first} ns)"
            )
        b = int(idx[0]) if idx[0] == idx[1] else int(
            np.searchsorted(lower, low + (high - low) // 2, side="right") - 1
        )
        counts[b] += np.uint64(item.count_at_value_iterated_to)
    return counts
