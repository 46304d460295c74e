"""The DUT around each trial: what the measurer asks of it, and the generator's own
drop counters for the loss attribution.

`TrialHooks` is what `EngineMeasurer` calls around each trial's traffic: `before`
once the warm-up is done (the DUT's counters are read), `after` once the drain wait
passed (read again, the loss attributed, the health checked). The plugin implements it
over its hooks (plugin/dut_hooks.py); `NoDutHooks` attributes what the generator's
own counters show and nothing else. Pytest-free.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from ..measure.dut import DutCounter, LossAttribution, attribute_loss
from ..rfc2544 import FrameSize, TrialResult

__all__ = ["GENERATOR_DROP_COUNTERS", "CounterHooks", "NoDutHooks", "TrialContext",
           "TrialHooks", "attribute_trial", "attribution_of_run", "generator_counters"]

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
    """"throughput", "mlrsearch", "latency", "frame_loss", "back_to_back", "recovery",
    "reset", or "trial" for a measurer used directly."""
    frame_size: FrameSize
    offered_pps: float
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
    from dataclasses import replace

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
        from dataclasses import replace

        return replace(trial, attribution=attribution_of_run(trial, run))

    def health(self, ctx: TrialContext, trial: Any) -> str | None:
        return None
