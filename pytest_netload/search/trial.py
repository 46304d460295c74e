"""What a search needs of a trial: whether it was valid, a retry of one the generator
failed, and the measurer that makes it.

Any procedure's trial (RFC 2544's `TrialResult`, RFC 2889's mesh, broadcast, address and
congestion trials, Y.1564's service samples) is `Judged`: it says whether it was valid
and, if not, why. A trial the generator failed is tried again at the same value, within
a bound (`valid_trial`), and never decides a search; when not one trial of a procedure
was valid, `require_valid` raises InvalidTrial naming the reasons.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

from ..errors import InvalidTrial

__all__ = ["FrameSize", "J", "Judged", "Measurer", "require_valid", "valid_trial"]

FrameSize = int | str  # bytes with FCS, or "imix"


class Judged(Protocol):
    """A trial of any procedure: whether it was valid, and why not."""

    @property
    def valid(self) -> bool: ...

    @property
    def invalid_reason(self) -> str | None: ...


J = TypeVar("J", bound=Judged)
V = TypeVar("V", int, float)
T_co = TypeVar("T_co", covariant=True)


class Measurer(Protocol[T_co]):
    """What a procedure needs from the world: one trial at a load for a duration."""

    def measure(self, load_pps: float, duration_s: float) -> T_co: ...


def valid_trial(measure: Callable[[V], J], load_pps: V, retries: int, log: list[J],
                on_trial: Callable[[J], None] | None = None) -> J | None:
    """Measure at a load until a trial is valid, at most 1 + retries tries; every try is
    logged (and shown to `on_trial`). None when no try was valid: the generator could
    not offer this load."""
    for _ in range(retries + 1):
        trial = measure(load_pps)
        log.append(trial)
        if on_trial is not None:
            on_trial(trial)
        if trial.valid:
            return trial
    return None


def require_valid(log: Sequence[Judged], what: str) -> None:
    """InvalidTrial naming the reasons when not one trial of `what` was valid."""
    if not any(t.valid for t in log):
        raise InvalidTrial(
            f"every trial of {what} was invalid (the generator, not the DUT, failed): "
            + "; ".join(dict.fromkeys(t.invalid_reason or "?" for t in log)))
