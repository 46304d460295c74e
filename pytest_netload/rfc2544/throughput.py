"""RFC 2544 §26.1 throughput: the highest load at which no frame is lost.

The textbook method is a binary search between 0 and the maximum rate:
a trial that passes raises the lower bound, one that fails lowers the
upper bound, until the bounds are within the resolution or the trial
budget is spent. The result is the highest load that passed, never an
interpolation. Trials the generator failed are retried (within a bound)
and kept, with their reason, but never decide the search.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidTrial, NetloadConfigError
from ..units import frame_bits
from .trial import FrameSize, TrialResult, frame_size_label

DEFAULT_RESOLUTION_RATIO = 0.005   # search stops when bounds are within 0.5 % of the maximum
DEFAULT_MAX_TRIALS = 20
DEFAULT_RETRIES = 2                # an invalid trial is tried again at most this often


@dataclass(frozen=True)
class FrameSizeThroughput:
    """Throughput at one frame size, with every trial that led to it."""

    frame_size: FrameSize
    mean_frame_size: float
    throughput_pps: float
    """Highest load that passed; 0.0 when none did."""
    upper_pps: float | None
    """Lowest load that failed; None when the maximum passed."""
    max_pps: float
    """The search's starting (maximum) load."""
    trials: tuple[TrialResult, ...]
    loss_tolerance: float
    duration_s: float
    line_rate_bps: float | None = None
    generator_ceiling_pps: float | None = None
    """Lowest load the generator could not offer (every try invalid); None if none."""
    method: str = "binary"

    @property
    def label(self) -> str:
        return frame_size_label(self.frame_size)

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
            "method": self.method,
            "trials": [t.as_dict() for t in self.trials],
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


def check_search(max_pps: float, loss_tolerance: float, resolution_pps: float,
                 max_trials: int, retries: int) -> None:
    if not (isinstance(max_pps, (int, float)) and math.isfinite(max_pps) and max_pps > 0):
        raise NetloadConfigError(f"maximum load {max_pps!r} pps: give a positive rate")
    if not 0 <= loss_tolerance < 1:
        raise NetloadConfigError(
            f"loss_tolerance={loss_tolerance!r}: give a ratio in [0, 1) (0: no frame may be lost)")
    if not resolution_pps > 0:
        raise NetloadConfigError(f"resolution {resolution_pps!r} pps: must be > 0")
    if not isinstance(max_trials, int) or max_trials < 1:
        raise NetloadConfigError(f"max_trials={max_trials!r}: give a whole number >= 1")
    if not isinstance(retries, int) or retries < 0:
        raise NetloadConfigError(f"retries={retries!r}: give a whole number >= 0")


def valid_trial(measure: Callable[[float], TrialResult], load_pps: float, retries: int,
                log: list[TrialResult],
                on_trial: Callable[[TrialResult], None] | None = None) -> TrialResult | None:
    """Measure at a load until a trial is valid, at most 1 + retries tries; every try is
    logged (and shown to `on_trial`). None when no try was valid: the generator could
    not offer this load."""
    for _ in range(retries + 1):
        trial = measure(load_pps)
        log.append(trial)
        if on_trial is not None:
            on_trial(trial)
        if trial.valid:
            return trial
    return None


def require_valid(log: list[TrialResult], what: str) -> None:
    """InvalidTrial naming the reasons when not one trial of `what` was valid."""
    if not any(t.valid for t in log):
        raise InvalidTrial(
            f"every trial of {what} was invalid (the generator, not the DUT, failed): "
            + "; ".join(dict.fromkeys(t.invalid_reason or "?" for t in log)))


def binary_search(
    measure: Callable[[float], TrialResult],
    max_pps: float,
    *,
    frame_size: FrameSize,
    mean_frame_size: float,
    duration_s: float,
    loss_tolerance: float = 0.0,
    resolution_pps: float | None = None,
    max_trials: int = DEFAULT_MAX_TRIALS,
    retries: int = DEFAULT_RETRIES,
    min_pps: float = 0.0,
    line_rate_bps: float | None = None,
    on_trial: Callable[[TrialResult], None] | None = None,
) -> FrameSizeThroughput:
    """RFC 2544 §26.1 throughput at one frame size by binary search.

    Starts at `max_pps`; if that passes, it is the throughput. Otherwise
    halves [lo, hi] until hi - lo <= `resolution_pps` (default 0.5 % of
    `max_pps`) or `max_trials` loads were tried. A load at which every try
    was invalid (the generator could not offer it) caps the search as a
    ceiling, like a failure, but is never counted as the DUT's loss: the
    result's `generator_ceiling_pps` says so. When no load was ever valid,
    InvalidTrial names the reasons.
    """
    resolution = resolution_pps if resolution_pps is not None else \
        max_pps * DEFAULT_RESOLUTION_RATIO
    check_search(max_pps, loss_tolerance, resolution, max_trials, retries)
    log: list[TrialResult] = []
    ceiling: float | None = None

    def run(load: float) -> bool:
        nonlocal ceiling
        trial = valid_trial(measure, load, retries, log, on_trial)
        if trial is None:
            ceiling = load if ceiling is None else min(ceiling, load)
            return False
        return trial.passed(loss_tolerance)

    lo, hi, spent = min_pps, max_pps, 1
    upper: float | None = None
    if run(max_pps):
        lo = max_pps
    else:
        if ceiling is None:
            upper = max_pps
        while hi - lo > resolution and spent < max_trials:
            mid = (lo + hi) / 2
            spent += 1
            if run(mid):
                lo = mid
            else:
                hi = mid
                if ceiling != mid:
                    upper = mid
    require_valid(log, f"the throughput search at {frame_size_label(frame_size)}")
    return FrameSizeThroughput(frame_size, mean_frame_size, lo, upper, max_pps, tuple(log),
                               loss_tolerance, duration_s, line_rate_bps,
                               generator_ceiling_pps=ceiling)


def check_frame_sizes(frame_sizes: Sequence[Any], what: str = "frame_sizes") -> tuple[FrameSize, ...]:
    """Frame sizes as ints (64..9216 bytes with FCS) or "imix"; clear errors otherwise."""
    if isinstance(frame_sizes, (str, int)) or not isinstance(frame_sizes, Sequence):
        raise NetloadConfigError(f"{what}={frame_sizes!r}: give a list, e.g. [64, 512, 1518]")
    if not frame_sizes:
        raise NetloadConfigError(f"{what} is empty: give at least one size, e.g. [64]")
    out: list[FrameSize] = []
    for size in frame_sizes:
        if isinstance(size, str) and size.lower() == "imix":
            out.append("imix")
        elif isinstance(size, int) and not isinstance(size, bool) and 64 <= size <= 9216:
            out.append(size)
        else:
            raise NetloadConfigError(
                f"{what}: {size!r} is not a frame size; give bytes with FCS from 64 to 9216 "
                "(RFC 2544: 64, 128, 256, 512, 1024, 1280, 1518) or 'imix'")
    if len(set(out)) != len(out):
        raise NetloadConfigError(f"{what}={list(frame_sizes)!r} lists a size twice")
    return tuple(out)
