"""RFC 2544 §26.1 throughput: the highest load at which no frame is lost.

The textbook method is a binary search between 0 and the maximum rate:
a trial that passes raises the lower bound, one that fails lowers the
upper bound, until the bounds are within the resolution or the trial
budget is spent. The resolution is relative to the lower bound by default
(0.5 %), so a small capacity is found as precisely as a large one whatever
the generator's ceiling; an absolute one (pps) is available. The result is
the highest load that passed, never an interpolation. Trials the generator
failed are retried (within a bound) and kept, with their reason, but never
decide the search.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import NetloadConfigError
from ..search.bisection import search_rate
from ..search.lower_bound import MaxSource, check_max_source, lower_bound_by_generator
from ..search.resolution import (
    DEFAULT_MAX_TRIALS,
    DEFAULT_RESOLUTION,
    DEFAULT_RESOLUTION_RATIO,
    DEFAULT_RETRIES,
    Resolution,
    check_reachable,
)
from ..search.settings import TrialSettings, check_frame_size
from ..search.trial import J, Judged, require_valid, valid_trial
from ..units import frame_bits
from .goals import MlrGoalResult
from .latency_at import LatencyAtLoads
from .trial import FrameSize, Measurer, TrialResult, frame_size_label

__all__ = [
    # the search core's names, where RFC 2544's callers have always found them
    "DEFAULT_MAX_TRIALS", "DEFAULT_RESOLUTION", "DEFAULT_RESOLUTION_RATIO", "DEFAULT_RETRIES",
    "J", "Judged", "Resolution", "check_reachable", "require_valid", "valid_trial",
    # the procedure
    "FrameSizeThroughput", "ThroughputResult", "binary_search", "check_frame_sizes",
    "check_search",
]


@dataclass(frozen=True)
class FrameSizeThroughput:
    """Throughput at one frame size, with every trial that led to it."""

    settings: TrialSettings
    """The trials' common settings: frame size, its mean, duration (an MLRsearch goal's
    final trial duration), retries, line rate."""
    throughput_pps: float
    """Highest load that passed; 0.0 when none did."""
    upper_pps: float | None
    """Lowest load that failed; None when the maximum passed."""
    max_pps: float
    """The search's starting (maximum) load."""
    trials: tuple[TrialResult, ...]
    loss_tolerance: float
    generator_ceiling_pps: float | None = None
    """Lowest load the generator could not offer (every try invalid); None if none."""
    method: str = "binary"
    resolution: Resolution | None = None
    """The resolution the search was asked for; None for MLRsearch (its goals set it)."""
    resolution_reached: bool | None = None
    """Whether the final bracket is within `resolution` (True when the maximum passed);
    False when max_trials ran out first; None for MLRsearch."""
    goals: tuple[MlrGoalResult, ...] = ()
    """MLRsearch: every goal's bounds (NDR, PDR, ...), first the goal whose lower bound is
    `throughput_pps`, then the others in the search's order; empty for a binary search.
    Not in `as_dict`: the search's "mlrsearch" record has them."""
    max_source: MaxSource | None = None
    """Where `max_pps` came from: "line_rate", "max_rate" or "generator" (a share of the
    generator's calibrated ceiling); None when the caller did not say."""
    generator_max_pps: float | None = None
    """The generator's calibrated ceiling (its full rate, of which `max_pps` is a share)
    when `max_source` is "generator"; None otherwise."""
    latency_at: LatencyAtLoads | None = None
    """Latency at fractions of this throughput (or of the PDR), measured after the search
    when asked (`latency_at=`); None when not asked."""

    @property
    def frame_size(self) -> FrameSize:
        return self.settings.sized("a throughput result")[0]

    @property
    def mean_frame_size(self) -> float:
        return self.settings.sized("a throughput result")[1]

    @property
    def duration_s(self) -> float:
        return self.settings.timed("a throughput result")

    @property
    def line_rate_bps(self) -> float | None:
        return self.settings.line_rate_bps

    @property
    def label(self) -> str:
        return frame_size_label(self.frame_size)

    @property
    def lower_bound_by_generator(self) -> bool:
        """The throughput is only a lower bound of the DUT's, set by the generator: no valid
        trial failed, and the search's top was the generator's (its maximum passed and was
        the generator's calibrated ceiling, or a load the generator could not offer closed
        the bracket). An MLRsearch's: its first goal's (MlrGoalResult)."""
        if self.goals:
            return self.goals[0].lower_bound_by_generator
        return lower_bound_by_generator(self.throughput_pps, self.upper_pps,
                                        self.generator_ceiling_pps, self.max_pps,
                                        self.max_source)

    def bps(self, layer: str = "l1") -> float:
        return self.throughput_pps * frame_bits(self.mean_frame_size, layer)

    @property
    def line_rate_ratio(self) -> float | None:
        """Throughput as a share of the nominal line rate (at L1); None without one."""
        if not self.line_rate_bps:
            return None
        return self.bps("l1") / self.line_rate_bps

    @property
    def valid_trials(self) -> tuple[TrialResult, ...]:
        return tuple(t for t in self.trials if t.valid)

    @property
    def passing_trial(self) -> TrialResult | None:
        """The trial that established the throughput (highest passing load)."""
        best = [t for t in self.valid_trials if t.passed(self.loss_tolerance)]
        return max(best, key=lambda t: t.offered_pps) if best else None

    @property
    def width_pps(self) -> float | None:
        """Distance between the passing and the failing bound; None when max passed."""
        return None if self.upper_pps is None else self.upper_pps - self.throughput_pps

    @property
    def bracket_pps(self) -> tuple[float, float | None]:
        """The search's final bracket [lo, hi]: lo passed, hi failed or could not be
        offered (the lower of upper_pps and generator_ceiling_pps); hi is None when the
        maximum passed (open above)."""
        lo = self.throughput_pps
        above = [x for x in (self.upper_pps, self.generator_ceiling_pps)
                 if x is not None and x >= lo]
        return lo, min(above) if above else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "frame_size": self.frame_size,
            "mean_frame_size": self.mean_frame_size,
            "throughput_pps": self.throughput_pps,
            "throughput_bps_l1": self.bps("l1"),
            "throughput_bps_l2": self.bps("l2"),
            "upper_pps": self.upper_pps,
            "max_pps": self.max_pps,
            "line_rate_bps": self.line_rate_bps,
            "line_rate_ratio": self.line_rate_ratio,
            "loss_tolerance": self.loss_tolerance,
            "duration_s": self.duration_s,
            "generator_ceiling_pps": self.generator_ceiling_pps,
            "max_source": self.max_source,
            "generator_max_pps": self.generator_max_pps,
            "lower_bound_by_generator": self.lower_bound_by_generator,
            "method": self.method,
            "bracket_pps": list(self.bracket_pps),
            **(self.resolution.as_dict() if self.resolution is not None else
               {"resolution_ratio": None, "resolution_pps": None}),
            "resolution_reached": self.resolution_reached,
            "trials": [t.as_dict() for t in self.trials],
            **({} if self.latency_at is None else {"latency_at": self.latency_at.as_dict()}),
        }


@dataclass(frozen=True)
class ThroughputResult:
    """RFC 2544 throughput over several frame sizes."""

    sizes: tuple[FrameSizeThroughput, ...]

    def __iter__(self) -> Iterator[FrameSizeThroughput]:
        return iter(self.sizes)

    def __len__(self) -> int:
        return len(self.sizes)

    def __getitem__(self, frame_size: FrameSize) -> FrameSizeThroughput:
        for s in self.sizes:
            if s.frame_size == frame_size:
                return s
        raise KeyError(
            f"no throughput for frame size {frame_size_label(frame_size)}; measured: "
            f"{[s.label for s in self.sizes]}")

    @property
    def frame_sizes(self) -> tuple[FrameSize, ...]:
        return tuple(s.frame_size for s in self.sizes)

    def as_dict(self) -> dict[str, Any]:
        return {"procedure": "throughput", "sizes": [s.as_dict() for s in self.sizes]}


def check_search(max_pps: float, loss_tolerance: float, resolution: Resolution | float,
                 max_trials: int) -> None:
    """The search's settings, before any traffic; `resolution` as a number is in pps."""
    if not (isinstance(max_pps, (int, float)) and math.isfinite(max_pps) and max_pps > 0):
        raise NetloadConfigError(f"maximum load {max_pps!r} pps: give a positive rate")
    if not 0 <= loss_tolerance < 1:
        raise NetloadConfigError(
            f"loss_tolerance={loss_tolerance!r}: give a ratio in [0, 1) (0: no frame may be lost)")
    if not isinstance(resolution, Resolution):
        resolution = Resolution(pps=resolution)
    if not isinstance(max_trials, int) or max_trials < 1:
        raise NetloadConfigError(f"max_trials={max_trials!r}: give a whole number >= 1")
    check_reachable(resolution, max_trials, max_pps)


def binary_search(
    measurer: Measurer,
    max_pps: float,
    *,
    settings: TrialSettings,
    loss_tolerance: float = 0.0,
    resolution_pps: float | None = None,
    resolution_ratio: float | None = None,
    max_trials: int = DEFAULT_MAX_TRIALS,
    min_pps: float = 0.0,
    max_source: MaxSource | None = None,
    generator_max_pps: float | None = None,
) -> FrameSizeThroughput:
    """RFC 2544 §26.1 throughput at one frame size by binary search.

    Starts at `max_pps`; if that passes, it is the throughput. Otherwise
    halves [lo, hi] until hi - lo <= `resolution_ratio` * lo (relative to the
    lower bound) or hi - lo <= `resolution_pps` (absolute; with both, whichever
    comes first), or `max_trials` loads were tried: the result's
    `resolution_reached` says which. Default: 0.5 % of the lower bound. While
    nothing has passed (lo == 0) a relative search keeps halving. A
    resolution that `max_trials` cannot reach is refused before any trial
    (see Resolution.trials_needed). A load at which every try
    was invalid (the generator could not offer it) caps the search as a
    ceiling, like a failure, but is never counted as the DUT's loss: the
    result's `generator_ceiling_pps` says so. When no load was ever valid,
    InvalidTrial names the reasons.

    `max_source` says where `max_pps` came from ("line_rate", "max_rate" or
    "generator", with the generator's calibrated ceiling in `generator_max_pps`), so the
    result can tell a throughput the generator bounded from the DUT's
    (`lower_bound_by_generator`).
    """
    resolution = DEFAULT_RESOLUTION if resolution_pps is None and resolution_ratio is None \
        else Resolution(resolution_ratio, resolution_pps)
    frame_size, _mean = settings.sized("binary_search")
    duration_s = settings.timed("binary_search")
    check_search(max_pps, loss_tolerance, resolution, max_trials)
    max_source, generator_max_pps = check_max_source(max_source, generator_max_pps)
    out = search_rate(lambda load: measurer.measure(load, duration_s),
                      lambda t: t.passed(loss_tolerance), max_value=max_pps,
                      min_value=min_pps, try_min=False, resolution=resolution,
                      max_trials=max_trials, retries=settings.retries,
                      on_trial=settings.on_trial,
                      what=f"the throughput search at {frame_size_label(frame_size)}")
    return FrameSizeThroughput(settings, out.lo, out.upper, max_pps, out.trials,
                               loss_tolerance, generator_ceiling_pps=out.ceiling,
                               resolution=resolution,
                               resolution_reached=out.reached, max_source=max_source,
                               generator_max_pps=generator_max_pps)


def check_frame_sizes(frame_sizes: Sequence[Any], what: str = "frame_sizes") -> tuple[FrameSize, ...]:
    """Frame sizes as ints (64..9216 bytes with FCS) or "imix"; clear errors otherwise."""
    if isinstance(frame_sizes, (str, int)) or not isinstance(frame_sizes, Sequence):
        raise NetloadConfigError(f"{what}={frame_sizes!r}: give a list, e.g. [64, 512, 1518]")
    if not frame_sizes:
        raise NetloadConfigError(f"{what} is empty: give at least one size, e.g. [64]")
    out = [check_frame_size(size, what) for size in frame_sizes]
    if len(set(out)) != len(out):
        raise NetloadConfigError(f"{what}={list(frame_sizes)!r} lists a size twice")
    return tuple(out)
