"""How precisely a search brackets its figure, and whether a trial budget can get there.

A bisection's bracket [lo, hi] is narrow enough when it is within a share of the lower
bound (relative: 0.5 % by default, so a small capacity is found as precisely as a large
one whatever the search's maximum) or within an absolute width (pps); `check_reachable`
refuses, before any trial, a resolution that `max_trials` halvings cannot reach.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .. import format as fmt
from ..errors import NetloadConfigError

__all__ = ["DEFAULT_MAX_TRIALS", "DEFAULT_RESOLUTION", "DEFAULT_RESOLUTION_RATIO",
           "DEFAULT_RETRIES", "Resolution", "check_reachable"]

DEFAULT_RESOLUTION_RATIO = 0.005   # search stops when hi - lo <= 0.5 % of lo
DEFAULT_MAX_TRIALS = 20
DEFAULT_RETRIES = 2                # an invalid trial is tried again at most this often

_RESOLUTION_FIX = "give a ratio of the lower bound in (0, 1), e.g. 0.005, or a rate, e.g. '100pps'"


def _is_number(x: object) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


@dataclass(frozen=True)
class Resolution:
    """When the binary search may stop: its bracket [lo, hi] is within `ratio` of the
    lower bound (relative: hi - lo <= ratio * lo) or within `pps` (absolute:
    hi - lo <= pps). Give one or both; with both, whichever is reached first stops it.
    While nothing has passed (lo == 0) no relative resolution is reached."""

    ratio: float | None = None
    pps: float | None = None

    def __post_init__(self) -> None:
        if self.ratio is None and self.pps is None:
            raise NetloadConfigError(f"no search resolution: {_RESOLUTION_FIX}")
        if self.ratio is not None and not (
                _is_number(self.ratio) and math.isfinite(self.ratio) and 0 < self.ratio < 1):
            raise NetloadConfigError(f"resolution {self.ratio!r}: {_RESOLUTION_FIX}")
        if self.pps is not None and not (
                _is_number(self.pps) and math.isfinite(self.pps) and self.pps > 0):
            raise NetloadConfigError(
                f"resolution {self.pps!r} pps: give a rate > 0, e.g. '100pps', or a ratio of "
                "the lower bound, e.g. 0.005")

    def reached(self, lo: float, hi: float) -> bool:
        """Whether the bracket [lo, hi] is within this resolution."""
        width = hi - lo
        return (self.pps is not None and width <= self.pps) or \
            (self.ratio is not None and width <= self.ratio * lo)

    def trials_needed(self, max_pps: float | None = None) -> int:
        """Loads a search tries before it can stop: for `pps`, halving from `max_pps`
        (1 + ceil(log2(max/pps))); for `ratio`, when the capacity is half the maximum
        (the maximum, half of it, then ceil(log2(1/ratio)) halvings). Smaller capacities
        need more. The least of the two when both are set; `pps` is skipped without a
        `max_pps`."""
        needs = []
        if self.ratio is not None:
            halvings = 0
            while 2.0 ** -halvings > self.ratio:
                halvings += 1
            needs.append(2 + halvings)
        if self.pps is not None and max_pps is not None:
            trials = 1
            while max_pps / 2.0 ** (trials - 1) > self.pps:
                trials += 1
            needs.append(trials)
        return min(needs) if needs else 1

    def describe(self) -> str:
        """E.g. "0.5% of the lower bound", "100 pps"."""
        parts = []
        if self.ratio is not None:
            parts.append(f"{fmt.percent(self.ratio)} of the lower bound")
        if self.pps is not None:
            parts.append(fmt.rate_pps_exact(self.pps))
        return " or ".join(parts)

    def as_dict(self) -> dict[str, float | None]:
        return {"resolution_ratio": self.ratio, "resolution_pps": self.pps}


DEFAULT_RESOLUTION = Resolution(ratio=DEFAULT_RESOLUTION_RATIO)


def check_reachable(resolution: Resolution, max_trials: int,
                    max_pps: float | None = None) -> None:
    """NetloadConfigError when `max_trials` loads cannot narrow the bracket to
    `resolution` (see Resolution.trials_needed), naming both fixes."""
    needed = resolution.trials_needed(max_pps)
    if needed <= max_trials:
        return
    ratio = f"resolution={_round_up(2.0 ** -(max_trials - 2)):g}" if max_trials >= 3 else None
    if resolution.ratio is not None and (resolution.pps is None or max_pps is None):
        why = "even for a capacity at half the maximum load"
        coarser = f", e.g. {ratio}" if ratio else \
            " to a rate of at least half the maximum load, e.g. resolution='100kpps'"
    else:
        why = f"halving from the maximum {fmt.rate_pps_exact(max_pps or 0.0)}"
        finest = _round_up((max_pps or 0.0) / 2.0 ** (max_trials - 1))
        coarser = f", e.g. resolution='{finest:g}pps'" + (f" or {ratio}" if ratio else "")
    raise NetloadConfigError(
        f"resolution {resolution.describe()} cannot be reached within max_trials={max_trials}: "
        f"it takes {needed} trials {why}; raise max_trials to {needed} or coarsen the "
        f"resolution{coarser}")


def _round_up(x: float) -> float:
    """`x` rounded up to two significant digits (a suggestion that is still reachable)."""
    if not x > 0:
        return x
    step = 10.0 ** (math.floor(math.log10(x)) - 1)
    out = math.ceil(x / step) * step
    while out < x:   # a float product may land one ulp short
        out += step
    return out
