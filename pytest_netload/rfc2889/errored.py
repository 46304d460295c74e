"""RFC 2889 §5.9 errored frames filtering.

A switch should not forward frames that are in error. One port sends frames of one
kind of error to a second port, whose address the switch knows; every frame that
arrives was forwarded, the others were filtered. The kinds covered here:

* "undersized": shorter than IEEE 802.3's 64 bytes (FCS included);
* "oversized": longer than the switch's maximum frame (1518 bytes untagged by default);
* "bad_fcs": a valid size with a wrong frame check sequence.

(The RFC also names alignment and dribble-bit errors; no generator here can send them.)

Not every generator can send every kind: a MAC pads a short frame and computes the
FCS itself, and a port's MTU bounds the largest frame. The binding says, per kind,
whether it can (`ErroredCase`: the frame size to send, or the reason it cannot), and
a kind it cannot send is skipped with that reason, in the result and the report, while
the others still run. Each case is one trial (a generator failure is retried) of
`duration_s` at the binding's rate; the result counts forwarded and filtered frames.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import NetloadConfigError
from ..measure.dut import LossAttribution, dut_record
from ..search.bisection import check_count, check_rate
from ..search.settings import TrialSettings
from ..search.trial import Measurer, valid_trial
from ._search import TIMED, timed

__all__ = ["ERRORED_KINDS", "ErroredCase", "ErroredKind", "ErroredMeasurer",
           "ErroredOutcome", "ErroredResult", "ErroredTrial", "errored_frame_filtering"]

ErroredKind = Literal["undersized", "oversized", "bad_fcs"]
ERRORED_KINDS: tuple[ErroredKind, ...] = ("undersized", "oversized", "bad_fcs")


def _kind(value: object) -> ErroredKind:
    for kind in ERRORED_KINDS:
        if kind == value:
            return kind
    raise NetloadConfigError(f"errored frame kind {value!r}: give one of "
                             f"{', '.join(map(repr, ERRORED_KINDS))}")


@dataclass(frozen=True)
class ErroredCase:
    """One kind of errored frame: the size (bytes, FCS included) the generator sends
    it at, or why it cannot send it (`skipped_reason`)."""

    kind: ErroredKind
    frame_size: int | None = None
    skipped_reason: str | None = None

    def __post_init__(self) -> None:
        _kind(self.kind)
        if (self.frame_size is None) == (self.skipped_reason is None):
            raise NetloadConfigError(f"errored case {self.kind!r}: give its frame_size or the "
                                     "reason the generator cannot send it, not both nor neither")
        if self.frame_size is not None:
            check_count(self.frame_size, f"errored case {self.kind!r} frame_size")
        if self.skipped_reason is not None and not self.skipped_reason.strip():
            raise NetloadConfigError(f"errored case {self.kind!r}: skipped_reason is empty; "
                                     "say why the generator cannot send it")


@dataclass(frozen=True)
class ErroredTrial:
    """One errored-frame trial: `tx` frames of `case` sent, `forwarded` of them arrived
    on the receiving port."""

    case: ErroredCase
    tx: int
    forwarded: int
    duration_s: float
    valid: bool = True
    invalid_reason: str | None = None
    attribution: LossAttribution | None = field(default=None, compare=False, repr=False)
    """The trial's loss attributed to the DUT's and the generator's counters (the DUT
    hooks, bench/dut_trial.py); None where not read."""
    dut_health: str | None = None
    """"ok", or the DUT health hooks' reason; None when health checks are off."""

    def __post_init__(self) -> None:
        check_count(self.tx, "errored trial tx", least=0)
        check_count(self.forwarded, "errored trial forwarded", least=0)
        check_rate(self.duration_s, "errored trial duration_s")

    @property
    def filtered(self) -> int:
        return max(self.tx - self.forwarded, 0)

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.case.kind, "frame_size": self.case.frame_size, "tx": self.tx,
                "forwarded": self.forwarded, "filtered": self.filtered,
                "duration_s": self.duration_s, "valid": self.valid,
                "invalid_reason": self.invalid_reason,
                **dut_record(self.attribution, self.dut_health)}


ErroredMeasurer = Measurer[ErroredCase, ErroredTrial]
"""One trial: the sending port sends frames of the case's kind and size for
`duration_s`; the receiving port counts those that arrive."""


@dataclass(frozen=True)
class ErroredOutcome:
    """One kind's outcome: its valid trial, or why it has none."""

    case: ErroredCase
    trial: ErroredTrial | None
    reason: str | None = None
    """Why there is no trial: the case's skipped_reason, or every try was invalid."""

    @property
    def verdict(self) -> str:
        """"filtered" (none forwarded), "forwarded" (all), "partly forwarded" or
        "skipped"."""
        t = self.trial
        if t is None:
            return "skipped"
        if t.forwarded == 0:
            return "filtered"
        return "forwarded" if t.forwarded >= t.tx else "partly forwarded"

    def as_dict(self) -> dict[str, Any]:
        t = self.trial
        return {"kind": self.case.kind, "frame_size": self.case.frame_size,
                "verdict": self.verdict, "skipped_reason": self.reason,
                "tx": None if t is None else t.tx,
                "forwarded": None if t is None else t.forwarded,
                "filtered": None if t is None else t.filtered}


@dataclass(frozen=True)
class ErroredResult:
    """RFC 2889 §5.9: per kind of errored frame, how many the switch forwarded."""

    settings: TrialSettings
    outcomes: tuple[ErroredOutcome, ...]
    trials: tuple[ErroredTrial, ...]

    @property
    def duration_s(self) -> float:
        return self.settings.timed("an errored frames result")

    def outcome(self, kind: str) -> ErroredOutcome:
        for o in self.outcomes:
            if o.case.kind == kind:
                return o
        raise NetloadConfigError(f"kind={kind!r}: this result has "
                                 f"{', '.join(o.case.kind for o in self.outcomes)}")

    @property
    def all_filtered(self) -> bool | None:
        """Every kind that ran was filtered in full; None when every kind was skipped."""
        ran = [o for o in self.outcomes if o.trial is not None]
        return None if not ran else all(o.verdict == "filtered" for o in ran)

    def as_dict(self) -> dict[str, Any]:
        return {"procedure": "rfc2889_errored_frame_filtering",
                "duration_s": self.duration_s, "all_filtered": self.all_filtered,
                "outcomes": [o.as_dict() for o in self.outcomes],
                "trials": [t.as_dict() for t in self.trials]}


def errored_frame_filtering(
    measurer: ErroredMeasurer,
    *,
    cases: Sequence[ErroredCase],
    settings: TrialSettings = TIMED,
) -> ErroredResult:
    """RFC 2889 §5.9: one trial of `settings.duration_s` per case the generator can send
    (a failed one retried at most `settings.retries` times), the others skipped with
    their reasons. Each kind at most once."""
    if isinstance(cases, (str, bytes)) or not isinstance(cases, Sequence) or not cases:
        raise NetloadConfigError(f"cases={cases!r}: give one ErroredCase per kind, e.g. "
                                 "ErroredCase('oversized', frame_size=1519)")
    kinds = [c.kind for c in cases if isinstance(c, ErroredCase)]
    if len(kinds) != len(cases) or len(set(kinds)) != len(kinds):
        raise NetloadConfigError(f"cases: give ErroredCase values, each kind once (got "
                                 f"{[getattr(c, 'kind', c) for c in cases]!r})")
    settings = timed(settings)
    duration = settings.timed("errored_frame_filtering")
    log: list[ErroredTrial] = []
    outcomes = []
    for case in cases:
        if case.skipped_reason is not None:
            outcomes.append(ErroredOutcome(case, None, case.skipped_reason))
            continue
        tries: list[ErroredTrial] = []
        trial = valid_trial(lambda c: measurer.measure(c, duration), case, settings.retries,
                            tries, settings.on_trial)
        log.extend(tries)
        why = None if trial is not None else (
            "every trial was invalid (the generator failed): "
            + "; ".join(dict.fromkeys(t.invalid_reason or "?" for t in tries)))
        outcomes.append(ErroredOutcome(case, trial, why))
    return ErroredResult(settings, tuple(outcomes), tuple(log))
