"""Change points in a history of runs, by minimum description length (MDL).

The idea is FD.io CSIT's jumpavg: a history of one figure is split into groups of
consecutive runs; each group is modelled by a normal distribution with its own mean and
standard deviation; the split chosen is the one that describes the whole sequence in the
fewest bits. A new group pays for itself only when the values it explains better save
more bits than its boundary and its two parameters cost, so noise alone stays in one
group. docs/baselines.md gives the formulas; this is an independent implementation.

Per group of m values x_a .. x_(b-1) (all in bits):

- boundary: log2(n), the group's length among n runs;
- mean: log2(1 + R * sqrt(m) / s), the mean to the precision of its standard error s/sqrt(m)
  over R, the range of the whole history;
- stdev: log2(1 + sqrt(2m) * ln(R / f)), ln(s) to the precision of its standard error
  1/sqrt(2m) over [ln f, ln R];
- values: m/2 * log2(2 pi s^2) + SS / (2 s^2 ln 2), with SS the sum of squared deviations;

where s = max(sqrt(SS/m), f) and the floor f is the root mean square of the runs'
measurement noise, so one value or a few identical ones are not free. Without a given
noise, each run's noise is estimated from the history itself (the median absolute
difference of successive values, scaled to a standard deviation; a level shift moves one
difference only). The partition minimising the sum is found exactly by dynamic
programming in O(n^2).
"""

from __future__ import annotations

import datetime as _dt
import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from ..errors import NetloadConfigError
from .baseline import HIGHER, LOWER, Key, extract_figures
from .threshold import beyond_threshold

__all__ = ["Change", "Group", "HistoryPoint", "Trend", "analyse", "classify",
           "counts_as_regression", "description_length", "detect", "history_from_documents"]

FloatArray = npt.NDArray[np.float64]
_LN2 = math.log(2)
_MAD_TO_SIGMA = 1 / (0.6744897501960817 * math.sqrt(2))  # successive differences -> sigma


@dataclass(frozen=True)
class Group:
    """Runs start .. end - 1 (a slice), modelled by `mean` and `stdev`: the larger of the
    group's own scatter (population stdev) and its noise floor."""

    start: int
    end: int
    mean: float
    stdev: float

    @property
    def n(self) -> int:
        return self.end - self.start


@dataclass(frozen=True)
class Change:
    """A change point: run `index` starts group `after`, which follows `before`."""

    index: int
    before: Group
    after: Group
    kind: str
    """"regression" or "progression", by the figure's direction."""

    @property
    def relative_change(self) -> float | None:
        if self.before.mean == 0:
            return None
        return (self.after.mean - self.before.mean) / abs(self.before.mean)


Values = Sequence[float] | npt.NDArray[Any]
Noise = Sequence[float | None] | npt.NDArray[Any] | float | None


def _prepare(values: Values, noise: Noise
             ) -> tuple[FloatArray, FloatArray]:
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1 or not np.all(np.isfinite(x)):
        raise NetloadConfigError("values: give a sequence of finite numbers")
    n = x.size
    if noise is None:
        sig = np.full(n, np.nan)
    elif isinstance(noise, (int, float)) and not isinstance(noise, bool):
        sig = np.full(n, float(noise))
    else:
        seq = list(noise)  # type: ignore[arg-type]
        if len(seq) != n:
            raise NetloadConfigError(f"noise has {len(seq)} entries for {n} values: give one "
                                     "per value, one number for all, or None")
        sig = np.array([np.nan if v is None else float(v) for v in seq], dtype=np.float64)
    if np.any(sig < 0) or np.any(np.isinf(sig)):
        raise NetloadConfigError("noise: give standard uncertainties >= 0 (None: unknown)")
    known = np.isfinite(sig) & (sig > 0)
    if not np.all(known):   # unknown or zero: the history's own short-term scatter
        diffs = np.abs(np.diff(x))
        estimate = float(np.median(diffs)) * _MAD_TO_SIGMA if diffs.size else 0.0
        if estimate == 0 and np.any(known):
            estimate = float(np.median(sig[known]))
        sig = np.where(known, sig, estimate)
    tiny = 1e-9 * max(float(np.max(np.abs(x))) if n else 0.0, 1e-300)
    return x, np.maximum(sig, tiny)


def _bits(m: Any, s1: Any, s2: Any, q: Any, r: float, log2n: float) -> Any:
    """Description length of groups of m values (vectorised): sum s1, sum of squares s2,
    sum of squared noise q, history range r."""
    ss = np.maximum(s2 - s1 * s1 / m, 0.0)
    floor2 = q / m
    var = np.maximum(ss / m, floor2)
    span = np.maximum(r, np.sqrt(var))
    mean_bits = np.log2(1 + span * np.sqrt(m / var))
    sd_bits = np.log2(1 + np.sqrt(2 * m) * np.log(np.maximum(span / np.sqrt(floor2), 1.0)))
    value_bits = 0.5 * m * np.log2(2 * math.pi * var) + ss / (2 * var * _LN2)
    return log2n + mean_bits + sd_bits + value_bits


def _normalised(x: FloatArray, sig: FloatArray) -> tuple[FloatArray, FloatArray, float, float]:
    center, scale = float(np.median(x)), float(np.median(sig))
    return (x - center) / scale, sig / scale, center, scale


def _sums(x: FloatArray, sig: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    zero = np.zeros(1)
    return (np.concatenate([zero, np.cumsum(x)]), np.concatenate([zero, np.cumsum(x * x)]),
            np.concatenate([zero, np.cumsum(sig * sig)]))


def description_length(values: Values, starts: Sequence[int], noise: Noise = None) -> float:
    """Bits of the partition of `values` whose groups start at `starts` (0 first)."""
    x, sig = _prepare(values, noise)
    bounds = [*starts, x.size]
    if not starts or starts[0] != 0 or any(b <= a for a, b in itertools.pairwise(bounds)):
        raise NetloadConfigError(f"starts={list(starts)!r}: give increasing indexes from 0")
    z, zs, _, _ = _normalised(x, sig)
    p1, p2, q = _sums(z, zs)
    r, log2n = float(z.max() - z.min()), math.log2(x.size)
    return float(sum(_bits(b - a, p1[b] - p1[a], p2[b] - p2[a], q[b] - q[a], r, log2n)
                     for a, b in itertools.pairwise(bounds)))


def detect(values: Values, noise: Noise = None) -> list[Group]:
    """Split `values` into groups of consecutive runs with the shortest description.

    `noise` is each run's measurement standard uncertainty (one number for all, a
    sequence with None for unknown, or None to estimate it from the history)."""
    x, sig = _prepare(values, noise)
    n = x.size
    if n == 0:
        return []
    z, zs, center, scale = _normalised(x, sig)
    p1, p2, q = _sums(z, zs)
    r, log2n = float(z.max() - z.min()), math.log2(n)
    best = np.zeros(n + 1)
    start = np.zeros(n + 1, dtype=np.int64)
    for j in range(1, n + 1):
        a = np.arange(j)
        total = best[:j] + _bits(j - a, p1[j] - p1[a], p2[j] - p2[a], q[j] - q[a], r, log2n)
        start[j] = int(np.argmin(total))   # ties: the longest last group
        best[j] = total[start[j]]
    groups: list[Group] = []
    j = n
    while j > 0:
        i = int(start[j])
        m = j - i
        s1, s2, qq = p1[j] - p1[i], p2[j] - p2[i], q[j] - q[i]
        var = max(max(s2 - s1 * s1 / m, 0.0) / m, qq / m)
        groups.append(Group(i, j, center + scale * s1 / m, scale * math.sqrt(var)))
        j = i
    return groups[::-1]


def classify(groups: Sequence[Group], direction: str) -> list[Change]:
    """Each change between consecutive groups as a "regression" or a "progression"."""
    if direction not in (HIGHER, LOWER):
        raise NetloadConfigError(f"direction={direction!r}: give {HIGHER!r} or {LOWER!r}")
    out = []
    for before, after in itertools.pairwise(groups):
        worse = after.mean < before.mean if direction == HIGHER else after.mean > before.mean
        out.append(Change(after.start, before, after, "regression" if worse else "progression"))
    return out


class HistoryPoint(NamedTuple):
    created: str
    value: float
    noise: float | None
    """The figure's standard uncertainty (Figure.sigma); None when unknown."""


def _created(document: Any, index: int) -> _dt.datetime:
    text = document.get("created") if isinstance(document, Mapping) else None
    try:
        when = _dt.datetime.fromisoformat(str(text))
    except ValueError:
        raise NetloadConfigError(f"documents[{index}].created = {text!r}: expected an ISO "
                                 "date and time") from None
    return when if when.tzinfo else when.replace(tzinfo=_dt.UTC)


def history_from_documents(documents: Iterable[Any]) -> dict[Key, list[HistoryPoint]]:
    """Each figure's values over the documents, oldest first (by `created`)."""
    return {key: [p for p, _, _ in points] for key, points in _history(documents).items()}


def _history(documents: Iterable[Any]) -> dict[Key, list[tuple[HistoryPoint, str, str]]]:
    dated = [(_created(d, i), i, d) for i, d in enumerate(documents)]
    out: dict[Key, list[tuple[HistoryPoint, str, str]]] = {}
    for _, i, doc in sorted(dated, key=lambda t: (t[0], t[1])):
        try:
            figures = extract_figures(doc)
        except NetloadConfigError as exc:
            raise NetloadConfigError(f"documents[{i}]: {exc}") from None
        for key, fig in figures.items():
            out.setdefault(key, []).append(
                (HistoryPoint(doc["created"], fig.value, fig.sigma), fig.direction, fig.unit))
    return out


@dataclass(frozen=True)
class Trend:
    """One figure's history, its groups and the changes between them."""

    points: tuple[HistoryPoint, ...]
    groups: tuple[Group, ...]
    changes: tuple[Change, ...]
    direction: str
    unit: str = ""
    """The figure's unit as baselines keep it ("pps", "ns", "frames", "s")."""


def analyse(documents: Iterable[Any]) -> dict[Key, Trend]:
    """detect() and classify() over every figure's history."""
    out = {}
    for key, entries in _history(documents).items():
        points = tuple(p for p, _, _ in entries)
        direction, unit = entries[-1][1], entries[-1][2]
        groups = detect([p.value for p in points], [p.noise for p in points])
        out[key] = Trend(points, tuple(groups), tuple(classify(groups, direction)), direction,
                         unit)
    return out


def counts_as_regression(change: Change, threshold: float | None) -> bool:
    """Whether a change point is a regression worse than `threshold` (a share, e.g. 0.05;
    None: every regression), relative to the earlier group's mean (threshold.py)."""
    if change.kind != "regression":
        return False
    return beyond_threshold(change.before.mean, change.after.mean,
                            change.after.mean < change.before.mean, threshold)
