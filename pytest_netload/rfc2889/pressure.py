"""RFC 2889 §5.6 forward pressure and maximum forwarding rate.

Maximum forwarding rate (MFR): the highest forwarding rate the switch reaches over a
range of offered loads. Each load of `loads` (frames per second, per port) is offered
once (a trial the generator failed is retried, as everywhere) over the fully meshed
pattern of §5.1; the MFR is the highest forwarding rate of the valid trials (frames
received on all ports per second), and the load it was reached at is kept. Unlike the
throughput it does not care about loss: a switch that forwards its full rate while
dropping the overload has an MFR of N x its port rate.

Forward pressure: the ports are offered more than their line rate, sent with a shortened
inter-frame gap (88 bit times instead of IEEE 802.3's minimum 96), and a switch that
forwards more than a port's line rate at the standard gap (within a tolerance) exerts
forward pressure: it shortens the gap on its own output, out of standard. Only a
generator that can send below the minimum gap can run it; the binding says which
(`ForwardPressure`: the sub-case run, or skipped with the reason), and the MFR is
measured either way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import NetloadConfigError
from ..search.bisection import check_rate
from ..search.settings import TrialSettings
from ..search.trial import require_valid, valid_trial
from ..units import frame_bits
from ._search import TIMED, timed
from .mesh import ForwardingMeasurer, MeshTrial
from .ports import check_port_count

__all__ = ["DEFAULT_LOAD_STEPS", "MIN_GAP_BITS", "PRESSURE_GAP_BITS", "PRESSURE_TOLERANCE",
           "ForwardPressure", "MfrResult", "load_steps", "maximum_forwarding_rate",
           "pressure_load_pps"]

DEFAULT_LOAD_STEPS = 10
"""Loads offered by default: 10 %, 20 %, ..., 100 % of the maximum."""
MIN_GAP_BITS = 96
"""IEEE 802.3's minimum inter-frame gap, in bit times."""
PRESSURE_GAP_BITS = 88
"""The shortened gap forward pressure is offered with."""
PRESSURE_TOLERANCE = 0.001
"""Share above a port's line rate its received rate must reach to count as pressure."""


def load_steps(max_pps: float, steps: int = DEFAULT_LOAD_STEPS) -> tuple[float, ...]:
    """`steps` loads evenly up to `max_pps`: max/steps, 2 max/steps, ..., max."""
    top = check_rate(max_pps, "max_pps_per_port")
    if isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps <= 100:
        raise NetloadConfigError(f"load_steps={steps!r}: give a whole number of loads from "
                                 f"1 to 100, e.g. {DEFAULT_LOAD_STEPS}")
    return tuple(top * (i + 1) / steps for i in range(steps))


def pressure_load_pps(line_pps: float, frame_size: int) -> float:
    """The per-port load at the shortened gap: a port's line rate (at the 96-bit gap)
    times (frame + preamble + 96) / (frame + preamble + 88) bit times."""
    line = check_rate(line_pps, "line_pps")
    bits = frame_bits(frame_size, "l2") + 64  # preamble and start-of-frame delimiter
    return line * (bits + MIN_GAP_BITS) / (bits + PRESSURE_GAP_BITS)


@dataclass(frozen=True)
class ForwardPressure:
    """The forward pressure sub-case: its trial (offered at `offered_pps_per_port`
    with the 88-bit gap) and the line rate a port receives at the standard gap, or the
    reason it was skipped."""

    skipped_reason: str | None = None
    trial: MeshTrial | None = None
    line_pps_per_port: float | None = None
    tolerance: float = PRESSURE_TOLERANCE

    def __post_init__(self) -> None:
        if (self.skipped_reason is None) == (self.trial is None):
            raise NetloadConfigError("forward pressure: give its trial or the reason it was "
                                     "skipped, not both nor neither")
        if self.trial is not None:
            check_rate(self.line_pps_per_port, "forward pressure line_pps_per_port")

    @property
    def max_rx_pps_per_port(self) -> float | None:
        """The busiest port's received rate in the pressure trial."""
        t = self.trial
        return None if t is None else max(t.rx) / t.duration_s

    @property
    def detected(self) -> bool | None:
        """Some port received more than its line rate: the switch shortened its gap.
        None when skipped."""
        rx = self.max_rx_pps_per_port
        if rx is None or self.line_pps_per_port is None:
            return None
        return rx > self.line_pps_per_port * (1 + self.tolerance)

    def as_dict(self) -> dict[str, Any]:
        t = self.trial
        return {"skipped": self.skipped_reason is not None,
                "skipped_reason": self.skipped_reason, "gap_bits": PRESSURE_GAP_BITS,
                "line_pps_per_port": self.line_pps_per_port, "tolerance": self.tolerance,
                "offered_pps_per_port": None if t is None else t.offered_pps_per_port,
                "max_rx_pps_per_port": self.max_rx_pps_per_port, "detected": self.detected,
                "trial": None if t is None else t.as_dict()}


@dataclass(frozen=True)
class MfrResult:
    """RFC 2889 §5.6: the maximum forwarding rate over the offered loads, and forward
    pressure (run or skipped with its reason)."""

    ports: int
    loads: tuple[float, ...]
    settings: TrialSettings
    trials: tuple[MeshTrial, ...]
    """Every try, in order; the curve is their valid ones."""
    pressure: ForwardPressure

    @property
    def duration_s(self) -> float:
        return self.settings.timed("a maximum forwarding rate result")

    @property
    def curve(self) -> tuple[MeshTrial, ...]:
        """The valid trial of each load the generator could offer, in load order."""
        return tuple(t for t in self.trials if t.valid)

    @property
    def mfr_trial(self) -> MeshTrial:
        return max(self.curve, key=lambda t: t.forwarding_pps)

    @property
    def mfr_pps(self) -> float:
        """The highest forwarding rate (all ports) over the loads."""
        return self.mfr_trial.forwarding_pps

    @property
    def unoffered_pps_per_port(self) -> tuple[float, ...]:
        """Loads at which every try was invalid (the generator could not offer them)."""
        done = {t.offered_pps_per_port for t in self.curve}
        return tuple(x for x in self.loads if x not in done)

    def as_dict(self) -> dict[str, Any]:
        best = self.mfr_trial
        return {
            "procedure": "rfc2889_maximum_forwarding_rate", "ports": self.ports,
            "duration_s": self.duration_s, "loads_pps_per_port": list(self.loads),
            "mfr_pps": self.mfr_pps, "mfr_load_pps_per_port": best.offered_pps_per_port,
            "loss_ratio_at_mfr": best.loss_ratio,
            "curve": [{"offered_pps_per_port": t.offered_pps_per_port,
                       "forwarding_pps": t.forwarding_pps, "loss_ratio": t.loss_ratio}
                      for t in self.curve],
            "unoffered_pps_per_port": list(self.unoffered_pps_per_port),
            "forward_pressure": self.pressure.as_dict(),
            "trials": [t.as_dict() for t in self.trials],
        }


def maximum_forwarding_rate(
    measurer: ForwardingMeasurer,
    *,
    ports: int,
    loads: Sequence[float],
    settings: TrialSettings = TIMED,
    pressure: ForwardingMeasurer | str,
    line_pps_per_port: float | None = None,
    frame_size: int = 64,
) -> MfrResult:
    """RFC 2889 §5.6 over `ports` ports: one trial per load of `loads` (pps per port,
    fully meshed) for the MFR; then forward pressure with `pressure`, a measurer that
    sends with the 88-bit gap, at `pressure_load_pps(line_pps_per_port, frame_size)`;
    or, where the generator cannot, `pressure` is the reason, which the result
    keeps. InvalidTrial when not one MFR trial was valid."""
    check_port_count(ports, ports, "maximum_forwarding_rate")
    if isinstance(loads, (str, bytes)) or not isinstance(loads, Sequence) or not loads:
        raise NetloadConfigError(f"loads={loads!r}: give the offered loads (pps per port), "
                                 "e.g. load_steps(max_pps)")
    offered = tuple(check_rate(x, "loads") for x in loads)
    if isinstance(pressure, str):
        if not pressure.strip():
            raise NetloadConfigError("pressure='': give the measurer that sends with the "
                                     "88-bit gap, or the reason the generator cannot")
    elif line_pps_per_port is None:
        raise NetloadConfigError("forward pressure needs line_pps_per_port: the frames per "
                                 "second a port carries at the standard 96-bit gap")
    settings = timed(settings)
    duration = settings.timed("maximum_forwarding_rate")

    def checked(m: ForwardingMeasurer) -> Callable[[float], MeshTrial]:
        def measure(load: float) -> MeshTrial:
            trial = m.measure(load, duration)
            if trial.valid and trial.ports != ports:
                raise NetloadConfigError(
                    f"the forwarding measurer returned {trial.ports} ports' counts for "
                    f"ports={ports}: its trial must count every port")
            return trial
        return measure

    log: list[MeshTrial] = []
    for load in offered:
        valid_trial(checked(measurer), load, settings.retries, log, settings.on_trial)
    require_valid(log, "the maximum forwarding rate")
    if isinstance(pressure, str):
        fp = ForwardPressure(skipped_reason=pressure.strip())
    else:
        assert line_pps_per_port is not None
        load = pressure_load_pps(line_pps_per_port, frame_size)
        tries: list[MeshTrial] = []
        trial = valid_trial(checked(pressure), load, settings.retries, tries,
                            settings.on_trial)
        fp = ForwardPressure(trial=trial, line_pps_per_port=line_pps_per_port) \
            if trial is not None else ForwardPressure(
                skipped_reason="every forward pressure trial was invalid (the generator "
                "failed): " + "; ".join(dict.fromkeys(t.invalid_reason or "?"
                                                      for t in tries)))
    return MfrResult(ports, offered, settings, tuple(log), fp)
