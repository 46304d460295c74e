"""RFC 2889 §5.5 congestion control over 4 ports.

Port A sends half its load to port C and half to port D; port B sends all its load to
port C. Each sender offers the same per-port load, so C is offered 150 % of it and D
50 %: C is congested, D is not. At the port's full rate C can forward only 100/150 of
what it is offered, so a switch that simply drops its overload loses 1 - 100/150 = 1/3
of the frames sent to C, and nothing of the stream a->d.

Two behaviours are judged from one trial:

* head-of-line blocking: the uncongested stream a->d lost frames (A's frames to D
  waited behind its frames to the congested C); its loss ratio is reported.
* back pressure: the congested port's senders were held back (pause frames seen, or
  the senders fell short of their load by more than the tolerance while C lost less
  than the overload share): the switch pushed the congestion back to the senders
  instead of dropping it. A binding must therefore not call a trial invalid because
  its senders fell short under flow control; only a generator failure is invalid.

The result names what was observed and compares the congested port's loss with the
expected share.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .. import format as fmt
from ..errors import NetloadConfigError
from ..measure.dut import LossAttribution, dut_record
from ..search.bisection import check_rate
from ..search.settings import TrialSettings
from ..search.trial import Measurer, require_valid, valid_trial
from ._search import TIMED, timed

__all__ = ["CONGESTED_OVERLOAD", "EXPECTED_CONGESTED_LOSS", "CongestionMeasurer",
           "CongestionResult", "CongestionTrial", "StreamCounts", "congestion_control"]

CONGESTED_OVERLOAD = 1.5
"""Port C is offered 150 % of the per-port load."""
EXPECTED_CONGESTED_LOSS = 1 - 1 / CONGESTED_OVERLOAD
"""The share of the frames to C a dropping switch loses at the full port rate: 1/3."""
DEFAULT_TOLERANCE = 0.01
"""Shares (of a sender's load, of C's frames) below which a difference is noise."""


@dataclass(frozen=True)
class StreamCounts:
    """One stream of the congestion trial, e.g. "a->c": frames sent and received."""

    name: str
    tx: int
    rx: int

    def __post_init__(self) -> None:
        for field_name in ("tx", "rx"):
            value = getattr(self, field_name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise NetloadConfigError(f"stream {self.name}: {field_name}={value!r}: give a "
                                         "count >= 0")

    @property
    def lost(self) -> int:
        return max(self.tx - self.rx, 0)

    @property
    def loss_ratio(self) -> float:
        return self.lost / self.tx if self.tx else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "tx": self.tx, "rx": self.rx, "lost": self.lost,
                "loss_ratio": self.loss_ratio}


@dataclass(frozen=True)
class CongestionTrial:
    """One congestion trial: the three streams' counts, and the flow-control (pause)
    frames the generator saw from the switch (None: not counted)."""

    load_pps_per_port: float
    duration_s: float
    a_to_c: StreamCounts
    a_to_d: StreamCounts
    b_to_c: StreamCounts
    pause_frames: int | None = None
    valid: bool = True
    invalid_reason: str | None = None
    port_names: tuple[str, ...] = ()
    """The topology's ports playing A, B, C and D, in that order; empty when unnamed."""
    attribution: LossAttribution | None = field(default=None, compare=False, repr=False)
    """The trial's loss attributed to the DUT's and the generator's counters (the DUT
    hooks, bench/dut_trial.py); None where not read."""
    dut_health: str | None = None
    """"ok", or the DUT health hooks' reason; None when health checks are off."""

    def __post_init__(self) -> None:
        check_rate(self.load_pps_per_port, "congestion trial load_pps_per_port")
        check_rate(self.duration_s, "congestion trial duration_s")
        for name in ("a_to_c", "a_to_d", "b_to_c"):
            if not isinstance(getattr(self, name), StreamCounts):
                raise NetloadConfigError(f"congestion trial {name}: give a StreamCounts")
        p = self.pause_frames
        if p is not None and (isinstance(p, bool) or not isinstance(p, int) or p < 0):
            raise NetloadConfigError(f"congestion trial pause_frames={p!r}: give a count "
                                     ">= 0, or None when not counted")
        if self.port_names and len(self.port_names) != 4:
            raise NetloadConfigError(f"congestion trial port_names={list(self.port_names)!r}:"
                                     " give the 4 ports A, B, C, D")

    @property
    def streams(self) -> tuple[StreamCounts, StreamCounts, StreamCounts]:
        return self.a_to_c, self.a_to_d, self.b_to_c

    @property
    def intended_per_port(self) -> float:
        """Frames each sender was to send: the per-port load times the duration."""
        return self.load_pps_per_port * self.duration_s

    def as_dict(self) -> dict[str, Any]:
        return {"load_pps_per_port": self.load_pps_per_port, "duration_s": self.duration_s,
                "streams": [s.as_dict() for s in self.streams],
                "pause_frames": self.pause_frames, "port_names": list(self.port_names),
                "valid": self.valid, "invalid_reason": self.invalid_reason,
                **dut_record(self.attribution, self.dut_health)}


CongestionMeasurer = Measurer[float, CongestionTrial]
"""One congestion trial: A sends half of `load` (pps per port) to C and half to D, B
sends all of it to C, for `duration_s`."""


def _shortfall(sent: int, intended: float) -> float:
    return max(0.0, 1.0 - sent / intended) if intended > 0 else 0.0


@dataclass(frozen=True)
class CongestionResult:
    """RFC 2889 §5.5: whether the switch showed head-of-line blocking and back pressure,
    from the valid trial `trial`; `trials` holds every try."""

    load_pps_per_port: float
    settings: TrialSettings
    """The trials' common settings: duration, retries."""
    trial: CongestionTrial
    trials: tuple[CongestionTrial, ...]
    tolerance: float = DEFAULT_TOLERANCE

    @property
    def duration_s(self) -> float:
        return self.settings.timed("a congestion result")

    @property
    def hol_loss_ratio(self) -> float:
        """The loss ratio of the uncongested stream a->d."""
        return self.trial.a_to_d.loss_ratio

    @property
    def head_of_line_blocking(self) -> bool:
        return self.trial.a_to_d.lost > 0

    @property
    def congested_tx(self) -> int:
        return self.trial.a_to_c.tx + self.trial.b_to_c.tx

    @property
    def congested_lost(self) -> int:
        """Frames lost on the congested port C (streams a->c and b->c)."""
        return self.trial.a_to_c.lost + self.trial.b_to_c.lost

    @property
    def congested_loss_ratio(self) -> float:
        return self.congested_lost / self.congested_tx if self.congested_tx else 0.0

    @property
    def expected_loss_ratio(self) -> float:
        """What a switch that drops its overload loses of C's frames: 1/3."""
        return EXPECTED_CONGESTED_LOSS

    @property
    def sender_shortfall(self) -> tuple[float, float]:
        """How far A and B fell short of their load, as shares of it."""
        t = self.trial
        return (_shortfall(t.a_to_c.tx + t.a_to_d.tx, t.intended_per_port),
                _shortfall(t.b_to_c.tx, t.intended_per_port))

    @property
    def back_pressure(self) -> bool:
        """Pause frames were seen, or the senders to C were held back (by more than the
        tolerance) while C lost less than the overload share."""
        if self.trial.pause_frames:
            return True
        return max(self.sender_shortfall) > self.tolerance and \
            self.congested_loss_ratio < self.expected_loss_ratio - self.tolerance

    @property
    def observed(self) -> tuple[str, ...]:
        """What the trial showed, of "head_of_line_blocking", "back_pressure",
        "congestion_loss" (C dropped its overload) and "no_congestion" (C forwarded
        everything without holding the senders back: the load is below its rate)."""
        out = []
        if self.head_of_line_blocking:
            out.append("head_of_line_blocking")
        if self.back_pressure:
            out.append("back_pressure")
        elif self.congested_lost > 0:
            out.append("congestion_loss")
        else:
            out.append("no_congestion")
        return tuple(out)

    def describe(self) -> str:
        """One line: C's loss against the expected share, and what was observed."""
        t = self.trial
        text = (f"port C lost {fmt.count(self.congested_lost)} of {fmt.count(self.congested_tx)} "
                f"frames ({fmt.loss_ratio(self.congested_loss_ratio)}; a switch dropping its "
                f"overload loses {fmt.share(self.expected_loss_ratio)}); a->d lost "
                f"{fmt.count(t.a_to_d.lost)} ({fmt.loss_ratio(self.hol_loss_ratio)}): ")
        text += "head-of-line blocking" if self.head_of_line_blocking else \
            "no head-of-line blocking"
        a, b = self.sender_shortfall
        if self.back_pressure:
            pause = f"{fmt.count(t.pause_frames)} pause frames, " if t.pause_frames else ""
            text += (f"; back pressure ({pause}senders short of their load by "
                     f"{fmt.share(a)} (A) and {fmt.share(b)} (B))")
        else:
            text += "; no back pressure"
        if "no_congestion" in self.observed:
            text += ("; port C forwarded all 150 %: load_pps_per_port is below the port's "
                     "rate, run at the line rate to congest it")
        return text

    def as_dict(self) -> dict[str, Any]:
        return {
            "procedure": "rfc2889_congestion_control",
            "load_pps_per_port": self.load_pps_per_port, "duration_s": self.duration_s,
            "tolerance": self.tolerance, "observed": list(self.observed),
            "head_of_line_blocking": self.head_of_line_blocking,
            "hol_loss_ratio": self.hol_loss_ratio, "back_pressure": self.back_pressure,
            "congested_tx": self.congested_tx, "congested_lost": self.congested_lost,
            "congested_loss_ratio": self.congested_loss_ratio,
            "expected_loss_ratio": self.expected_loss_ratio,
            "sender_shortfall": list(self.sender_shortfall),
            "pause_frames": self.trial.pause_frames, "summary": self.describe(),
            "trial": self.trial.as_dict(), "trials": [t.as_dict() for t in self.trials],
        }


def congestion_control(
    measurer: CongestionMeasurer,
    *,
    load_pps_per_port: float,
    settings: TrialSettings = TIMED,
    tolerance: float = DEFAULT_TOLERANCE,
) -> CongestionResult:
    """RFC 2889 §5.5 at `load_pps_per_port` (the ports' full rate, so C is congested):
    one valid trial of `settings.duration_s` (TRIAL_S when None), an invalid one retried
    at most `settings.retries` times; InvalidTrial when none was valid. `tolerance` is the
    share below which a sender's shortfall or a loss difference counts as noise."""
    load = check_rate(load_pps_per_port, "load_pps_per_port")
    settings = timed(settings)
    duration = settings.timed("congestion_control")
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or \
            not 0 <= tolerance < EXPECTED_CONGESTED_LOSS:
        raise NetloadConfigError(f"tolerance={tolerance!r}: give a share in [0, 1/3), e.g. "
                                 f"{DEFAULT_TOLERANCE}")
    log: list[CongestionTrial] = []
    trial = valid_trial(lambda x: measurer.measure(x, duration), load, settings.retries, log,
                        settings.on_trial)
    require_valid(log, "the congestion control trial")
    assert trial is not None  # require_valid raised otherwise
    return CongestionResult(load, settings, trial, tuple(log), float(tolerance))

