"""One RFC 2544 trial on the engine: `EngineMeasurer` and the generator's calibration.

`EngineMeasurer` is the `Measurer` the pure procedures in rfc2544/ call: one trial
offers a CBR load for a duration (on every lane of a plan, bench/lanes.py: several
streams, on one wire or on both), stops, waits for the drain, reads the counters, and
judges whether the generator itself did its part. `Calibration` measures the
generator's own maximum once per session, port and frame size. The runner
(bench/runner.py) builds both for its procedures.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from .. import format as fmt
from ..engine.client import Engine, LoadedStream, Port, Tx
from ..errors import NetloadConfigError
from ..measure.recording import record_measurement
from ..rfc2544 import FrameSize, TrialResult
from ..rfc2544.recovery import RecoveryLoad, RecoveryTrial, ResetTrial
from ..traffic.patterns import CBR, MaxRate, Phase
from ..units import Rate
from . import progress
from .dut_trial import DutTrials, NoDutHooks, TrialContext, TrialHooks
from .expected import FrameTally
from .lanes import Lane, longest_gap_ns, recovery_of, require_loss_timing, reset_of, trial_counts
from .link import recover_links
from .validity import TX_TOLERANCE, BurstLimit, generator_failure, shared_late_reason

__all__ = ["CALIBRATION_S", "CALIBRATION_SHARE", "IN_FLIGHT_SLACK_FRAMES", "Bursts",
           "Calibration", "EngineMeasurer"]

CALIBRATION_S = 1.0        # the generator's own maximum is measured over this long
CALIBRATION_SHARE = 0.95   # paced sending costs more than unpaced: search from 95 % of it
IN_FLIGHT_SLACK_FRAMES = 32  # one TX burst: frames that may leave together at a trial's end


@dataclass
class EngineMeasurer:
    """Trials at a CBR load: of one loaded stream from `tx` to `rx`, or of every lane of
    a plan (bench/lanes.py: several streams, on one wire or on both), each lane paced
    at its share of the load, which is offered on each direction."""

    engine: Engine
    stream: LoadedStream
    rx: list[Port]
    frame_size: FrameSize
    drain_s: float = 2.0
    tx_tolerance: float = TX_TOLERANCE
    warmup_s: float = 0.0
    steady_state: str = "warn"
    loss_tolerance: float = 0.0  # the verdict's: sets how much generator lag a trial tolerates
    lanes: tuple[Lane, ...] = ()
    """Every stream of a trial with its share of its direction's load; empty: `stream`."""
    directions: tuple[str, ...] = ()
    """The wires ("tx->rx") the lanes load; with two or more, a trial's record has a
    breakdown per direction."""
    hooks: TrialHooks | None = None
    """The DUT's side of every trial (bench/dut_trial.py): its counters before and after,
    its health; None: the generator's counters only."""
    burst_limit: BurstLimit | None = None
    """What the DUT on the loaded wire takes of a burst before it drops, where it is
    declared (validity.BurstLimit.declared: a policer's CIR and CBS, or a shaper's rate
    and queue): a trial it failed after the generator's catch-up burst outgrew half of
    that is the generator's (validity.shared_late_reason); None: not known."""
    procedure: str = "trial"
    """What the trials are for ("throughput", ...): told to the DUT hooks."""
    frames: FrameTally = field(default_factory=FrameTally)
    """Expected frames of its streams (their rules: bench/lanes.Plan.rules), compared in
    every trial and merged per stream, as every procedure keeps them."""
    test: str = ""
    last_run: Any = field(default=None, repr=False)
    dut: DutTrials = field(init=False, repr=False)
    """The hooks around every trial, as every procedure's measurers call them."""

    def __post_init__(self) -> None:
        self.dut = DutTrials(self.hooks, test=self.test, procedure=self.procedure)
        if not self.lanes:
            self.lanes = (Lane(self.stream, 1.0, 0),)
        if not self.directions:
            self.directions = ("",)

    @property
    def mean_frame_size(self) -> float:
        """Bytes with FCS, averaged over the packets of a direction (the lanes' shares)."""
        return sum(lane.share * lane.stream.mean_frame_size
                   for lane in self.lanes) / len(self.directions)

    @property
    def tx_ports(self) -> list[Port]:
        return list({lane.stream.port.device: lane.stream.port for lane in self.lanes}.values())

    def _entries(self, load_pps: float) -> list[Tx]:
        return [Tx(lane.stream, 0, self._cbr(load_pps * lane.share)) for lane in self.lanes]

    def _lane_failure(self, run: Any, scheduled: float, offered_pps: float,
                      timed: Callable[[int], float | None] = lambda _i: None) -> str | None:
        """The first lane whose generator failed its share (`_invalid`), prefixed with its
        stream's name when there are several; None when every lane did its part."""
        for i, (lane, s) in enumerate(zip(self.lanes, run.streams)):
            why = self._invalid(run, s, scheduled * lane.share, offered_pps * lane.share,
                                timed_figure_ns=timed(i))
            if why is not None:
                return why if len(self.lanes) == 1 else f"stream {s.name!r}: {why}"
        return None

    def _invalid(self, run: Any, s: Any, scheduled: float, offered_pps: float,
                 timed_figure_ns: float | None = None) -> str | None:
        """Why the generator, not the DUT, failed this run; None when it did its part
        (the rules: validity.generator_failure)."""
        return generator_failure(run, s, scheduled, offered_pps, scheduled / offered_pps,
                                 loss_tolerance=self.loss_tolerance,
                                 tx_tolerance=self.tx_tolerance,
                                 timed_figure_ns=timed_figure_ns)

    @staticmethod
    def _backlog(s: Any, offered_pps: float, duration_s: float) -> dict[str, Any]:
        """The DUT's backlog when traffic stopped and its forwarding rate over the trial.

        Frames that arrived after TX ended, less those normally in flight then (the load
        times the trial's least latency, when the queue was empty, plus one TX burst), were
        held in the DUT's buffers. Measured only for a trial that ran to its scheduled end
        with latency stamps; otherwise both are None."""
        if s.tx_end_reason != "duration" or not s.latency_samples:
            return {}
        in_flight = offered_pps * s.latency_min_ns / 1e9 + IN_FLIGHT_SLACK_FRAMES
        return {"backlog_frames": max(0, round(s.rx_after_tx_end - in_flight)),
                "forwarding_pps": s.rx_by_tx_end / duration_s}

    def _trial(self, run: Any, offered_pps: float, duration_s: float,
               scheduled: float) -> TrialResult:
        reason = self._lane_failure(run, scheduled, offered_pps)
        counts = trial_counts(run, self.lanes, self.directions, offered_pps, duration_s,
                              self._backlog)
        if reason is None:
            reason = self._late_at_dut(run, counts, offered_pps)
        # a lost link: wait for it before the retry, or stop (bench/link.py)
        recover_links(run, [*self.tx_ports, *self.rx], reason, self.engine)
        return TrialResult(
            frame_size=self.frame_size, mean_frame_size=self.mean_frame_size,
            offered_pps=offered_pps, duration_s=duration_s,
            valid=reason is None, invalid_reason=reason,
            steady_state=self.steady_state, events=run.link_events, **counts)

    def _late_at_dut(self, run: Any, counts: dict[str, Any],
                     offered_pps: float) -> str | None:
        """Why a trial that failed its loss verdict through the DUT's policer or shaper
        (`burst_limit`) was the generator's: a lane's catch-up burst may have cost it all
        the frames lost beyond the tolerance (a trial that passed did so with its bursts:
        a lag never makes a policer or a shaper drop less)."""
        tx, rx = counts["tx_packets"], counts["rx_packets"]
        return shared_late_reason(
            [(s, offered_pps * lane.share * lane.stream.mean_frame_size * 8,
              lane.stream.mean_frame_size, max(int(s.tx_packets) - int(s.rx_unique), 0))
             for lane, s in zip(self.lanes, run.streams)],
            self.burst_limit, tx - rx - self.loss_tolerance * tx)

    def _cbr(self, load_pps: float) -> tuple[Any, ...]:
        return tuple(CBR().phases(lambda _r: load_pps, Rate(load_pps, "pps"), seed=1))

    def warm_up(self, load_pps: float, seconds: float) -> None:
        """Traffic at the trial's load before it, not counted (lets the DUT settle)."""
        if seconds > 0:
            self.engine.run(self._entries(load_pps), self.rx, duration_s=seconds,
                            drain_s=0.05)

    @property
    def trials_run(self) -> int:
        return self.dut.trials_run

    def _context(self, load_pps: float, duration_s: float) -> TrialContext:
        self.dut.hooks, self.dut.test = self.hooks or NoDutHooks(), self.test  # set later too
        return self.dut.context(self.frame_size, load_pps, duration_s, self.procedure)

    def _around(self, ctx: TrialContext, run_trial: Callable[[], tuple[Any, TrialResult]]
                ) -> TrialResult:
        """One trial's traffic between the DUT hooks' `before` and `after` (DutTrials)."""
        self.last_run, trial = self.dut.around(ctx, run_trial)
        return trial

    def _keep_frames(self, run: Any) -> None:
        """A trial's expected-frame checks, added to the measurer's (mismatches do not
        make a trial invalid: the DUT forwarded them; the test judges them)."""
        self.frames.keep(run.frames)

    def measure(self, load_pps: float, duration_s: float) -> TrialResult:
        progress.trial_start(load_pps)
        self.warm_up(load_pps, self.warmup_s)

        def run_trial() -> tuple[Any, TrialResult]:
            run = self.engine.run(self._entries(load_pps), self.rx, duration_s=duration_s,
                                  drain_s=self.drain_s, progress=progress.poller(duration_s),
                                  expect_frames=self.frames.rules)
            self._keep_frames(run)
            return run, self._trial(run, load_pps, duration_s, load_pps * duration_s)

        return self._around(self._context(load_pps, duration_s), run_trial)

    def measure_burst(self, frames: int, rate_pps: float) -> TrialResult:
        """`frames` back to back at the port's maximum rate (§26.4), on each direction
        (split among its lanes by their shares)."""
        counts = [max(1, round(frames * lane.share)) for lane in self.lanes]
        progress.trial_start(rate_pps)

        def run_trial() -> tuple[Any, TrialResult]:
            run = self.engine.run([Tx(lane.stream, n) for lane, n in zip(self.lanes, counts)],
                                  self.rx, drain_s=self.drain_s, expect_frames=self.frames.rules)
            self._keep_frames(run)
            return run, self._trial(run, rate_pps, max(frames / rate_pps, 1e-9), frames)

        trial = self._around(self._context(rate_pps, max(frames / rate_pps, 1e-9)), run_trial)
        if not trial.valid:
            return trial
        run = self.last_run
        whole = all(s.tx_packets == n for s, n in zip(run.streams, counts))
        if whole and trial.achieved_tx_pps < rate_pps * (1 - 0.05) and frames > 1000:
            return replace(trial, valid=False, invalid_reason=(
                f"the burst left at {fmt.rate_pps_exact(trial.achieved_tx_pps)}, not back to "
                f"back at {fmt.rate_pps_exact(rate_pps)}"))
        return trial

    def bursts(self, rate_pps: float) -> Bursts:
        """This measurer's back-to-back bursts at `rate_pps`, as the search core's
        `Measurer` of a burst length (rfc2544.BurstMeasurer)."""
        return Bursts(self, rate_pps)

    def recovery(self, load: RecoveryLoad, duration_s: float) -> RecoveryTrial:
        """One §26.5 trial of `load` (rfc2544.RecoveryMeasurer's `measure`, bound with
        search.FunctionMeasurer); its `duration_s` is the load's two phases."""
        return self.measure_recovery(load.overload_pps, load.relief_pps, load.overload_s,
                                     load.relief_s)

    def measure_recovery(self, overload_pps: float, relief_pps: float, overload_s: float,
                         relief_s: float) -> RecoveryTrial:
        """Overload for `overload_s`, then relief for `relief_s`, in one paced run (§26.5)."""
        def phases(share: float) -> tuple[Phase, Phase]:
            return (Phase(self._cbr(overload_pps * share)[0].gaps_ps, int(overload_s * 1e9)),
                    Phase(self._cbr(relief_pps * share)[0].gaps_ps, int(relief_s * 1e9)))

        progress.trial_start(overload_pps)
        ctx = self._context(overload_pps, overload_s + relief_s)
        self.dut.hooks.before(ctx)
        run = self.engine.run([Tx(lane.stream, 0, phases(lane.share)) for lane in self.lanes],
                              self.rx, drain_s=self.drain_s, expect_frames=self.frames.rules)
        self._keep_frames(run)
        scheduled = overload_pps * overload_s + relief_pps * relief_s
        require_loss_timing(run.streams[:len(self.lanes)], "system recovery (RFC 2544 §26.5)")
        parts = [RecoveryTrial(overload_pps, relief_pps, s.tx_first_ns + int(overload_s * 1e9),
                               s.tx_packets, s.lost, s.last_gap_tx_ns or 0)
                 for s in run.streams[:len(self.lanes)]]
        trial = recovery_of(parts, self.lanes, self.directions)
        reason = self._lane_failure(run, scheduled, scheduled / (overload_s + relief_s),
                                    timed=lambda i: parts[i].recovery_ns)
        trial = replace(trial, valid=reason is None, invalid_reason=reason)
        return self._health(replace(ctx, phase="after"), trial)

    def _health(self, ctx: TrialContext, trial: Any) -> Any:
        """A recovery or reset trial after the DUT's health hooks: invalid when they say
        so (their loss is timed, not counted, so no attribution)."""
        return self.dut.health(ctx, trial)

    def measure_reset(self, load_pps: float, duration_s: float, hook: Callable[[], Any],
                      at_s: float) -> ResetTrial:
        """Steady traffic; `hook` resets the DUT `at_s` into it (§26.6)."""
        called: list[float] = []
        progress.trial_start(load_pps)
        t0 = time.monotonic()

        def poll(status: dict[str, Any]) -> None:
            if not called and status.get("state") == "sending" and \
                    time.monotonic() - t0 >= at_s:
                started = time.monotonic()
                hook()
                called.append(time.monotonic() - started)
                called.append(started - t0)

        ctx = self._context(load_pps, duration_s)
        self.dut.hooks.before(ctx)
        run = self.engine.run(self._entries(load_pps), self.rx, duration_s=duration_s,
                              drain_s=self.drain_s, progress=poll,
                              expect_frames=self.frames.rules)
        self._keep_frames(run)
        require_loss_timing(run.streams[:len(self.lanes)], "reset (RFC 2544 §26.6)")
        longest = [longest_gap_ns(s) for s in run.streams[:len(self.lanes)]]
        reason = self._lane_failure(run, load_pps * duration_s, load_pps,
                                    timed=lambda i: longest[i])
        if not called:
            reason = (f"the run ended before the reset hook was due at "
                      f"{fmt.time_s_exact(at_s)}; give a longer duration")
        trial = reset_of(run, self.lanes, self.directions, load_pps, longest,
                         int(called[1] * 1e9) if called else 0, called[0] if called else 0.0,
                         reason)
        return self._health(replace(ctx, phase="after"), trial)

    def calibrate(self, seconds: float = CALIBRATION_S) -> float:
        """The generator's maximum rate with these streams: what the port takes at full
        speed; with several directions, what the slowest direction sends while every
        direction sends at full speed."""
        full = tuple(MaxRate().phases(lambda _r: 0.0, None, seed=1))
        run = self.engine.run([Tx(lane.stream, 0, full) for lane in self.lanes], self.rx,
                              duration_s=seconds, drain_s=0.1)
        sent = [0.0] * len(self.directions)
        for lane, s in zip(self.lanes, run.streams):
            sent[lane.direction] += s.tx_pps
        for lane in self.lanes:
            if sent[lane.direction] <= 0:
                raise NetloadConfigError(
                    f"calibration: port {lane.stream.port.device!r} sent nothing in "
                    f"{fmt.time_s_exact(seconds)}; "
                    "check the port's link")
        return min(sent)


@dataclass(frozen=True)
class Bursts:
    """`EngineMeasurer.measure_burst` at one rate: ``measure(frames, duration_s)`` sends
    `frames` back to back at `rate_pps` (the burst's `duration_s` is frames / rate_pps,
    which the rate and the length already fix)."""

    measurer: EngineMeasurer
    rate_pps: float

    def measure(self, load: int, duration_s: float) -> TrialResult:
        return self.measurer.measure_burst(load, self.rate_pps)


class Calibration:
    """The generator's own limits, measured once per session per port and frame size
    and recorded before the first DUT verdict that relies on them."""

    def __init__(self) -> None:
        self.max_pps: dict[tuple[int, int | tuple[int, ...], FrameSize], float] = {}
        """By (the engine, its port id or the lanes' port ids, and frame size): port ids
        are per engine, and a topology may have several (--netload-engines)."""

    def generator_max_pps(self, measurer: EngineMeasurer) -> float:
        ports = tuple(lane.stream.port.port_id for lane in measurer.lanes)
        key = (id(measurer.engine), ports[0] if len(ports) == 1 else ports, measurer.frame_size)
        if key not in self.max_pps:
            pps = measurer.calibrate()
            self.max_pps[key] = pps
            record_measurement("calibration", {
                "port": " + ".join(dict.fromkeys(lane.stream.port.device
                                                 for lane in measurer.lanes)),
                "frame_size": measurer.frame_size,
                "generator_max_pps": pps, "seconds": CALIBRATION_S,
                "search_max_pps": pps * CALIBRATION_SHARE,
                "latency_bias_ns": None,
                "latency_bias_note": "no wire bypasses the DUT on this topology"})
        return self.max_pps[key]
