"""RFC 2544 procedures bound to the engine: real trials on wired ports.

`Rfc2544Runner` is what the `rfc2544` fixture gives a test: each procedure makes
its traffic into lanes on the marker's wire (and its reverse with direction='both';
bench/lanes.py) and runs the pure procedure of rfc2544/ over an `EngineMeasurer`
(bench/measurer.py, re-exported here).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from .. import format as fmt
from ..engine.client import Engine, Tx
from ..errors import InvalidTrial, NetloadConfigError
from ..measure.recording import record_measurement
from ..rfc2544 import (
    FrameSize,
    FrameSizeThroughput,
    ThroughputResult,
    TrialSettings,
    binary_search,
    check_frame_sizes,
    frame_size_label,
)
from ..rfc2544.back_to_back import BackToBackResult, back_to_back
from ..rfc2544.frame_loss import FrameLossResult, frame_loss_sweep
from ..rfc2544.latency import LatencyProcedureResult, latency_trials
from ..rfc2544.latency_at import LatencyAt, check_latency_at, latency_at_loads, latency_base
from ..rfc2544.lower_bound import SearchMax
from ..rfc2544.mlr import LossGoal, MlrResult, check_goals, mlr_search
from ..rfc2544.recovery import (
    RecoveryResult,
    ResetResult,
    ResetTrial,
    check_hook,
    system_recovery,
)
from ..rfc2544.summary import check_trials
from ..rfc2544.throughput import require_valid, valid_trial
from ..search.resolution import DEFAULT_RESOLUTION, Resolution
from ..search.trial import FunctionMeasurer
from ..traffic.mix import Mix
from ..traffic.streams import UdpSpec
from ..units import as_rate, frame_bits, run_seconds
from . import progress
from .expected import FrameTally
from .harness import WiredPorts
from .lanes import (
    load_lanes,
    plan_wires,
)
from .measurer import (
    CALIBRATION_S,
    CALIBRATION_SHARE,
    IN_FLIGHT_SLACK_FRAMES,
    Calibration,
    EngineMeasurer,
)
from .settings import Rfc2544Mark, time_budget_seconds
from .validity import BurstLimit, trial_seconds

__all__ = ["BACK_TO_BACK_BURST_S", "BACK_TO_BACK_REPETITIONS", "CALIBRATION_S",
           "CALIBRATION_SHARE", "IN_FLIGHT_SLACK_FRAMES", "LATENCY_DURATION_S", "LATENCY_TRIALS",
           "RECOVERY_OVERLOAD_S", "RECOVERY_RELIEF_S", "Calibration", "EngineMeasurer",
           "Rfc2544Runner", "send_learning_frames"]

# RFC 2544 defaults of the procedures' durations and repetitions
LATENCY_TRIALS = 20          # §26.2: at least 20
LATENCY_DURATION_S = 120.0   # §26.2: at least 120 s
BACK_TO_BACK_REPETITIONS = 50  # §26.4: at least 50
BACK_TO_BACK_BURST_S = 2.0   # the longest burst tried, as time at the maximum rate
RECOVERY_OVERLOAD_S = 60.0   # §26.5: at least 60 s at 110 % of throughput
RECOVERY_RELIEF_S = 30.0
LATENCY_STEP_DOWNS = 3       # 5 % steps below a throughput the generator cannot hold,
LATENCY_HALVINGS = 3         # then halvings (a generator that lost its CPU since the search)


def send_learning_frames(engine: Engine, ports: WiredPorts, wire: int, frames: int) -> None:
    """RFC 2544 §23: `frames` frames in each direction of wire `wire` before any trial, so
    the DUT learns addresses (bridges) and resolves neighbours (routers)."""
    tx, rx = ports.wire(wire)
    directions = [(tx, rx)] + [w for w in ports.pairs if w == (rx, tx)]
    for a, b in directions:
        stream = engine.load(a, UdpSpec(name="learning").for_flow(ports.flow(a, b)))
        try:
            engine.run([Tx(stream, frames)], [b], drain_s=0.2)
        finally:
            stream.free()


def _whole(count: Any, per: int = 1) -> int | None:
    """`count` (a procedure's repetitions) times `per`, for the progress line; None when
    it is no whole number >= 1 (the procedure names that error itself)."""
    ok = isinstance(count, int) and not isinstance(count, bool) and count >= 1
    return count * per if ok else None


class Rfc2544Runner:
    """RFC 2544 procedures on the test's ports, with its marker's settings.

    Every procedure takes the marker's frame sizes (or the test's one
    parametrised `frame_size`), sends learning frames first (§23), and
    records its result, every trial included, for the reports.
    """

    def __init__(self, engine: Engine, ports: WiredPorts, mark: Rfc2544Mark, *,
                 duration_override_s: float | None = None, frame_size: FrameSize | None = None,
                 test: str = "", calibration: Calibration | None = None,
                 hooks: Any = None, reset_hook: Callable[[], Callable[[], Any]] | None = None,
                 burst_limit: BurstLimit | None = None) -> None:
        self.engine = engine
        self.burst_limit = burst_limit
        """The DUT's declared policer or shaper: EngineMeasurer.burst_limit."""
        self.hooks = hooks
        """The DUT's side of every trial (bench/dut_trial.TrialHooks); None: none."""
        self.reset_hook = reset_hook
        """Gives the reset callable reset() uses when it is given none (the DUT hooks')."""
        self.ports = ports
        self.mark = mark
        self.duration_override_s = duration_override_s
        self.frame_size = frame_size
        self.test = test
        self.calibration = calibration or Calibration()
        self._learned = False
        self._traffic: dict[str, Any] = {}  # the last procedure's: direction, wires, streams
        self.frames: list[Any] = []
        """Expected frames (``expect=``): each procedure's `FrameCheck`s, merged over its
        trials, for `assert_frames_match(rfc2544.frames)`."""

    @property
    def trial_duration_s(self) -> float:
        return self.duration_override_s or self.mark.trial_duration_s

    def _duration(self, given: Any, rfc_default_s: float) -> float:
        """A procedure's trial duration: the option's override, else the call's, else the
        marker's trial_duration when it was set, else the RFC's default."""
        if self.duration_override_s:
            return self.duration_override_s
        if given is not None:
            return trial_seconds(given, what="duration")
        return self.mark.trial_duration_s if self.mark.trial_duration_set else rfc_default_s

    def _sizes(self, frame_sizes: Any) -> tuple[FrameSize, ...]:
        """The sizes to measure, each checked against the ports' MTU before any traffic."""
        if frame_sizes is not None:
            sizes = check_frame_sizes(frame_sizes)
        elif self.frame_size is not None:
            sizes = (self.frame_size,)
        else:
            sizes = self.mark.frame_sizes
        tx, rx = self.ports.wire(self.mark.wire)
        mtu = min(int(p.info.get("mtu") or 0) or 1 << 16 for p in (tx, rx))
        for size in sizes:
            largest = 1518 if isinstance(size, str) else size
            if largest - 18 > mtu:  # 14-byte header and 4-byte FCS around the L3 packet
                raise NetloadConfigError(
                    f"frame size {frame_size_label(size)} carries {largest - 18} bytes above "
                    f"L2, more than the ports' MTU {mtu}; drop it from frame_sizes or raise "
                    "the MTU of the ports and the DUT")
        return sizes

    def _search_max(self, measurer: EngineMeasurer, mean_size: float) -> SearchMax:
        """The procedures' maximum load and where it came from: the marker's max_rate,
        else the topology's line rate, else CALIBRATION_SHARE of the generator's
        calibrated ceiling (which the result keeps, so a throughput the generator bounded
        reads as the lower bound it is)."""
        line = self.ports.topology.line_rate_bps
        if self.mark.max_rate is not None:
            return SearchMax(self.mark.max_rate.pps(mean_size, line_rate_bps=line), "max_rate")
        if line:
            return SearchMax(line / frame_bits(mean_size, "l1"), "line_rate")
        ceiling = self.calibration.generator_max_pps(measurer)
        return SearchMax(ceiling * CALIBRATION_SHARE, "generator", ceiling)

    def _max_pps(self, measurer: EngineMeasurer, mean_size: float) -> float:
        return self._search_max(measurer, mean_size).pps

    def learn(self) -> None:
        """RFC 2544 §23: learning frames before any trial (`send_learning_frames`)."""
        if self._learned or self.mark.learning_frames == 0:
            return
        send_learning_frames(self.engine, self.ports, self.mark.wire, self.mark.learning_frames)
        self._learned = True

    def _mix(self, stream: Any) -> tuple[Mix, str | None]:
        """A procedure's traffic and its streams' name (Rfc2544Mark.mix_for)."""
        return self.mark.mix_for(stream)

    @contextmanager
    def _measurer(self, size: FrameSize, stream: Any = None, procedure: str = "trial",
                  expect: Any = None) -> Iterator[EngineMeasurer]:
        """A measurer for one frame size: the procedure's traffic on the marker's wire
        (and its reverse with direction='both'); its streams are freed after. With
        `expect` (default: the marker's), every trial compares the received frames;
        the procedure's checks, merged over its trials, are recorded and kept in
        `frames` (mismatches do not fail the procedure: assert_frames_match does)."""
        mix, name = self._mix(stream)
        wires = plan_wires(self.ports, self.mark.wire, self.mark.direction)
        self.learn()
        with load_lanes(self.engine, self.ports, wires, mix, size,
                        name=None if name is None else f"{name}-{size}",
                        expect=self.mark.expect if expect is None else expect) as plan:
            self._traffic = plan.record
            measurer = EngineMeasurer(self.engine, plan.lanes[0].stream, plan.rx, size,
                                      self.mark.drain_s, warmup_s=self.mark.warmup_s,
                                      steady_state=self.mark.steady_state,
                                      loss_tolerance=self.mark.loss_tolerance,
                                      lanes=plan.lanes, directions=plan.directions,
                                      hooks=self.hooks, procedure=procedure, test=self.test,
                                      burst_limit=self.burst_limit, frames=FrameTally(plan.rules))
            yield measurer
        measurer.frames.done(self.frames, procedure=procedure, frame_size=frame_size_label(size))

    def _record(self, kind: str, record: dict[str, Any]) -> None:
        """A procedure's record, with the traffic its trials sent ("traffic")."""
        record_measurement(kind, {**record, "traffic": self._traffic} if self._traffic
                           else record)

    def _settings(self, size: FrameSize, measurer: EngineMeasurer, procedure: str,
                  duration_s: float | None = None) -> TrialSettings:
        """The trials' common settings of one procedure at one frame size: the marker's
        retries, the topology's line rate (none without ports), the progress report of
        every try."""
        line = None if self.ports is None else self.ports.topology.line_rate_bps
        return TrialSettings(duration_s=duration_s, retries=self.mark.retries,
                             frame_size=size, mean_frame_size=measurer.mean_frame_size,
                             line_rate_bps=line, on_trial=self._progress(procedure, size))

    def _progress(self, procedure: str, size: FrameSize) -> Callable[[Any], None]:
        """The procedure's ``on_trial``: each trial, as it ends, to the progress line."""
        count = 0
        tolerance = self.mark.loss_tolerance

        def on_trial(t: Any) -> None:
            nonlocal count
            count += 1
            progress.report(event="trial", test=self.test, frame_size=size,
                            procedure=procedure, trial=count,
                            **progress.trial_fields(t, tolerance))

        return on_trial

    def _plan(self, procedure: str, size: FrameSize, **plan: Any) -> None:
        """What the procedure about to run will do (progress.start): its trials and
        their duration, for the progress line's n of N and ETA."""
        progress.start(procedure, test=self.test, frame_size=size, **plan)

    def throughput(self, frame_sizes: Any = None, *, stream: Any = None,
                   latency_at: Any = None, expect: Any = None) -> ThroughputResult:
        """RFC 2544 §26.1 throughput per frame size: by binary search (the RFC's method),
        or, with the marker's search='mlrsearch', the NDR of an MLRsearch (RFC 9971).
        `stream`: the traffic (default: the marker's `stream`, else UDP); the load is per
        direction. `latency_at` (default: the marker's): then one latency trial at each
        of these fractions of the throughput, e.g. [0.1, 0.5, 0.9, 1.0], or 'csit' (0, 10,
        50 and 90 % of the PDR; rfc2544/latency_at.py), in the result's `latency_at`."""
        at = self.mark.latency_at if latency_at is None else check_latency_at(latency_at)
        out: list[FrameSizeThroughput] = []
        for size in self._sizes(frame_sizes):
            if self.mark.search == "mlrsearch":
                tp = self._mlr_throughput(self.ndr_pdr([size], stream=stream,
                                                      expect=expect)[0])
                if at is not None:
                    with self._measurer(size, stream, "latency_at", expect) as m:
                        tp = self._with_latency_at(tp, at, m)
                self._record("throughput", tp.as_dict())
                out.append(tp)
                continue
            with self._measurer(size, stream, "throughput", expect) as measurer:
                top = self._search_max(measurer, measurer.mean_frame_size)
                ratio, pps = self.mark.resolution_ratio, self.mark.resolution_pps(
                    measurer.mean_frame_size, self.ports.topology.line_rate_bps)
                self._plan("throughput", size, total=self.mark.max_trials,
                           trial_s=self.trial_duration_s, max_pps=top.pps,
                           resolution=DEFAULT_RESOLUTION if ratio is None and pps is None
                           else Resolution(ratio, pps))
                result = binary_search(
                    measurer, top.pps,
                    settings=self._settings(size, measurer, "throughput",
                                            self.trial_duration_s),
                    loss_tolerance=self.mark.loss_tolerance,
                    resolution_ratio=self.mark.resolution_ratio,
                    resolution_pps=self.mark.resolution_pps(
                        measurer.mean_frame_size, self.ports.topology.line_rate_bps),
                    max_trials=self.mark.max_trials, **top.source_args)
                if at is not None:
                    result = self._with_latency_at(result, at, measurer)
            self._record("throughput", result.as_dict())
            out.append(result)
        return ThroughputResult(tuple(out))

    def _with_latency_at(self, tp: FrameSizeThroughput, at: LatencyAt,
                         m: EngineMeasurer) -> FrameSizeThroughput:
        """`tp` with the latency at `at`'s fractions of its throughput (or PDR), one trial
        each of the search's final trial duration. When the throughput is the generator's
        own ceiling, a load it cannot offer again steps down 5 % at a time (at most
        LATENCY_STEP_DOWNS times), as latency() does, and the record says so."""
        of, base = latency_base(at, tp.throughput_pps, tp.goals)
        self._plan("latency at loads", tp.frame_size, total=len(at.fractions),
                   trial_s=tp.duration_s)
        loads = latency_at_loads(
            m, base, at.fractions, of=of, preset=at.preset,
            settings=self._settings(tp.frame_size, m, "latency at loads", tp.duration_s),
            step_down=(0.95,) * LATENCY_STEP_DOWNS if tp.lower_bound_by_generator else ())
        return replace(tp, latency_at=loads)

    def _goals(self, goals: Any) -> tuple[LossGoal, ...]:
        """The loss goals, with the duration override applied to their trials."""
        chosen = check_goals(self.mark.goals if goals is None else goals)
        override = self.duration_override_s
        if override is None and self.mark.trial_duration_set:
            override = self.mark.trial_duration_s
        if override is None:
            return chosen
        return tuple(replace(g, final_trial_duration_s=override,
                             duration_sum_s=override * g.duration_sum_s / g.final_trial_duration_s,
                             initial_trial_duration_s=min(g.initial_trial_duration_s, override))
                     for g in chosen)

    def ndr_pdr(self, frame_sizes: Any = None, *, goals: Any = None,
                time_budget: Any = None, stream: Any = None,
                expect: Any = None) -> list[MlrResult]:
        """NDR/PDR (and any loss goals) by MLRsearch, RFC 9971. `goals` is a preset name
        ('rfc2544-strict', 'etsi-tst009', 'ci-fast') or LossGoal tuples; default: the
        marker's. Every trial is kept for the audit log."""
        out = []
        budget = self.mark.time_budget_s if time_budget is None else \
            time_budget_seconds(time_budget)
        chosen = self._goals(goals)
        for size in self._sizes(frame_sizes):
            with self._measurer(size, stream, "mlrsearch", expect) as m:
                top = self._search_max(m, m.mean_frame_size)
                self._plan("mlrsearch", size, budget_s=budget)
                result = mlr_search(
                    m, min_pps=top.pps / 1000, max_pps=top.pps, goals=chosen,
                    settings=self._settings(size, m, "mlrsearch"), time_budget_s=budget,
                    **top.source_args)
            self._record("mlrsearch", result.as_dict())
            out.append(result)
        return out

    def _mlr_throughput(self, result: MlrResult) -> FrameSizeThroughput:
        """The first (strictest) goal's lower bound as §26.1 throughput (not recorded:
        throughput() records it, with its latency at loads)."""
        goal = result.goals[0]
        tp = FrameSizeThroughput(
            replace(result.settings, duration_s=goal.goal.final_trial_duration_s),
            goal.lower_bound_pps or 0.0, goal.upper_bound_pps, result.max_pps, result.trials,
            goal.loss_ratio, generator_ceiling_pps=result.generator_ceiling_pps, method="mlrsearch",
            goals=result.goals, max_source=result.max_source,
            generator_max_pps=result.generator_max_pps)
        return tp

    def _throughput(self, size: FrameSize, measurer: EngineMeasurer, given: Any,
                    stream: Any = None) -> tuple[float, bool | None]:
        """The load the later procedures start from: given (a Rate, a pps number or a
        throughput result), else measured now by the marker's search; and whether that
        throughput is only a lower bound the generator set (None: a rate was given)."""
        if given is None:
            measured = self.throughput([size], stream=stream)[size]
            return measured.throughput_pps, measured.lower_bound_by_generator
        if hasattr(given, "__getitem__") and hasattr(given, "frame_sizes"):
            at = given[size]
            return float(at.throughput_pps), bool(getattr(at, "lower_bound_by_generator", False))
        if isinstance(given, (int, float)) and not isinstance(given, bool):
            return float(given), None
        return as_rate(given, what="throughput").pps(
            measurer.mean_frame_size, line_rate_bps=self.ports.topology.line_rate_bps), None

    def _throughput_pps(self, size: FrameSize, measurer: EngineMeasurer,
                        given: Any, stream: Any = None) -> float:
        return self._throughput(size, measurer, given, stream)[0]

    def latency(self, frame_sizes: Any = None, *, throughput: Any = None,
                trials: int = LATENCY_TRIALS, duration: Any = None,
                stream: Any = None, expect: Any = None) -> list[LatencyProcedureResult]:
        """RFC 2544 §26.2: `trials` latency trials per frame size at its throughput rate
        (measured first unless `throughput` gives it)."""
        out = []
        for size in self._sizes(frame_sizes):
            with self._measurer(size, stream, "latency", expect) as m:
                load, bounded = self._throughput(size, m, throughput, stream)
                if load <= 0:
                    raise NetloadConfigError(
                        f"latency at {frame_size_label(size)}: the throughput is 0 pps, so "
                        "there is no rate to measure latency at")
                seconds = self._duration(duration, LATENCY_DURATION_S)
                result = self._latency_at(m, load, size, seconds, trials)
            self._record("latency_rfc2544", {
                **result.as_dict(), "throughput_pps": load,
                **({} if bounded is None else {"throughput_lower_bound_by_generator": bounded})})
            out.append(result)
        return out

    def _latency_at(self, m: EngineMeasurer, load: float, size: FrameSize, seconds: float,
                    trials: int) -> LatencyProcedureResult:
        """Latency trials at the throughput rate. When that rate is the generator's own
        ceiling (a throughput no DUT loss bounded) and the generator cannot hold it for
        a single valid trial, step down by 5 % (at most 3 times), then halve (at most 3
        times: a generator that held the rate in the search may have lost its CPU since):
        latency is then measured at the highest rate the generator sustains, and the
        result says so."""
        steps = [0.95] * LATENCY_STEP_DOWNS + [0.5] * LATENCY_HALVINGS
        for attempt in range(len(steps) + 1):
            self._plan("latency", size, total=_whole(trials), exact=True, trial_s=seconds)
            try:
                return latency_trials(m, load, settings=self._settings(size, m, "latency",
                                                                       seconds),
                                      trials=trials)
            except InvalidTrial:
                if attempt == len(steps):
                    raise
                load *= steps[attempt]
                progress.report(test=self.test, frame_size=size, procedure="latency",
                                note=f"the generator cannot hold the throughput rate: "
                                     f"stepping down to {fmt.rate_pps_exact(load)}")
        raise AssertionError("unreachable")

    def frame_loss(self, frame_sizes: Any = None, *, step: float = 0.1,
                   duration: Any = None, stream: Any = None,
                   expect: Any = None) -> list[FrameLossResult]:
        """RFC 2544 §26.3: loss at 100 %, 90 %, ... of the maximum load until two
        successive loads lose nothing."""
        out = []
        for size in self._sizes(frame_sizes):
            with self._measurer(size, stream, "frame_loss", expect) as m:
                top = self._search_max(m, m.mean_frame_size)
                seconds = self._duration(duration, self.mark.trial_duration_s)
                self._plan("frame loss", size, total=math.ceil(1 / step - 1e-9)
                           if isinstance(step, float) and 0 < step <= 0.5 else None,
                           trial_s=seconds)
                result = frame_loss_sweep(m, top.pps,
                                          settings=self._settings(size, m, "frame loss",
                                                                  seconds),
                                          step=step, **top.source_args)
            self._record("frame_loss", result.as_dict())
            out.append(result)
        return out

    def back_to_back(self, frame_sizes: Any = None, *,
                     repetitions: int = BACK_TO_BACK_REPETITIONS,
                     burst: Any = BACK_TO_BACK_BURST_S,
                     stream: Any = None, expect: Any = None) -> list[BackToBackResult]:
        """RFC 2544 §26.4: the longest loss-free burst at the maximum rate, `repetitions`
        times; bursts up to `burst` long (as time at that rate)."""
        out = []
        burst_s = run_seconds(burst, what="burst")
        for size in self._sizes(frame_sizes):
            with self._measurer(size, stream, "back_to_back", expect) as m:
                # back to back: the generator's full rate, not the search's 95 % of it
                top = self._search_max(m, m.mean_frame_size)
                rate = top.generator_max_pps or top.pps
                max_frames = max(1, int(rate * burst_s))
                self._plan("back-to-back", size,
                           total=_whole(repetitions, 2 + math.ceil(math.log2(max(max_frames, 2)))))
                result = back_to_back(m.bursts(rate), rate_pps=rate, max_frames=max_frames,
                                      settings=self._settings(size, m, "back-to-back"),
                                      repetitions=repetitions)
            self._record("back_to_back", result.as_dict())
            out.append(result)
        return out

    def recovery(self, frame_sizes: Any = None, *, throughput: Any = None,
                 overload: Any = None, relief: Any = None,
                 repetitions: int = 1, stream: Any = None,
                 expect: Any = None) -> list[RecoveryResult]:
        """RFC 2544 §26.5: overload at 110 % of throughput, then 50 %; the time from the
        rate drop to the last loss."""
        out = []
        overload_s = self._duration(overload, RECOVERY_OVERLOAD_S)
        relief_s = self._duration(relief, RECOVERY_RELIEF_S)
        for size in self._sizes(frame_sizes):
            with self._measurer(size, stream, "recovery", expect) as m:
                tput, bounded = self._throughput(size, m, throughput, stream)
                max_pps = self._max_pps(m, m.mean_frame_size)
                self._plan("recovery", size, total=_whole(repetitions), exact=True,
                           trial_s=overload_s + relief_s)
                result = system_recovery(
                    FunctionMeasurer(m.recovery), throughput_pps=tput,
                    max_pps=max(max_pps, tput), overload_s=overload_s, relief_s=relief_s,
                    settings=self._settings(size, m, "recovery"), repetitions=repetitions)
            self._record("recovery", {
                **result.as_dict(),
                **({} if bounded is None else {"throughput_lower_bound_by_generator": bounded})})
            out.append(result)
        return out

    def reset(self, hook: Callable[[], Any] | None = None, frame_sizes: Any = None, *,
              load: Any = None,
              at: Any = "2s", duration: Any = "10s", repetitions: int = 1,
              stream: Any = None, expect: Any = None) -> list[ResetResult]:
        """RFC 2544 §26.6: steady traffic while `hook()` resets the DUT `at` into the run
        (no `hook`: the DUT's pytest_netload_dut_reset hook, docs/hooks.md); the reset time is the longest silence at the receiver. `load` defaults to 50 % of
        the maximum (a rate every DUT forwards before and after its reset)."""
        if hook is None and self.reset_hook is not None:
            hook = self.reset_hook()  # the DUT hooks' reset (pytest_netload_dut_reset)
        check_hook(hook)
        at_s = run_seconds(at, what="at", zero_ok=True)
        seconds = trial_seconds(duration, what="duration")
        if not 0 <= at_s < seconds:
            raise NetloadConfigError(f"at={at!r}: the reset must come inside the run "
                                     f"(0 <= at < duration={duration!r})")
        out = []
        for size in self._sizes(frame_sizes):
            with self._measurer(size, stream, "reset", expect) as m:
                pps = 0.5 * self._max_pps(m, m.mean_frame_size) if load is None else \
                    self._throughput_pps(size, m, load, stream)
                trials: list[ResetTrial] = []
                self._plan("reset", size, total=_whole(repetitions), exact=True,
                           trial_s=seconds)
                note = self._progress("reset", size)
                for _ in range(check_trials(repetitions, "repetitions")):
                    valid_trial(lambda load, m=m: m.measure_reset(load, seconds, hook, at_s),
                                pps, self.mark.retries, trials, note)
                result = ResetResult(size, tuple(trials))
            self._record("reset", result.as_dict())  # the audit log, valid or not
            require_valid(trials, f"the reset procedure at {size}")
            out.append(result)
        return out
