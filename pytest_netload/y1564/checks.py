"""One criterion of a Y.1564 verdict: a measured figure against its SAC bounds.

The SCT and SPT both judge figures this way, so a criterion reads the same in both:
"FLR 2.00e-04 meets <= 0.1%", "IR 9.870 Mbit/s fails >= 9.800 Mbit/s".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .. import format as fmt

__all__ = ["Check", "check", "verdict"]

_LABEL = {"ir": "IR", "flr": "FLR", "ftd": "FTD", "fdv": "FDV", "availability": "availability",
          "yellow_ir": "yellow IR"}


@dataclass(frozen=True)
class Check:
    """One criterion: the measured value against its bounds (None: no bound)."""

    name: str
    """"ir", "flr", "ftd", "fdv", "availability" or "yellow_ir" (a colour-aware service's
    yellow frames)."""
    value: float | None
    low: float | None
    high: float | None
    passed: bool | None
    """None: the value could not be measured (the reason says why)."""
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "value": self.value, "low": self.low, "high": self.high,
                "passed": self.passed, "reason": self.reason}


def _figure(name: str, value: float) -> str:
    if name in ("ir", "yellow_ir"):
        return fmt.bitrate(value)
    if name == "flr":
        return fmt.loss_ratio(value)
    if name == "availability":
        return fmt.share(value)
    return fmt.time_s(value)


def _limit(name: str, value: float) -> str:
    if name in ("ir", "yellow_ir"):
        return fmt.bitrate(value)
    if name == "flr":
        return fmt.loss_ratio_exact(value)
    if name == "availability":
        return fmt.percent(value)
    return fmt.time_ns_exact(value * 1e9)


def check(name: str, value: float | None, low: float | None = None,
          high: float | None = None, *, missing: str = "no latency samples") -> Check:
    """Judge ``value`` against [low, high]; the reason names the figure and both bounds.
    A value of None is not measured (``missing`` says why): passed is None."""
    label = _LABEL[name]
    bounds = " and ".join(
        ([f">= {_limit(name, low)}"] if low is not None else [])
        + ([f"<= {_limit(name, high)}"] if high is not None else []))
    if value is None:
        return Check(name, None, low, high, None,
                     f"{label} not measured ({missing}); required {bounds}")
    ok = (low is None or value >= low) and (high is None or value <= high)
    text = f"{label} {_figure(name, value)} {'meets' if ok else 'fails'} {bounds}"
    return Check(name, float(value), low, high, ok, text)


def verdict(checks: Sequence[Check], note: str = "") -> tuple[bool | None, str]:
    """(passed, reason) of a set of criteria: False when one failed (the reason lists the
    failed ones), None when none failed but one was not measured, else True."""
    failed = [c for c in checks if c.passed is False]
    unknown = [c for c in checks if c.passed is None]
    if failed:
        return False, "; ".join(c.reason for c in failed) + note
    if unknown:
        return None, "; ".join(c.reason for c in unknown) + note
    return True, ("; ".join(c.reason for c in checks) or "nothing judged") + note
