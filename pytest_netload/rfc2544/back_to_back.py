"""RFC 2544 §26.4 back-to-back frames: the longest burst at the maximum rate that
the DUT forwards without losing a frame, searched n times and averaged.

Each repetition is a binary search over the burst length: a burst that loses
nothing raises the lower bound, one that loses frames lowers the upper bound,
down to the resolution. A burst the generator failed is retried; a length
at which every try failed caps that repetition, never as DUT loss.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import NetloadConfigError
from ..search.bisection import TrialLog, bisect
from ..search.trial import require_valid
from .summary import Spread, check_positive, check_trials
from .trial import FrameSize, TrialResult, frame_size_label


@dataclass(frozen=True)
class BackToBackResult:
    """Burst lengths (frames) that passed, per repetition, with their spread."""

    frame_size: FrameSize
    mean_frame_size: float
    rate_pps: float
    max_frames: int
    bursts: tuple[int, ...]
    """The longest loss-free burst of each repetition."""
    trials: tuple[TrialResult, ...]

    @property
    def label(self) -> str:
        return frame_size_label(self.frame_size)

    @property
    def spread(self) -> Spread:
        return Spread.of(self.bursts)

    @property
    def mean_frames(self) -> float:
        return self.spread.mean

    @property
    def at_maximum(self) -> bool:
        """Every repetition passed the longest burst tried: the DUT's buffer is at least that."""
        return all(b >= self.max_frames for b in self.bursts)

    def as_dict(self) -> dict[str, Any]:
        return {
            "procedure": "back_to_back", "frame_size": self.frame_size,
            "mean_frame_size": self.mean_frame_size, "rate_pps": self.rate_pps,
            "max_frames": self.max_frames, "bursts": list(self.bursts),
            "spread": self.spread.as_dict(), "burst_s_mean": self.spread.mean / self.rate_pps,
            "at_maximum": self.at_maximum, "trials": [t.as_dict() for t in self.trials],
        }


def back_to_back(
    measure_burst: Callable[[int], TrialResult],
    *,
    rate_pps: float,
    max_frames: int,
    frame_size: FrameSize,
    mean_frame_size: float,
    repetitions: int = 50,
    resolution_frames: int | None = None,
    retries: int = 2,
    on_trial: Callable[[TrialResult], None] | None = None,
) -> BackToBackResult:
    """`measure_burst(n)` sends n frames back to back at the maximum rate."""
    check_positive(rate_pps, "rate_pps")
    check_trials(repetitions, "repetitions")
    if isinstance(max_frames, bool) or not isinstance(max_frames, int) or max_frames < 1:
        raise NetloadConfigError(f"max_frames={max_frames!r}: give a burst length >= 1")
    resolution = resolution_frames or max(1, max_frames // 200)
    log: TrialLog[int, TrialResult] = TrialLog(measure_burst, lambda t: t.lost == 0,
                                               retries=retries, on_trial=on_trial)
    bursts = [bisect(log.judge, low=0, high=max_frames, midpoint=lambda lo, hi: (lo + hi) // 2,
                     narrow=lambda lo, hi: hi - lo <= resolution).lo
              for _ in range(repetitions)]
    require_valid(log.trials, "the back-to-back bursts")
    return BackToBackResult(frame_size, mean_frame_size, rate_pps, max_frames, tuple(bursts),
                            tuple(log.trials))
