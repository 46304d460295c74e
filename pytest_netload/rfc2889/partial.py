"""RFC 2889 §5.2 partially meshed one-to-many / many-to-one forwarding.

One port (p0, "the one") exchanges traffic with N - 1 others:

* one-to-many: the one port sends its load to the N - 1 others, its destinations in
  round robin (each receives load / (N - 1));
* many-to-one: each of the N - 1 others sends load / (N - 1) to the one port.

The load is the one port's: what it sends, or what it is offered, in frames per second,
so the one port's link is what the search saturates and the many are never oversubscribed.
As for the fully meshed test (§5.1), two figures come of it: the forwarding rate at the
maximum offered load (one trial at the maximum: all frames received per second of the
trial) and the throughput (the highest load at which no frame is lost, by the search
core's binary search from the maximum down to the resolution).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import NetloadConfigError
from ..measure.dut import LossAttribution
from ..search.bisection import search_rate
from ..search.lower_bound import MaxSource, check_max_source, lower_bound_by_generator
from ..search.resolution import DEFAULT_MAX_TRIALS, DEFAULT_RESOLUTION_RATIO, Resolution
from ..search.settings import TrialSettings
from ..search.trial import Measurer
from ._search import TIMED, check_search, timed
from ._counts import PortCounts

__all__ = ["PARTIAL_DIRECTIONS", "PartialDirection", "PartialMeshMeasurer",
           "PartialMeshResult", "PartialMeshTrial", "check_direction", "partially_meshed"]

PartialDirection = Literal["one_to_many", "many_to_one"]
PARTIAL_DIRECTIONS: tuple[PartialDirection, ...] = ("one_to_many", "many_to_one")


def check_direction(value: object) -> PartialDirection:
    """`value` as a partially meshed direction; the error names both choices."""
    for direction in PARTIAL_DIRECTIONS:
        if direction == value:
            return direction
    raise NetloadConfigError(f"direction={value!r}: give 'one_to_many' (the one port "
                             "sends to the others) or 'many_to_one' (the others send to it)")


@dataclass(frozen=True)
class PartialMeshTrial(PortCounts):
    """One partially meshed trial: per port, the frames it sent (`tx`) and received
    (`rx`), in the topology's port order, the one port first."""

    offered_pps: float
    """The one port's load: what it sends (one-to-many) or is offered (many-to-one)."""
    tx: tuple[int, ...]
    rx: tuple[int, ...]
    duration_s: float
    valid: bool = True
    invalid_reason: str | None = None
    port_names: tuple[str, ...] = ()
    attribution: LossAttribution | None = field(default=None, compare=False, repr=False)
    """The trial's loss attributed to the DUT's and the generator's counters (the DUT
    hooks, bench/dut_trial.py); None where not read."""
    dut_health: str | None = None
    """"ok", or the DUT health hooks' reason; None when health checks are off."""

    def __post_init__(self) -> None:
        self._check_counts("partially meshed trial", 3, " (the one port first)",
                           self.offered_pps, "offered_pps")

    def as_dict(self) -> dict[str, Any]:
        return {"offered_pps": self.offered_pps, **self._counts_dict()}


PartialMeshMeasurer = Measurer[float, PartialMeshTrial]
"""One partially meshed trial at `load` (pps of the one port) for `duration_s`, in the
direction the measurer was made for."""


@dataclass(frozen=True)
class PartialMeshResult:
    """RFC 2889 §5.2: forwarding rate at the maximum offered load and throughput of the
    one port's traffic to (one-to-many) or from (many-to-one) the N - 1 others."""

    direction: PartialDirection
    ports: int
    max_pps: float
    settings: TrialSettings
    frmol_trial: PartialMeshTrial | None
    throughput_pps: float
    """The one port's highest load without loss; 0.0 when none passed."""
    upper_pps: float | None
    generator_ceiling_pps: float | None
    resolution: Resolution
    resolution_reached: bool
    trials: tuple[PartialMeshTrial, ...]
    max_source: MaxSource | None = None
    generator_max_pps: float | None = None

    @property
    def duration_s(self) -> float:
        return self.settings.timed("a partially meshed result")

    @property
    def lower_bound_by_generator(self) -> bool:
        """The throughput is only a lower bound the generator set (search.lower_bound)."""
        return lower_bound_by_generator(self.throughput_pps, self.upper_pps,
                                        self.generator_ceiling_pps, self.max_pps,
                                        self.max_source)

    @property
    def forwarding_rate_at_max_pps(self) -> float | None:
        return None if self.frmol_trial is None else self.frmol_trial.forwarding_pps

    def as_dict(self) -> dict[str, Any]:
        return {
            "procedure": "rfc2889_partially_meshed", "direction": self.direction,
            "ports": self.ports, "max_pps": self.max_pps, "duration_s": self.duration_s,
            "forwarding_rate_at_max_pps": self.forwarding_rate_at_max_pps,
            "loss_ratio_at_max": None if self.frmol_trial is None
            else self.frmol_trial.loss_ratio,
            "throughput_pps": self.throughput_pps, "upper_pps": self.upper_pps,
            "generator_ceiling_pps": self.generator_ceiling_pps,
            "max_source": self.max_source, "generator_max_pps": self.generator_max_pps,
            "lower_bound_by_generator": self.lower_bound_by_generator,
            **self.resolution.as_dict(), "resolution_reached": self.resolution_reached,
            "trials": [t.as_dict() for t in self.trials],
        }


def partially_meshed(
    measurer: PartialMeshMeasurer,
    *,
    direction: PartialDirection,
    ports: int,
    max_pps: float,
    settings: TrialSettings = TIMED,
    resolution: float | Resolution = DEFAULT_RESOLUTION_RATIO,
    max_trials: int = DEFAULT_MAX_TRIALS,
    max_source: MaxSource | None = None,
    generator_max_pps: float | None = None,
) -> PartialMeshResult:
    """RFC 2889 §5.2 over `ports` ports (the one port and ports - 1 others) in
    `direction`: the forwarding rate at `max_pps` (the one port's load) and the
    throughput by binary search to `resolution`; settings, retries and `max_source` as
    for `fully_meshed`."""
    direction = check_direction(direction)
    top, duration, res = check_search("partially_meshed", ports, max_pps, "max_pps",
                                      settings, resolution, max_trials)
    max_source, generator_max_pps = check_max_source(max_source, generator_max_pps)
    settings = timed(settings)

    def measure(load: float) -> PartialMeshTrial:
        trial = measurer.measure(load, duration)
        if trial.valid and trial.ports != ports:
            raise NetloadConfigError(
                f"the partially meshed measurer returned {trial.ports} ports' counts for "
                f"ports={ports}: its trial must count every port, the one port first")
        return trial

    out = search_rate(measure, lambda t: t.lost == 0, max_value=top, resolution=res,
                      max_trials=max_trials, retries=settings.retries,
                      on_trial=settings.on_trial,
                      what=f"the partially meshed {direction.replace('_', '-')} search over "
                           f"{ports} ports")
    return PartialMeshResult(direction, ports, top, settings, out.at_max, out.found,
                             out.upper, out.ceiling, res, out.reached, out.trials,
                             max_source, generator_max_pps)
