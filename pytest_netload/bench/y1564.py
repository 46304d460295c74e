"""ITU-T Y.1564 on the engine: `Y1564Runner`, what the `y1564` fixture gives a test.

Each service sends its `stream=` (default: UDP with the service's DSCP, PCP in its VLAN
tag and UDP destination port) at its frame size on the marker's wire, loaded as RFC
2544's streams are (bench/lanes.py over a traffic.mix.Mix: one stream, or a weighted
mix's several, each carrying its share); a colour-aware service sends it twice, its green
streams (the load up to the CIR) and its yellow ones (the rest), marked with the
service's green and yellow DSCP or PCP and counted apart at RX. One call of
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

Expected frames (``expect=``, the marker's or a procedure's, bench/expected.py) are
compared in every run of every procedure, as RFC 2544's are: the checks of a
procedure (of one service for the configuration and burst tests) are recorded and kept
in `Y1564Runner.frames`; a mismatch fails no step (assert_frames_match does).
"""

from __future__ import annotations

import contextlib
import copy
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import format as fmt
from ..engine.client import Engine, Port
from ..errors import NetloadConfigError
from ..measure.dut import merge_attributions
from ..measure.recording import record_measurement
from ..search.settings import TrialSettings
from ..traffic.mix import Mix, as_mix
from ..traffic.streams import udp
from ..y1564 import (
    AvailabilityTracker,
    BurstResult,
    SctResult,
    Service,
    SptResult,
    burst_plan,
    burst_test,
    check_services,
    check_stream_directions,
    service_configuration_test,
    service_performance_test,
)
from . import progress
from .dut_trial import DutTrials, TrialHooks
from .expected import FrameTally, check_colour_expect, chosen_expect
from .harness import WiredPorts
from .lanes import Lane, load_lanes, plan_wires
from .runner import send_learning_frames
from .settings import Y1564_DRAIN_S, Y1564Mark
from .validity import BurstLimit
from .y1564_measurers import EngineBurstMeasurer, EngineServiceMeasurer

__all__ = ["Y1564_DRAIN_S", "EngineBurstMeasurer", "EngineServiceMeasurer", "Y1564Mark",
           "Y1564Result",
           "Y1564Runner", "checkpoint_path"]


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


def _step_progress() -> Callable[[Any], None]:
    """The `on_step` of a Y.1564 procedure (configuration steps, bursts): each step, as
    it ends, to the progress line as trial k, with its loss, or why it has no sample."""
    count = 0

    def on_step(step: Any) -> None:
        nonlocal count
        count += 1
        sample = step.sample
        progress.report(event="trial", trial=count, name=step.name,
                        offered_bps=getattr(step, "offered_bps", None),
                        loss_ratio=None if sample is None or not sample.tx_frames
                        else sample.lost / sample.tx_frames,
                        valid=sample is not None, passed=step.passed,
                        note=None if sample is not None else step.reason)

    return on_step


def _renamed(service: Service, name: str, wire: str, reverse: bool) -> Service:
    """`service` under another name on `wire` (one direction of it, with
    direction="both"; `reverse`: the reverse wire, whose frames are the reply to the
    service's stream, their L4 destination port its source port)."""
    out = copy.copy(service)
    object.__setattr__(out, "name", name)
    object.__setattr__(out, "wire", wire)
    if reverse and service.stream is not None:
        object.__setattr__(out, "dport", service.stream.marks(reverse=True).dport)
    return out


def _service_mix(service: Service, colour: str, index: int) -> Mix:
    """What `service` sends in `colour`: its stream marked with the colour's (and the
    service's) DSCP and PCP; without one, UDP built from its fields (source port
    1024 + `index`, so the services of a run differ)."""
    c = service.coloured(colour)
    if service.stream is None:
        return as_mix(udp(dscp=c.dscp or 0, pcp=c.pcp or 0, vlan=service.vlan,
                          dport=9 if service.dport is None else service.dport,
                          sport=1024 + index))
    return service.stream.marked(dscp=c.dscp, pcp=c.pcp,
                                 what=f"the stream of service {service.name!r}")


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
                 checkpoint_dir: Path | None = None, hooks: TrialHooks | None = None,
                 burst_limit: BurstLimit | None = None) -> None:
        self.engine = engine
        self.burst_limit = burst_limit
        """The DUT's declared policer or shaper: EngineServiceMeasurer.burst_limit."""
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
        check_stream_directions(services, mark.direction)
        wires = self._wires = plan_wires(ports, mark.wire, mark.direction)
        self._wire_of: dict[str, tuple[Port, Port]] = {}
        # each service: the index of its wire in `wires` and the marker's service it is
        self._dir_of: dict[str, tuple[int, str]] = {}
        self._given: dict[str, tuple[str, ...]] = {}  # a marker's service: its directions'
        out: list[Service] = []
        for s in services:
            for d, (tx, rx) in enumerate(wires):
                label = f"{ports.name_of(tx)}->{ports.name_of(rx)}"
                name = s.name if len(wires) == 1 else f"{s.name} {label}"
                out.append(s if name == s.name else _renamed(s, name, label, d > 0))
                self._wire_of[name] = (tx, rx)
                self._dir_of[name] = (d, s.name)
                self._given[s.name] = (*self._given.get(s.name, ()), name)
        self._described: list[dict[str, Any]] = []  # the streams the last procedure sent
        self.services = tuple(out)
        """The services tested: the marker's, or with direction="both" each of them in
        each direction."""
        self._learned = False
        self.frames: list[Any] = []
        """Expected frames (``expect=``): each procedure's `FrameCheck`s, for
        `assert_frames_match(y1564.frames)`."""
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
    def _streams(self, services: tuple[Service, ...], expect: Any, tally: FrameTally
                 ) -> Iterator[tuple[dict[str, Sequence[Lane]], dict[str, Sequence[Lane]],
                                     list[Port]]]:
        """Each service's lanes on its wire (its green ones when colour-aware), each
        colour-aware service's yellow lanes, and the receiving ports. A service's traffic
        is loaded as RFC 2544's is (bench/lanes.py over a traffic.mix.Mix): its stream on
        its wire, on the reverse wire the reply to it (or bidirectional()'s own); the
        rules of `expect` (default: the marker's) go into `tally`."""
        expect = chosen_expect(expect, self.mark.expect)
        for s in services:
            if expect is not None and s.colour_aware:
                check_colour_expect(expect, s.name, s.colour)
        if not self._learned and self.mark.learning_frames:
            send_learning_frames(self.engine, self.ports, self.mark.wire,
                                 self.mark.learning_frames)
            self._learned = True
        green: dict[str, Sequence[Lane]] = {}
        yellow: dict[str, Sequence[Lane]] = {}
        described: list[dict[str, Any]] = []
        with ExitStack() as loaded:
            for i, s in enumerate(services):
                if s.name not in self._dir_of:
                    self.service(s.name)  # NetloadConfigError naming the marker's services
                d, given = self._dir_of[s.name]
                for colour, into in (("green", green), ("yellow", yellow)):
                    if colour == "yellow" and not s.colour_aware:
                        continue
                    plan = loaded.enter_context(load_lanes(
                        self.engine, self.ports, self._wires, _service_mix(s, colour, i),
                        s.frame_size, only=(d,), expect=expect,
                        name=given if colour == "green" else f"{given}/yellow"))
                    tally.rules.update(plan.rules)
                    into[s.name] = plan.lanes
                    described += [{"service": s.name, "colour": colour, **x}
                                  for x in plan.record["streams"]]
            self._described = described
            yield green, yellow, list({self._wire_of[s.name][1].device:
                                       self._wire_of[s.name][1] for s in services}.values())

    @contextmanager
    def _measurer(self, services: tuple[Service, ...], procedure: str,
                  expect: Any = None) -> Iterator[EngineServiceMeasurer]:
        """The services' measurer; its expected-frame checks recorded after."""
        tally = FrameTally()
        with self._streams(services, expect, tally) as (loaded, yellow, rx):
            bursts = {s.name: (s.cbs_bytes or 0) + (s.ebs_bytes or 0) or None for s in services}
            yield EngineServiceMeasurer(self.engine, loaded, rx, self.mark.drain_s, bursts,
                                        yellow, {s.name: s.cir_bps for s in services},
                                        dut=self._dut(procedure),
                                        colours={s.name: (s.colour, s.green, s.yellow)
                                                 for s in services if s.colour_aware},
                                        tally=tally, burst_limit=self.burst_limit)
        tally.done(self.frames, procedure=procedure)

    def _dut(self, procedure: str) -> DutTrials:
        return DutTrials(self.hooks, test=self.test, procedure=procedure)

    def _traffic(self, services: tuple[Service, ...]) -> dict[str, Any]:
        wires = dict.fromkeys(f"{self.ports.name_of(tx)}->{self.ports.name_of(rx)}"
                              for tx, rx in (self._wire_of[s.name] for s in services))
        return {"wire": " + ".join(wires), "direction": self.mark.direction,
                "layer": "l2", "layer_text": "frame bytes with FCS (Y.1564 IR and CIR)",
                "drain_s": self.mark.drain_s,
                "streams": [x for x in self._described
                            if x["service"] in {s.name for s in services}]}

    def sct(self, service: str | Service | None = None, *,
            expect: Any = None) -> SctResult | tuple[SctResult, ...]:
        """The service configuration test of `service` (a name), or of each service in
        turn when None (then a tuple). `expect` (default: the marker's): the frames
        every step's run compares (docs/expect.md)."""
        if service is None:
            return tuple(self._sct(s, expect) for s in self.services)
        chosen = (service,) if isinstance(service, Service) else self._named(service)
        results = tuple(self._sct(s, expect) for s in chosen)
        return results[0] if len(results) == 1 else results

    def _sct(self, service: Service, expect: Any = None) -> SctResult:
        m = self.mark
        steps = len(m.steps) + int(m.eir_step and service.eir_bps > 0) + int(m.policing) \
            if isinstance(m.steps, (list, tuple)) else None
        progress.start(f"Y.1564 SCT {service.name}", test=self.test,
                       frame_size=service.frame_size, what="step", total=steps, exact=True,
                       trial_s=self.step_override_s or m.step_duration_s)
        on_step = _step_progress()
        with self._measurer((service,), "y1564_sct", expect) as measurer:
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

    def bursts(self, service: str | Service | None = None, *,
               expect: Any = None) -> BurstResult | tuple[BurstResult, ...]:
        """The CBS (and EBS) burst tests of `service` (a name), or of each service with a
        CBS in turn when None (then a tuple); `expect` as sct()'s."""
        if service is None:
            return tuple(self._bursts(s, expect) for s in self.services if s.cbs_bytes > 0)
        chosen = (service,) if isinstance(service, Service) else self._named(service)
        results = tuple(self._bursts(s, expect) for s in chosen)
        return results[0] if len(results) == 1 else results

    def _bursts(self, service: Service, expect: Any = None) -> BurstResult:
        m = self.mark
        progress.start(f"Y.1564 bursts {service.name}", test=self.test,
                       frame_size=service.frame_size, what="burst",
                       total=len(burst_plan(service)) * len(m.burst_sizes), exact=True)
        on_step = _step_progress()
        tally = FrameTally()
        with self._streams((service,), expect, tally) as (loaded, _yellow, rx):
            measurer = EngineBurstMeasurer(self.engine, loaded, rx, m.drain_s,
                                           dut=self._dut("y1564_burst"), tally=tally)
            result = burst_test(measurer, service,
                                line_rate_bps=self.ports.topology.line_rate_bps,
                                shares=m.burst_sizes, idle_s=m.burst_idle_s,
                                tolerance_frames=m.burst_tolerance,
                                settings=TrialSettings(retries=m.retries), on_step=on_step)
        tally.done(self.frames, procedure="y1564_bursts")
        record_measurement("y1564_bursts", {**result.as_dict(),
                                            "traffic": self._traffic((service,))})
        return result

    def spt(self, duration: Any = None, *, checkpoint: Path | str | None = None,
            resume: bool | None = None, expect: Any = None) -> SptResult:
        """The service performance test: every service at its CIR at once for `duration`
        (default: the marker's spt_duration, 15 min), in intervals of `interval`.
        `checkpoint`: the interval file (default: under the report directory when the
        marker's checkpoint is on); `resume` (default: when that file exists) continues
        a run a crash cut short. `expect` as sct()'s."""
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
        with self._measurer(self.services, "y1564_spt", expect) as measurer:
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
        if measurer.colour_at_rx:  # the whole run's frames by the colour they came with
            whole["colour_at_rx"] = measurer.colour_at_rx
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

    def run(self, spt_duration: Any = None, *, expect: Any = None) -> Y1564Result:
        """Each service's configuration test (and, with the marker's `bursts=True`, the
        burst tests of each service with a CBS), then the performance test of all of them
        (run also when a configuration test failed, so the report has all); `expect` as
        sct()'s, for all of them."""
        sct = self.sct(expect=expect)
        assert isinstance(sct, tuple)
        bursts = self.bursts(expect=expect) if self.mark.bursts else ()
        assert isinstance(bursts, tuple)
        return Y1564Result(sct, self.spt(spt_duration, expect=expect), bursts)

    def describe(self) -> str:
        return "; ".join(f"{s.name}: CIR {fmt.bitrate(s.cir_bps)}" for s in self.services)
