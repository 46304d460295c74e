"""What a search needs of a trial: whether it was valid, a retry of one the generator
failed, and the one measurer protocol that makes it.

Any procedure's trial (RFC 2544's `TrialResult`, RFC 2889's mesh, broadcast, address and
congestion trials, Y.1564's service samples) is `Judged`: it says whether it was valid
and, if not, why. A trial the generator failed is tried again at the same value, within
a bound (`valid_trial`), and never decides a search; when not one trial of a procedure
was valid, `require_valid` raises InvalidTrial naming the reasons.

`Measurer` is the one protocol every procedure gets its trials from, whatever the
standard: ``measure(load, duration_s) -> trial``. Each standard names its own
specialisation as an alias of it (RFC 2544's ``Measurer[float, TrialResult]``, RFC 2889's
``ForwardingMeasurer = Measurer[float, MeshTrial]``, Y.1564's ``ServiceMeasurer``, ...);
none adds a protocol of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from ..errors import InvalidTrial

__all__ = ["FrameSize", "FunctionMeasurer", "J", "Judged", "Measurer", "require_valid",
           "valid_trial"]

FrameSize = int | str  # bytes with FCS, or "imix"


class Judged(Protocol):
    """A trial of any procedure: whether it was valid, and why not."""

    @property
    def valid(self) -> bool: ...

    @property
    def invalid_reason(self) -> str | None: ...


J = TypeVar("J", bound=Judged)
L_contra = TypeVar("L_contra", contravariant=True)
T_co = TypeVar("T_co", covariant=True)


class Measurer(Protocol[L_contra, T_co]):
    """What a procedure needs from the world: one trial at a load for a duration.

    `load` is what the procedure varies: a rate in pps per port (RFC 2544, RFC 2889's
    forwarding, broadcast and congestion trials), a burst length in frames (back-to-back),
    an address count with its two rates (RFC 2889's address trials), or each service's
    bit rate (Y.1564). `duration_s` is how long the trial offers its load. Where the load
    itself fixes that (a burst of n frames at a rate, an address trial's learning and
    test frames at theirs), the procedure passes the length the load implies, so every
    measurer is called one way and may size its waits from it."""

    def measure(self, load: L_contra, duration_s: float) -> T_co: ...


L = TypeVar("L")
T = TypeVar("T")


@dataclass(frozen=True)
class FunctionMeasurer(Generic[L, T]):
    """A `Measurer` made of a function of (load, duration_s): for a binding whose trials
    are closures (bench/rfc2889.py), or one object that measures for several procedures
    and gives each its own method (a fake switch in the tests)."""

    fn: Callable[[L, float], T]

    def measure(self, load: L, duration_s: float) -> T:
        return self.fn(load, duration_s)


def valid_trial(measure: Callable[[L], J], load_pps: L, retries: int, log: list[J],
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
