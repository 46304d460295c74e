"""RFC 2544 §26.4 back-to-back frames: the longest burst at the maximum rate that
the DUT forwards without losing a frame, searched n times and averaged.

Its measurer is the search core's `Measurer` of a `TrialResult` whose load is a burst
length in frames (``Measurer[int, TrialResult]``, `BurstMeasurer`).

Each repetition is a binary search over the burst length: a burst that loses
nothing raises the lower bound, one that loses frames lowers the upper bound,
down to the resolution. A burst the generator failed is retried; a length
at which every try failed caps that repetition, never as DUT loss.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import NetloadConfigError
from ..search.bisection import TrialLog, bisect
from ..search.settings import TrialSettings
from ..search.trial import Measurer, require_valid
from .summary import Spread, check_positive, check_trials
from .trial import FrameSize, TrialResult, frame_size_label

BurstMeasurer = Measurer[int, TrialResult]
"""A burst of `load` frames back to back, over `duration_s` (the length at the rate)."""


@dataclass(frozen=True)
class BackToBackResult:
    """Burst lengths (frames) that passed, per repetition, with their spread."""

    settings: TrialSettings
    """The trials' common settings: frame size, its mean, retries (no duration: a burst's
    length sets each trial's)."""
    rate_pps: float
    max_frames: int
    bursts: tuple[int, ...]
    """The longest loss-free burst of each repetition."""
    trials: tuple[TrialResult, ...]

    @property
    def frame_size(self) -> FrameSize:
        return self.settings.sized("a back-to-back result")[0]

    @property
    def mean_frame_size(self) -> float:
        return self.settings.sized("a back-to-back result")[1]

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
    measurer: BurstMeasurer,
    *,
    rate_pps: float,
    max_frames: int,
    settings: TrialSettings,
    repetitions: int = 50,
    resolution_frames: int | None = None,
) -> BackToBackResult:
    """`measurer.measure(n, n / rate_pps)` sends n frames back to back at the maximum
    rate, `rate_pps`: the load is the burst's length, and the duration the one it
    implies (so `settings` has no duration_s)."""
    settings.sized("back_to_back")
    if settings.duration_s is not None:
        raise NetloadConfigError(
            f"back_to_back: TrialSettings(duration_s={settings.duration_s!r}): a burst's "
            "length sets each trial's duration; leave duration_s None (give the burst's "
            "length as max_frames)")
    rate = check_positive(rate_pps, "rate_pps")
    check_trials(repetitions, "repetitions")
    if isinstance(max_frames, bool) or not isinstance(max_frames, int) or max_frames < 1:
        raise NetloadConfigError(f"max_frames={max_frames!r}: give a burst length >= 1")
    resolution = resolution_frames or max(1, max_frames // 200)
    log: TrialLog[int, TrialResult] = TrialLog(lambda n: measurer.measure(n, n / rate),
                                               lambda t: t.lost == 0,
                                               retries=settings.retries,
                                               on_trial=settings.on_trial)
    bursts = [bisect(log.judge, low=0, high=max_frames, midpoint=lambda lo, hi: (lo + hi) // 2,
                     narrow=lambda lo, hi: hi - lo <= resolution).lo
              for _ in range(repetitions)]
    require_valid(log.trials, "the back-to-back bursts")
    return BackToBackResult(settings, rate_pps, max_frames, tuple(bursts), tuple(log.trials))
