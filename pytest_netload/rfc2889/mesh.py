"""RFC 2889 §5.1 fully meshed forwarding: every one of N ports sends to every other
port, its destinations in round robin, each port at the same load.

Two figures come of it. The forwarding rate at the maximum offered load (FRMOL): one
trial at the maximum per-port load, the frames received on all ports per second of
the trial, whatever was lost. And the throughput: the highest per-port load at which
no frame is lost, by binary search from the maximum (RFC 2544 §26.1's method) down to
the resolution. The trial at the maximum is the search's first trial, so a DUT that
forwards the maximum without loss is measured once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import NetloadConfigError
from ..measure.dut import LossAttribution
from ..search.bisection import search_rate
from ..search.lower_bound import MaxSource, check_max_source, lower_bound_by_generator
from ..search.resolution import DEFAULT_MAX_TRIALS, DEFAULT_RESOLUTION_RATIO, Resolution
from ..search.settings import TrialSettings
from ..search.trial import Measurer
from ._counts import PortCounts
from ._search import TIMED, check_search, timed

__all__ = ["ForwardingMeasurer", "MeshResult", "MeshTrial", "fully_meshed"]


@dataclass(frozen=True)
class MeshTrial(PortCounts):
    """One fully meshed trial: per port, the frames it sent (`tx`) and the frames it
    received (`rx`, from all the other ports), in the topology's port order."""

    offered_pps_per_port: float
    tx: tuple[int, ...]
    rx: tuple[int, ...]
    duration_s: float
    valid: bool = True
    invalid_reason: str | None = None
    port_names: tuple[str, ...] = ()
    """The ports in the order of `tx` and `rx`; empty when the binding does not say."""
    attribution: LossAttribution | None = field(default=None, compare=False, repr=False)
    """The trial's loss attributed to the DUT's and the generator's counters (the DUT
    hooks, bench/dut_trial.py); None where not read."""
    dut_health: str | None = None
    """"ok", or the DUT health hooks' reason; None when health checks are off."""

    def __post_init__(self) -> None:
        self._check_counts("mesh trial", 2, "", self.offered_pps_per_port,
                           "offered_pps_per_port")

    @property
    def offered_pps(self) -> float:
        """The load of all ports together."""
        return self.offered_pps_per_port * self.ports

    def as_dict(self) -> dict[str, Any]:
        return {"offered_pps_per_port": self.offered_pps_per_port,
                "offered_pps": self.offered_pps, **self._counts_dict(totals=True)}


ForwardingMeasurer = Measurer[float, MeshTrial]
"""One fully meshed trial: every port sends `load` (frames per second, per port) to all
the others in round robin for `duration_s`."""


@dataclass(frozen=True)
class MeshResult:
    """RFC 2889 §5.1: the forwarding rate at the maximum offered load and the
    throughput (highest loss-free per-port load) of a fully meshed N-port run."""

    ports: int
    max_pps_per_port: float
    settings: TrialSettings
    """The trials' common settings: duration, retries."""
    frmol_trial: MeshTrial | None
    """The valid trial at the maximum load; None when the generator could not offer it."""
    throughput_pps_per_port: float
    """Highest per-port load without loss; 0.0 when none passed."""
    upper_pps_per_port: float | None
    """Lowest per-port load that lost frames; None when the maximum passed."""
    generator_ceiling_pps_per_port: float | None
    """Lowest load the generator could not offer (every try invalid); None if none."""
    resolution: Resolution
    resolution_reached: bool
    trials: tuple[MeshTrial, ...]
    max_source: MaxSource | None = None
    """Where `max_pps_per_port` came from: "line_rate", "max_rate" or "generator"; None:
    not said."""
    generator_max_pps_per_port: float | None = None
    """The generator's calibrated ceiling per port (the full rate of the slowest sending
    port, of which `max_pps_per_port` is a share) when `max_source` is "generator"."""

    @property
    def duration_s(self) -> float:
        return self.settings.timed("a fully meshed result")

    @property
    def lower_bound_by_generator(self) -> bool:
        """The throughput is only a lower bound of the DUT's, set by the generator: no
        valid trial lost a frame, and the search's top was the generator's
        (search.lower_bound)."""
        return lower_bound_by_generator(self.throughput_pps_per_port, self.upper_pps_per_port,
                                        self.generator_ceiling_pps_per_port,
                                        self.max_pps_per_port, self.max_source)

    @property
    def forwarding_rate_at_max_pps(self) -> float | None:
        """FRMOL: frames forwarded per second (all ports) at the maximum offered load."""
        return None if self.frmol_trial is None else self.frmol_trial.forwarding_pps

    @property
    def throughput_pps(self) -> float:
        """The throughput of all ports together."""
        return self.throughput_pps_per_port * self.ports

    def as_dict(self) -> dict[str, Any]:
        return {
            "procedure": "rfc2889_fully_meshed", "ports": self.ports,
            "max_pps_per_port": self.max_pps_per_port, "duration_s": self.duration_s,
            "forwarding_rate_at_max_pps": self.forwarding_rate_at_max_pps,
            "loss_ratio_at_max": None if self.frmol_trial is None
            else self.frmol_trial.loss_ratio,
            "throughput_pps_per_port": self.throughput_pps_per_port,
            "throughput_pps": self.throughput_pps,
            "upper_pps_per_port": self.upper_pps_per_port,
            "generator_ceiling_pps_per_port": self.generator_ceiling_pps_per_port,
            "max_source": self.max_source,
            "generator_max_pps_per_port": self.generator_max_pps_per_port,
            "lower_bound_by_generator": self.lower_bound_by_generator,
            **self.resolution.as_dict(), "resolution_reached": self.resolution_reached,
            "trials": [t.as_dict() for t in self.trials],
        }


def fully_meshed(
    measurer: ForwardingMeasurer,
    *,
    ports: int,
    max_pps_per_port: float,
    settings: TrialSettings = TIMED,
    resolution: float | Resolution = DEFAULT_RESOLUTION_RATIO,
    max_trials: int = DEFAULT_MAX_TRIALS,
    max_source: MaxSource | None = None,
    generator_max_pps_per_port: float | None = None,
) -> MeshResult:
    """RFC 2889 §5.1 over `ports` ports: FRMOL at `max_pps_per_port`, then the
    throughput by binary search. `resolution` is a ratio of the lower bound in (0, 1)
    (default 0.5 %) or a Resolution; each trial lasts `settings.duration_s` (TRIAL_S when
    None); a trial the generator failed is retried at most
    `settings.retries` times and never counted as the DUT's loss. `max_source` says where the
    maximum came from ("generator": a share of `generator_max_pps_per_port`), so the
    result tells a throughput the generator bounded (`lower_bound_by_generator`)."""
    max_pps, duration, res = check_search("fully_meshed", ports, max_pps_per_port,
                                          "max_pps_per_port", settings, resolution,
                                          max_trials)
    max_source, generator_max = check_max_source(max_source, generator_max_pps_per_port)
    settings = timed(settings)

    def measure(load: float) -> MeshTrial:
        trial = measurer.measure(load, duration)
        if trial.valid and trial.ports != ports:
            raise NetloadConfigError(
                f"the mesh measurer returned {trial.ports} ports' counts for ports={ports}: "
                "its trial must count every port of the mesh")
        return trial

    out = search_rate(measure, lambda t: t.lost == 0, max_value=max_pps, resolution=res,
                      max_trials=max_trials, retries=settings.retries,
                      on_trial=settings.on_trial,
                      what=f"the fully meshed search over {ports} ports")
    return MeshResult(ports, max_pps, settings, out.at_max, out.found, out.upper,
                      out.ceiling, res, out.reached, out.trials, max_source, generator_max)
