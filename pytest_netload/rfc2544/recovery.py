"""RFC 2544 §26.5 system recovery and §26.6 reset.

Recovery: overload the DUT at 110 % of its throughput (or the maximum, if
lower) for a while, then drop to 50 %; the recovery time runs from that
rate change to the last frame lost. The engine dates the last loss by the
TX time of the first frame that arrived after a sequence gap.

Reset: traffic at a steady load while a user-supplied hook resets the DUT;
the reset time is the longest silence at the receiver (the RFC's "last
frame before the reset to the first frame after it").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import NetloadConfigError
from ..search.settings import TrialSettings
from ..search.trial import Measurer, valid_trial
from .summary import Spread, check_positive, check_trials
from .trial import FrameSize, frame_size_label


@dataclass(frozen=True)
class RecoveryTrial:
    """One overload-then-relief run."""

    overload_pps: float
    recovery_pps: float
    switch_ns: int
    """When the rate dropped, ns after the start."""
    tx_packets: int
    lost: int
    last_loss_tx_ns: int
    """TX time of the frame that first arrived after the last loss; 0: no loss."""
    valid: bool = True
    invalid_reason: str | None = None
    directions: tuple[dict[str, Any], ...] = field(default=(), compare=False)
    """Per direction of a both-ways run: {"wire", "tx_packets", "lost", "recovery_ns"};
    the figures above are of all directions (the recovery: the latest)."""

    @property
    def overloaded(self) -> bool:
        """Frames were lost at all: the overload reached the DUT's limit."""
        return self.lost > 0

    @property
    def recovery_ns(self) -> int:
        """From the rate change to the last loss (0 if the loss ended before it)."""
        return max(0, self.last_loss_tx_ns - self.switch_ns) if self.lost else 0

    def as_dict(self) -> dict[str, Any]:
        return {"overload_pps": self.overload_pps, "recovery_pps": self.recovery_pps,
                "switch_ns": self.switch_ns, "tx_packets": self.tx_packets, "lost": self.lost,
                "last_loss_tx_ns": self.last_loss_tx_ns, "recovery_ns": self.recovery_ns,
                "overloaded": self.overloaded, "valid": self.valid,
                "invalid_reason": self.invalid_reason,
                **({"directions": [dict(d) for d in self.directions]} if self.directions
                   else {})}


@dataclass(frozen=True)
class RecoveryLoad:
    """What a recovery trial offers: `overload_pps` for `overload_s`, then `relief_pps`
    for `relief_s`. Its duration is the two phases'."""

    overload_pps: float
    relief_pps: float
    overload_s: float
    relief_s: float

    @property
    def duration_s(self) -> float:
        return self.overload_s + self.relief_s


RecoveryMeasurer = Measurer[RecoveryLoad, RecoveryTrial]
"""One overload-then-relief trial (the search core's `Measurer` of a `RecoveryLoad`),
given the load's own duration."""


@dataclass(frozen=True)
class RecoveryResult:
    settings: TrialSettings
    """The trials' common settings: frame size, retries (the load sets the duration)."""
    throughput_pps: float
    trials: tuple[RecoveryTrial, ...]

    @property
    def frame_size(self) -> FrameSize:
        return self.settings.size("a recovery result")

    @property
    def label(self) -> str:
        return frame_size_label(self.frame_size)

    @property
    def recovery_s(self) -> Spread:
        """Recovery time over the valid trials that overloaded the DUT, in seconds."""
        return Spread.of([t.recovery_ns / 1e9 for t in self.trials if t.valid and t.overloaded])

    @property
    def overloaded(self) -> bool:
        return any(t.valid and t.overloaded for t in self.trials)

    def as_dict(self) -> dict[str, Any]:
        return {"procedure": "recovery", "frame_size": self.frame_size,
                "throughput_pps": self.throughput_pps, "overloaded": self.overloaded,
                "recovery_s": self.recovery_s.as_dict() if self.overloaded else None,
                "trials": [t.as_dict() for t in self.trials]}


def recovery_loads(throughput_pps: float, max_pps: float) -> tuple[float, float]:
    """(overload, relief) per RFC 2544 §26.5: 110 % of throughput capped at the
    maximum, then 50 % of throughput."""
    check_positive(throughput_pps, "throughput_pps")
    check_positive(max_pps, "max_pps")
    return min(1.1 * throughput_pps, max_pps), 0.5 * throughput_pps


def system_recovery(
    measurer: RecoveryMeasurer,
    *,
    throughput_pps: float,
    max_pps: float,
    overload_s: float,
    relief_s: float,
    settings: TrialSettings,
    repetitions: int = 1,
) -> RecoveryResult:
    """`measurer.measure(RecoveryLoad(overload_pps, relief_pps, overload_s, relief_s),
    overload_s + relief_s)` runs one overload-then-relief trial, `repetitions` times (an
    invalid one retried at most `settings.retries` times)."""
    settings.size("system_recovery")
    if settings.duration_s is not None:
        raise NetloadConfigError(
            f"system_recovery: TrialSettings(duration_s={settings.duration_s!r}): the "
            "overload and relief phases set each trial's duration; give overload_s and "
            "relief_s and leave duration_s None")
    check_trials(repetitions, "repetitions")
    overload, relief = recovery_loads(throughput_pps, max_pps)
    load = RecoveryLoad(overload, relief, check_positive(overload_s, "overload_s"),
                        check_positive(relief_s, "relief_s"))
    log: list[RecoveryTrial] = []
    for _ in range(repetitions):
        valid_trial(lambda x: measurer.measure(x, x.duration_s), load, settings.retries, log,
                    settings.on_trial)
    return RecoveryResult(settings, throughput_pps, tuple(log))


@dataclass(frozen=True)
class ResetTrial:
    load_pps: float
    tx_packets: int
    lost: int
    longest_gap_ns: float
    """Longest silence between two arrivals of the stream."""
    reset_called_ns: int
    hook_seconds: float
    rx_last_ns: int = 0
    """Last arrival of the stream, ns after the start."""
    valid: bool = True
    invalid_reason: str | None = None
    directions: tuple[dict[str, Any], ...] = field(default=(), compare=False)
    """Per direction of a both-ways run: {"wire", "tx_packets", "lost", "longest_gap_ns",
    "rx_last_ns"}; the figures above are of all directions (the longest silence, the
    earliest last arrival)."""

    @property
    def recovered(self) -> bool:
        """A frame arrived after the hook returned: the DUT forwards again."""
        return self.rx_last_ns > self.reset_called_ns + self.hook_seconds * 1e9

    @property
    def reset_ns(self) -> float | None:
        """The silence beyond the stream's own frame spacing; None when the DUT did not
        forward again before the run ended."""
        if not self.recovered:
            return None
        return max(0.0, self.longest_gap_ns - 1e9 / self.load_pps)

    def as_dict(self) -> dict[str, Any]:
        return {"load_pps": self.load_pps, "tx_packets": self.tx_packets, "lost": self.lost,
                "longest_gap_ns": self.longest_gap_ns, "reset_ns": self.reset_ns,
                "recovered": self.recovered, "rx_last_ns": self.rx_last_ns,
                "reset_called_ns": self.reset_called_ns, "hook_seconds": self.hook_seconds,
                "valid": self.valid, "invalid_reason": self.invalid_reason,
                **({"directions": [dict(d) for d in self.directions]} if self.directions
                   else {})}


@dataclass(frozen=True)
class ResetResult:
    frame_size: FrameSize
    trials: tuple[ResetTrial, ...] = field(default=())

    @property
    def recovered(self) -> bool:
        """Every valid trial saw the DUT forward again after its reset."""
        return all(t.recovered for t in self.trials if t.valid)

    @property
    def reset_s(self) -> Spread:
        """Reset time over the valid trials that recovered, in seconds."""
        return Spread.of([t.reset_ns / 1e9 for t in self.trials
                          if t.valid and t.reset_ns is not None])

    def as_dict(self) -> dict[str, Any]:
        done = [t for t in self.trials if t.valid and t.reset_ns is not None]
        return {"procedure": "reset", "frame_size": self.frame_size,
                "recovered": self.recovered,
                "reset_s": self.reset_s.as_dict() if done else None,
                "trials": [t.as_dict() for t in self.trials]}


def check_hook(hook: object) -> Callable[[], Any]:
    if not callable(hook):
        raise NetloadConfigError(
            f"reset hook {hook!r} is not callable; give a function that resets the DUT, e.g. "
            "lambda: dut.run(['ip', 'link', 'set', 'd1', 'down'])")
    return hook  # type: ignore[return-value]
