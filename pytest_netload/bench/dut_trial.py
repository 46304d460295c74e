"""The DUT around each trial: what the measurer asks of it, and the generator's own
drop counters for the loss attribution.

`TrialHooks` is what every engine measurer calls around each trial's traffic: `before`
once the warm-up is done (the DUT's counters are read), `after` once the drain wait
passed (read again, the loss attributed, the health checked). The plugin implements it
over its hooks (plugin/dut_hooks.py); `NoDutHooks` attributes what the generator's
own counters show and nothing else. `DutTrials` is the one path every procedure's
trials take through them (RFC 2544's `EngineMeasurer`, Y.1564's service and burst
measurers, RFC 2889's runner): the context, the hooks, the attribution, the health.
Pytest-free.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, TypeVar

from ..measure.dut import DutCounter, LossAttribution, attribute_loss
from ..rfc2544 import FrameSize, TrialResult
from .validity import dut_saw_generator_drops

__all__ = ["GENERATOR_DROP_COUNTERS", "CounterHooks", "DutTrials", "NoDutHooks", "RunLoss",
           "TrialContext", "TrialHooks", "attribute_trial", "attribution_of_run",
           "generator_counters"]

#: The generator's own receive-path drops (RunResult.generator_drops), with their words.
#: A veth's tx_dropped is left out on both sides: a veth counts there the frames its
#: peer's receive backlog dropped, which the peer already counts as rx_dropped.
GENERATOR_DROP_COUNTERS = {
    "imissed": "the port's RX queue was full (DPDK imissed)",
    "ierrors": "receive errors (DPDK ierrors)",
    "rx_nombuf": "no mbuf to receive into (DPDK rx_nombuf)",
    "iface_rx_dropped": "the kernel interface under the port dropped on receive",
    "iface_ring_drops": "the AF_PACKET socket's RX ring was full",
}


@dataclass(frozen=True)
class TrialContext:
    """What a hook is told about the trial it runs around."""

    test: str
    """The test's node id ("" outside pytest)."""
    procedure: str
    """RFC 2544's "throughput", "mlrsearch", "latency", "frame_loss", "back_to_back",
    "recovery", "reset"; Y.1564's "y1564_sct", "y1564_spt", "y1564_burst"; RFC 2889's
    "rfc2889_fully_meshed", "rfc2889_partially_meshed", "rfc2889_congestion_control",
    "rfc2889_maximum_forwarding_rate", "rfc2889_address_caching_capacity",
    "rfc2889_address_learning_rate", "rfc2889_broadcast_forwarding",
    "rfc2889_errored_frame_filtering"; or "trial" for a measurer used directly."""
    frame_size: FrameSize
    """The trial's frame size (Y.1564: the service's; RFC 2889: the marker's)."""
    offered_pps: float
    """The load, in frames per second (Y.1564: all services' together; RFC 2889: per
    sending port, or an address trial's learning rate)."""
    duration_s: float
    number: int
    """The trial's number in this measurer, from 1 (retries count)."""
    phase: str = "before"
    """"before" or "after" the traffic: when the counters hook is called."""

    def as_dict(self) -> dict[str, Any]:
        return {"test": self.test, "procedure": self.procedure,
                "frame_size": self.frame_size, "offered_pps": self.offered_pps,
                "duration_s": self.duration_s, "number": self.number}


class TrialHooks(Protocol):
    """The DUT's side of every trial (see the module docstring)."""

    def before(self, ctx: TrialContext) -> None: ...

    def after(self, ctx: TrialContext, trial: TrialResult, run: Any) -> TrialResult: ...

    def health(self, ctx: TrialContext, trial: Any) -> str | None:
        """The reason the DUT's health makes `trial` invalid; None when it is well.
        Raises (an AssertionError) when a health check fails the test."""
        ...


def generator_counters(run: Any) -> list[DutCounter]:
    """The generator's own drop counters over `run` (per port; kind generator_drop)."""
    out = []
    for port, stats in sorted((getattr(run, "ports", None) or {}).items()):
        for key, words in GENERATOR_DROP_COUNTERS.items():
            value = int(stats.get(key, 0) or 0)
            if value > 0:
                out.append(DutCounter(key, value, "generator_drop",
                                      f"generator port {port}: {words}"))
    return out


def attribution_of_run(trial: TrialResult, run: Any, dut: list[DutCounter] | None = None,
                       notes: tuple[str, ...] = (),
                       sources: tuple[str, ...] = ()) -> LossAttribution:
    """The trial's loss attributed to the DUT's counters' growth (`dut`) and the
    generator's drop counters in `run`."""
    return attribute_loss(trial.lost, dut or [], generator_counters(run), notes=notes,
                          sources=sources)


def attribute_trial(trial: TrialResult, run: Any, before: dict[str, list[DutCounter]],
                    after: dict[str, list[DutCounter]]) -> TrialResult:
    """`trial` with its loss attributed: each source's counters (by the plugin or reader
    that gave them) read `before` and `after` it, and the generator's in `run`."""
    from ..measure.dut import counter_deltas

    grown: list[DutCounter] = []
    notes: list[str] = []
    for source, counters in after.items():
        deltas, why = counter_deltas(before.get(source, []), counters)
        grown.extend(deltas)
        notes.extend(f"{source}: {n}" for n in why)
    notes.extend(f"{source}: no reading after the trial" for source in before
                 if source not in after)
    return replace(trial, attribution=attribution_of_run(trial, run, grown, tuple(notes),
                                                         tuple(after)))


class CounterHooks:
    """TrialHooks that read counters around each trial with plain callables, by source
    name (``CounterHooks({"dut": dut.trial_counters})``): the loss attribution without
    pytest, for scripts and the engine-level tests."""

    def __init__(self, readers: dict[str, Any]) -> None:
        self.readers = dict(readers)
        self._before: dict[str, list[DutCounter]] = {}

    def _read(self) -> dict[str, list[DutCounter]]:
        return {name: list(read()) for name, read in self.readers.items()}

    def before(self, ctx: TrialContext) -> None:
        self._before = self._read()

    def after(self, ctx: TrialContext, trial: TrialResult, run: Any) -> TrialResult:
        return attribute_trial(trial, run, self._before, self._read())

    def health(self, ctx: TrialContext, trial: Any) -> str | None:
        return None


class NoDutHooks:
    """No DUT hooks: the attribution has the generator's counters only."""

    def before(self, ctx: TrialContext) -> None:
        return None

    def after(self, ctx: TrialContext, trial: TrialResult, run: Any) -> TrialResult:
        return replace(trial, attribution=attribution_of_run(trial, run))

    def health(self, ctx: TrialContext, trial: Any) -> str | None:
        return None


T = TypeVar("T")


@dataclass(frozen=True)
class RunLoss:
    """One trial's loss as the DUT hooks see it, for a procedure whose own trial record
    is not a `TrialResult` (Y.1564's samples, RFC 2889's trials): `DutTrials.around`
    passes it through the hooks and copies what they found back onto that record."""

    lost: int
    valid: bool = True
    invalid_reason: str | None = None
    attribution: LossAttribution | None = field(default=None, compare=False)
    dut_health: str | None = None

    def as_dict(self) -> dict[str, Any]:
        from ..measure.dut import dut_record

        return {"lost": self.lost, "valid": self.valid,
                "invalid_reason": self.invalid_reason,
                **dut_record(self.attribution, self.dut_health)}


class DutTrials:
    """The DUT's side of one measurer's trials, the same for every procedure: each
    trial's context (numbered from 1), the hooks' `before` and `after` around its
    traffic (the loss attributed, the health checked), and the rule that a trial whose
    DUT could not hand frames to the generator is the generator's failure."""

    def __init__(self, hooks: TrialHooks | None, *, test: str = "",
                 procedure: str = "trial") -> None:
        self.hooks: TrialHooks = hooks if hooks is not None else NoDutHooks()
        self.test = test
        self.procedure = procedure
        self.trials_run = 0

    def context(self, frame_size: FrameSize, offered_pps: float, duration_s: float,
                procedure: str | None = None) -> TrialContext:
        """The next trial's context (its number counts every trial of this measurer)."""
        self.trials_run += 1
        return TrialContext(self.test, procedure or self.procedure, frame_size,
                            float(offered_pps), float(duration_s), self.trials_run)

    def around(self, ctx: TrialContext, run_trial: Callable[[], tuple[Any, T]],
               lost: Callable[[T], int] | None = None) -> tuple[Any, T]:
        """`run_trial`'s (engine run, trial) between the hooks' `before` and `after`.
        The trial is a `TrialResult`, or, with `lost` (its lost frames), any frozen
        dataclass with valid, invalid_reason, attribution and dut_health: the hooks then
        judge a `RunLoss` of it and their findings are copied onto it."""
        self.hooks.before(ctx)
        run, trial = run_trial()
        after = replace(ctx, phase="after")
        if lost is None:
            judged: Any = self.hooks.after(after, trial, run)
        else:
            t: Any = trial
            judged = self.hooks.after(after, RunLoss(int(lost(trial)), t.valid,
                                                     t.invalid_reason), run)
        why = dut_saw_generator_drops(judged.attribution) if judged.valid else None
        if why is not None:
            judged = replace(judged, valid=False, invalid_reason=why)
        if lost is not None:
            judged = replace(trial, valid=judged.valid,  # type: ignore[type-var]
                             invalid_reason=judged.invalid_reason,
                             attribution=judged.attribution, dut_health=judged.dut_health)
        return run, judged

    def health(self, ctx: TrialContext, trial: Any) -> Any:
        """A trial whose loss is timed, not counted (no attribution), after the DUT's
        health hooks: invalid when they say so."""
        why = self.hooks.health(ctx, trial)
        if why is None or not trial.valid:
            return trial
        return replace(trial, valid=False, invalid_reason=f"DUT health: {why}")
