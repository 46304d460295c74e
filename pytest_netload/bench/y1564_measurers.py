"""The Y.1564 measurers on the engine (bench/y1564.py's runner uses them).

`EngineServiceMeasurer` is y1564's `ServiceMeasurer` on loaded streams: `measure` runs
every loaded service at once at its own CBR rate for one step (one engine run),
`measure_intervals` the service performance test as one run whose intervals the engine
snapshots while traffic flows. `EngineBurstMeasurer` is the burst tests' `BurstMeasurer`:
the idle time, then one count-bounded run at the port's maximum rate. Both run their
trials between the DUT hooks (bench/dut_trial.py), as RFC 2544's do.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .. import format as fmt
from ..engine.client import Engine, LoadedStream, Port, Tx
from ..engine.handles import hardware_clock
from ..engine.intervals import Interval, IntervalTx
from ..errors import InvalidTrial, NetloadConfigError, NetloadEnvironmentError
from ..measure.dut import LossAttribution
from ..measure.histogram import LogHistogram
from ..measure.latency import LatencyResult
from ..traffic.expect import expect
from ..traffic.patterns import CBR
from ..units import Rate, frame_bits
from ..y1564 import Burst, BurstSample, ServiceSample
from . import progress
from .dut_trial import DutTrials, RunLoss
from .expected import FrameTally, colour_checked
from .lanes import Lane
from .settings import Y1564_DRAIN_S
from .validity import (
    TX_TOLERANCE,
    BurstLimit,
    generator_failure,
    late_burst_reason,
    shared_late_reason,
)

#: Intervals of the last SPT run the measurer keeps for a look after it (an hour's).
KEPT_INTERVALS = 3600

__all__ = ["KEPT_INTERVALS", "EngineBurstMeasurer", "EngineServiceMeasurer"]


def _merged(parts: Sequence[LatencyResult | None]) -> LatencyResult | None:
    got = [p for p in parts if p is not None]
    return None if not got else got[0] if len(got) == 1 else LatencyResult.merge(got)


def _frame_size(lanes: Sequence[Lane]) -> int:
    """A service's frame size: its streams' (a weighted mix's streams share it)."""
    return round(lanes[0].stream.mean_frame_size)


@dataclass
class EngineServiceMeasurer:
    """`ServiceMeasurer` on loaded streams: each service's lanes by name (one stream, or
    a weighted mix's several, each with its share of the service's frames); a colour-aware
    service has yellow lanes too (in `yellow`): its load up to its CIR (in `cir_bps`)
    goes on the green ones, the rest on the yellow ones, each its own signature stream, so
    RX counts the colours apart."""

    engine: Engine
    streams: Mapping[str, Sequence[Lane]]
    rx: list[Port]
    drain_s: float = Y1564_DRAIN_S
    burst_bytes: Mapping[str, int | None] = field(default_factory=dict)
    """Each service's CBS (+ EBS): how late the generator may run (validity.late_burst_reason)."""
    yellow: Mapping[str, Sequence[Lane]] = field(default_factory=dict)
    cir_bps: Mapping[str, float] = field(default_factory=dict)
    dut: DutTrials = field(default_factory=lambda: DutTrials(None, procedure="y1564_sct"))
    """The DUT hooks around each run (bench/dut_trial.py), as RFC 2544's trials have them."""
    runs: int = 0
    last_run: Any = field(default=None, repr=False)
    attributions: list[LossAttribution] = field(default_factory=list, repr=False)
    """Each run's loss attribution, all services together, in order."""
    intervals: deque[Any] = field(default_factory=lambda: deque(maxlen=KEPT_INTERVALS),
                                  repr=False)
    """The last `measure_intervals` run's intervals (`engine.intervals.Interval`), the
    last KEPT_INTERVALS of them, without their latency histograms (a 24-h run's would
    take gigabytes)."""
    colours: Mapping[str, tuple[Any, Any, Any]] = field(default_factory=dict)
    """Colour-aware services: (colour field "dscp" or "pcp", green value, yellow value).
    Each of their frames is counted by the colour it arrives with (the engine's RX path
    compares that field alone), so a DUT that re-marks is seen."""
    colour_at_rx: dict[str, dict[str, int]] = field(default_factory=dict)
    """The last run's counts by colour at RX, per colour-aware service (`_colour_counts`)."""
    tally: FrameTally = field(default_factory=FrameTally)
    """The user's expected frames (``expect=``): their rules by stream (bench/lanes.Plan's;
    a colour-aware service's joined with its colours in `__post_init__`) and the checks
    of every run."""
    burst_limit: BurstLimit | None = None
    """The DUT's declared policer or shaper that every service crosses
    (validity.BurstLimit.declared): frames it dropped after the generator's catch-up
    burst are the generator's (validity.shared_late_reason)."""

    def __post_init__(self) -> None:
        for name, (key, green, yellow) in self.colours.items():
            for lane in (*self.streams.get(name, ()), *self.yellow.get(name, ())):
                rules = self.tally.rules.get(lane.stream.name)
                if rules:
                    self.tally.rules[lane.stream.name] = colour_checked(rules, key, green,
                                                                        yellow)

    def _split(self, name: str, bps: float) -> list[tuple[str, LoadedStream, float]]:
        """(colour, stream, L2 bit rate) of each stream service `name` sends at `bps`."""
        lanes = self.streams.get(name)
        if lanes is None:
            raise NetloadConfigError(f"service {name!r} has no stream here; the services "
                                     f"are {sorted(self.streams)}")
        yellow = self.yellow.get(name)
        green_bps = bps if yellow is None else min(bps, self.cir_bps[name])
        out = [("green", lane.stream, green_bps * lane.share) for lane in lanes]
        return out + [("yellow", lane.stream, (bps - green_bps) * lane.share)
                      for lane in yellow or ()]

    def _entries(self, load: Mapping[str, float]) -> list[tuple[str, str, float, float, Any]]:
        """(service, colour, L2 bit rate, pps, Tx) of each stream `load` sends."""
        entries: list[tuple[str, str, float, float, Any]] = []
        for name, bps in load.items():
            for colour, stream, part in self._split(name, bps):
                if not part > 0:
                    continue
                pps = part / frame_bits(stream.mean_frame_size, "l2")
                phases = tuple(CBR().phases(lambda _r, p=pps: p, Rate(pps, "pps"), seed=1))
                entries.append((name, colour, part, pps, Tx(stream, 0, phases)))
        return entries

    def _colour_rules(self, entries: list[tuple[str, str, float, float, Any]]
                      ) -> dict[str, list[Any]]:
        """Each stream's expected frames: the user's (`tally`), a colour-aware one's each
        in green, then in yellow; without the user's, a colour-aware service's stream has
        two: its colour field holding the green value, or the yellow one (nothing else
        compared). Either way rule i is green when i is even, yellow when odd."""
        out: dict[str, list[Any]] = {}
        for name, _colour, _bps, _pps, tx in entries:
            marks, source = self.colours.get(name), tx.stream.source
            if tx.stream.name in self.tally.rules:
                out[tx.stream.name] = self.tally.rules[tx.stream.name]
                continue
            if marks is None or source is None:
                continue
            key, green, yellow = marks
            out[tx.stream.name] = [
                expect(fields={key: value}, only=True, label=label).rule(source)
                for label, value in (("green", green), ("yellow", yellow))]
        return out

    def _colour_counts(self, entries: list[tuple[str, str, float, float, Any]],
                       run: Any) -> dict[str, dict[str, int]]:
        """Per colour-aware service, its frames by the colour they arrived with: green,
        yellow, "remarked" (sent green, received yellow), "promoted" (sent yellow,
        received green) and "other" (the field held neither value)."""
        counts: dict[str, dict[str, int]] = {}
        for name, colour, _bps, _pps, tx in entries:
            check = run.frames.get(tx.stream.name)
            if check is None:
                continue
            if name not in self.colours:
                continue
            got = {"green": sum(check.matched[0::2]), "yellow": sum(check.matched[1::2])}
            c = counts.setdefault(name, dict.fromkeys(
                ("green", "yellow", "remarked", "promoted", "other"), 0))
            c["green"] += got.get("green", 0)
            c["yellow"] += got.get("yellow", 0)
            c["other"] += check.unmatched
            c["remarked" if colour == "green" else "promoted"] += got.get(
                "yellow" if colour == "green" else "green", 0)
        return counts

    def measure(self, load: Mapping[str, float], duration_s: float) -> dict[str, ServiceSample]:
        """Each service of `load` (name -> L2 bit rate) at its rate for `duration_s`."""
        entries = self._entries(load)
        if not entries:
            return {}
        progress.trial_start(offered_bps=sum(e[2] for e in entries))
        samples: dict[str, ServiceSample] = {}

        def run_trial() -> tuple[Any, RunLoss]:
            run = self.engine.run([e[4] for e in entries], self.rx, duration_s=duration_s,
                                  drain_s=self.drain_s,
                                  expect_frames=self._colour_rules(entries))
            self.colour_at_rx = self._colour_counts(entries, run)
            self.tally.keep(run.frames)
            by_name: dict[str, dict[str, list[tuple[float, Any, str | None]]]] = {}
            lost = [max(int(s.tx_packets) - int(s.rx_unique), 0) for s in run.streams]
            shared = self._late_at_dut(entries, run.streams, lost)
            for (name, colour, bps, pps, _tx), s, n in zip(entries, run.streams, lost):
                why = generator_failure(run, s, pps * duration_s, pps, duration_s) or \
                    self._late(name, s, bps, pps, n, shared)
                by_name.setdefault(name, {}).setdefault(colour, []).append((bps, s, why))
            for name, parts in by_name.items():
                samples[name] = replace(self._sample(name, parts, duration_s),
                                        colour_at_rx=self.colour_at_rx.get(name))
            # the run as the hooks judge it: valid unless they say otherwise (a service
            # the generator failed keeps its own reason; the others stay valid); yellow
            # frames the DUT dropped are in its counters too
            return run, RunLoss(sum(x.lost + (x.yellow_tx_frames or 0) -
                                    (x.yellow_rx_frames or 0) for x in samples.values()))

        sizes = sorted({_frame_size(self.streams[e[0]]) for e in entries})
        ctx = self.dut.context(sizes[0] if len(sizes) == 1 else  # several: "64B + 512B"
                               " + ".join(f"{n}B" for n in sizes),
                               sum(e[3] for e in entries), duration_s)
        self.last_run, judged = self.dut.around(ctx, run_trial, lambda t: t.lost)
        self.runs += 1
        if judged.attribution is not None:
            self.attributions.append(judged.attribution)
        return {name: self._judged(x, judged, len(samples) == 1)
                for name, x in samples.items()}

    def _late(self, name: str, s: Any, bps: float, pps: float, lost: int,
              shared: str | None) -> str | None:
        """Why the `lost` frames of service `name`'s stream (TX counters `s`, sent at `bps`
        L2 and `pps`) in a step or an interval may all have been dropped by a policer or a
        shaper for the generator's catch-up burst: the service's own bucket (CBS + EBS,
        fed at the service's rate), or the DUT's shared policer or shaper (`shared`,
        `_late_at_dut`); None when it lost nothing (a lag never makes either drop less)
        or more than the burst may cost."""
        if not lost:
            return None
        own = self.burst_bytes.get(name)
        bucket = BurstLimit(bps, own) if own and bps > 0 else None
        return late_burst_reason(s, bps, bucket, whose=f"service {name!r}",
                                 frame_bytes=bps / pps / 8, excess_lost=lost) or shared

    def _late_at_dut(self, entries: Sequence[tuple[str, str, float, float, Any]],
                     txs: Sequence[Any], lost: Sequence[int]) -> str | None:
        """Why the frames `lost` by each entry in a run or an interval may all have been
        dropped by the DUT's declared policer or shaper for the generator's catch-up burst
        (`txs`: each entry's TX counters, a run's streams or an interval's); None
        otherwise."""
        return shared_late_reason([(t, e[2], e[2] / e[3] / 8, n)
                                   for e, t, n in zip(entries, txs, lost)],
                                  self.burst_limit, sum(lost))

    def _sample(self, name: str, parts: Mapping[str, list[tuple[float, Any, str | None]]],
                duration_s: float) -> ServiceSample:
        """Service `name`'s sample from its colours' (L2 rate, stream result, invalid
        reason) of each stream: the green (or only) streams' frames, the yellow ones'
        apart."""
        green, yellow = parts.get("green", []), parts.get("yellow")
        reasons = [f"{c} frames: {p[2]}" if yellow is not None else p[2]
                   for c, ps in parts.items() for p in ps if p[2] is not None]
        why = "; ".join(reasons) or None
        return ServiceSample(
            service=name, offered_bps=sum(p[0] for ps in parts.values() for p in ps),
            duration_s=duration_s, frame_size=_frame_size(self.streams[name]),
            tx_frames=sum(int(p[1].tx_packets) for p in green),
            rx_frames=sum(int(p[1].rx_unique) for p in green),
            latency=_merged([p[1].latency_result() if p[1].latency_samples else None
                             for p in green]),
            valid=why is None, invalid_reason=why,
            yellow_tx_frames=None if yellow is None else sum(int(p[1].tx_packets)
                                                             for p in yellow),
            yellow_rx_frames=None if yellow is None else sum(int(p[1].rx_unique)
                                                             for p in yellow))

    @staticmethod
    def _judged(sample: ServiceSample, judged: RunLoss, alone: bool) -> ServiceSample:
        """`sample` with the hooks' findings on its run: their invalid reason (a DUT that
        is not well, or one that dropped on the generator's behalf) where the generator's
        own was none; the run's attribution where the service had the run to itself."""
        reason = sample.invalid_reason if not sample.valid else judged.invalid_reason
        return replace(sample, valid=sample.valid and judged.valid, invalid_reason=reason,
                       attribution=judged.attribution if alone else None,
                       dut_health=judged.dut_health)

    def measure_intervals(self, load: Mapping[str, float], interval_s: float, count: int,
                          on_interval: Callable[[Mapping[str, ServiceSample]], None]) -> None:
        """Each service of `load` at its rate for `count` intervals of `interval_s`, in
        one run: `on_interval` gets each interval's samples as it ends. An interval is
        invalid when its snapshot was lost or the generator sent more than 1 % short of
        its schedule in it."""
        entries = self._entries(load)
        if not entries:
            for _ in range(count):
                on_interval({})
            return
        progress.trial_start(offered_bps=sum(e[2] for e in entries))
        self.intervals.clear()
        hello = self.engine._hello()
        resolution = 1e9 / hello.tsc_hz if hello.tsc_hz else None
        clocks = ["nic-hardware" if hardware_clock(e[4].stream, self.rx) else "tsc-software"
                  for e in entries]
        got = 0
        before = [IntervalTx()] * len(entries)

        def one(iv: Interval) -> None:
            nonlocal got
            got += 1
            parts: dict[str, dict[str, list[tuple[int, int, float,
                                                  LatencyResult | None]]]] = {}
            reasons: dict[str, list[str]] = {}
            lost = [max(int(iv.tx_packets[i]) - int(iv.rx_unique[i]), 0)
                    for i in range(len(entries))]
            # each sender's lag here, with its worker's CPU over this interval and the one
            # before (a stall across the end between them lags the frames after it)
            senders = [t.after(b) for t, b in zip(iv.tx, before)] if iv.tx else []
            before[:] = iv.tx or before
            shared = self._late_at_dut(entries, senders, lost) if senders else None
            for i, (name, colour, bps, pps, _tx) in enumerate(entries):
                tx = int(iv.tx_packets[i])
                scheduled = pps * interval_s
                why = None if iv.valid[i] else (
                    "the engine's snapshot of this interval was lost (its host read them "
                    "too late): the counts span more than the interval")
                if why is None and tx < scheduled * (1 - TX_TOLERANCE) - 1:
                    why = (f"the generator sent {fmt.count(tx)} of "
                           f"{fmt.count(round(scheduled))} scheduled frames in this interval")
                if why is None and senders:
                    why = self._late(name, senders[i], bps, pps, lost[i], shared)
                if why is not None:
                    reasons.setdefault(name, []).append(
                        f"{colour} frames: {why}" if name in self.yellow else why)
                hist = iv.latency_hist[i]
                latency = None
                if hist.any():
                    h = LogHistogram(hist.astype(np.uint64), iv.latency_lower_ns)
                    latency = LatencyResult(h, clock=clocks[i], resolution_ns=resolution,
                                            samples=h.total,
                                            duplicates=int(iv.duplicates[i]),
                                            reordered=int(iv.reordered[i]))
                parts.setdefault(name, {}).setdefault(colour, []).append(
                    (tx, int(iv.rx_unique[i]), bps, latency))
            out: dict[str, ServiceSample] = {}
            for name, by_colour in parts.items():
                green, yellow = by_colour.get("green", []), by_colour.get("yellow")
                why = "; ".join(reasons.get(name, [])) or None
                out[name] = ServiceSample(
                    service=name, offered_bps=sum(p[2] for ps in by_colour.values()
                                                  for p in ps),
                    duration_s=interval_s, frame_size=_frame_size(self.streams[name]),
                    tx_frames=sum(p[0] for p in green), rx_frames=sum(p[1] for p in green),
                    latency=_merged([p[3] for p in green]),
                    valid=why is None, invalid_reason=why,
                    yellow_tx_frames=None if yellow is None else sum(p[0] for p in yellow),
                    yellow_rx_frames=None if yellow is None else sum(p[1] for p in yellow))
            self.intervals.append(replace(iv, latency_hist=iv.latency_hist[:, :0]))
            on_interval(out)

        def run_trial() -> tuple[Any, RunLoss]:
            run = self.engine.run([e[4] for e in entries], self.rx,
                                  duration_s=interval_s * count, interval_s=interval_s,
                                  drain_s=self.drain_s, on_interval=one,
                                  expect_frames=self._colour_rules(entries))
            self.colour_at_rx = self._colour_counts(entries, run)
            self.tally.keep(run.frames)
            return run, RunLoss(sum(int(s.tx_packets) - int(s.rx_unique)
                                    for s in run.streams))

        # the whole run is one trial to the DUT hooks: their counters before and after
        # it, its loss attributed (every interval's together)
        sizes = sorted({_frame_size(self.streams[e[0]]) for e in entries})
        ctx = self.dut.context(sizes[0] if len(sizes) == 1 else
                               " + ".join(f"{n}B" for n in sizes),
                               sum(e[3] for e in entries), interval_s * count)
        self.last_run, judged = self.dut.around(ctx, run_trial, lambda t: t.lost)
        self.runs += 1
        if judged.attribution is not None:
            self.attributions.append(judged.attribution)
        if got != count:
            raise NetloadEnvironmentError(
                f"the engine gave {got} of the run's {count} intervals; its log may say why")
        if not judged.valid:
            # the hooks judged the whole run after its intervals were counted (a DUT not
            # well, or dropping on the generator's behalf): no interval of it may pass
            raise InvalidTrial(f"the service performance test's run: {judged.invalid_reason}; "
                               "its intervals were not judged")


@dataclass
class EngineBurstMeasurer:
    """`BurstMeasurer` on loaded streams, each service's lanes by name: the idle time,
    then the burst as one count-bounded run at the port's maximum rate (a weighted mix's
    streams each send their share of the burst's frames)."""

    engine: Engine
    streams: Mapping[str, Sequence[Lane]]
    rx: list[Port]
    drain_s: float = Y1564_DRAIN_S
    sleep: Any = time.sleep
    dut: DutTrials = field(default_factory=lambda: DutTrials(None, procedure="y1564_burst"))
    """The DUT hooks around each burst (bench/dut_trial.py)."""
    tally: FrameTally = field(default_factory=FrameTally)
    """The user's expected frames: their rules by stream, each burst's checks."""
    runs: int = 0
    last_run: Any = field(default=None, repr=False)

    def measure(self, load: Burst, duration_s: float) -> BurstSample:
        lanes = self.streams.get(load.service)
        if lanes is None:
            raise NetloadConfigError(f"service {load.service!r} has no stream here; the "
                                     f"services are {sorted(self.streams)}")
        self.sleep(load.idle_s)  # the bucket refills
        size = _frame_size(lanes)
        burst_s = max(duration_s - load.idle_s, 1e-9)  # the burst's time at the line rate
        ctx = self.dut.context(size, load.frames / burst_s, burst_s)
        self.last_run, sample = self.dut.around(
            ctx, lambda: self._burst(lanes, load, size), lambda t: t.lost)
        self.runs += 1
        return sample

    @staticmethod
    def _counts(lanes: Sequence[Lane], frames: int) -> list[int]:
        """The burst's frames over the lanes by their shares (largest remainders)."""
        exact = [frames * lane.share for lane in lanes]
        counts = [int(x) for x in exact]
        for i in sorted(range(len(lanes)), key=lambda k: counts[k] - exact[k])[
                :frames - sum(counts)]:
            counts[i] += 1
        return counts

    def _burst(self, lanes: Sequence[Lane], load: Burst, size: int
               ) -> tuple[Any, BurstSample]:
        progress.trial_start()
        sending = [(lane, n) for lane, n in zip(lanes, self._counts(lanes, load.frames)) if n]
        run = self.engine.run([Tx(lane.stream, n) for lane, n in sending], self.rx,
                              drain_s=self.drain_s,
                              expect_frames=self.tally.rules_for(lane.stream
                                                                 for lane, _n in sending))
        self.tally.keep(run.frames)
        results = list(run.streams[:len(sending)])
        sent = sum(int(s.tx_packets) for s in results)
        span_s = max(s.tx_span_ns for s in results) / 1e9
        rate = size * 8 * (sent - 1) / span_s if sent > 1 and span_s > 0 else None
        pps = rate / (size * 8) if rate else 1e6
        why = next((w for (_lane, n), s in zip(sending, results)
                    if (w := generator_failure(run, s, n, pps * n / load.frames,
                                               load.frames / pps, tx_tolerance=0.0))), None)
        if why is None and sent < load.frames:
            why = (f"the generator sent {fmt.count(sent)} of the burst's "
                   f"{fmt.count(load.frames)} frames")
        return run, BurstSample(service=load.service, frame_size=size, tx_frames=sent,
                                rx_frames=sum(int(s.rx_unique) for s in results),
                                rate_bps=rate, valid=why is None, invalid_reason=why)
