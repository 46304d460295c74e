"""Y.1564 §8.1 service configuration test: one service at a time, step by step.

Test A, the CIR step load: the service at shares of its CIR (default 25 %, 50 %, 75 %,
100 %), each step judged against the SAC (IR, FLR, FTD, FDV). Test B, the EIR configuration
test (colour-blind): CIR + EIR, where the DUT must carry at least the CIR and at most
CIR + EIR; frames above the CIR may be dropped, so FLR, FTD and FDV are not judged. Test C,
traffic policing: an overshoot above CIR + EIR, where the DUT must police to CIR + EIR
(plus what its full buckets let through at the start: (CBS + EBS) x 8 / step duration) and
still carry the CIR.

Colour-aware (a service with ``colour``, Y.1564 §8.1.2): the load up to the CIR is sent
green and the rest yellow. Tests B and C then judge the green frames on the SAC (IR >= CIR,
FLR, FTD, FDV) and the yellow frames only on their rate: IR <= EIR (plus what the full EBS
bucket lets through at the start); yellow loss and delay are counted, not judged.

A step the generator could not measure (every try invalid) is "not measured": not passed,
and not a DUT failure.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .. import format as fmt
from ..errors import NetloadConfigError
from ..measure.dut import dut_record
from ..search.settings import TrialSettings
from ..search.trial import valid_trial
from ..units import run_seconds
from .checks import Check, check, verdict
from .measurer import FDV_QUANTILE, ServiceMeasurer, ServiceSample, check_quantile, sample_of
from .services import Service

__all__ = ["IR_TOLERANCE", "POLICING_OVERSHOOT", "SCT_STEPS", "SCT_STEP_S", "SctResult",
           "SctStep", "service_configuration_test"]

SCT_STEPS: tuple[float, ...] = (0.25, 0.5, 0.75, 1.0)
SCT_STEP_S = 10.0
POLICING_OVERSHOOT = 1.25
IR_TOLERANCE = 0.02
SCT_RETRIES = 2
SCT_SETTINGS = TrialSettings(duration_s=SCT_STEP_S, retries=SCT_RETRIES)
"""The configuration test's default settings: 10-s steps, an invalid try retried twice."""


@dataclass(frozen=True)
class SctStep:
    """One step of the service configuration test and its verdict."""

    name: str
    """"CIR 25%", ..., "CIR+EIR", "policing"."""
    kind: str
    """"cir", "eir" or "policing"."""
    offered_bps: float
    duration_s: float
    sample: ServiceSample | None = field(repr=False)
    """The valid sample the step was judged on; None when not measured."""
    checks: tuple[Check, ...]
    passed: bool | None
    """None: not measured (every try invalid), or a criterion could not be measured."""
    reason: str
    tries: int = 1
    invalid_reasons: tuple[str, ...] = ()
    fdv_quantile: float = FDV_QUANTILE

    @property
    def measured(self) -> bool:
        return self.sample is not None

    def as_dict(self) -> dict[str, Any]:
        s = self.sample
        return {
            "name": self.name, "kind": self.kind, "offered_bps": float(self.offered_bps),
            "duration_s": float(self.duration_s), "measured": self.measured,
            "tx_frames": None if s is None else int(s.tx_frames),
            "rx_frames": None if s is None else int(s.rx_frames),
            "lost": None if s is None else s.lost, "flr": None if s is None else s.flr,
            "ir_bps": None if s is None else s.ir_bps, "ftd_s": None if s is None else s.ftd_s,
            "fdv_s": None if s is None else s.fdv_s(self.fdv_quantile),
            "yellow": None if s is None else s.yellow_dict(),
            **({} if s is None or s.colour_at_rx is None
               else {"colour_at_rx": dict(s.colour_at_rx)}),
            "checks": [c.as_dict() for c in self.checks], "passed": self.passed,
            "reason": self.reason, "tries": self.tries,
            "invalid_reasons": list(self.invalid_reasons),
            **({} if s is None else dut_record(s.attribution, s.dut_health)),
        }


@dataclass(frozen=True)
class SctResult:
    """The service configuration test of one service."""

    service: Service
    steps: tuple[SctStep, ...]
    fdv_quantile: float = FDV_QUANTILE
    ir_tolerance: float = IR_TOLERANCE
    settings: TrialSettings = field(default=SCT_SETTINGS, compare=False)
    """The steps' common settings: step duration, retries."""

    @property
    def passed(self) -> bool:
        """Every step measured and passed."""
        return all(s.passed is True for s in self.steps)

    @property
    def dut_failed(self) -> bool:
        """A measured step failed a criterion: the DUT's failure."""
        return any(s.passed is False for s in self.steps)

    @property
    def not_measured(self) -> tuple[str, ...]:
        """Steps the generator could not measure (not the DUT's failure)."""
        return tuple(s.name for s in self.steps if not s.measured)

    def failures(self) -> list[str]:
        """One line per step that did not pass: why."""
        return [f"service {self.service.name!r} {s.name}: {s.reason}" for s in self.steps
                if s.passed is not True]

    def as_dict(self) -> dict[str, Any]:
        return {"procedure": "y1564_sct", "service": self.service.as_dict(),
                "passed": self.passed, "dut_failed": self.dut_failed,
                "not_measured": list(self.not_measured), "fdv_quantile": self.fdv_quantile,
                "ir_tolerance": self.ir_tolerance,
                "steps": [s.as_dict() for s in self.steps]}


def check_steps(steps: object) -> tuple[float, ...]:
    if isinstance(steps, (str, bytes)) or not isinstance(steps, Sequence) or not steps:
        raise NetloadConfigError(f"steps={steps!r}: give the CIR shares as a non-empty list, "
                                 "e.g. (0.25, 0.5, 0.75, 1.0)")
    out = []
    for x in steps:
        if isinstance(x, bool) or not isinstance(x, numbers.Real) or not 0 < float(x) <= 1:
            raise NetloadConfigError(f"steps={list(steps)!r}: {x!r} is not a share of the CIR "
                                     "in (0, 1]; give e.g. (0.25, 0.5, 0.75, 1.0)")
        if out and float(x) <= out[-1]:
            raise NetloadConfigError(f"steps={list(steps)!r}: the shares must increase; give "
                                     "e.g. (0.25, 0.5, 0.75, 1.0)")
        out.append(float(x))
    return tuple(out)


def _real_in(x: object, what: str, low: float, high: float | None, hint: str,
             low_open: bool = False) -> float:
    ok = not isinstance(x, bool) and isinstance(x, numbers.Real)
    if ok:
        v = float(x)  # type: ignore[arg-type]
        ok = (v > low if low_open else v >= low) and (high is None or v < high)
    if not ok:
        raise NetloadConfigError(f"{what}={x!r}: {hint}")
    return float(x)  # type: ignore[arg-type]


def check_ir_tolerance(x: object) -> float:
    return _real_in(x, "ir_tolerance", 0.0, 1.0, "give a share in [0, 1), e.g. 0.02")


def _measure(measurer: ServiceMeasurer, service: Service, load: float, duration_s: float,
             settings: TrialSettings) -> tuple[ServiceSample | None, int, tuple[str, ...]]:
    """The step's valid sample (None when every try was invalid), the tries it took and the
    invalid tries' reasons."""
    tries: list[ServiceSample] = []
    sample = valid_trial(lambda bps: sample_of(measurer.measure({service.name: bps},
                                                                duration_s),
                                               service.name), load, settings.retries, tries,
                         settings.on_trial)
    invalid = tuple(t.invalid_reason or "the generator failed (no reason given)"
                    for t in tries if not t.valid)
    return sample, len(tries), invalid


def service_configuration_test(
    measurer: ServiceMeasurer,
    service: Service,
    *,
    steps: Sequence[float] = SCT_STEPS,
    settings: TrialSettings = SCT_SETTINGS,
    eir_step: bool = True,
    policing: bool = True,
    policing_overshoot: float = POLICING_OVERSHOOT,
    ir_tolerance: float = IR_TOLERANCE,
    on_step: Callable[[SctStep], None] | None = None,
    fdv_quantile: float = FDV_QUANTILE,
) -> SctResult:
    """Run the Y.1564 service configuration test of ``service`` (see the module text):
    each step offered for `settings.duration_s` (SCT_STEP_S when None), an invalid try
    retried at most `settings.retries` times, every try shown to `settings.on_trial` and
    every step to `on_step`."""
    service = Service.of(service)
    shares = check_steps(steps)
    if settings.duration_s is None:
        settings = replace(settings, duration_s=SCT_STEP_S)
    duration = run_seconds(settings.timed("service_configuration_test"), what="duration_s")
    overshoot = _real_in(policing_overshoot, "policing_overshoot", 1.0, None,
                         "give a factor > 1 over CIR+EIR, e.g. 1.25", low_open=True)
    tol = check_ir_tolerance(ir_tolerance)
    quantile = check_quantile(fdv_quantile)
    sac = service.sac
    cir, top = service.cir_bps, service.max_bps
    allowance = service.burst_bytes * 8 / duration
    plan: list[tuple[str, str, float]] = [(f"CIR {fmt.percent(x)}", "cir", cir * x)
                                          for x in shares]
    if eir_step and service.eir_bps > 0:
        plan.append(("CIR+EIR", "eir", top))
    if policing:
        plan.append(("policing", "policing", top * overshoot))
    done: list[SctStep] = []
    for name, kind, load in plan:
        sample, tries, invalid = _measure(measurer, service, load, duration, settings)
        if sample is None:
            step = SctStep(name, kind, load, duration, None, (), None,
                           f"not measured: the generator failed {tries} tries ("
                           + "; ".join(dict.fromkeys(invalid)) + "); not the DUT's failure",
                           tries, invalid, quantile)
        else:
            if kind == "cir" or (service.colour_aware and sample.coloured):
                low = load if kind == "cir" else cir
                checks = [check("ir", sample.ir_bps, low=low * (1 - tol))]
                if sac.flr_ratio is not None:
                    checks.append(check("flr", sample.flr, high=sac.flr_ratio))
                if sac.ftd_s is not None:
                    checks.append(check("ftd", sample.ftd_s, high=sac.ftd_s))
                if sac.fdv_s is not None:
                    checks.append(check("fdv", sample.fdv_s(quantile), high=sac.fdv_s))
                note = ""
                if kind != "cir":
                    checks.append(check("yellow_ir", sample.yellow_ir_bps or 0.0,
                                        high=service.eir_bps * (1 + tol)
                                        + service.ebs_bytes * 8 / duration))
                    note = ("; colour-aware: the SAC judged on the green frames, the yellow "
                            "ones on their rate only")
            else:
                checks = [check("ir", sample.ir_bps, low=cir * (1 - tol),
                                high=top * (1 + tol) + allowance)]
                note = ("; FLR, FTD and FDV not judged (colour-blind: frames above the CIR "
                        "may be dropped)")
            seen = sample.colour_at_rx or {}
            if seen.get("remarked") or seen.get("promoted") or seen.get("other"):
                note += (f"; colour at RX: {seen.get('remarked', 0):,} sent green came back "
                         f"yellow, {seen.get('promoted', 0):,} sent yellow came back green, "
                         f"{seen.get('other', 0):,} neither (the DUT re-marked them)")
            passed, reason = verdict(checks, note)
            step = SctStep(name, kind, load, duration, sample, tuple(checks), passed, reason,
                           tries, invalid, quantile)
        done.append(step)
        if on_step is not None:
            on_step(step)
    return SctResult(service, tuple(done), quantile, tol, settings)
