"""ITU-T Y.1564 on the engine: `Y1564Runner`, what the `y1564` fixture gives a test.

Each service is one loaded UDP stream on the marker's wire, with the service's frame
size, DSCP (and PCP in its VLAN tag) and UDP destination port; a colour-aware service is
two, its green stream (the load up to the CIR) and its yellow one (the rest), marked with
the service's green and yellow DSCP or PCP and counted apart at RX. One call of
`EngineServiceMeasurer.measure` is one engine run: every service that has a
load is paced at once at its own CBR rate (its L2 bit rate, frame bytes with FCS,
the layer Y.1564 counts CIR and IR in), then RX drains. The pure procedures of
y1564/ (service configuration test, service performance test) call it: a step of
the configuration test is one run. The performance test is one run too
(`EngineServiceMeasurer.measure_intervals`): the engine snapshots every service's
counters and latency histogram at each interval's end while traffic flows, so no
pause separates two intervals and a policer's bucket never refills between them.
`EngineBurstMeasurer` sends the burst tests' bursts: after the idle time, one
count-bounded run of the service's stream at the port's maximum rate.
"""

from __future__ import annotations

import contextlib
import copy
import re
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from .. import format as fmt
from ..engine.client import Engine, LoadedStream, Port, Tx
from ..engine.handles import hardware_clock
from ..engine.intervals import Interval
from ..errors import NetloadConfigError, NetloadEnvironmentError
from ..measure.dut import LossAttribution, merge_attributions
from ..measure.histogram import LogHistogram
from ..measure.latency import LatencyResult
from ..measure.recording import record_measurement
from ..search.settings import TrialSettings
from ..traffic.patterns import CBR
from ..traffic.streams import udp
from ..units import Rate, frame_bits
from ..y1564 import (
    AvailabilityTracker,
    Burst,
    BurstResult,
    BurstSample,
    SctResult,
    Service,
    ServiceSample,
    SptResult,
    burst_test,
    check_services,
    service_configuration_test,
    service_performance_test,
)
from . import progress
from .dut_trial import DutTrials, RunLoss, TrialHooks
from .harness import WiredPorts
from .lanes import plan_wires
from .runner import send_learning_frames
from .settings import Y1564_DRAIN_S, Y1564Mark
from .validity import TX_TOLERANCE, generator_failure, late_burst_reason

#: Intervals of the last SPT run the measurer keeps for a look after it (an hour's).
KEPT_INTERVALS = 3600

__all__ = ["Y1564_DRAIN_S", "EngineBurstMeasurer", "EngineServiceMeasurer", "Y1564Mark",
           "Y1564Result",
           "Y1564Runner", "checkpoint_path"]


@dataclass
class EngineServiceMeasurer:
    """`ServiceMeasurer` on loaded streams, one per service (by name); a colour-aware
    service has a second, yellow stream (in `yellow`): its load up to its CIR (in `cir_bps`)
    goes on the green stream, the rest on the yellow one, each its own signature stream, so
    RX counts the colours apart."""

    engine: Engine
    streams: Mapping[str, LoadedStream]
    rx: list[Port]
    drain_s: float = Y1564_DRAIN_S
    burst_bytes: Mapping[str, int | None] = field(default_factory=dict)
    """Each service's CBS (+ EBS): how late the generator may run (validity.late_burst_reason)."""
    yellow: Mapping[str, LoadedStream] = field(default_factory=dict)
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

    def _split(self, name: str, bps: float) -> list[tuple[str, LoadedStream, float]]:
        """(colour, stream, L2 bit rate) of each stream service `name` sends at `bps`."""
        stream = self.streams.get(name)
        if stream is None:
            raise NetloadConfigError(f"service {name!r} has no stream here; the services "
                                     f"are {sorted(self.streams)}")
        yellow = self.yellow.get(name)
        if yellow is None:
            return [("green", stream, bps)]
        green_bps = min(bps, self.cir_bps[name])
        return [("green", stream, green_bps), ("yellow", yellow, bps - green_bps)]

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

    def measure(self, load: Mapping[str, float], duration_s: float) -> dict[str, ServiceSample]:
        """Each service of `load` (name -> L2 bit rate) at its rate for `duration_s`."""
        entries = self._entries(load)
        if not entries:
            return {}
        progress.trial_start(offered_bps=sum(e[2] for e in entries))
        samples: dict[str, ServiceSample] = {}

        def run_trial() -> tuple[Any, RunLoss]:
            run = self.engine.run([e[4] for e in entries], self.rx, duration_s=duration_s,
                                  drain_s=self.drain_s)
            by_name: dict[str, dict[str, tuple[float, Any, str | None]]] = {}
            for (name, colour, bps, pps, _tx), s in zip(entries, run.streams):
                why = generator_failure(run, s, pps * duration_s, pps, duration_s) or \
                    late_burst_reason(s, bps, self.burst_bytes.get(name),
                                      whose=f"service {name!r}")
                by_name.setdefault(name, {})[colour] = (bps, s, why)
            for name, parts in by_name.items():
                samples[name] = self._sample(name, parts, duration_s)
            # the run as the hooks judge it: valid unless they say otherwise (a service
            # the generator failed keeps its own reason; the others stay valid); yellow
            # frames the DUT dropped are in its counters too
            return run, RunLoss(sum(x.lost + (x.yellow_tx_frames or 0) -
                                    (x.yellow_rx_frames or 0) for x in samples.values()))

        sizes = sorted({round(self.streams[e[0]].mean_frame_size) for e in entries})
        ctx = self.dut.context(sizes[0] if len(sizes) == 1 else  # several: "64B + 512B"
                               " + ".join(f"{n}B" for n in sizes),
                               sum(e[3] for e in entries), duration_s)
        self.last_run, judged = self.dut.around(ctx, run_trial, lambda t: t.lost)
        self.runs += 1
        if judged.attribution is not None:
            self.attributions.append(judged.attribution)
        return {name: self._judged(x, judged, len(samples) == 1)
                for name, x in samples.items()}

    def _sample(self, name: str, parts: Mapping[str, tuple[float, Any, str | None]],
                duration_s: float) -> ServiceSample:
        """Service `name`'s sample from its colours' (L2 rate, stream result, invalid
        reason): the green (or only) stream's frames, the yellow one's apart."""
        green, yellow = parts.get("green"), parts.get("yellow")
        reasons = [f"{c} frames: {p[2]}" if yellow is not None else p[2]
                   for c, p in parts.items() if p[2] is not None]
        why = "; ".join(reasons) or None
        g = green[1] if green is not None else None
        return ServiceSample(
            service=name, offered_bps=sum(p[0] for p in parts.values()),
            duration_s=duration_s, frame_size=int(round(self.streams[name].mean_frame_size)),
            tx_frames=0 if g is None else int(g.tx_packets),
            rx_frames=0 if g is None else int(g.rx_unique),
            latency=g.latency_result() if g is not None and g.latency_samples else None,
            valid=why is None, invalid_reason=why,
            yellow_tx_frames=None if yellow is None else int(yellow[1].tx_packets),
            yellow_rx_frames=None if yellow is None else int(yellow[1].rx_unique))

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

        def one(iv: Interval) -> None:
            nonlocal got
            got += 1
            parts: dict[str, dict[str, tuple[int, int, float, LatencyResult | None]]] = {}
            reasons: dict[str, list[str]] = {}
            for i, (name, colour, bps, pps, _tx) in enumerate(entries):
                tx = int(iv.tx_packets[i])
                scheduled = pps * interval_s
                why = None if iv.valid[i] else (
                    "the engine's snapshot of this interval was lost (its host read them "
                    "too late): the counts span more than the interval")
                if why is None and tx < scheduled * (1 - TX_TOLERANCE) - 1:
                    why = (f"the generator sent {fmt.count(tx)} of "
                           f"{fmt.count(round(scheduled))} scheduled frames in this interval")
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
                parts.setdefault(name, {})[colour] = (tx, int(iv.rx_unique[i]), bps, latency)
            out: dict[str, ServiceSample] = {}
            for name, by_colour in parts.items():
                green, yellow = by_colour.get("green"), by_colour.get("yellow")
                why = "; ".join(reasons.get(name, [])) or None
                out[name] = ServiceSample(
                    service=name, offered_bps=sum(p[2] for p in by_colour.values()),
                    duration_s=interval_s,
                    frame_size=int(round(self.streams[name].mean_frame_size)),
                    tx_frames=0 if green is None else green[0],
                    rx_frames=0 if green is None else green[1],
                    latency=None if green is None else green[3],
                    valid=why is None, invalid_reason=why,
                    yellow_tx_frames=None if yellow is None else yellow[0],
                    yellow_rx_frames=None if yellow is None else yellow[1])
            self.intervals.append(replace(iv, latency_hist=iv.latency_hist[:, :0]))
            on_interval(out)

        def run_trial() -> tuple[Any, RunLoss]:
            run = self.engine.run([e[4] for e in entries], self.rx,
                                  duration_s=interval_s * count, interval_s=interval_s,
                                  drain_s=self.drain_s, on_interval=one)
            return run, RunLoss(sum(int(s.tx_packets) - int(s.rx_unique)
                                    for s in run.streams))

        # the whole run is one trial to the DUT hooks: their counters before and after
        # it, its loss attributed (every interval's together)
        sizes = sorted({round(self.streams[e[0]].mean_frame_size) for e in entries})
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


@dataclass
class EngineBurstMeasurer:
    """`BurstMeasurer` on loaded streams, one per service (by name): the idle time, then
    the burst as one count-bounded run at the port's maximum rate."""

    engine: Engine
    streams: Mapping[str, LoadedStream]
    rx: list[Port]
    drain_s: float = Y1564_DRAIN_S
    sleep: Any = time.sleep
    dut: DutTrials = field(default_factory=lambda: DutTrials(None, procedure="y1564_burst"))
    """The DUT hooks around each burst (bench/dut_trial.py)."""
    runs: int = 0
    last_run: Any = field(default=None, repr=False)

    def measure(self, load: Burst, duration_s: float) -> BurstSample:
        stream = self.streams.get(load.service)
        if stream is None:
            raise NetloadConfigError(f"service {load.service!r} has no stream here; the "
                                     f"services are {sorted(self.streams)}")
        self.sleep(load.idle_s)  # the bucket refills
        size = int(round(stream.mean_frame_size))
        burst_s = max(duration_s - load.idle_s, 1e-9)  # the burst's time at the line rate
        ctx = self.dut.context(size, load.frames / burst_s, burst_s)
        self.last_run, sample = self.dut.around(
            ctx, lambda: self._burst(stream, load, size), lambda t: t.lost)
        self.runs += 1
        return sample

    def _burst(self, stream: LoadedStream, load: Burst, size: int) -> tuple[Any, BurstSample]:
        progress.trial_start()
        run = self.engine.run([Tx(stream, load.frames)], self.rx, drain_s=self.drain_s)
        s = run.streams[0]
        span_s = s.tx_span_ns / 1e9
        rate = size * 8 * (s.tx_packets - 1) / span_s if s.tx_packets > 1 and span_s > 0 \
            else None
        pps = rate / (size * 8) if rate else 1e6
        why = generator_failure(run, s, load.frames, pps, load.frames / pps, tx_tolerance=0.0)
        if why is None and s.tx_packets < load.frames:
            why = (f"the generator sent {fmt.count(s.tx_packets)} of the burst's "
                   f"{fmt.count(load.frames)} frames")
        return run, BurstSample(service=load.service, frame_size=size,
                                tx_frames=int(s.tx_packets), rx_frames=int(s.rx_unique),
                                rate_bps=rate, valid=why is None, invalid_reason=why)


@dataclass(frozen=True)
class Y1564Result:
    """A whole Y.1564 run: each service's configuration test (and burst tests), then the
    performance test."""

    sct: tuple[SctResult, ...]
    spt: SptResult | None
    bursts: tuple[BurstResult, ...] = ()

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.sct) and all(r.passed for r in self.bursts) and \
            (self.spt is None or self.spt.passed)

    def failures(self) -> list[str]:
        out = [line for r in self.sct for line in r.failures()]
        out += [line for r in self.bursts for line in r.failures()]
        return out + (self.spt.failures() if self.spt is not None else [])

    def as_dict(self) -> dict[str, Any]:
        return {"sct": [r.as_dict() for r in self.sct],
                "bursts": [r.as_dict() for r in self.bursts],
                "spt": None if self.spt is None else self.spt.as_dict(),
                "passed": self.passed}


def _renamed(service: Service, name: str, wire: str) -> Service:
    """`service` under another name on `wire` (one direction of it, with
    direction="both")."""
    out = copy.copy(service)
    object.__setattr__(out, "name", name)
    object.__setattr__(out, "wire", wire)
    return out


def checkpoint_path(directory: Path, test: str) -> Path:
    """The performance test's checkpoint file of test `test` under `directory`."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", test).strip("_") or "y1564"
    return directory / "y1564-checkpoints" / f"{safe[:150]}.jsonl"


class Y1564Runner:
    """Y.1564 procedures on the test's wire with its marker's services and settings.

    `sct()` runs the service configuration test of one service (or of each),
    `bursts()` the CBS/EBS burst tests of one service (or of each with a CBS),
    `spt()` the service performance test of all services at once, `run()` them all.
    Each records its result for the reports (kinds "y1564_sct", "y1564_bursts",
    "y1564_spt").

    With the marker's ``direction="both"`` each service runs on the wire and on its
    reverse as two services, "name p0->p1" and "name p1->p0", each judged by the SAC: the
    performance test loads both directions at once, the configuration and burst tests
    test one direction after the other (a service's name gives both, in turn).
    """

    def __init__(self, engine: Engine, ports: WiredPorts, mark: Y1564Mark, *, test: str = "",
                 step_override_s: float | None = None,
                 checkpoint_dir: Path | None = None, hooks: TrialHooks | None = None) -> None:
        self.engine = engine
        self.hooks = hooks
        """The DUT's side of every run (bench/dut_trial.py), as RFC 2544's trials have it;
        None: the generator's counters only."""
        self.ports = ports
        self.mark = mark
        self.test = test
        self.step_override_s = step_override_s
        self.checkpoint_dir = checkpoint_dir
        if not mark.services:
            raise NetloadConfigError(
                "the y1564 fixture needs services: add @pytest.mark.y1564(services=[{'name': "
                "'data', 'cir': '10Mbit/s', 'sac': {'flr': '0.1%', 'ftd': '10ms'}}])")
        services = check_services(mark.services, ports.topology.line_rate_bps)
        wires = plan_wires(ports, mark.wire, mark.direction)
        self._wire_of: dict[str, tuple[Port, Port]] = {}
        self._given: dict[str, tuple[str, ...]] = {}  # a marker's service: its directions'
        out: list[Service] = []
        for s in services:
            for tx, rx in wires:
                label = f"{ports.name_of(tx)}->{ports.name_of(rx)}"
                name = s.name if len(wires) == 1 else f"{s.name} {label}"
                out.append(s if name == s.name else _renamed(s, name, label))
                self._wire_of[name] = (tx, rx)
                self._given[s.name] = (*self._given.get(s.name, ()), name)
        self.services = tuple(out)
        """The services tested: the marker's, or with direction="both" each of them in
        each direction."""
        self._learned = False
        #: The last `spt()` run's engine intervals (`engine.intervals.Interval`, in order,
        #: the last hour's, without histograms): each service's counts and first/last
        #: arrival per interval.
        self.spt_intervals: list[Any] = []

    def service(self, name: str) -> Service:
        for s in self.services:
            if s.name == name:
                return s
        raise NetloadConfigError(f"service {name!r} is not one of the marker's services "
                                 f"{[s.name for s in self.services]}")

    def _named(self, name: str) -> tuple[Service, ...]:
        """The services `name` names: one, or with direction="both" a marker's service
        in each direction."""
        given = self._given.get(name)
        if given is not None and len(given) > 1:
            return tuple(self.service(n) for n in given)
        return (self.service(name),)

    @contextmanager
    def _streams(self, services: tuple[Service, ...]
                 ) -> Iterator[tuple[dict[str, LoadedStream], dict[str, LoadedStream],
                                     list[Port]]]:
        """Each service's stream on its wire (its green one when colour-aware), each
        colour-aware service's yellow stream, and the receiving ports."""
        if not self._learned and self.mark.learning_frames:
            send_learning_frames(self.engine, self.ports, self.mark.wire,
                                 self.mark.learning_frames)
            self._learned = True
        loaded: dict[str, LoadedStream] = {}
        yellow: dict[str, LoadedStream] = {}
        try:
            for i, s in enumerate(services):
                tx, rx = self._wire_of[s.name]
                flow = self.ports.flow(tx, rx)
                for colour, into in (("green", loaded), ("yellow", yellow)):
                    if colour == "yellow" and not s.colour_aware:
                        continue
                    c = s.coloured(colour)
                    spec = udp(size=s.frame_size,
                               name=s.name if colour == "green" or not s.colour_aware
                               else f"{s.name}/yellow",
                               dscp=c.dscp or 0, pcp=c.pcp or 0, vlan=s.vlan,
                               dport=9 if s.dport is None else s.dport, sport=1024 + i)
                    into[s.name] = self.engine.load(tx, spec.for_flow(flow))
            yield loaded, yellow, list({self._wire_of[s.name][1].device:
                                        self._wire_of[s.name][1] for s in services}.values())
        finally:
            for stream in (*loaded.values(), *yellow.values()):
                stream.free()

    @contextmanager
    def _measurer(self, services: tuple[Service, ...],
                  procedure: str) -> Iterator[EngineServiceMeasurer]:
        with self._streams(services) as (loaded, yellow, rx):
            bursts = {s.name: (s.cbs_bytes or 0) + (s.ebs_bytes or 0) or None for s in services}
            yield EngineServiceMeasurer(self.engine, loaded, rx, self.mark.drain_s, bursts,
                                        yellow, {s.name: s.cir_bps for s in services},
                                        dut=self._dut(procedure))

    def _dut(self, procedure: str) -> DutTrials:
        return DutTrials(self.hooks, test=self.test, procedure=procedure)

    def _traffic(self, services: tuple[Service, ...]) -> dict[str, Any]:
        wires = dict.fromkeys(f"{self.ports.name_of(tx)}->{self.ports.name_of(rx)}"
                              for tx, rx in (self._wire_of[s.name] for s in services))
        return {"wire": " + ".join(wires), "direction": self.mark.direction,
                "layer": "l2", "layer_text": "frame bytes with FCS (Y.1564 IR and CIR)",
                "drain_s": self.mark.drain_s}

    def sct(self, service: str | Service | None = None) -> SctResult | tuple[SctResult, ...]:
        """The service configuration test of `service` (a name), or of each service in
        turn when None (then a tuple)."""
        if service is None:
            return tuple(self._sct(s) for s in self.services)
        chosen = (service,) if isinstance(service, Service) else self._named(service)
        results = tuple(self._sct(s) for s in chosen)
        return results[0] if len(results) == 1 else results

    def _sct(self, service: Service) -> SctResult:
        m = self.mark
        steps = len(m.steps) + int(m.eir_step and service.eir_bps > 0) + int(m.policing) \
            if isinstance(m.steps, (list, tuple)) else None
        progress.start(f"Y.1564 SCT {service.name}", test=self.test,
                       frame_size=service.frame_size, what="step", total=steps, exact=True,
                       trial_s=self.step_override_s or m.step_duration_s)
        count = 0

        def on_step(step: Any) -> None:
            nonlocal count
            count += 1
            sample = step.sample
            progress.report(event="trial", trial=count, name=step.name,
                            offered_bps=step.offered_bps,
                            loss_ratio=None if sample is None else sample.flr,
                            valid=sample is not None, passed=step.passed,
                            note=None if sample is not None else step.reason)

        with self._measurer((service,), "y1564_sct") as measurer:
            result = service_configuration_test(
                measurer, service, steps=m.steps,
                settings=TrialSettings(duration_s=self.step_override_s or m.step_duration_s,
                                       retries=m.retries),
                eir_step=m.eir_step, policing=m.policing,
                policing_overshoot=m.policing_overshoot, ir_tolerance=m.ir_tolerance,
                on_step=on_step)
        record_measurement("y1564_sct", {**result.as_dict(),
                                         "traffic": self._traffic((service,))})
        return result

    def bursts(self, service: str | Service | None = None
               ) -> BurstResult | tuple[BurstResult, ...]:
        """The CBS (and EBS) burst tests of `service` (a name), or of each service with a
        CBS in turn when None (then a tuple)."""
        if service is None:
            return tuple(self._bursts(s) for s in self.services if s.cbs_bytes > 0)
        chosen = (service,) if isinstance(service, Service) else self._named(service)
        results = tuple(self._bursts(s) for s in chosen)
        return results[0] if len(results) == 1 else results

    def _bursts(self, service: Service) -> BurstResult:
        m = self.mark
        tests = 2 if service.ebs_bytes > 0 and service.eir_bps > 0 else 1
        progress.start(f"Y.1564 bursts {service.name}", test=self.test,
                       frame_size=service.frame_size, what="burst",
                       total=tests * len(m.burst_sizes), exact=True)
        count = 0

        def on_step(step: Any) -> None:
            nonlocal count
            count += 1
            sample = step.sample
            progress.report(event="trial", trial=count, name=step.name,
                            loss_ratio=None if sample is None or not sample.tx_frames
                            else 1 - sample.rx_frames / sample.tx_frames,
                            valid=sample is not None, passed=step.passed,
                            note=None if sample is not None else step.reason)

        with self._streams((service,)) as (loaded, _yellow, rx):
            measurer = EngineBurstMeasurer(self.engine, loaded, rx, m.drain_s,
                                           dut=self._dut("y1564_burst"))
            result = burst_test(measurer, service,
                                line_rate_bps=self.ports.topology.line_rate_bps,
                                shares=m.burst_sizes, idle_s=m.burst_idle_s,
                                tolerance_frames=m.burst_tolerance,
                                settings=TrialSettings(retries=m.retries), on_step=on_step)
        record_measurement("y1564_bursts", {**result.as_dict(),
                                            "traffic": self._traffic((service,))})
        return result

    def spt(self, duration: Any = None, *, checkpoint: Path | str | None = None,
            resume: bool | None = None) -> SptResult:
        """The service performance test: every service at its CIR at once for `duration`
        (default: the marker's spt_duration, 15 min), in intervals of `interval`.
        `checkpoint`: the interval file (default: under the report directory when the
        marker's checkpoint is on); `resume` (default: when that file exists) continues
        a run a crash cut short."""
        from ..units import run_seconds

        m = self.mark
        seconds = m.spt_duration_s if duration is None else run_seconds(duration,
                                                                         what="duration")
        path = Path(checkpoint) if checkpoint is not None else (
            checkpoint_path(self.checkpoint_dir, self.test)
            if m.checkpoint and self.checkpoint_dir is not None else None)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        again = bool(path is not None and path.exists()) if resume is None else resume
        on_interval = self._spt_progress(seconds)
        with self._measurer(self.services, "y1564_spt") as measurer:
            try:
                result = service_performance_test(
                    measurer, self.services, duration_s=seconds, interval_s=m.interval_s,
                    availability_threshold=m.availability_threshold,
                    availability_n=m.availability_n, checkpoint=path, resume=again,
                    fdv_quantile=m.fdv_quantile, checkpoint_every_s=m.checkpoint_every_s,
                    on_interval=on_interval)
            finally:
                self.spt_intervals = list(measurer.intervals)
        merged = merge_attributions(measurer.attributions)
        whole = {} if merged is None else {"loss_attribution": merged.as_dict()}
        record_measurement("y1564_spt", {**result.as_dict(),
                                         "traffic": self._traffic(self.services), **whole,
                                         "checkpoint": None if path is None else str(path),
                                         "resumed": again})
        if path is not None and checkpoint is None:
            path.unlink(missing_ok=True)  # done: the result is in the record
            with contextlib.suppress(OSError):
                path.parent.rmdir()  # when no other test's checkpoint is there
        return result

    def _spt_progress(self, seconds: float) -> Callable[[int, Mapping[str, Any]], None]:
        """The performance test's ``on_interval``: interval k of n and each service's
        availability so far (of the intervals this run measured) to the progress line."""
        m = self.mark
        total = max(1, round(seconds / m.interval_s))
        progress.start("Y.1564 SPT", test=self.test, what="interval", total=total, exact=True,
                       trial_s=m.interval_s)
        trackers = {s.name: AvailabilityTracker(m.availability_threshold, m.availability_n)
                    for s in self.services}

        def on_interval(index: int, samples: Mapping[str, Any]) -> None:
            for name, tracker in trackers.items():
                sample = samples.get(name)
                tracker.add(None if sample is None or not sample.valid else sample.flr)
            if progress.active():
                progress.report(event="interval", interval=index + 1, total=total,
                                availability={n: t.ratio_so_far for n, t in trackers.items()})

        return on_interval

    def run(self, spt_duration: Any = None) -> Y1564Result:
        """Each service's configuration test (and, with the marker's `bursts=True`, the
        burst tests of each service with a CBS), then the performance test of all of them
        (run also when a configuration test failed, so the report has all)."""
        sct = self.sct()
        assert isinstance(sct, tuple)
        bursts = self.bursts() if self.mark.bursts else ()
        assert isinstance(bursts, tuple)
        return Y1564Result(sct, self.spt(spt_duration), bursts)

    def describe(self) -> str:
        return "; ".join(f"{s.name}: CIR {fmt.bitrate(s.cir_bps)}" for s in self.services)
