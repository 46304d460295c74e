"""Log-linear histograms exported by the engine (the HdrHistogram layout).

The bucket layout lives in C (hist.c); the engine hands its lower bounds to
Python, so nothing here repeats it. Values are ns. Quantiles are
:func:`stats.hist_quantile`'s (the one implementation): the quantile falls in a
bucket, and the bucket's midpoint stands for it, so the error is at most half a
bucket (< 1/128 of the value above 128 ns).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import NetloadConfigError
from . import stats


@dataclass(frozen=True)
class LogHistogram:
    """Counts per bucket and the buckets' lower bounds (ns)."""

    counts: np.ndarray = field(repr=False)
    lower_ns: np.ndarray = field(repr=False)

    def __post_init__(self) -> None:
        if self.counts.shape != self.lower_ns.shape:
            raise NetloadConfigError(
                f"histogram: {self.counts.shape} counts for {self.lower_ns.shape} buckets"
            )

    def merge(self, other: LogHistogram) -> LogHistogram:
        """The histogram of both samples (e.g. one stream over several ports or runs)."""
        if not np.array_equal(self.lower_ns, other.lower_ns):
            raise NetloadConfigError(
                "histograms with different bucket layouts cannot merge: record both with "
                "the same latency_digits"
            )
        return LogHistogram(self.counts + other.counts, self.lower_ns)

    @property
    def upper_ns(self) -> np.ndarray:
        upper = np.empty_like(self.lower_ns)
        upper[:-1] = self.lower_ns[1:]
        upper[-1] = self.lower_ns[-1] * 2
        return upper

    @property
    def mid_ns(self) -> np.ndarray:
        return (self.lower_ns.astype(np.float64) + self.upper_ns.astype(np.float64) - 1) / 2

    @property
    def total(self) -> int:
        return int(self.counts.sum())

    def _need_samples(self) -> None:
        if self.total == 0:
            raise NetloadConfigError("histogram has no samples: nothing was received")

    @property
    def min_ns(self) -> int:
        self._need_samples()
        return int(self.lower_ns[np.flatnonzero(self.counts)[0]])

    @property
    def max_ns(self) -> int:
        self._need_samples()
        return int(self.upper_ns[np.flatnonzero(self.counts)[-1]] - 1)

    @property
    def mean_ns(self) -> float:
        self._need_samples()
        return float((self.counts * self.mid_ns).sum() / self.total)

    def quantile_ns(self, q: float) -> float:
        """The value below which a share q (0 < q <= 1) of samples lie: for q < 1
        :func:`stats.hist_quantile` (the midpoint of the bucket holding the value of rank
        ``ceil(q * n) - 1``), for q = 1 the midpoint of the highest bucket in use."""
        if not 0 < q <= 1:
            raise NetloadConfigError(f"quantile {q!r}: give a share in (0, 1], e.g. 0.99")
        self._need_samples()
        if q == 1:
            return float(self.mid_ns[np.flatnonzero(self.counts)[-1]])
        return stats.hist_quantile(self.counts, self.lower_ns, self.upper_ns, q)

    def share_within(self, lo_ns: float, hi_ns: float) -> float:
        """Share of samples whose bucket lies inside [lo_ns, hi_ns]."""
        self._need_samples()
        inside = (self.lower_ns >= lo_ns) & (self.upper_ns - 1 <= hi_ns)
        return float(self.counts[inside].sum() / self.total)
