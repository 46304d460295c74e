"""The searches the RFC 2889 procedures share: a binary search over a rate (a load in
pps, a learning rate in fps) and one over a whole number (an address count), each over
any trial that says whether it was valid (rfc2544's `Judged`).

They follow rfc2544's `binary_search` (whose own signature is bound to `TrialResult`
and a frame size, so it does not fit these trials): the maximum is tried first; a
value at which every try was invalid (the generator, not the DUT, failed) caps the
search like a failure but is never counted as the DUT's, and is reported as a ceiling;
when no try at all was valid, InvalidTrial names the reasons.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic

from ..errors import NetloadConfigError
from ..rfc2544.throughput import J, Resolution, check_reachable, require_valid, valid_trial
from .ports import check_port_count

__all__ = ["CountSearch", "RateSearch", "check_count", "check_rate", "check_retries",
           "check_search", "search_count", "search_rate"]


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


def search_rate(measure: Callable[[float], J], passes: Callable[[J], bool], *,
                max_value: float, resolution: Resolution, max_trials: int, retries: int,
                what: str, min_value: float = 0.0,
                on_trial: Callable[[J], None] | None = None) -> RateSearch[J]:
    """Binary search for the highest value in (min_value, max_value] whose trial
    `passes`. With min_value > 0 the minimum is tried after the maximum fails; when it
    fails too, nothing passed (found 0.0). `what` names the search in InvalidTrial."""
    log: list[J] = []
    valid: dict[float, J] = {}
    ceiling: float | None = None

    def run(value: float) -> bool:
        nonlocal ceiling
        trial = valid_trial(measure, value, retries, log, on_trial)
        if trial is None:
            ceiling = value if ceiling is None else min(ceiling, value)
            return False
        valid[value] = trial
        return passes(trial)

    lo, hi, spent, upper = min_value, max_value, 1, None
    reached = True
    if run(max_value):
        lo = max_value
    else:
        upper = None if ceiling == max_value else max_value
        if min_value > 0:
            spent += 1
            if not run(min_value):
                require_valid(log, what)
                upper = upper if ceiling == min_value else min_value
                return RateSearch(0.0, upper, ceiling, True, tuple(log),
                                  valid.get(max_value), None)
        while not resolution.reached(lo, hi) and spent < max_trials:
            mid = (lo + hi) / 2
            spent += 1
            if run(mid):
                lo = mid
            else:
                hi = mid
                if ceiling != mid:
                    upper = mid
        reached = resolution.reached(lo, hi)
    require_valid(log, what)
    found = lo if lo in valid else 0.0
    return RateSearch(found, upper, ceiling, reached, tuple(log), valid.get(max_value),
                      valid.get(found))


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
    log: list[J] = []
    ceiling: int | None = None
    upper: int | None = None
    last: dict[int, J] = {}

    def run(n: int) -> bool:
        nonlocal ceiling, upper
        for _ in range(repeats):
            trial = valid_trial(lambda _value: measure(n), float(n), retries, log, on_trial)
            if trial is None:
                ceiling = n if ceiling is None else min(ceiling, n)
                return False
            last[n] = trial
            if not passes(trial):
                upper = n if upper is None else min(upper, n)
                return False
        return True

    if run(high):
        found = high
    elif low == high or not run(low):
        found = 0
    else:
        lo, hi = low, high
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if run(mid):
                lo = mid
            else:
                hi = mid
        found = lo
    require_valid(log, what)
    return CountSearch(found, upper, ceiling, tuple(log), last.get(found))


def check_search(procedure: str, ports: int, max_value: float, max_name: str,
                 duration_s: float, resolution: float | Resolution, max_trials: int,
                 retries: int) -> tuple[float, float, Resolution]:
    """The settings of a load search over `ports` ports, checked before any trial:
    (the maximum, the duration, the Resolution); errors name the argument."""
    check_port_count(ports, ports, procedure)
    top = check_rate(max_value, max_name)
    duration = check_rate(duration_s, "duration_s")
    res = resolution if isinstance(resolution, Resolution) else Resolution(ratio=resolution)
    check_count(max_trials, "max_trials")
    check_reachable(res, max_trials, top)
    check_retries(retries)
    return top, duration, res
