"""RateController: offer exactly the load you claim, on one port.

Turns a rate (`units.Rate`: pps, bit/s at a stated layer, or % of the line
rate) and a pattern (`patterns`: max, CBR, Poisson, any gap distribution,
bursts, ramps) into per-stream pacing phases, runs them on the engine and
reports, per stream, what was offered beside what was achieved at TX and at
RX. A stream whose achieved TX rate falls short of its offered rate gets a
`RateShortfallWarning` with both figures: never silently.

Weighted streams share the rate in packets: `[(a, 7), (b, 4), (c, 1)]` sends
7:4:1 of the packets. A bit rate converts to packets with the weighted mean
frame size at the rate's layer, so the mix's bits add up to the rate.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import format as fmt
from ..engine.client import Engine, LoadedStream, Port, Tx
from ..errors import NetloadConfigError, NetloadEnvironmentError, NetloadWarning
from ..measure.causes import shortfall_cause
from ..measure.results import RunResult, StreamResult
from ..traffic.patterns import MaxRate, Pattern, parse_pattern
from ..units import Duration, Rate, as_rate, frame_bits, run_seconds
from . import progress
from .expected import expect_rules

DEFAULT_TOLERANCE = 0.005  # achieved TX may fall 0.5 % short of offered before a warning


class RateShortfallWarning(NetloadWarning):
    """The port sent slower than the rate asked for: the offered load was not offered."""


@dataclass(frozen=True)
class OfferedStream:
    """What one stream was asked to offer, and what it did."""

    result: StreamResult
    weight: float
    offered_pps: float | None  # None: maximum rate (or a ramp: see the phases)
    mean_frame_size: float

    @property
    def achieved_tx_pps(self) -> float:
        return self.result.tx_pps

    @property
    def achieved_rx_pps(self) -> float:
        return self.result.rx_pps

    @property
    def tx_error_ratio(self) -> float | None:
        """(achieved - offered) / offered at TX; None when no rate was set."""
        if not self.offered_pps:
            return None
        return self.result.tx_pps / self.offered_pps - 1.0


@dataclass(frozen=True)
class RateResult:
    """A paced run: the engine's RunResult plus what each stream was offered."""

    run: RunResult
    streams: tuple[OfferedStream, ...]
    rate: Rate | None
    pattern: str
    pacing: str  # "software", "hardware" or "none" (maximum rate)
    warnings: tuple[str, ...] = field(default=())

    def __getitem__(self, name: str) -> OfferedStream:
        for s in self.streams:
            if s.result.name == name:
                return s
        raise KeyError(f"no stream named {name!r}; streams: {[s.result.name for s in self.streams]}")

    @property
    def offered_pps(self) -> float | None:
        rates = [s.offered_pps for s in self.streams]
        return None if any(r is None for r in rates) else sum(r for r in rates if r)

    def summary_line(self, layer: str = "l2") -> str:
        offered = f"offered {fmt.rate_pps_exact(self.offered_pps)} " if self.offered_pps else ""
        return f"{self.pattern} {offered}({self.pacing} pacing) | {self.run.summary_line(layer)}"


def _weighted(streams: Any) -> list[tuple[Any, float]]:
    if isinstance(streams, (LoadedStream,)) or hasattr(streams, "compile"):
        return [(streams, 1.0)]
    out: list[tuple[Any, float]] = []
    for entry in streams:
        stream, weight = (entry, 1.0) if not isinstance(entry, tuple) else entry
        if not isinstance(weight, (int, float)) or isinstance(weight, bool) or \
                not math.isfinite(weight) or weight <= 0:
            raise NetloadConfigError(
                f"stream weight {weight!r}: give a positive number (a share of the packets)"
            )
        out.append((stream, float(weight)))
    if not out:
        raise NetloadConfigError("streams: the list is empty; give at least one stream")
    return out


class RateController:
    """Paced traffic from one port. `rate_controller` fixtures wrap this."""

    def __init__(
        self,
        engine: Engine,
        port: Port,
        *,
        line_rate_bps: float | None = None,
        rx: Sequence[Port] = (),
        hardware: bool = False,
        tolerance: float = DEFAULT_TOLERANCE,
    ) -> None:
        if hardware and not port.info.get("has_queue_rate_limit"):
            raise NetloadEnvironmentError(
                f"port {port.device!r} (driver {port.driver}) has no hardware queue rate "
                "limiting; use software pacing (hardware=False)"
            )
        if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or \
                not 0 <= tolerance < 1:
            raise NetloadConfigError(f"tolerance {tolerance!r}: give a share in [0, 1), e.g. 0.005")
        self.engine = engine
        self.port = port
        self.line_rate_bps = line_rate_bps
        self.rx = list(rx)
        self.hardware = hardware
        self.tolerance = tolerance

    def run(
        self,
        streams: Any,
        rate: Rate | str | float | None = None,
        *,
        pattern: Pattern | str | Any = "cbr",
        duration: Duration | str | float | None = None,
        count: int = 0,
        rx: Sequence[Port] | None = None,
        seed: int = 1,
        timing_samples: int = 0,
        drain: Duration | str | float = "100ms",
        expect: Any = None,
        names: Mapping[str, str] | None = None,
    ) -> RateResult:
        """Offer `rate` with `pattern` for `duration` (or `count` packets per stream).

        `streams` is one stream, a list of streams, or a list of
        `(stream, weight)`; streams may be `traffic.Stream`s (loaded here and
        freed afterwards) or already loaded ones. `expect`: the frames each stream's
        packets should come back as (`traffic.expect.expect(...)`, a list of them, or
        a dict by stream name), compared in the RX path; `names` resolves "dut_mac"
        and the like in them. The result's ``run.frames`` holds each `FrameCheck`.
        """
        default = isinstance(pattern, str) and pattern == "cbr"
        pat = MaxRate() if rate is None and default else parse_pattern(pattern)
        the_rate = None if rate is None else as_rate(rate, what="rate")
        if getattr(pat, "uses_rate", False) and the_rate is None:
            raise NetloadConfigError(
                f"pattern {pat.name!r} paces at a rate: give rate=, e.g. '100kpps' or '1Gbit/s'"
            )
        run_s = 0.0 if duration is None else run_seconds(duration, what="duration")
        for key, value, low in (("count", count, 0), ("seed", seed, 0),
                                ("timing_samples", timing_samples, 0)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise NetloadConfigError(f"{key}={value!r}: give a whole number >= {low}"
                                         + (" (packets per stream; 0: by duration)"
                                            if key == "count" else ""))
        drain_s = run_seconds(drain, what="drain", zero_ok=True)
        weighted = _weighted(streams)
        loaded, temporary, sources = [], [], []
        try:
            for stream, weight in weighted:
                source = stream
                if not isinstance(stream, LoadedStream):
                    stream = self.engine.load(self.port, stream)
                    temporary.append(stream)
                loaded.append((stream, weight))
                sources.append((stream.name, source))
            rules = expect_rules(expect, sources, names or {})
            return self._run(loaded, the_rate, pat, run_s, count, rx, seed, timing_samples,
                             drain_s, rules)
        finally:
            for stream in temporary:
                stream.free()

    def replay(self, replay: Any, *, speed: float = 1.0, loops: int = 1,
               duration: Duration | str | float | None = None, wire: Any = None,
               rx: Sequence[Port] | None = None, timing_samples: int = 0,
               drain: Duration | str | float = "100ms") -> RateResult:
        """Send a capture (`traffic.replay.from_pcap`) at its own timing: each flow its own
        stream, paced by the capture's gaps between its packets and started at its offset
        in the capture, every gap divided by `speed`. `loops` passes over the capture (0:
        until `duration`). `wire`: a topology Flow whose MACs the frames take (None: the
        captured MACs). The result has one stream per flow, offered its mean rate."""
        from ..traffic.patterns import Phase

        if isinstance(loops, bool) or not isinstance(loops, int) or loops < 0:
            raise NetloadConfigError(f"loops={loops!r}: give the passes over the capture "
                                     "(1: once), or 0 to loop until duration")
        run_s = 0.0 if duration is None else run_seconds(duration, what="duration")
        if loops == 0 and not run_s:
            raise NetloadConfigError("loops=0 replays the capture until the run's end: give "
                                     "duration=, e.g. '10s'")
        timing = replay.timing(speed)
        period_s = replay.period_ns / speed / 1e9
        loaded: list[LoadedStream] = []
        try:
            entries = []
            for i, flow in enumerate(timing):
                stream = self.engine.load(self.port, replay.stream(i, wire=wire), queues=1)
                loaded.append(stream)
                entries.append(Tx(stream, flow.packets * loops, (Phase(flow.gaps_ps),),
                                  start_ns=flow.start_ns))
            result = self.engine.run(entries, self.rx if rx is None else rx, duration_s=run_s,
                                     timing_samples=timing_samples,
                                     drain_s=run_seconds(drain, what="drain", zero_ok=True),
                                     progress=progress.poller(run_s or None))
            streams = tuple(OfferedStream(result.streams[i], flow.packets / replay.packets,
                                          flow.packets / period_s, s.mean_frame_size)
                            for i, (s, flow) in enumerate(zip(loaded, timing)))
        finally:
            for stream in loaded:
                stream.free()
        pattern = "capture" if speed == 1 else f"capture x{speed:g}"
        return RateResult(result, streams, None, pattern, "software")

    # ---- the parts -----------------------------------------------------------------

    def _total_pps(self, rate: Rate, loaded: list[tuple[LoadedStream, float]]) -> float:
        """Packets per second of the whole mix for `rate` (bits spread by weight)."""
        total_w = sum(w for _, w in loaded)
        if rate.kind == "pps":
            return float(rate.value)
        layer = rate.layer or "l1"
        bits = sum(w / total_w * frame_bits(s.mean_frame_size, layer) for s, w in loaded)
        bps = rate.bps(loaded[0][0].mean_frame_size, layer=layer,
                       line_rate_bps=self.line_rate_bps)
        return bps / bits

    def _run(self, loaded: list[tuple[LoadedStream, float]], rate: Rate | None, pat: Any,
             run_s: float, count: int, rx: Sequence[Port] | None, seed: int,
             timing_samples: int, drain_s: float,
             rules: Mapping[str, Sequence[Any]] | None = None) -> RateResult:
        total_w = sum(w for _, w in loaded)
        pacing = "none" if isinstance(pat, MaxRate) else "software"
        entries, offered = [], []
        if self.hardware:
            pacing = self._hardware_limit(loaded, rate, pat)
        for i, (stream, weight) in enumerate(loaded):
            share = weight / total_w

            def to_pps(r: Rate, share: float = share) -> float:
                return self._total_pps(as_rate(r), loaded) * share

            if pacing == "software":
                phases = tuple(pat.phases(to_pps, rate, seed=seed + i))
            else:
                phases = ()
            entries.append(Tx(stream, count, phases))
            offered.append(to_pps(rate) if rate is not None else None)
        try:
            # a soak's or long run's frames so far, every poll, to the progress line
            result = self.engine.run(entries, self.rx if rx is None else rx, duration_s=run_s,
                                     timing_samples=timing_samples, drain_s=drain_s,
                                     progress=progress.poller(run_s or None),
                                     expect_frames=rules)
        finally:
            if pacing == "hardware":
                self.port.set_queue_rate(0)
        streams = tuple(
            OfferedStream(result.streams[i], w, offered[i], s.mean_frame_size)
            for i, (s, w) in enumerate(loaded)
        )
        notes = self._shortfalls(streams, run_s if count == 0 else 0.0)
        return RateResult(result, streams, rate, getattr(pat, "name", str(pat)), pacing, notes)

    def _hardware_limit(self, loaded: list[tuple[LoadedStream, float]], rate: Rate | None,
                        pat: Any) -> str:
        if rate is None or getattr(pat, "name", "") != "cbr" or len(loaded) != 1:
            raise NetloadConfigError(
                "hardware rate limiting paces one stream at a constant rate: give one stream, "
                "a rate and pattern='cbr'"
            )
        stream = loaded[0][0]
        l1_bps = self._total_pps(rate, loaded) * frame_bits(stream.mean_frame_size, "l1")
        mbps = max(1, round(l1_bps / 1e6))
        self.port.set_queue_rate(mbps)
        return "hardware"

    def _shortfalls(self, streams: tuple[OfferedStream, ...],
                    duration_s: float) -> tuple[str, ...]:
        """Warn where a stream sent slower than offered, or fewer packets than scheduled."""
        notes = []
        for s in streams:
            err = s.tx_error_ratio
            scheduled = s.offered_pps * duration_s if s.offered_pps else 0.0
            if err is not None and err < -self.tolerance and s.result.tx_packets:
                notes.append(
                    f"stream {s.result.name!r}: offered {fmt.rate_pps_exact(s.offered_pps)} but "
                    f"the port achieved {fmt.rate_pps_exact(s.achieved_tx_pps)} "
                    f"({'+' if err >= 0 else ''}{fmt.share(err)}): "
                    + shortfall_cause(s.result, s.offered_pps or 0.0, s.result.tx_span_ns / 1e9))
            elif scheduled and s.result.tx_packets < scheduled * (1 - self.tolerance) - 1:
                notes.append(
                    f"stream {s.result.name!r}: sent {fmt.count(s.result.tx_packets)} packets "
                    f"where its schedule had {fmt.count(round(scheduled))} in "
                    f"{fmt.time_s_exact(duration_s)}: "
                    + shortfall_cause(s.result, s.offered_pps or 0.0, duration_s))
        for note in notes:
            warnings.warn(note, RateShortfallWarning, stacklevel=4)
        return tuple(notes)
