"""The DUT's side of a trial: its counters, its health, and where lost frames went.

Pure data and arithmetic, no pytest and no engine: a DUT hook (plugin/hookspecs.py)
returns `DutCounter` readings before and after each trial and may answer a health
check with a `DutHealth`; `attribute_loss` turns the counters' growth over the trial,
the DUT's and the generator's, into a `LossAttribution`: how many of the frames lost
each counter accounts for, and how many nothing does ("unaccounted").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .. import format as fmt
from ..errors import NetloadConfigError

__all__ = ["COUNTER_KINDS", "DROP_KINDS", "DutCounter", "DutHealth", "LossAttribution",
           "attribute_loss", "attribution_of", "counter_deltas", "dut_record", "loss_note",
           "merge_attributions"]

#: What a counter counts, and how the attribution table words a loss it accounts for.
#: Every kind but "info" is a drop: its growth over a trial is attributed to the loss.
DROP_KINDS: dict[str, str] = {
    "ingress_drop": "dropped on the DUT's ingress",
    "queue_drop": "dropped by the DUT's egress queue",
    "filter_drop": "dropped by the DUT's filter",
    "forwarding_drop": "dropped by the DUT's forwarding",
    "tx_error": "lost to the DUT's TX errors",
    "other_drop": "dropped by the DUT",
    "generator_drop": "dropped by the generator's own receive path",
}
COUNTER_KINDS = (*DROP_KINDS, "info")


@dataclass(frozen=True)
class DutCounter:
    """One counter reading: ``DutCounter("drops", 543, "queue_drop", "tbf on d1")``.

    ``kind`` says what it counts (`COUNTER_KINDS`): a drop kind is attributed to the
    trial's loss by its growth over the trial; "info" (packets forwarded, say) is only
    recorded. ``where`` names the place in words a reader of the report knows (the
    qdisc and interface, the filter rule). The counter must only grow: a reading
    lower after the trial than before means the DUT reset it.
    """

    name: str
    value: int
    kind: str = "info"
    where: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise NetloadConfigError(f"DutCounter name = {self.name!r}: give a non-empty "
                                     "string, e.g. 'drops'")
        if isinstance(self.value, bool) or not isinstance(self.value, int) or self.value < 0:
            raise NetloadConfigError(f"DutCounter {self.name!r}: value = {self.value!r}: give "
                                     "the counter's reading, an integer >= 0")
        if self.kind not in COUNTER_KINDS:
            raise NetloadConfigError(f"DutCounter {self.name!r}: kind = {self.kind!r}: use one "
                                     f"of {list(COUNTER_KINDS)}")
        if not isinstance(self.where, str):
            raise NetloadConfigError(f"DutCounter {self.name!r}: where = {self.where!r}: give "
                                     "a string naming the place, e.g. 'tbf on d1'")

    @property
    def key(self) -> tuple[str, str]:
        return (self.where, self.name)

    @property
    def label(self) -> str:
        return f"{self.name} ({self.where})" if self.where else self.name


HEALTH_STATES = ("ok", "invalid", "fail")


@dataclass(frozen=True)
class DutHealth:
    """What a health check found after a trial.

    ``DutHealth.ok()``; ``DutHealth.invalid("DUT rebooted")``: the trial says nothing
    about the DUT and is retried like one the generator failed; ``DutHealth.failed(
    "kernel: BUG ...")``: the test fails with that reason. A hook may also return a
    plain string, which means `invalid` with that reason.
    """

    state: str
    reason: str = ""

    def __post_init__(self) -> None:
        if self.state not in HEALTH_STATES:
            raise NetloadConfigError(f"DutHealth state = {self.state!r}: use one of "
                                     f"{list(HEALTH_STATES)} (DutHealth.ok(), .invalid(reason), "
                                     ".failed(reason))")
        if self.state != "ok" and (not isinstance(self.reason, str) or not self.reason):
            raise NetloadConfigError(f"DutHealth {self.state}: give the reason, e.g. "
                                     "DutHealth.invalid('DUT rebooted')")

    @classmethod
    def ok(cls) -> DutHealth:
        return cls("ok")

    @classmethod
    def invalid(cls, reason: str) -> DutHealth:
        return cls("invalid", reason)

    @classmethod
    def failed(cls, reason: str) -> DutHealth:
        return cls("fail", reason)


def counter_deltas(before: Sequence[DutCounter],
                   after: Sequence[DutCounter]) -> tuple[list[DutCounter], list[str]]:
    """Each counter's growth from `before` to `after`, matched by (where, name), in the
    order of `after`; and a note per counter that went down (the DUT reset it: its
    growth is unknown and it is left out) or that only one reading has."""
    old = {c.key: c for c in before}
    out: list[DutCounter] = []
    notes: list[str] = []
    for c in after:
        prior = old.pop(c.key, None)
        if prior is None:
            notes.append(f"{c.label}: no reading before the trial")
            continue
        if c.value < prior.value:
            notes.append(f"{c.label} went down from {prior.value} to {c.value} (reset during "
                         "the trial?): left out")
            continue
        out.append(DutCounter(c.name, c.value - prior.value, c.kind, c.where))
    notes.extend(f"{c.label}: no reading after the trial" for c in old.values())
    return out, notes


@dataclass(frozen=True)
class LossAttribution:
    """Where a trial's lost frames went: the counters that grew, and what is left.

    ``rows`` are (counter, frames) of every drop counter that grew, the DUT's first,
    then the generator's; ``unaccounted`` = lost - their sum: 0 when the counters
    account for every lost frame, negative when they counted more (they saw traffic
    besides the trial's, or count one drop twice).
    """

    lost: int
    rows: tuple[DutCounter, ...] = ()
    counters: tuple[DutCounter, ...] = ()
    """Every counter's growth, drop or not (the trial's DUT counters)."""
    notes: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    """The plugins whose counters were read ("netload-builtin-dut", a conftest's path)."""

    @property
    def attributed(self) -> int:
        return sum(r.value for r in self.rows)

    @property
    def unaccounted(self) -> int:
        return self.lost - self.attributed

    @property
    def exact(self) -> bool:
        return self.unaccounted == 0

    def text(self) -> str:
        """One line: "lost 543: 543 dropped by the DUT's egress queue (tbf on d1),
        0 unaccounted"."""
        parts = [f"{fmt.count(r.value)} {DROP_KINDS[r.kind]} ({r.where or r.name})"
                 for r in self.rows]
        if self.unaccounted >= 0:
            parts.append(f"{fmt.count(self.unaccounted)} unaccounted")
        else:
            parts.append(f"0 unaccounted; the counters show {fmt.count(-self.unaccounted)} "
                         "drops more than frames lost (they also count traffic besides the "
                         "trial's)")
        if not self.sources:
            parts.append("no DUT counters read: implement pytest_netload_dut_counters "
                         "(docs/hooks.md)")
        return f"lost {fmt.count(self.lost)}: " + ", ".join(parts)

    def as_dict(self) -> dict[str, Any]:
        return {
            "lost": self.lost,
            "rows": [{"kind": r.kind, "what": DROP_KINDS[r.kind], "where": r.where,
                      "counter": r.name, "frames": r.value} for r in self.rows],
            "attributed": self.attributed,
            "unaccounted": self.unaccounted,
            "text": self.text(),
            "counters": {r.label: r.value for r in self.counters},
            "notes": list(self.notes),
            "sources": list(self.sources),
        }


def attribute_loss(lost: int, dut: Iterable[DutCounter],
                   generator: Iterable[DutCounter] = (), *, notes: Sequence[str] = (),
                   sources: Sequence[str] = ()) -> LossAttribution:
    """The attribution of `lost` frames to the counters' growth over the trial: `dut`
    (the DUT's, from its hooks) and `generator` (the generator's own drop counters)."""
    if isinstance(lost, bool) or not isinstance(lost, int) or lost < 0:
        raise NetloadConfigError(f"lost = {lost!r}: give the trial's lost frames, >= 0")
    dut = list(dut)
    rows = [c for c in [*dut, *generator] if c.kind != "info" and c.value > 0]
    return LossAttribution(lost, tuple(rows), tuple(dut), tuple(notes), tuple(sources))


def attribution_of(record: Mapping[str, Any]) -> str | None:
    """The one-line attribution of a trial record (`TrialResult.as_dict()`) that lost
    frames; None for a record without one or without loss."""
    table = record.get("loss_attribution")
    if not table or not table.get("lost"):
        return None
    return str(table.get("text") or "")


def loss_note(trials: Iterable[Mapping[str, Any]]) -> str | None:
    """The attribution of the valid trial that lost frames at the lowest load among trial
    records (`TrialResult.as_dict()`): the one that bounded the search; None when no
    valid trial lost frames with its loss attributed."""
    lossy = [t for t in trials if t.get("valid", True) and attribution_of(t)]
    if not lossy:
        return None
    worst = min(lossy, key=lambda t: t.get("offered_pps") or 0.0)
    return f"at {fmt.rate_pps_exact(worst.get('offered_pps') or 0.0)}: {attribution_of(worst)}"


def dut_record(attribution: LossAttribution | None, dut_health: str | None) -> dict[str, Any]:
    """What a trial record (its ``as_dict``) says of the DUT, where known: its loss
    attribution and its health; empty without hooks' answers."""
    out: dict[str, Any] = {}
    if attribution is not None:
        out["loss_attribution"] = attribution.as_dict()
    if dut_health is not None:
        out["dut_health"] = dut_health
    return out


def merge_attributions(items: Iterable[LossAttribution]) -> LossAttribution | None:
    """The attributions of several trials as one (a run of intervals): their losses and
    each counter's growth summed, their notes and sources once each; None for none."""
    items = list(items)
    if not items:
        return None

    def summed(rows: Iterable[DutCounter]) -> tuple[DutCounter, ...]:
        total: dict[tuple[Any, ...], DutCounter] = {}
        for c in rows:
            key = (c.key, c.kind)
            prior = total.get(key)
            total[key] = c if prior is None else DutCounter(c.name, prior.value + c.value,
                                                            c.kind, c.where)
        return tuple(total.values())

    return LossAttribution(
        sum(a.lost for a in items), summed(r for a in items for r in a.rows),
        summed(c for a in items for c in a.counters),
        tuple(dict.fromkeys(n for a in items for n in a.notes)),
        tuple(dict.fromkeys(s for a in items for s in a.sources)))
