"""What the Y.1564 procedures need from the world: all services loaded at once.

A `ServiceMeasurer`, the search core's `Measurer` whose load is each service's bit rate,
offers each service of its load its L2 bit rate (frame bytes with the FCS) for
``duration_s`` and returns one `ServiceSample` per loaded service; services not in the
load send nothing. The engine binding (bench/) implements it; unit tests
implement it with fake DUT models.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import NetloadConfigError
from ..measure.dut import LossAttribution, dut_record
from ..measure.latency import LatencyResult
from ..search.trial import Measurer

__all__ = ["FDV_QUANTILE", "ServiceMeasurer", "ServiceSample", "fdv_of"]

#: The percentile of the delay FDV reads (FDV = that percentile minus the minimum delay,
#: the "two-point" delay variation of Y.1564 / MEF 10.3 FDV at a high percentile).
FDV_QUANTILE = 99.9


def check_quantile(q: object, what: str = "fdv_quantile") -> float:
    if isinstance(q, bool) or not isinstance(q, numbers.Real) or not 0 < float(q) <= 100:
        raise NetloadConfigError(f"{what}={q!r}: give a percentile in (0, 100], e.g. 99.9")
    return float(q)


def fdv_of(latency: LatencyResult | None, quantile: float = FDV_QUANTILE) -> float | None:
    """The frame delay variation in seconds: the ``quantile`` percentile of the delay minus
    its minimum (bucket bounds); None without samples."""
    if latency is None or latency.empty:
        return None
    q = check_quantile(quantile)
    top = float(latency.max_ns) if q == 100 else latency.histogram.quantile_ns(q / 100)
    return max(top - latency.min_ns, 0.0) / 1e9


@dataclass(frozen=True)
class ServiceSample:
    """One service over one measurement: what was offered and what came back.

    ``valid`` is False when the generator, not the DUT, failed (``invalid_reason`` says
    how): such a sample is never the DUT's loss. For a colour-aware service ``tx_frames``,
    ``rx_frames`` and ``latency`` are those of its green frames, and ``yellow_tx_frames``
    / ``yellow_rx_frames`` count its yellow frames apart (None: colour-blind, or no yellow
    load).
    """

    service: str
    offered_bps: float
    """The load offered, L2 with the FCS."""
    duration_s: float
    frame_size: int
    """Bytes with the FCS."""
    tx_frames: int
    rx_frames: int
    latency: LatencyResult | None = field(default=None, repr=False, compare=False)
    valid: bool = True
    invalid_reason: str | None = None
    yellow_tx_frames: int | None = None
    yellow_rx_frames: int | None = None
    attribution: LossAttribution | None = field(default=None, compare=False, repr=False)
    """The trial's loss attributed to the DUT's and the generator's counters (the DUT
    hooks, bench/dut_trial.py); None where not read."""
    dut_health: str | None = None
    """"ok", or the DUT health hooks' reason; None when health checks are off."""
    colour_at_rx: Mapping[str, int] | None = field(default=None, compare=False)
    """A colour-aware service's frames by the colour they arrived with (the engine's RX
    path reads the colour field): "green", "yellow", "remarked" (sent green, received
    yellow: the DUT re-marked them), "promoted" (sent yellow, received green), "other";
    None: not counted (colour-blind, or an engine that did not)."""

    def __post_init__(self) -> None:
        if (self.yellow_tx_frames is None) != (self.yellow_rx_frames is None):
            raise NetloadConfigError(f"service {self.service!r}: sample yellow_tx_frames="
                                     f"{self.yellow_tx_frames!r} and yellow_rx_frames="
                                     f"{self.yellow_rx_frames!r}: give both or neither")
        for name in ("tx_frames", "rx_frames", "frame_size", "yellow_tx_frames",
                     "yellow_rx_frames"):
            value = getattr(self, name)
            if value is None and name.startswith("yellow"):
                continue
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
                raise NetloadConfigError(f"service {self.service!r}: sample {name}={value!r}: "
                                         "give a whole number >= 0")
        for name in ("offered_bps", "duration_s"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Real) \
                    or not math.isfinite(value) or value < 0:
                raise NetloadConfigError(f"service {self.service!r}: sample {name}={value!r}: "
                                         "give a finite number >= 0")
        if not self.duration_s > 0:
            raise NetloadConfigError(f"service {self.service!r}: sample duration_s="
                                     f"{self.duration_s!r}: must be > 0")

    @property
    def lost(self) -> int:
        """Frames sent and not received (duplicates do not offset loss)."""
        return max(self.tx_frames - self.rx_frames, 0)

    @property
    def flr(self) -> float:
        """Frame loss ratio: lost / sent; 0 when nothing was sent."""
        return self.lost / self.tx_frames if self.tx_frames else 0.0

    @property
    def ir_bps(self) -> float:
        """Information rate received, L2 with the FCS."""
        return self.rx_frames * self.frame_size * 8 / self.duration_s

    @property
    def coloured(self) -> bool:
        """Whether yellow frames were counted apart."""
        return self.yellow_tx_frames is not None

    @property
    def yellow_lost(self) -> int | None:
        if self.yellow_tx_frames is None or self.yellow_rx_frames is None:
            return None
        return max(self.yellow_tx_frames - self.yellow_rx_frames, 0)

    @property
    def yellow_ir_bps(self) -> float | None:
        """Information rate of the yellow frames received, L2 with the FCS."""
        if self.yellow_rx_frames is None:
            return None
        return self.yellow_rx_frames * self.frame_size * 8 / self.duration_s

    def yellow_dict(self) -> dict[str, Any] | None:
        """The yellow frames' counts for a record; None when not counted apart."""
        if self.yellow_tx_frames is None or self.yellow_rx_frames is None:
            return None
        return {"tx_frames": int(self.yellow_tx_frames),
                "rx_frames": int(self.yellow_rx_frames), "lost": self.yellow_lost,
                "ir_bps": self.yellow_ir_bps}

    @property
    def ftd_s(self) -> float | None:
        """Frame transfer delay: the mean one-way delay in seconds; None without samples."""
        if self.latency is None or self.latency.empty:
            return None
        return self.latency.mean_ns / 1e9

    def fdv_s(self, quantile: float = FDV_QUANTILE) -> float | None:
        """Frame delay variation in seconds (see :func:`fdv_of`)."""
        return fdv_of(self.latency, quantile)

    def as_dict(self) -> dict[str, Any]:
        return {
            "service": self.service, "offered_bps": float(self.offered_bps),
            "duration_s": float(self.duration_s), "frame_size": int(self.frame_size),
            "tx_frames": int(self.tx_frames), "rx_frames": int(self.rx_frames),
            "lost": self.lost, "flr": self.flr, "ir_bps": self.ir_bps, "ftd_s": self.ftd_s,
            "fdv_s": self.fdv_s(), "valid": self.valid, "invalid_reason": self.invalid_reason,
            "yellow": self.yellow_dict(),
            **({} if self.colour_at_rx is None
               else {"colour_at_rx": dict(self.colour_at_rx)}),
            **dut_record(self.attribution, self.dut_health),
        }


ServiceMeasurer = Measurer[Mapping[str, float], Mapping[str, ServiceSample]]
"""Offer each service of the load (service name -> L2 bit rate) its rate for
``duration_s``; one sample per loaded service."""


def sample_of(samples: Mapping[str, ServiceSample], name: str) -> ServiceSample:
    """The sample of service ``name``; an error naming the services a measurer returned
    when it left one out (a binding bug, not a DUT failure)."""
    sample = samples.get(name)
    if not isinstance(sample, ServiceSample):
        raise NetloadConfigError(
            f"the measurer returned {type(sample).__name__ if sample is not None else 'no'} "
            f"sample for service {name!r} (it returned {sorted(samples)}); a ServiceMeasurer "
            "must return a ServiceSample for every service it was given a load for")
    return sample
