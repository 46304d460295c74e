"""RFC 2889 §5.10 broadcast frame forwarding and latency.

One port sends broadcast frames; the switch should deliver every one of them to each
of the N-1 other ports. Three figures come of it: the broadcast throughput, the
highest load at which every receiving port got every frame (binary search from the
maximum, as RFC 2544 §26.1); the broadcast forwarding rate at the maximum load (the
frames received on all receiving ports per second of the trial); and the latency to
each receiving port at the throughput, from that trial.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import NetloadConfigError
from ..measure.dut import LossAttribution, dut_record
from ..measure.latency import LatencyResult
from ..search.bisection import check_count, check_rate, search_rate
from ..search.lower_bound import MaxSource, check_max_source, lower_bound_by_generator
from ..search.resolution import DEFAULT_MAX_TRIALS, DEFAULT_RESOLUTION_RATIO, Resolution
from ..search.settings import TrialSettings
from ..search.trial import Measurer
from ._search import TIMED, check_search, timed

__all__ = ["BroadcastMeasurer", "BroadcastResult", "BroadcastTrial", "broadcast_forwarding"]


@dataclass(frozen=True)
class BroadcastTrial:
    """One broadcast trial: `tx` broadcast frames sent, `rx` received on each receiving
    port, and each receiving port's latency (None where not measured)."""

    offered_pps: float
    duration_s: float
    tx: int
    rx: tuple[int, ...]
    latency: tuple[LatencyResult | None, ...] = ()
    """One per receiving port, or empty when latency was not measured."""
    valid: bool = True
    invalid_reason: str | None = None
    port_names: tuple[str, ...] = ()
    """The receiving ports in the order of `rx`; empty when the binding does not say."""
    attribution: LossAttribution | None = field(default=None, compare=False, repr=False)
    """The trial's loss attributed to the DUT's and the generator's counters (the DUT
    hooks, bench/dut_trial.py); None where not read."""
    dut_health: str | None = None
    """"ok", or the DUT health hooks' reason; None when health checks are off."""

    def __post_init__(self) -> None:
        check_rate(self.offered_pps, "broadcast trial offered_pps")
        check_rate(self.duration_s, "broadcast trial duration_s")
        check_count(self.tx, "broadcast trial tx", least=0)
        object.__setattr__(self, "rx", tuple(self.rx))
        object.__setattr__(self, "latency", tuple(self.latency))
        if not self.rx:
            raise NetloadConfigError("broadcast trial rx is empty: give one count per "
                                     "receiving port")
        for n in self.rx:
            check_count(n, "broadcast trial rx", least=0)
        for what, names in (("latency", self.latency), ("port_names", self.port_names)):
            if names and len(names) != len(self.rx):
                raise NetloadConfigError(f"broadcast trial {what} has {len(names)} entries for "
                                         f"{len(self.rx)} receiving ports: give one per port")

    @property
    def receivers(self) -> int:
        return len(self.rx)

    @property
    def lost(self) -> tuple[int, ...]:
        """Per receiving port, the broadcast frames it did not get."""
        return tuple(max(self.tx - r, 0) for r in self.rx)

    @property
    def loss_ratio(self) -> float:
        """The worst receiving port's share of frames missed."""
        return max(self.lost) / self.tx if self.tx else 0.0

    @property
    def all_received(self) -> bool:
        """Every receiving port got every frame."""
        return not any(self.lost)

    @property
    def forwarding_pps(self) -> float:
        """Broadcast frames received on all receiving ports per second of the trial."""
        return sum(self.rx) / self.duration_s

    def as_dict(self) -> dict[str, Any]:
        return {"offered_pps": self.offered_pps, "duration_s": self.duration_s,
                "tx": self.tx, "rx": list(self.rx), "lost": list(self.lost),
                "loss_ratio": self.loss_ratio, "all_received": self.all_received,
                "forwarding_pps": self.forwarding_pps, "port_names": list(self.port_names),
                "latency": [None if lat is None or lat.empty else lat.as_dict()
                            for lat in self.latency],
                "valid": self.valid, "invalid_reason": self.invalid_reason,
                **dut_record(self.attribution, self.dut_health)}


BroadcastMeasurer = Measurer[float, BroadcastTrial]
"""One broadcast trial: the sending port offers `load` broadcast frames per second for
`duration_s`, counted (and timed) on every other port."""


@dataclass(frozen=True)
class BroadcastResult:
    """RFC 2889 §5.10 over `ports` ports (one sender, ports - 1 receivers)."""

    ports: int
    max_pps: float
    settings: TrialSettings
    """The trials' common settings: duration, retries."""
    throughput_pps: float
    """The highest load every receiving port got in full; 0.0 when none did."""
    upper_pps: float | None
    generator_ceiling_pps: float | None
    max_load_trial: BroadcastTrial | None
    """The valid trial at `max_pps`; None when the generator could not offer it."""
    throughput_trial: BroadcastTrial | None
    """The valid trial at `throughput_pps` (its latency is reported); None if none passed."""
    resolution: Resolution
    resolution_reached: bool
    trials: tuple[BroadcastTrial, ...]
    max_source: MaxSource | None = None
    """Where `max_pps` came from: "line_rate", "max_rate" or "generator"; None: not said."""
    generator_max_pps: float | None = None
    """The generator's calibrated ceiling (of which `max_pps` is a share) when `max_source`
    is "generator"; None otherwise."""

    @property
    def duration_s(self) -> float:
        return self.settings.timed("a broadcast result")

    @property
    def lower_bound_by_generator(self) -> bool:
        """The broadcast throughput is only a lower bound of the DUT's, set by the
        generator: every valid trial reached every port in full, and the search's top was
        the generator's (search.lower_bound)."""
        return lower_bound_by_generator(self.throughput_pps, self.upper_pps,
                                        self.generator_ceiling_pps, self.max_pps,
                                        self.max_source)

    @property
    def forwarding_rate_at_max_pps(self) -> float | None:
        return None if self.max_load_trial is None else self.max_load_trial.forwarding_pps

    @property
    def latency(self) -> tuple[LatencyResult | None, ...]:
        """Per receiving port, the latency at the throughput; empty when not measured."""
        return () if self.throughput_trial is None else self.throughput_trial.latency

    def as_dict(self) -> dict[str, Any]:
        at = self.throughput_trial
        return {
            "procedure": "rfc2889_broadcast_forwarding", "ports": self.ports,
            "max_pps": self.max_pps, "duration_s": self.duration_s,
            "throughput_pps": self.throughput_pps, "upper_pps": self.upper_pps,
            "generator_ceiling_pps": self.generator_ceiling_pps,
            "max_source": self.max_source, "generator_max_pps": self.generator_max_pps,
            "lower_bound_by_generator": self.lower_bound_by_generator,
            "forwarding_rate_at_max_pps": self.forwarding_rate_at_max_pps,
            "loss_ratio_at_max": None if self.max_load_trial is None
            else self.max_load_trial.loss_ratio,
            "latency": [] if at is None else at.as_dict()["latency"],
            "port_names": [] if at is None else list(at.port_names),
            **self.resolution.as_dict(), "resolution_reached": self.resolution_reached,
            "trials": [t.as_dict() for t in self.trials],
        }


def broadcast_forwarding(
    measurer: BroadcastMeasurer,
    *,
    ports: int,
    max_pps: float,
    settings: TrialSettings = TIMED,
    resolution: float | Resolution = DEFAULT_RESOLUTION_RATIO,
    max_trials: int = DEFAULT_MAX_TRIALS,
    max_source: MaxSource | None = None,
    generator_max_pps: float | None = None,
) -> BroadcastResult:
    """RFC 2889 §5.10 over `ports` ports: the forwarding rate at `max_pps`, the highest
    load that reaches every receiving port in full (binary search to `resolution`, a
    ratio of the lower bound or a Resolution), and the per-port latency there.
    `max_source` says where `max_pps` came from ("generator": a share of
    `generator_max_pps`), so the result tells a throughput the generator bounded."""
    top, duration, res = check_search("broadcast_forwarding", ports, max_pps, "max_pps",
                                      settings, resolution, max_trials)
    max_source, generator_max_pps = check_max_source(max_source, generator_max_pps)
    settings = timed(settings)

    def measure(load: float) -> BroadcastTrial:
        trial = measurer.measure(load, duration)
        if trial.valid and trial.receivers != ports - 1:
            raise NetloadConfigError(
                f"the broadcast measurer counted {trial.receivers} receiving ports for "
                f"ports={ports}: its trial must count each of the {ports - 1} other ports")
        return trial

    out = search_rate(measure, lambda t: t.all_received, max_value=top, resolution=res,
                      max_trials=max_trials, retries=settings.retries,
                      on_trial=settings.on_trial,
                      what=f"the broadcast forwarding search over {ports} ports")
    return BroadcastResult(ports, top, settings, out.found, out.upper, out.ceiling,
                           out.at_max, out.passing, res, out.reached, out.trials, max_source,
                           generator_max_pps)
