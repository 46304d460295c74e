"""A trial and its result: the unit every RFC 2544 procedure is built from.

Pure data and arithmetic: no engine, no pytest. Procedures take a
`Measurer` (anything with ``measure(load_pps, duration_s) -> TrialResult``),
so every search and verdict runs against fake DUTs in unit tests.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import NetloadConfigError
from ..latency import LatencyResult
from ..stats import clopper_pearson_upper
from ..units import frame_bits

FrameSize = int | str  # bytes with FCS, or "imix"


def frame_size_label(size: FrameSize) -> str:
    """How a frame size reads in ids, tables and messages: "64B", "imix"."""
    return f"{size}B" if isinstance(size, int) else str(size)


@dataclass(frozen=True)
class TrialResult:
    """One trial: a load offered for a duration, and what came back.

    Counts are integers read after traffic stopped and the drain wait
    passed. ``valid`` is False when the generator, not the DUT, failed the
    trial (``invalid_reason`` says how); an invalid trial's loss is never
    the DUT's.
    """

    frame_size: FrameSize
    mean_frame_size: float
    """Bytes with FCS, averaged over the frame sequence (IMIX)."""
    offered_pps: float
    """Intended load; 0 < offered_pps."""
    duration_s: float
    tx_packets: int
    rx_packets: int
    achieved_tx_pps: float = 0.0
    valid: bool = True
    invalid_reason: str | None = None
    latency: LatencyResult | None = field(default=None, repr=False, compare=False)
    clock: str | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        for name in ("tx_packets", "rx_packets"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise NetloadConfigError(f"trial {name} = {value!r}: give a count >= 0")
        if not self.offered_pps > 0:
            raise NetloadConfigError(f"trial offered_pps = {self.offered_pps!r}: must be > 0")
        if not self.duration_s > 0:
            raise NetloadConfigError(f"trial duration_s = {self.duration_s!r}: must be > 0")

    @property
    def lost(self) -> int:
        """Frames sent and not received (frames the DUT duplicated do not offset loss)."""
        return max(self.tx_packets - self.rx_packets, 0)

    @property
    def loss_ratio(self) -> float:
        return self.lost / self.tx_packets if self.tx_packets else 0.0

    def loss_upper_bound(self, confidence: float = 0.95) -> float:
        """Clopper-Pearson upper bound on the loss ratio; 1.0 when nothing was sent."""
        if self.tx_packets == 0:
            return 1.0
        return clopper_pearson_upper(self.lost, self.tx_packets, confidence)

    def offered_bps(self, layer: str = "l1") -> float:
        return self.offered_pps * frame_bits(self.mean_frame_size, layer)

    def passed(self, loss_tolerance: float) -> bool:
        """A valid trial whose loss ratio is within the tolerance (0: no frame lost)."""
        if not self.valid:
            raise NetloadConfigError("an invalid trial has no verdict; retry it")
        return self.lost == 0 if loss_tolerance == 0 else self.loss_ratio <= loss_tolerance

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "frame_size": self.frame_size,
            "mean_frame_size": self.mean_frame_size,
            "offered_pps": self.offered_pps,
            "duration_s": self.duration_s,
            "tx_packets": self.tx_packets,
            "rx_packets": self.rx_packets,
            "lost": self.lost,
            "loss_ratio": self.loss_ratio,
            "loss_upper_bound": self.loss_upper_bound(),
            "achieved_tx_pps": self.achieved_tx_pps,
            "valid": self.valid,
            "invalid_reason": self.invalid_reason,
            "clock": self.clock,
        }
        if self.latency is not None and not self.latency.empty:
            out["latency"] = self.latency.as_dict()
        return out


class Measurer(Protocol):
    """What procedures need from the world: one trial at a load."""

    def measure(self, load_pps: float, duration_s: float) -> TrialResult: ...
