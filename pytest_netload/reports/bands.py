"""Noise bands: a key figure with the band its own measurement gives it, and the
primitives that build one from a results record (a search bracket, a t-interval of
repeated trials, a percentile's confidence interval, a binomial proportion's exact
interval). baseline.py reads RFC 2544 records with them, standards.py Y.1564 and
RFC 2889 records; docs/baselines.md gives the formulas.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from scipy import stats as scipy_stats  # type: ignore[import-untyped,unused-ignore]

from .. import format as fmt
from ..errors import NetloadConfigError

__all__ = ["HIGHER", "LOWER", "T_CONFIDENCE", "At", "Figure", "Key", "binomial", "bracket",
           "mean_band", "percentiles", "spread", "unknown", "z_value"]

HIGHER = "higher-is-better"
LOWER = "lower-is-better"
T_CONFIDENCE = 0.95
"""Confidence of the t-interval around a mean of repeated trials."""


class Key(NamedTuple):
    """Which figure: the test, the metric ("throughput", "latency.p99", ...) and the frame
    size (bytes or "imix"; None for a latency meter, whose metric names its stream)."""

    nodeid: str
    metric: str
    frame_size: int | str | None

    def label(self) -> str:
        size = "" if self.frame_size is None else f" {fmt.frame_size(self.frame_size)}"
        return f"{self.nodeid} {self.metric}{size}"


@dataclass(frozen=True)
class Figure:
    """One key figure with its noise band [noise_low, noise_high] (math.inf: open)."""

    value: float
    noise_low: float
    noise_high: float
    direction: str
    """HIGHER ("higher-is-better") or LOWER ("lower-is-better")."""
    unit: str
    """"pps", "ns", "s", "frames", "bit/s", "addresses" or "ratio" (a share, 0 to 1)."""
    band: str
    """How the band was found, in words (e.g. "search bracket", "95% CI")."""
    sigma: float | None
    """The value's standard uncertainty (trend detection uses it); None when unknown."""
    conditions: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    """What the figure was measured under (trial duration, method, clock ...)."""

    def as_dict(self) -> dict[str, Any]:
        return {"value": self.value, "low": _finite(self.noise_low),
                "high": _finite(self.noise_high), "unit": self.unit,
                "direction": self.direction, "band": self.band, "sigma": self.sigma,
                "conditions": dict(self.conditions)}


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


# ---- reading a document ---------------------------------------------------------------


class At:
    """Where in the document we are, for error messages that name the field."""

    def __init__(self, path: str, context: str = "") -> None:
        self.path, self.context = path, context

    def fail(self, name: str, problem: str) -> NetloadConfigError:
        where = f" ({self.context})" if self.context else ""
        return NetloadConfigError(f"{self.path}.{name} {problem}{where}")

    def get(self, m: Mapping[str, Any], name: str, kind: type | tuple[type, ...],
            optional: bool = False) -> Any:
        if name not in m or (optional and m[name] is None):
            if optional:
                return None
            raise self.fail(name, "is missing")
        value = m[name]
        if isinstance(value, bool) and kind is not bool or not isinstance(value, kind):
            raise self.fail(name, f"= {value!r}: expected {_kind_name(kind)}")
        return value

    def num(self, m: Mapping[str, Any], name: str, optional: bool = False) -> float | None:
        value = self.get(m, name, (int, float), optional)
        if value is not None and not math.isfinite(value):
            raise self.fail(name, f"= {value!r}: expected a finite number")
        return None if value is None else float(value)

    def inner(self, name: str) -> At:
        return At(f"{self.path}.{name}", self.context)


def _kind_name(kind: type | tuple[type, ...]) -> str:
    names = {int: "a number", float: "a number", str: "a string", list: "a list",
             dict: "an object", bool: "true or false"}
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(dict.fromkeys(names.get(k, k.__name__) for k in kinds))



def bracket(low: float, high: float | None, conditions: dict[str, Any],
            unit: str = "pps") -> Figure:
    """A search's result: `low` passed, `high` failed (None: nothing above failed)."""
    if high is None:
        return Figure(low, low, math.inf, HIGHER, unit, "search lower bound (open above)",
                      None, conditions)
    high = max(high, low)
    return Figure(low, low, high, HIGHER, unit, "search bracket", (high - low) / math.sqrt(12),
                  conditions)


def spread(at: At, values: Mapping[str, Any], direction: str, unit: str,
           confidence: float, conditions: dict[str, Any]) -> Figure:
    """The mean of a record's repeated trials ({"n", "mean", "stdev"}) with its t-interval."""
    n = at.get(values, "n", int)
    mean = at.num(values, "mean")
    stdev = at.num(values, "stdev")
    assert mean is not None and stdev is not None
    return mean_band(mean, stdev, n, direction, unit, confidence, conditions)


def mean_band(mean: float, stdev: float, n: int, direction: str, unit: str,
              confidence: float, conditions: dict[str, Any],
              what: str = "repetition") -> Figure:
    """mean +- t(1 - a/2, n - 1) * stdev / sqrt(n), clipped at 0 (every figure is >= 0);
    unknown below two values."""
    if n < 2:
        return Figure(mean, -math.inf, math.inf, direction, unit,
                      f"unknown: {'one' if n == 1 else 'no'} {what}", None, conditions)
    sem = stdev / math.sqrt(n)
    half = float(scipy_stats.t.ppf(0.5 + confidence / 2, n - 1)) * sem
    return Figure(mean, max(mean - half, 0.0), mean + half, direction, unit,   # all >= 0
                  f"{fmt.percent(confidence)} t-interval of the mean (n={n})", sem, conditions)


def percentiles(at: At, latency: Mapping[str, Any], prefix: str,
                conditions: dict[str, Any]) -> list[tuple[str, Figure]]:
    out = []
    p_at = at.inner("percentiles")
    for label, p in (at.get(latency, "percentiles", dict, optional=True) or {}).items():
        if p is None or label == "p100":   # no sample bounds a maximum: not compared
            continue
        if not isinstance(p, dict):
            raise p_at.fail(label, f"= {p!r}: expected an object")
        e_at = p_at.inner(label)
        value, low, high = (e_at.num(p, n) for n in ("value_ns", "ci_low_ns", "ci_high_ns"))
        assert value is not None and low is not None and high is not None
        confidence = e_at.num(p, "confidence", optional=True) or 0.95
        low, high = min(low, value), max(high, value)
        z = float(scipy_stats.norm.ppf(0.5 + confidence / 2))
        out.append((f"{prefix}.{label}", Figure(
            value, low, high, LOWER, "ns", f"{fmt.percent(confidence)} CI of the percentile",
            # a confidence so small that z rounds to 0 bounds nothing: sigma unknown
            (high - low) / (2 * z) if z > 0 else None, conditions)))
    return out



def unknown(value: float, direction: str, unit: str, why: str,
            conditions: dict[str, Any]) -> Figure:
    """A figure whose measurement gives no band: (-inf, inf), never a changed verdict."""
    return Figure(value, -math.inf, math.inf, direction, unit, f"unknown: {why}", None,
                  conditions)


def binomial(k: int, n: int, direction: str, conditions: dict[str, Any], *,
             scale: float = 1.0, unit: str = "ratio", what: str = "frames",
             confidence: float = T_CONFIDENCE) -> Figure:
    """The proportion k / n (times `scale`) with its exact (Clopper-Pearson) interval:
    the band of a loss ratio, an availability or a forwarded share."""
    k = min(max(int(k), 0), n)
    if n <= 0:
        return unknown(0.0, direction, unit, f"no {what}", conditions)
    a = 1 - confidence
    low = float(scipy_stats.beta.ppf(a / 2, k, n - k + 1)) if k > 0 else 0.0
    high = float(scipy_stats.beta.ppf(1 - a / 2, k + 1, n - k)) if k < n else 1.0
    z = z_value(confidence)
    value = k / n
    return Figure(value * scale, min(low, value) * scale, max(high, value) * scale, direction,
                  unit, f"{fmt.percent(confidence)} exact binomial CI ({k:,} of {n:,} {what})",
                  (high - low) * scale / (2 * z), conditions)


def z_value(confidence: float) -> float:
    """The standard normal quantile of a two-sided `confidence` (1.96 at 0.95)."""
    return float(scipy_stats.norm.ppf(0.5 + confidence / 2))
