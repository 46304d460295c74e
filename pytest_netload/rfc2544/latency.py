"""RFC 2544 §26.2 latency: n trials at the throughput rate, averaged, with the
distribution beside the RFC's figure.

The RFC tags one frame per trial and reports the mean of the n tagged
latencies. Here every stamped frame is a tagged frame: a trial's figure is
the mean latency of its frames, the RFC figure is the mean of those over
the trials (with their spread), and the merged histogram gives percentiles
with confidence intervals, which an average cannot show.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import NetloadConfigError
from ..measure.latency import DEFAULT_PERCENTILES, LatencyResult
from ..search.settings import TrialSettings
from ..search.trial import require_valid, valid_trial
from .summary import Spread, check_positive, check_trials
from .trial import FrameSize, Measurer, TrialResult, ValidTrialSums, frame_size_label


@dataclass(frozen=True)
class LatencyProcedureResult(ValidTrialSums):
    settings: TrialSettings
    """The trials' common settings: frame size, its mean, duration, retries."""
    load_pps: float
    trials: tuple[TrialResult, ...]
    """Every trial, invalid retries included."""

    @property
    def frame_size(self) -> FrameSize:
        return self.settings.sized("a latency result")[0]

    @property
    def mean_frame_size(self) -> float:
        return self.settings.sized("a latency result")[1]

    @property
    def duration_s(self) -> float:
        return self.settings.timed("a latency result")

    @property
    def label(self) -> str:
        return frame_size_label(self.frame_size)

    @property
    def per_trial_mean_ns(self) -> tuple[float, ...]:
        return tuple(t.latency.mean_ns for t in self.valid_trials
                     if t.latency is not None and not t.latency.empty)

    @property
    def rfc2544_ns(self) -> Spread:
        """The RFC's figure: the mean over trials of each trial's latency, with spread."""
        return Spread.of(self.per_trial_mean_ns)

    @property
    def latency(self) -> LatencyResult:
        """All valid trials' latency merged: percentiles with CIs over every frame."""
        merged = self.merged_latency()
        if merged is None:
            raise NetloadConfigError("no valid trial kept a latency histogram")
        return merged

    def latency_result(self) -> LatencyResult:
        return self.latency

    def as_dict(self) -> dict[str, Any]:
        lat = self.latency
        return {
            "procedure": "latency", "frame_size": self.frame_size,
            "mean_frame_size": self.mean_frame_size, "load_pps": self.load_pps,
            "duration_s": self.duration_s, "rfc2544_ns": self.rfc2544_ns.as_dict(),
            "latency": {**lat.as_dict(DEFAULT_PERCENTILES), "histogram": lat.histogram_dict()},
            "lost": self.lost,
            "tx_packets": self.tx_packets, "trials": [t.as_dict() for t in self.trials],
        }


def latency_trials(
    measurer: Measurer,
    load_pps: float,
    *,
    settings: TrialSettings,
    trials: int = 20,
) -> LatencyProcedureResult:
    """n latency trials at `load_pps` (the throughput rate)."""
    settings.sized("latency_trials")
    duration_s = settings.timed("latency_trials")
    check_positive(load_pps, "load_pps (the throughput rate)")
    check_trials(trials)
    log: list[TrialResult] = []
    for _ in range(trials):
        valid_trial(lambda x: measurer.measure(x, duration_s), load_pps, settings.retries, log,
                    settings.on_trial)
    require_valid(log, "the latency procedure")
    return LatencyProcedureResult(settings, load_pps, tuple(log))
