"""Repeated trials summarised: mean with spread, never a bare number."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import NetloadConfigError


@dataclass(frozen=True)
class Spread:
    """Mean, sample standard deviation, min and max of n repeated values."""

    n: int
    mean: float
    stdev: float
    min: float
    max: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Spread:
        vals = [float(v) for v in values]
        if not vals:
            raise NetloadConfigError("no values to summarise: every repetition failed")
        mean = math.fsum(vals) / len(vals)
        var = math.fsum((v - mean) ** 2 for v in vals) / (len(vals) - 1) if len(vals) > 1 else 0.0
        return cls(len(vals), mean, math.sqrt(var), min(vals), max(vals))

    def as_dict(self) -> dict[str, Any]:
        return {"n": self.n, "mean": self.mean, "stdev": self.stdev, "min": self.min,
                "max": self.max}


def check_trials(n: object, what: str = "trials") -> int:
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 10_000:
        raise NetloadConfigError(f"{what}={n!r}: give a whole number of repetitions >= 1")
    return n


def check_positive(x: object, what: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) or x <= 0:
        raise NetloadConfigError(f"{what}={x!r}: must be a positive number")
    return float(x)
