"""The user's regression threshold (--netload-regression=5%, `netload compare/report/trend
--regression 5%`): how much worse than its baseline a figure must be, besides lying outside
the noise band, to count as a regression.

A figure regresses when both hold (docs/baselines.md):

- its band lies entirely on the bad side of the baseline's band (the noise rule), and
- it is worse than the baseline by more than the threshold, relative to the baseline's
  value: (baseline - current) / |baseline| > t for higher-is-better figures (throughput,
  IR, availability, address capacity), (current - baseline) / |baseline| > t for
  lower-is-better ones (latency, FLR, FTD, FDV, recovery time).

A baseline value of 0 makes every worse value infinitely worse: a lower-is-better figure
at 0 (no loss) that rises beyond its noise band regresses whatever the threshold.
"""

from __future__ import annotations

import math
import re

from .. import format as fmt
from ..errors import NetloadConfigError

__all__ = ["MAX_THRESHOLD", "beyond_threshold", "parse_threshold", "relative_worsening",
           "threshold_text"]

MAX_THRESHOLD = 10.0
"""The largest threshold taken, 1000 %: a latency may grow tenfold; more reads as a typo."""
_NUMBER = re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
_PERCENT = re.compile(rf"\s*({_NUMBER.pattern})\s*%\s*")


def parse_threshold(text: str) -> float | None:
    """'5%' -> 0.05; '' or 'none' -> None (the noise band alone decides). Anything else is
    a NetloadConfigError that says what to write; the caller names the option."""
    raw = text.strip()
    if raw.lower() in ("", "none"):
        return None
    example = "such as 5% (a figure then regresses when it is outside its noise band and " \
              "more than 5 % worse than the baseline)"
    m = _PERCENT.fullmatch(raw)
    if m is None:
        if _NUMBER.fullmatch(raw):
            raise NetloadConfigError(f"{text!r} has no % sign: give the threshold as a "
                                     f"percentage, {example}")
        raise NetloadConfigError(f"{text!r} is not a percentage: give a number with a % sign, "
                                 f"{example}")
    value = float(m.group(1)) / 100
    if not math.isfinite(value) or value < 0:
        raise NetloadConfigError(f"{text!r}: a threshold cannot be negative; give 0% or more, "
                                 f"{example}")
    if value > MAX_THRESHOLD:
        raise NetloadConfigError(f"{text!r} is more than {fmt.percent(MAX_THRESHOLD)}: give a "
                                 f"smaller percentage, {example}")
    return value


def relative_worsening(baseline: float, current: float, higher_is_better: bool) -> float:
    """How much worse `current` is than `baseline`, as a share of |baseline| (negative:
    better); +-inf when the baseline is 0 and the value moved."""
    worse = baseline - current if higher_is_better else current - baseline
    if baseline == 0:
        return 0.0 if worse == 0 else math.copysign(math.inf, worse)
    return worse / abs(baseline)


def beyond_threshold(baseline: float, current: float, higher_is_better: bool,
                     threshold: float | None, *, worse: bool = True) -> bool:
    """Whether `current` is worse (worse=False: better) than `baseline` by more than
    `threshold`; with no threshold, whether it is worse (better) at all."""
    change = relative_worsening(baseline, current, higher_is_better)
    if not worse:
        change = -change
    return change > (threshold or 0.0)


def threshold_text(threshold: float | None) -> str:
    """'5%' or 'none'."""
    return "none" if threshold is None else fmt.percent(threshold)
