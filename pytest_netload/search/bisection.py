"""The one bisection every standard's search runs: over a rate (a load in pps, a learning
rate in fps) or a whole number (a burst length, an address count), of a judged trial.

`bisect` is the algorithm: the maximum is tried first; when it fails, optionally the
minimum; then the bracket [lo, hi] is halved until it is narrow enough or the trial budget
is spent. `TrialLog` is its bookkeeping: every try (a trial the generator failed is
retried, `valid_trial`), the valid trial at each value, the lowest value a valid trial
failed (`upper`, the DUT's) and the lowest value at which every try was invalid
(`ceiling`, the generator's: it caps the search like a failure but is never counted as the
DUT's). `search_rate` and `search_count` put the two together; RFC 2544's throughput and
back-to-back, RFC 2889's forwarding, broadcast and address searches call them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from ..errors import NetloadConfigError
from .resolution import Resolution
from .trial import J, require_valid, valid_trial

__all__ = ["Bracket", "CountSearch", "RateSearch", "TrialLog", "bisect", "check_count",
           "check_rate", "check_retries", "search_count", "search_rate"]

V = TypeVar("V", int, float)


def check_rate(x: object, what: str) -> float:
    """A finite rate or duration > 0, or NetloadConfigError naming `what`."""
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) \
            or x <= 0:
        raise NetloadConfigError(f"{what}={x!r}: give a finite number > 0")
    return float(x)


def check_count(x: object, what: str, least: int = 1) -> int:
    """A whole number >= `least`, or NetloadConfigError naming `what`."""
    if isinstance(x, bool) or not isinstance(x, int) or x < least:
        raise NetloadConfigError(f"{what}={x!r}: give a whole number >= {least}")
    return x


def check_retries(retries: object) -> int:
    return check_count(retries, "retries", least=0)


class TrialLog(Generic[V, J]):
    """A search's trials and what they found. `judge(value)` measures at `value`
    `repeats` times (each a valid trial, the generator's failures retried up to `retries`
    times) and says whether every one `passes`; a value whose tries were all invalid
    does not pass and lowers `ceiling`, a valid trial that fails lowers `upper`."""

    def __init__(self, measure: Callable[[V], J], passes: Callable[[J], bool], *,
                 retries: int, on_trial: Callable[[J], None] | None = None,
                 repeats: int = 1) -> None:
        self.measure, self.passes, self.retries = measure, passes, retries
        self.on_trial, self.repeats = on_trial, repeats
        self.trials: list[J] = []
        """Every try, in order, invalid ones included."""
        self.valid: dict[V, J] = {}
        """The last valid trial at each value."""
        self.ceiling: V | None = None
        self.upper: V | None = None

    def judge(self, value: V) -> bool:
        for _ in range(self.repeats):
            trial = valid_trial(self.measure, value, self.retries, self.trials, self.on_trial)
            if trial is None:
                self.ceiling = value if self.ceiling is None else min(self.ceiling, value)
                return False
            self.valid[value] = trial
            if not self.passes(trial):
                self.upper = value if self.upper is None else min(self.upper, value)
                return False
        return True


@dataclass(frozen=True)
class Bracket(Generic[V]):
    """Where a bisection ended: `lo` is the highest value that passed (the search's
    minimum when nothing passed), `hi` the lowest that did not (the maximum when it
    passed). `reached`: the maximum passed, the minimum failed, or the bracket is
    within the resolution; False when the trial budget ran out first."""

    lo: V
    hi: V
    reached: bool
    top_passed: bool
    """The maximum passed."""
    bottom_failed: bool
    """The minimum was tried (`try_low`) and did not pass: nothing passed."""


def bisect(judge: Callable[[V], bool], *, low: V, high: V, midpoint: Callable[[V, V], V],
           narrow: Callable[[V, V], bool], try_low: bool = False,
           max_trials: int | None = None) -> Bracket[V]:
    """Bisection of [low, high] for the highest value that `judge` passes.

    `high` is judged first; when it passes, it is the answer. Otherwise, with `try_low`,
    `low` is judged next (not when it is `high`): when it fails, nothing passed. Then
    the bracket is halved at `midpoint(lo, hi)` until `narrow(lo, hi)` or `max_trials`
    values (None: no limit) were judged."""
    if judge(high):
        return Bracket(high, high, True, True, False)
    spent = 1
    if try_low:
        spent += 1
        if low == high or not judge(low):
            return Bracket(low, high, True, False, True)
    lo, hi = low, high
    while not narrow(lo, hi) and (max_trials is None or spent < max_trials):
        mid = midpoint(lo, hi)
        spent += 1
        if judge(mid):
            lo = mid
        else:
            hi = mid
    return Bracket(lo, hi, narrow(lo, hi), False, False)


@dataclass(frozen=True)
class RateSearch(Generic[J]):
    """Where a rate search ended: `found` passed (0.0 when nothing did), `upper` failed
    (None when the maximum passed), `ceiling` could not be offered (every try invalid)."""

    found: float
    upper: float | None
    ceiling: float | None
    reached: bool
    """The final bracket is within the resolution (True when the maximum passed or the
    minimum failed); False when max_trials ran out first."""
    trials: tuple[J, ...]
    at_max: J | None
    """The valid trial at the maximum; None when every try there was invalid."""
    passing: J | None
    """The valid trial at `found`; None when nothing passed."""
    lo: float = 0.0
    """The final bracket's lower end: `found`, or the untried minimum (`try_min=False`)
    when nothing above it passed."""


def search_rate(measure: Callable[[float], J], passes: Callable[[J], bool], *,
                max_value: float, resolution: Resolution, max_trials: int, retries: int,
                what: str, min_value: float = 0.0, try_min: bool = True,
                on_trial: Callable[[J], None] | None = None) -> RateSearch[J]:
    """Binary search for the highest value in (min_value, max_value] whose trial
    `passes`. With min_value > 0 (and `try_min`) the minimum is tried after the maximum
    fails; when it fails too, nothing passed (found 0.0). `what` names the search in
    InvalidTrial."""
    log: TrialLog[float, J] = TrialLog(measure, passes, retries=retries, on_trial=on_trial)
    out = bisect(log.judge, low=min_value, high=max_value, midpoint=lambda lo, hi: (lo + hi) / 2,
                 narrow=resolution.reached, try_low=try_min and min_value > 0,
                 max_trials=max_trials)
    require_valid(log.trials, what)
    found = 0.0 if out.bottom_failed else out.lo if out.lo in log.valid else 0.0
    return RateSearch(found, log.upper, log.ceiling, out.reached, tuple(log.trials),
                      log.valid.get(max_value), log.valid.get(found), out.lo)


@dataclass(frozen=True)
class CountSearch(Generic[J]):
    """Where a count search ended: `found` passed (0 when even the low count failed),
    `upper` failed (None when the high count passed), `ceiling` could not be measured
    (every try invalid)."""

    found: int
    upper: int | None
    ceiling: int | None
    trials: tuple[J, ...]
    passing: J | None


def search_count(measure: Callable[[int], J], passes: Callable[[J], bool], *, low: int,
                 high: int, repeats: int, retries: int, what: str,
                 on_trial: Callable[[J], None] | None = None) -> CountSearch[J]:
    """Binary search for the highest count in [low, high] whose `repeats` valid trials
    all pass: the high count first, then the low one, then halving down to adjacent
    counts. `what` names the search in InvalidTrial."""
    log: TrialLog[int, J] = TrialLog(measure, passes, retries=retries, on_trial=on_trial,
                                     repeats=repeats)
    out = bisect(log.judge, low=low, high=high, midpoint=lambda lo, hi: (lo + hi) // 2,
                 narrow=lambda lo, hi: hi - lo <= 1, try_low=True)
    require_valid(log.trials, what)
    found = 0 if out.bottom_failed else out.lo
    return CountSearch(found, log.upper, log.ceiling, tuple(log.trials), log.valid.get(found))
