"""Y.1564 (02/2016) §8.1.2 burst tests: the CBS and EBS of a service's bandwidth profile.

A burst of N frames of s bytes (with the FCS) leaves back to back at the port's rate R
(L2 bits per second: the frames' bytes with the FCS, the rate they leave at) after an
idle time long enough to fill the bucket. A token bucket of depth D bytes, filled at
r bit/s, starting full, passes frame k (sent at k x s x 8 / R) while it holds s bytes:

- the burst passes in full when  N x s <= D + (N - 1) x s x r / R,
  i.e. B <= D + r x B / R for B = N x s, less the last frame's refill;
- a longer one passes  floor((D + (N - 1) x s x r / R) / s)  frames and loses the rest:
  every frame beyond the bucket and its refill during the burst.

(Each frame that passes takes s bytes of the D it started with plus r / R x s per
frame time; once one is dropped the bucket holds less than one frame, so the count is
exact, not a bound, for a bucket at least s x (1 + r / R) deep; a shallower one can
overflow between frames and is counted frame by frame.) The CBS test is the green bucket (D = CBS, r = CIR); the EBS test,
colour-blind, the green and yellow buckets together (D = CBS + EBS, r = CIR + EIR). Each
burst is a share of its bucket (`shares`, default 1.0: a burst of the bucket's size);
the step passes when the DUT delivered what the bucket predicts, within
`tolerance_frames`, whether that is all of it or not.

A burst the generator could not send whole, or sent no faster than the bucket fills
(so it does not test the bucket), is "not measured": not the DUT's failure.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

from .. import format as fmt
from ..errors import NetloadConfigError
from ..measure.dut import LossAttribution, dut_record
from ..search.settings import TrialSettings
from ..search.trial import Measurer, valid_trial
from ..units import frame_bits
from .services import Service

__all__ = ["BURST_IDLE_REFILLS", "BURST_MIN_IDLE_S", "BURST_SHARES", "BURST_TOLERANCE_FRAMES",
           "Burst", "BurstMeasurer", "BurstResult", "BurstSample", "BurstStep",
           "bucket_passes", "burst_plan", "burst_test", "full_burst_frames"]

BURST_SHARES: tuple[float, ...] = (1.0,)
BURST_TOLERANCE_FRAMES = 1
"""A policer's rounding (bytes per second, whole frames): one frame either way."""
BURST_IDLE_REFILLS = 2.0
"""The idle time before a burst: twice what an empty bucket takes to fill."""
BURST_MIN_IDLE_S = 0.05
BURST_SETTINGS = TrialSettings(retries=2)


@dataclass(frozen=True)
class Burst:
    """The load of one burst: `frames` of service `service` back to back at the port's
    rate, after `idle_s` of silence."""

    service: str
    frames: int
    idle_s: float


@dataclass(frozen=True)
class BurstSample:
    """One burst: frames sent and received, and the L2 rate it left at (measured)."""

    service: str
    frame_size: int
    """Bytes with the FCS."""
    tx_frames: int
    rx_frames: int
    rate_bps: float | None
    """The L2 bit rate the burst left at (frames' bytes with the FCS over the time from
    the first frame to the last); None: not measured (a burst of one frame)."""
    valid: bool = True
    invalid_reason: str | None = None
    attribution: LossAttribution | None = field(default=None, compare=False, repr=False)
    """The trial's loss attributed to the DUT's and the generator's counters (the DUT
    hooks, bench/dut_trial.py); None where not read."""
    dut_health: str | None = None
    """"ok", or the DUT health hooks' reason; None when health checks are off."""

    def __post_init__(self) -> None:
        for name in ("tx_frames", "rx_frames", "frame_size"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
                raise NetloadConfigError(f"service {self.service!r}: burst sample "
                                         f"{name}={value!r}: give a whole number >= 0")
        r = self.rate_bps
        if r is not None and (isinstance(r, bool) or not isinstance(r, numbers.Real)
                              or not math.isfinite(r) or r <= 0):
            raise NetloadConfigError(f"service {self.service!r}: burst sample rate_bps={r!r}: "
                                     "give a finite rate > 0, or None when not measured")

    @property
    def lost(self) -> int:
        return max(self.tx_frames - self.rx_frames, 0)

    def as_dict(self) -> dict[str, Any]:
        return {"tx_frames": int(self.tx_frames), "rx_frames": int(self.rx_frames),
                "lost": self.lost, "frame_size": int(self.frame_size),
                "rate_bps": None if self.rate_bps is None else float(self.rate_bps),
                "valid": self.valid, "invalid_reason": self.invalid_reason,
                **dut_record(self.attribution, self.dut_health)}


BurstMeasurer = Measurer[Burst, BurstSample]
"""Send the burst after its idle time; ``duration_s`` is the idle time plus the burst's
time at the line rate (where known)."""


def _check_bucket(frame_size: int, depth_bytes: float, fill_bps: float,
                  rate_bps: float) -> None:
    if not frame_size > 0 or not depth_bytes >= 0 or not fill_bps >= 0 or not rate_bps > 0:
        raise NetloadConfigError(
            f"token bucket: frame_size={frame_size!r}, depth_bytes={depth_bytes!r}, "
            f"fill_bps={fill_bps!r}, rate_bps={rate_bps!r}: give a frame size and a burst "
            "rate > 0, a depth and a fill rate >= 0")
    rho = fill_bps / rate_bps
    if rho >= 1:
        raise NetloadConfigError(
            f"a burst at {fmt.bitrate(rate_bps)} into a bucket filled at "
            f"{fmt.bitrate(fill_bps)} never empties it: the burst must leave faster than "
            "the bucket fills")


def bucket_passes(frames: int, frame_size: int, depth_bytes: float, fill_bps: float,
                  rate_bps: float) -> int:
    """Frames of a back-to-back burst of `frames` x `frame_size` bytes, sent at L2
    `rate_bps`, that a full token bucket of `depth_bytes` filled at `fill_bps` passes:
    ``min(N, floor((D + (N - 1) x s x r / R) / s))``, in exact arithmetic. (A bucket
    under s x (1 + r / R) deep can overflow between two frames: there, frame by frame.)"""
    _check_bucket(frame_size, depth_bytes, fill_bps, rate_bps)
    if frames <= 0 or depth_bytes < frame_size:
        return 0
    d, s, r, rate = (Fraction(x) for x in (depth_bytes, frame_size, fill_bps, rate_bps))
    if d >= s * (1 + r / rate):
        return int(min(frames, math.floor((d + (frames - 1) * s * r / rate) / s)))
    tokens, passed, refill = d, 0, s * r / rate
    for k in range(frames):
        if k:
            tokens = min(d, tokens + refill)
        if tokens >= s:
            tokens -= s
            passed += 1
    return passed


def full_burst_frames(frame_size: int, depth_bytes: float, fill_bps: float,
                      rate_bps: float) -> int:
    """The longest back-to-back burst (in frames) a full bucket passes whole: the
    largest N with ``N x s <= D + (N - 1) x s x r / R``."""
    _check_bucket(frame_size, depth_bytes, fill_bps, rate_bps)
    if depth_bytes < frame_size:
        return 0
    d, s, r, rate = (Fraction(x) for x in (depth_bytes, frame_size, fill_bps, rate_bps))
    return int(math.floor((d - s) * rate / (s * (rate - r)))) + 1


@dataclass(frozen=True)
class BurstStep:
    """One burst of the CBS or EBS test and its verdict."""

    name: str
    """"CBS 100%", "CBS+EBS 200%", ..."""
    test: str
    """"cbs" or "ebs"."""
    share: float
    bucket_bytes: int
    fill_bps: float
    frames: int
    burst_bytes: int
    idle_s: float
    sample: BurstSample | None = field(repr=False)
    expected_rx: int | None
    """Frames the bucket passes at the rate the burst left at; None: not measured."""
    passed: bool | None
    reason: str
    tries: int = 1
    invalid_reasons: tuple[str, ...] = ()

    @property
    def expected(self) -> str | None:
        """"pass" (the whole burst) or "drop" (the bucket loses the rest); None: not
        measured."""
        if self.expected_rx is None:
            return None
        return "pass" if self.expected_rx >= self.frames else "drop"

    def as_dict(self) -> dict[str, Any]:
        s = self.sample
        return {"name": self.name, "test": self.test, "share": float(self.share),
                "bucket_bytes": int(self.bucket_bytes), "fill_bps": float(self.fill_bps),
                "frames": int(self.frames),
                "burst_bytes": int(self.burst_bytes), "idle_s": float(self.idle_s),
                "measured": s is not None, "expected": self.expected,
                "expected_rx": self.expected_rx,
                "tx_frames": None if s is None else int(s.tx_frames),
                "rx_frames": None if s is None else int(s.rx_frames),
                "lost": None if s is None else s.lost,
                "rate_bps": None if s is None or s.rate_bps is None else float(s.rate_bps),
                "passed": self.passed, "reason": self.reason, "tries": self.tries,
                "invalid_reasons": list(self.invalid_reasons),
                **({} if s is None else dut_record(s.attribution, s.dut_health))}


@dataclass(frozen=True)
class BurstResult:
    """The burst tests of one service."""

    service: Service
    steps: tuple[BurstStep, ...]
    tolerance_frames: int = BURST_TOLERANCE_FRAMES
    settings: TrialSettings = field(default=BURST_SETTINGS, compare=False)

    @property
    def passed(self) -> bool:
        return all(s.passed is True for s in self.steps)

    @property
    def dut_failed(self) -> bool:
        return any(s.passed is False for s in self.steps)

    @property
    def not_measured(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.steps if s.sample is None)

    def failures(self) -> list[str]:
        return [f"service {self.service.name!r} burst {s.name}: {s.reason}" for s in self.steps
                if s.passed is not True]

    def as_dict(self) -> dict[str, Any]:
        return {"procedure": "y1564_bursts", "service": self.service.as_dict(),
                "passed": self.passed, "dut_failed": self.dut_failed,
                "not_measured": list(self.not_measured),
                "tolerance_frames": self.tolerance_frames,
                "steps": [s.as_dict() for s in self.steps]}


def check_shares(shares: object) -> tuple[float, ...]:
    if isinstance(shares, (str, bytes)) or not isinstance(shares, Sequence) or not shares:
        raise NetloadConfigError(f"burst_sizes={shares!r}: give the bursts as shares of the "
                                 "bucket, e.g. [1.0] or [0.8, 2.0]")
    out = []
    for x in shares:
        if isinstance(x, bool) or not isinstance(x, numbers.Real) or not 0 < float(x) <= 100:
            raise NetloadConfigError(f"burst_sizes={list(shares)!r}: {x!r} is not a share of "
                                     "the bucket in (0, 100]; give e.g. [0.8, 2.0]")
        out.append(float(x))
    return tuple(out)


def _l2_line_rate(line_rate_bps: float | None, frame_size: int) -> float | None:
    if line_rate_bps is None:
        return None
    return line_rate_bps * frame_bits(frame_size, "l2") / frame_bits(frame_size, "l1")


def burst_plan(service: Service, ebs: bool = True) -> list[tuple[str, str, int, float]]:
    """The bucket tests of `service`: (label, test, depth in bytes, fill rate in bit/s) of
    its CBS test and, with `ebs` and an EIR and EBS, its colour-blind EBS test."""
    if service.cbs_bytes <= 0:
        raise NetloadConfigError(
            f"service {service.name!r} has no cbs: the burst test sends bursts sized to the "
            "CBS; give it one, e.g. cbs='12kB'")
    if service.cbs_bytes < service.frame_size:
        raise NetloadConfigError(
            f"service {service.name!r}: cbs={service.cbs_bytes} B is less than one "
            f"{service.frame_size}-byte frame; give a cbs of at least one frame")
    plan = [("CBS", "cbs", service.cbs_bytes, service.cir_bps)]
    if ebs and service.ebs_bytes > 0 and service.eir_bps > 0:
        plan.append(("CBS+EBS", "ebs", service.burst_bytes, service.max_bps))
    return plan


def burst_test(
    measurer: BurstMeasurer,
    service: Service,
    *,
    line_rate_bps: float | None = None,
    shares: Sequence[float] = BURST_SHARES,
    ebs: bool = True,
    idle_s: float | None = None,
    tolerance_frames: int = BURST_TOLERANCE_FRAMES,
    settings: TrialSettings = BURST_SETTINGS,
    on_step: Callable[[BurstStep], None] | None = None,
) -> BurstResult:
    """The CBS test of `service` (and, with `ebs` and an EIR and EBS, the colour-blind
    EBS test): one burst per share of the bucket, each after `idle_s` (default: twice
    the bucket's fill time, at least BURST_MIN_IDLE_S), judged against what the bucket
    passes at the rate the burst left at (module text). `line_rate_bps` (the port's L1
    rate) only sizes `duration_s` for the measurer; an invalid burst is retried at most
    `settings.retries` times."""
    service = Service.of(service)
    sizes = check_shares(shares)
    if isinstance(tolerance_frames, bool) or not isinstance(tolerance_frames, numbers.Integral) \
            or tolerance_frames < 0:
        raise NetloadConfigError(f"burst_tolerance={tolerance_frames!r}: give a whole number "
                                 "of frames >= 0, e.g. 1")
    if idle_s is not None and (isinstance(idle_s, bool) or not isinstance(idle_s, numbers.Real)
                               or not 0 <= idle_s <= 3600):
        raise NetloadConfigError(f"burst_idle={idle_s!r}: give seconds from 0 to 3600, or "
                                 "None for twice the bucket's fill time")
    s = service.frame_size
    line = _l2_line_rate(line_rate_bps, s)
    done: list[BurstStep] = []
    for label, test, depth, fill in burst_plan(service, ebs):
        idle = float(idle_s) if idle_s is not None else \
            max(BURST_IDLE_REFILLS * depth * 8 / fill, BURST_MIN_IDLE_S)
        for share in sizes:
            frames = max(1, math.floor(share * depth / s))
            name = f"{label} {fmt.percent(share)}"
            load = Burst(service.name, frames, idle)
            duration = idle + (frames * s * 8 / line if line else 0.0)

            def one(b: Burst, fill_bps: float = fill, seconds: float = duration) -> BurstSample:
                out = measurer.measure(b, seconds)
                if not isinstance(out, BurstSample):
                    raise NetloadConfigError(f"the burst measurer returned {out!r}; a "
                                             "BurstMeasurer returns a BurstSample")
                if out.valid and out.rate_bps is not None and out.rate_bps <= fill_bps:
                    return replace(out, valid=False, invalid_reason=(
                        f"the burst left at {fmt.bitrate(out.rate_bps)}, no faster than the "
                        f"bucket fills ({fmt.bitrate(fill_bps)}): it does not test the bucket"))
                return out

            tries: list[BurstSample] = []
            sample = valid_trial(one, load, settings.retries, tries, settings.on_trial)
            invalid = tuple(t.invalid_reason or "the generator failed (no reason given)"
                            for t in tries if not t.valid)
            if sample is None:
                step = BurstStep(name, test, share, depth, fill, frames, frames * s, idle,
                                 None, None, None,
                                 f"not measured: the generator failed {len(tries)} tries ("
                                 + "; ".join(dict.fromkeys(invalid))
                                 + "); not the DUT's failure",
                                 len(tries), invalid)
            else:
                step = _judge(name, test, share, depth, fill, frames, frames * s, idle, sample,
                              line, int(tolerance_frames), len(tries), invalid)
            done.append(step)
            if on_step is not None:
                on_step(step)
    return BurstResult(service, tuple(done), int(tolerance_frames), settings)


def _judge(name: str, test: str, share: float, depth: int, fill: float, frames: int,
           burst_bytes: int, idle: float, sample: BurstSample, line: float | None, tol: int,
           tries: int, invalid: tuple[str, ...]) -> BurstStep:
    rate = sample.rate_bps if sample.rate_bps is not None else line
    bucket = f"{'CBS' if test == 'cbs' else 'CBS+EBS'} {fmt.count(depth)} B at " \
             f"{fmt.bitrate(fill)}"
    got = f"received {fmt.count(sample.rx_frames)} of {fmt.count(sample.tx_frames)}"
    if rate is None or rate <= fill:
        return BurstStep(name, test, share, depth, fill, frames, burst_bytes, idle, sample,
                         None, None,
                         f"not judged: the burst's rate is unknown (a one-frame burst on a "
                         f"port without a line rate); {got}", tries, invalid)
    expected = bucket_passes(sample.tx_frames, sample.frame_size, depth, fill, rate)
    ok = abs(sample.rx_frames - expected) <= tol
    whole = expected >= sample.tx_frames
    what = (f"expected to pass whole ({fmt.count(sample.tx_frames * sample.frame_size)} B "
            f"within the bucket, {bucket}, at {fmt.bitrate(rate)})" if whole else
            f"expected {fmt.count(expected)} frames through (the bucket, {bucket}, at "
            f"{fmt.bitrate(rate)}), the other {fmt.count(sample.tx_frames - expected)} dropped")
    within = f" within {tol} frame{'s' if tol != 1 else ''}" if tol else ""
    reason = f"{what}; {got}: {'as expected' if ok else 'not as expected'}{within}"
    return BurstStep(name, test, share, depth, fill, frames, burst_bytes, idle, sample,
                     expected, ok, reason, tries, invalid)
