"""RFC 2544 §26.3 frame loss rate: loss at 100 %, 90 %, 80 % ... of the maximum.

The first trial runs at the maximum load (the line rate, or a given maximum
where the medium has none); each next trial 10 % (the step) lower, until two
successive trials lose no frame. A load the generator could not offer (every
try invalid) is kept in the log and skipped: it is not the DUT's point.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import format as fmt
from ..errors import NetloadConfigError
from ..search.lower_bound import MaxSource, check_max_source, every_try_invalid, invalid_reason_at
from ..search.settings import TrialSettings
from ..search.trial import valid_trial
from .summary import check_positive
from .trial import FrameSize, Measurer, TrialResult, frame_size_label


@dataclass(frozen=True)
class FrameLossResult:
    """Loss per offered load, from the maximum down to two loss-free steps."""

    settings: TrialSettings
    """The trials' common settings: frame size, its mean, duration, retries, line rate."""
    max_pps: float
    step: float
    points: tuple[TrialResult, ...]
    """The valid trial of each load, highest load first."""
    trials: tuple[TrialResult, ...]
    """Every trial run, invalid retries included, in order."""
    skipped_pps: tuple[float, ...] = ()
    """Loads the generator could not offer."""
    max_source: MaxSource | None = None
    """Where `max_pps` came from: "line_rate", "max_rate" or "generator"; None: not said.
    From the generator's ceiling, a sweep that loses nothing at 100 % never saturated the
    DUT."""
    generator_max_pps: float | None = None
    """The generator's calibrated ceiling when `max_source` is "generator"; None otherwise."""

    @property
    def frame_size(self) -> FrameSize:
        return self.settings.sized("a frame loss result")[0]

    @property
    def mean_frame_size(self) -> float:
        return self.settings.sized("a frame loss result")[1]

    @property
    def duration_s(self) -> float:
        return self.settings.timed("a frame loss result")

    @property
    def line_rate_bps(self) -> float | None:
        return self.settings.line_rate_bps

    @property
    def label(self) -> str:
        return frame_size_label(self.frame_size)

    def loss_at(self, share: float) -> TrialResult:
        """The trial at `share` of the maximum (e.g. 0.9)."""
        for t in self.points:
            if abs(t.offered_pps - share * self.max_pps) <= 1e-9 * self.max_pps:
                return t
        measured = ", ".join(fmt.percent(t.offered_pps / self.max_pps) for t in self.points)
        load = share * self.max_pps
        if any(abs(s - load) <= 1e-9 * self.max_pps for s in self.skipped_pps):
            raise KeyError(f"no frame loss point at {fmt.percent(share)} of the maximum: the "
                           f"generator could not offer {fmt.rate_pps_exact(load)} "
                           f"{every_try_invalid(invalid_reason_at(self.trials, load))}; "
                           f"measured {measured or 'none'}")
        raise KeyError(f"no frame loss point at {fmt.percent(share)} of the maximum; measured "
                       f"{measured or 'none'}")

    def as_dict(self) -> dict[str, Any]:
        return {
            "procedure": "frame_loss", "frame_size": self.frame_size,
            "mean_frame_size": self.mean_frame_size, "max_pps": self.max_pps, "step": self.step,
            "duration_s": self.duration_s, "line_rate_bps": self.line_rate_bps,
            "points": [{"load_ratio": t.offered_pps / self.max_pps, "offered_pps": t.offered_pps,
                        "loss_ratio": t.loss_ratio, "lost": t.lost, "tx_packets": t.tx_packets,
                        "loss_upper_bound": t.loss_upper_bound()} for t in self.points],
            "skipped_pps": list(self.skipped_pps),
            "max_source": self.max_source, "generator_max_pps": self.generator_max_pps,
            "trials": [t.as_dict() for t in self.trials],
        }


def frame_loss_sweep(
    measurer: Measurer,
    max_pps: float,
    *,
    settings: TrialSettings,
    step: float = 0.1,
    max_source: MaxSource | None = None,
    generator_max_pps: float | None = None,
) -> FrameLossResult:
    """Run the RFC 2544 §26.3 sweep: 100 %, then `step` lower each time, until two
    successive loads lose nothing (or the load would reach 0). `max_source` (and
    `generator_max_pps`) say where `max_pps` came from, for the record."""
    settings.sized("frame_loss_sweep")
    duration_s = settings.timed("frame_loss_sweep")
    check_positive(max_pps, "maximum load (pps)")
    max_source, generator_max_pps = check_max_source(max_source, generator_max_pps)
    if isinstance(step, bool) or not isinstance(step, (int, float)) or not 0 < step <= 0.5:
        raise NetloadConfigError(f"step={step!r}: give a share of the maximum in (0, 0.5], "
                                 "the RFC uses 0.1")
    log: list[TrialResult] = []
    points: list[TrialResult] = []
    skipped: list[float] = []
    clean_in_a_row = 0
    k = 0
    while clean_in_a_row < 2:
        share = 1.0 - k * step
        if share <= 1e-9:
            break
        load = max_pps * share
        trial = valid_trial(lambda x: measurer.measure(x, duration_s), load, settings.retries,
                            log, settings.on_trial)
        if trial is None:
            skipped.append(load)
            clean_in_a_row = 0
        else:
            points.append(trial)
            clean_in_a_row = clean_in_a_row + 1 if trial.lost == 0 else 0
        k += 1
    return FrameLossResult(settings, max_pps, float(step), tuple(points), tuple(log),
                           tuple(skipped), max_source, generator_max_pps)
