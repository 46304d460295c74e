"""RFC 2544 procedures bound to the engine: real trials on wired ports.

`EngineMeasurer` is the `Measurer` the pure procedures in rfc2544/ call:
one trial offers a CBR load for a duration, stops, waits for the drain,
reads the counters, and judges whether the generator itself did its part.
`Rfc2544Runner` is what the `rfc2544` fixture gives a test.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any

from . import progress
from .engine.client import Engine, LoadedStream, Port, Tx
from .errors import NetloadConfigError
from .harness import WiredPorts
from .markers import Rfc2544Mark
from .patterns import CBR, MaxRate
from .recording import record_measurement
from .rfc2544 import (
    FrameSize,
    FrameSizeThroughput,
    ThroughputResult,
    TrialResult,
    binary_search,
    check_frame_sizes,
)
from .traffic import UdpSpec
from .units import Rate, frame_bits

TX_TOLERANCE = 0.01        # a trial whose TX fell more than 1 % short is the generator's failure
FOREIGN_FLOOD_RATIO = 0.1  # foreign frames beyond 10 % of those sent make a trial invalid
CALIBRATION_S = 1.0        # the generator's own maximum is measured over this long
CALIBRATION_SHARE = 0.95   # paced sending costs more than unpaced: search from 95 % of it


@dataclass
class EngineMeasurer:
    """Trials of one loaded stream from `tx` to `rx` at a CBR load."""

    engine: Engine
    stream: LoadedStream
    rx: list[Port]
    frame_size: FrameSize
    drain_s: float = 2.0
    tx_tolerance: float = TX_TOLERANCE

    def measure(self, load_pps: float, duration_s: float) -> TrialResult:
        phases = CBR().phases(lambda _r: load_pps, Rate(load_pps, "pps"), seed=1)
        run = self.engine.run([Tx(self.stream, 0, tuple(phases))], self.rx,
                              duration_s=duration_s, drain_s=self.drain_s)
        s = run.streams[0]
        scheduled = load_pps * duration_s
        reason = None
        if s.tx_packets < scheduled * (1 - self.tx_tolerance) - 1:
            reason = (f"the generator sent {s.tx_packets:,} of {scheduled:,.0f} scheduled frames "
                      f"({s.tx_pps:,.0f} pps of {load_pps:,.0f} offered)")
        elif run.generator_drops:
            reason = (f"the generator's own RX ports dropped {run.generator_drops:,} frames "
                      "(imissed / rx_nombuf / kernel drops)")
        elif run.foreign > max(1000, FOREIGN_FLOOD_RATIO * s.tx_packets):
            reason = f"{run.foreign:,} foreign frames flooded the RX ports"
        elif run.interrupted:
            reason = "interrupted"
        return TrialResult(
            frame_size=self.frame_size, mean_frame_size=self.stream.mean_frame_size,
            offered_pps=load_pps, duration_s=duration_s, tx_packets=s.tx_packets,
            rx_packets=s.rx_packets - s.duplicates, achieved_tx_pps=s.tx_pps,
            valid=reason is None, invalid_reason=reason,
            latency=s.latency_result() if s.latency is not None else None, clock=s.clock,
            extra={"duplicates": s.duplicates, "reordered": s.reordered,
                   "generator_drops": run.generator_drops, "foreign": run.foreign})

    def calibrate(self, seconds: float = CALIBRATION_S) -> float:
        """The generator's maximum rate with this stream: what the port takes at full speed."""
        run = self.engine.run([Tx(self.stream, 0, tuple(MaxRate().phases(
            lambda _r: 0.0, None, seed=1)))], self.rx, duration_s=seconds, drain_s=0.1)
        pps = run.streams[0].tx_pps
        if pps <= 0:
            raise NetloadConfigError(
                f"calibration: port {self.stream.port.device!r} sent nothing in {seconds:g}s; "
                "check the port's link")
        return pps


class Rfc2544Runner:
    """RFC 2544 procedures on the test's ports, with its marker's settings."""

    def __init__(self, engine: Engine, ports: WiredPorts, mark: Rfc2544Mark, *,
                 duration_override_s: float | None = None, frame_size: FrameSize | None = None,
                 test: str = "") -> None:
        self.engine = engine
        self.ports = ports
        self.mark = mark
        self.duration_override_s = duration_override_s
        self.frame_size = frame_size
        self.test = test

    @property
    def trial_duration_s(self) -> float:
        return self.duration_override_s or self.mark.trial_duration_s

    def _sizes(self, frame_sizes: Any) -> tuple[FrameSize, ...]:
        if frame_sizes is not None:
            return check_frame_sizes(frame_sizes)
        if self.frame_size is not None:
            return (self.frame_size,)
        return self.mark.frame_sizes

    def _max_pps(self, measurer: EngineMeasurer, mean_size: float) -> float:
        line = self.ports.topology.line_rate_bps
        if self.mark.max_rate is not None:
            return self.mark.max_rate.pps(mean_size, line_rate_bps=line)
        if line:
            return line / frame_bits(mean_size, "l1")
        pps = measurer.calibrate()
        record_measurement("calibration", {"frame_size": measurer.frame_size,
                                           "generator_max_pps": pps, "seconds": CALIBRATION_S,
                                           "search_max_pps": pps * CALIBRATION_SHARE})
        return pps * CALIBRATION_SHARE

    @contextmanager
    def _measurer(self, size: FrameSize) -> Iterator[EngineMeasurer]:
        """A measurer for one frame size on the marker's wire; its stream is freed after."""
        tx, rx = self.ports.wire(self.mark.wire)
        spec = UdpSpec(size=size, flows=self.mark.flows, name=f"rfc2544-{size}")
        stream = self.engine.load(tx, spec.for_flow(self.ports.flow(tx, rx)))
        try:
            yield EngineMeasurer(self.engine, stream, [rx], size, self.mark.drain_s)
        finally:
            stream.free()

    def _progress(self, procedure: str, size: FrameSize) -> Callable[[TrialResult], None]:
        count = 0

        def on_trial(t: TrialResult) -> None:
            nonlocal count
            count += 1
            progress.report(test=self.test, frame_size=size, procedure=procedure, trial=count,
                            offered_pps=t.offered_pps, loss_ratio=t.loss_ratio,
                            note=None if t.valid else f"invalid: {t.invalid_reason}")

        return on_trial

    def throughput(self, frame_sizes: Any = None) -> ThroughputResult:
        """RFC 2544 §26.1 throughput per frame size, by binary search."""
        out: list[FrameSizeThroughput] = []
        for size in self._sizes(frame_sizes):
            with self._measurer(size) as measurer:
                max_pps = self._max_pps(measurer, measurer.stream.mean_frame_size)
                result = binary_search(
                    partial(measurer.measure, duration_s=self.trial_duration_s), max_pps,
                    frame_size=size, mean_frame_size=measurer.stream.mean_frame_size,
                    duration_s=self.trial_duration_s, loss_tolerance=self.mark.loss_tolerance,
                    resolution_pps=max_pps * self.mark.resolution,
                    max_trials=self.mark.max_trials, retries=self.mark.retries,
                    line_rate_bps=self.ports.topology.line_rate_bps,
                    on_trial=self._progress("throughput", size))
            record_measurement("throughput", result.as_dict())
            out.append(result)
        return ThroughputResult(tuple(out))
