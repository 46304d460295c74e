"""A trial and its result: the unit every RFC 2544 procedure is built from.

Pure data and arithmetic: no engine, no pytest. Procedures take a
`Measurer` (the search core's, of a `TrialResult`: anything with
``measure(load, duration_s) -> TrialResult``), so every search and verdict runs
against fake DUTs in unit tests.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import format as fmt
from ..errors import NetloadConfigError
from ..measure.dut import LossAttribution
from ..measure.latency import LatencyResult
from ..measure.stats import clopper_pearson_upper
from ..search.trial import FrameSize
from ..search.trial import Measurer as _Measurer
from ..units import frame_bits

#: A trial is steady when the DUT's backlog at the end of traffic is at most this share of
#: the frames sent: a deeper backlog means the load exceeded what the DUT forwards, and a
#: buffer, not forwarding, kept the frames (a longer trial would have lost them).
STEADY_BACKLOG_RATIO = 0.001
STEADY_STATES = ("warn", "fail", "off")


def frame_size_label(size: FrameSize) -> str:
    """How a frame size reads in ids, tables and messages: "64B", "imix"
    (:func:`format.frame_size`)."""
    return fmt.frame_size(size)


@dataclass(frozen=True)
class DirectionResult:
    """One direction (wire) of a trial that loaded several: its streams' counts summed.

    In a `direction="both"` run every direction is offered the trial's load
    (`TrialResult.offered_pps` is per direction, RFC 2544 §14), and a loss in
    either one fails the trial.
    """

    wire: str
    """"tx->rx" port names."""
    tx_packets: int
    rx_packets: int
    achieved_tx_pps: float = 0.0
    streams: tuple[str, ...] = ()
    """The names of the direction's streams."""
    latency: LatencyResult | None = field(default=None, repr=False, compare=False)
    backlog_frames: int | None = None
    """The direction's share of the trial's backlog (see TrialResult)."""

    def __post_init__(self) -> None:
        for name in ("tx_packets", "rx_packets"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise NetloadConfigError(f"direction {self.wire}: {name} = {value!r}: give a "
                                         "count >= 0")

    @property
    def lost(self) -> int:
        return max(self.tx_packets - self.rx_packets, 0)

    @property
    def loss_ratio(self) -> float:
        return self.lost / self.tx_packets if self.tx_packets else 0.0

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "wire": self.wire, "streams": list(self.streams),
            "tx_packets": self.tx_packets, "rx_packets": self.rx_packets, "lost": self.lost,
            "loss_ratio": self.loss_ratio,
            "loss_upper_bound": clopper_pearson_upper(self.lost, self.tx_packets, 0.95)
            if self.tx_packets else 1.0,
            "achieved_tx_pps": self.achieved_tx_pps}
        if self.backlog_frames is not None:
            out["backlog_frames"] = self.backlog_frames
        if self.latency is not None and not self.latency.empty:
            out["latency"] = self.latency.as_dict()
        return out


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
    backlog_frames: int | None = None
    """Frames that arrived after the last one left beyond those normally in flight (the
    load times the trial's least latency): what the DUT still held in its buffers when
    traffic stopped. None when not measured."""
    forwarding_pps: float | None = None
    """Frames received by the end of traffic / the trial duration (RFC 2889's forwarding
    rate over the trial window). None when not measured."""
    steady_state: str = "warn"
    """What a trial that is not steady does: "warn" (flagged), "fail" (its backlog counts
    as lost, so it fails the search) or "off" (not judged)."""
    events: tuple[dict[str, Any], ...] = field(default=(), compare=False)
    """What happened to the generator during the trial, in order: its ports' link changes
    (`{"event": "link_down", "port": "p1", "t_s": 1.23, "since_s": 1.13, ...}`, see
    `RunResult.link_events`). Empty for a trial nothing happened in."""
    directions: tuple[DirectionResult, ...] = field(default=(), compare=False)
    """Per direction, when the trial loaded two or more (direction="both"): each was
    offered `offered_pps`, and the counts above are their sums. Empty for one direction."""
    attribution: LossAttribution | None = field(default=None, compare=False)
    """Where the lost frames went, by the DUT's counters (its hooks) and the generator's
    (measure/dut.py); None when the trial was not measured by a DUT-aware measurer."""
    dut_health: str | None = None
    """What the DUT's health check said after the trial: None (not run), "ok", or the
    reason it made the trial invalid."""

    def __post_init__(self) -> None:
        for name in ("tx_packets", "rx_packets"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise NetloadConfigError(f"trial {name} = {value!r}: give a count >= 0")
        if not self.offered_pps > 0:
            raise NetloadConfigError(f"trial offered_pps = {self.offered_pps!r}: must be > 0")
        if not self.duration_s > 0:
            raise NetloadConfigError(f"trial duration_s = {self.duration_s!r}: must be > 0")
        if self.steady_state not in STEADY_STATES:
            raise NetloadConfigError(f"steady_state={self.steady_state!r}: use one of "
                                     f"{list(STEADY_STATES)}")

    @property
    def lost(self) -> int:
        """Frames sent and not received (frames the DUT duplicated do not offset loss)."""
        return max(self.tx_packets - self.rx_packets, 0)

    @property
    def aggregate_offered_pps(self) -> float:
        """The load of all directions together: `offered_pps` times the directions."""
        return self.offered_pps * max(1, len(self.directions))

    @property
    def loss_ratio(self) -> float:
        return self.lost / self.tx_packets if self.tx_packets else 0.0

    @property
    def steady(self) -> bool | None:
        """False when the backlog at the end of traffic exceeds STEADY_BACKLOG_RATIO of the
        frames sent; None when the backlog was not measured or steady_state is "off"."""
        if self.backlog_frames is None or self.steady_state == "off":
            return None
        return self.backlog_frames <= STEADY_BACKLOG_RATIO * self.tx_packets

    @property
    def buffer_s(self) -> float | None:
        """How long the backlog took to forward at the forwarding rate: a lower bound on
        the DUT's buffer depth in time. (`forwarding_pps`, like `offered_pps`, is per
        direction; the backlog is of all directions.)"""
        if not self.backlog_frames or not self.forwarding_pps:
            return None
        return self.backlog_frames / (self.forwarding_pps * max(1, len(self.directions)))

    @property
    def steady_duration_s(self) -> float | None:
        """The trial duration at which a buffer of buffer_s holds at most
        STEADY_BACKLOG_RATIO of the frames: long enough for it to be immaterial."""
        depth = self.buffer_s
        return None if depth is None else depth / STEADY_BACKLOG_RATIO

    @property
    def judged_lost(self) -> int:
        """The loss a verdict counts: `lost`, plus the backlog of a trial that is not
        steady when steady_state is "fail" (those frames were held, not forwarded)."""
        if self.steady is False and self.steady_state == "fail":
            return min(self.lost + int(self.backlog_frames or 0), self.tx_packets)
        return self.lost

    def judged_counts(self) -> tuple[int, int]:
        """(frames sent, frames a verdict counts as lost) of the direction that lost the
        largest share: a loss in either direction fails a both-ways trial, so a search
        judges by the worst one. One direction: (tx_packets, judged_lost)."""
        if not self.directions:
            return self.tx_packets, self.judged_lost
        fail = self.steady is False and self.steady_state == "fail"
        worst = (0, 0)
        for d in self.directions:
            lost = min(d.lost + int(d.backlog_frames or 0), d.tx_packets) if fail else d.lost
            if worst == (0, 0) or lost * max(worst[0], 1) > worst[1] * max(d.tx_packets, 1):
                worst = (d.tx_packets, lost)
        return worst

    def steady_note(self) -> str | None:
        """One line for a trial that is not steady: the backlog, the forwarding rate and
        the trial duration that would make the buffer immaterial; None otherwise."""
        return steady_note(self.as_dict()) if self.steady is False else None

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
        lost = self.judged_lost
        if loss_tolerance == 0:
            return lost == 0
        if (lost / self.tx_packets if self.tx_packets else 0.0) > loss_tolerance:
            return False
        sent, worst = self.judged_counts()  # every direction within the tolerance too
        return (worst / sent if sent else 0.0) <= loss_tolerance

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
        if self.backlog_frames is not None:
            out.update(backlog_frames=self.backlog_frames, forwarding_pps=self.forwarding_pps,
                       steady=self.steady, steady_state=self.steady_state,
                       buffer_s=self.buffer_s, steady_duration_s=self.steady_duration_s)
        if self.latency is not None and not self.latency.empty:
            out["latency"] = self.latency.as_dict()
        if self.events:
            out["events"] = [dict(e) for e in self.events]
        if self.directions:
            out["aggregate_offered_pps"] = self.aggregate_offered_pps
            out["directions"] = [d.as_dict() for d in self.directions]
        if self.attribution is not None:
            out["loss_attribution"] = self.attribution.as_dict()
        if self.dut_health is not None:
            out["dut_health"] = self.dut_health
        return out


def steady_note(trial: Mapping[str, Any], medium: str = fmt.TEXT) -> str:
    """The not-steady line of a trial record (`TrialResult.as_dict()`): its backlog, the
    DUT's forwarding rate, and the trial duration that makes its buffer immaterial; its
    numbers as `medium` (format.TEXT or format.HTML) writes them."""
    backlog, sent = int(trial["backlog_frames"]), max(int(trial["tx_packets"]), 1)
    text = (f"not steady at {fmt.rate_pps_exact(trial['offered_pps'])}: "
            f"{fmt.count(backlog)} frames ({fmt.share(backlog / sent, medium)}) were still in "
            f"the DUT's buffers when traffic stopped; it forwarded "
            f"{fmt.rate_pps_exact(trial['forwarding_pps'])}")
    if trial.get("steady_duration_s"):
        text += (f"; its buffer holds >= {fmt.time_s(trial['buffer_s'], medium)}: trials of "
                 f">= {fmt.time_s_exact(math.ceil(trial['steady_duration_s']))} make it "
                 "immaterial")
    return text


def steady_summary(trials: Sequence[Mapping[str, Any]], medium: str = fmt.TEXT) -> str | None:
    """The not-steady note of a procedure's trial records: the highest load among the
    valid trials that were not steady (what hid an overload), and how many there were;
    None when every trial was steady or unjudged."""
    unsteady = [t for t in trials if t.get("valid", True) and t.get("steady") is False]
    if not unsteady:
        return None
    worst = max(unsteady, key=lambda t: t["offered_pps"])
    more = f" ({len(unsteady)} trials not steady)" if len(unsteady) > 1 else ""
    return steady_note(worst, medium) + more


Measurer = _Measurer[float, TrialResult]
"""What RFC 2544's procedures need from the world: one trial at a load in pps
(``measure(load_pps, duration_s) -> TrialResult``), the search core's `Measurer` of a
`TrialResult`."""


class ValidTrialSums:
    """What a latency result (at one load) sums over its valid tries: a mixin without
    fields for a frozen dataclass that holds `trials`."""

    trials: tuple[TrialResult, ...]

    @property
    def valid_trials(self) -> tuple[TrialResult, ...]:
        return tuple(t for t in self.trials if t.valid)

    def merged_latency(self) -> LatencyResult | None:
        """The valid trials' latency merged; None when none kept a histogram."""
        parts = [t.latency for t in self.valid_trials if t.latency is not None]
        return LatencyResult.merge(parts) if parts else None

    @property
    def lost(self) -> int:
        return sum(t.lost for t in self.valid_trials)

    @property
    def tx_packets(self) -> int:
        return sum(t.tx_packets for t in self.valid_trials)

    @property
    def rx_packets(self) -> int:
        return sum(t.rx_packets for t in self.valid_trials)
