"""DutTrials, the one path every procedure's trials take through the DUT hooks: the
context each trial tells them, a procedure's own trial record judged through a RunLoss,
the generator-drop rule, and the attributions of a run of intervals summed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pytest_netload.bench.dut_trial import DutTrials, RunLoss, TrialContext
from pytest_netload.bench.y1564 import EngineServiceMeasurer
from pytest_netload.measure.dut import DutCounter, attribute_loss, merge_attributions
from pytest_netload.y1564 import ServiceSample


@dataclass(frozen=True)
class Trial:
    """A procedure's own trial record, as Y.1564's and RFC 2889's are."""

    tx: int
    rx: int
    valid: bool = True
    invalid_reason: str | None = None
    attribution: Any = field(default=None, compare=False)
    dut_health: str | None = None


class Hooks:
    """Counts 3 queue drops per trial (or a generator-port drop), and answers health."""

    def __init__(self, kind: str = "queue_drop", health: str | None = None) -> None:
        self.kind = kind
        self.health_reason = health
        self.calls: list[str] = []

    def before(self, ctx: TrialContext) -> None:
        self.calls.append(f"before {ctx.procedure} {ctx.number} {ctx.phase}")

    def after(self, ctx: TrialContext, trial: Any, run: Any) -> Any:
        from dataclasses import replace

        self.calls.append(f"after {ctx.procedure} {ctx.number} {ctx.phase}")
        table = attribute_loss(trial.lost, [DutCounter("drops", 3, self.kind, "q0")])
        trial = replace(trial, attribution=table)
        if self.health_reason is not None and trial.valid:
            return replace(trial, valid=False, invalid_reason=f"DUT health: "
                           f"{self.health_reason}", dut_health=self.health_reason)
        return trial

    def health(self, ctx: TrialContext, trial: Any) -> str | None:
        return self.health_reason


def test_a_procedures_trial_gets_the_hooks_findings() -> None:
    hooks = Hooks()
    dut = DutTrials(hooks, test="t", procedure="rfc2889_fully_meshed")
    ctx = dut.context(64, 1000.0, 1.0)
    assert (ctx.procedure, ctx.number, ctx.frame_size) == ("rfc2889_fully_meshed", 1, 64)
    run, trial = dut.around(ctx, lambda: ("run", Trial(10, 7)), lambda t: t.tx - t.rx)
    assert run == "run" and trial.valid and trial.tx == 10
    assert trial.attribution.lost == 3 and trial.attribution.unaccounted == 0
    assert hooks.calls == ["before rfc2889_fully_meshed 1 before",
                           "after rfc2889_fully_meshed 1 after"]
    assert dut.context(64, 1.0, 1.0).number == 2


def test_the_generators_reason_stays_first() -> None:
    dut = DutTrials(Hooks(health="rebooted"), procedure="y1564_sct")
    _run, trial = dut.around(dut.context(64, 1.0, 1.0),
                             lambda: (None, Trial(10, 7, False, "late")), lambda t: 3)
    assert (trial.valid, trial.invalid_reason) == (False, "late")
    _run, sick = dut.around(dut.context(64, 1.0, 1.0), lambda: (None, Trial(10, 7)),
                            lambda t: 3)
    assert (sick.valid, sick.invalid_reason, sick.dut_health) == (
        False, "DUT health: rebooted", "rebooted")


def test_a_dut_dropping_for_the_generator_makes_the_trial_the_generators() -> None:
    dut = DutTrials(Hooks(kind="generator_drop"), procedure="rfc2889_broadcast_forwarding")
    _run, trial = dut.around(dut.context(64, 1.0, 1.0), lambda: (None, Trial(10, 7)),
                             lambda t: 3)
    assert not trial.valid and trial.invalid_reason


def _sample(name: str, valid: bool = True) -> ServiceSample:
    return ServiceSample(name, 1e6, 1.0, 512, 100, 97, valid=valid,
                         invalid_reason=None if valid else "late")


def test_one_services_generator_failure_leaves_the_others_valid() -> None:
    judged = RunLoss(6)
    bad = EngineServiceMeasurer._judged(_sample("a", valid=False), judged, alone=False)
    good = EngineServiceMeasurer._judged(_sample("b"), judged, alone=False)
    assert (bad.valid, bad.invalid_reason, good.valid) == (False, "late", True)
    sick = RunLoss(6, False, "DUT health: rebooted", dut_health="rebooted")
    both = [EngineServiceMeasurer._judged(_sample(n), sick, alone=False) for n in "ab"]
    assert [(s.valid, s.invalid_reason) for s in both] == [(False, "DUT health: rebooted")] * 2
    table = attribute_loss(3, [])
    alone = EngineServiceMeasurer._judged(_sample("a"), RunLoss(3, attribution=table), True)
    assert alone.attribution is table and alone.as_dict()["loss_attribution"]["lost"] == 3


def test_intervals_attributions_are_summed() -> None:
    a = attribute_loss(5, [DutCounter("drops", 5, "queue_drop", "q0"),
                           DutCounter("fwd", 100, "info", "q0")], sources=("x",))
    b = attribute_loss(2, [DutCounter("drops", 1, "queue_drop", "q0")], notes=("n",),
                       sources=("x",))
    total = merge_attributions([a, b])
    assert total is not None
    assert (total.lost, total.attributed, total.unaccounted) == (7, 6, 1)
    assert total.as_dict()["counters"] == {"drops (q0)": 6, "fwd (q0)": 100}
    assert (total.notes, total.sources) == (("n",), ("x",))
    assert merge_attributions([]) is None
