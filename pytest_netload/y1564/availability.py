"""Availability over one-second intervals, as ITU-T Y.1563 §6.11 and MEF 10.3 §8.8.4 define it.

An interval is *severely errored* (SES) when its frame loss ratio exceeds ``threshold``
(default 0.5). The service starts available. A period of unavailable time begins at the
first of ``n`` (default 10) consecutive SES, and a period of available time begins at the
first of ``n`` consecutive non-SES: the change of state applies retroactively from the
first interval of the run of n. So a run of fewer than n SES never makes a service
unavailable, and a run of fewer than n clean intervals never makes it available again.

Edge cases, decided here:

- An interval with no frames offered, or that the generator failed (``flr`` None), is
  *excluded*: it is neither available nor unavailable, it does not count in the ratio, and
  it neither ends nor extends a run of SES or non-SES (it is transparent).
- At the end of a run, intervals still pending (a run of fewer than n intervals of the
  other kind) keep the current state: the state never changed.
- No judged interval at all: the ratio is None (nothing to judge), not 1.0.

`AvailabilityTracker` is the streaming state machine: O(1) work per interval, and memory
of one byte per interval for the flags plus at most n pending indices; ``on_decide`` is
told each interval's state once it is known (at most n - 1 intervals late), so a caller
can keep per-interval data only until then. `availability` is the batch form.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..errors import NetloadConfigError

__all__ = ["AVAILABILITY_N", "AVAILABILITY_THRESHOLD", "AvailabilityResult",
           "AvailabilityTracker", "availability"]

AVAILABILITY_THRESHOLD = 0.5
AVAILABILITY_N = 10

_UNAVAILABLE, _AVAILABLE, _EXCLUDED, _PENDING = 0, 1, 2, 3
_FLAG = {_UNAVAILABLE: False, _AVAILABLE: True, _EXCLUDED: None}


def check_threshold(threshold: object, what: str = "availability_threshold") -> float:
    if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real) \
            or not 0 <= float(threshold) < 1:
        raise NetloadConfigError(f"{what}={threshold!r}: give the FLR above which an interval "
                                 "is severely errored, in [0, 1), e.g. 0.5 (Y.1563)")
    return float(threshold)


def check_n(n: object, what: str = "availability_n") -> int:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or int(n) < 1:
        raise NetloadConfigError(f"{what}={n!r}: give the number of consecutive intervals "
                                 "that change the availability state, >= 1, e.g. 10 (Y.1563)")
    return int(n)


@dataclass(frozen=True)
class AvailabilityResult:
    """Per-interval flags (True available, False unavailable, None excluded) and counts."""

    flags: tuple[bool | None, ...]
    available: int
    unavailable: int
    excluded: int
    ses: int
    threshold: float
    n: int

    @property
    def ratio(self) -> float | None:
        judged = self.available + self.unavailable
        return self.available / judged if judged else None

    def as_dict(self) -> dict[str, object]:
        return {"available_intervals": self.available,
                "unavailable_intervals": self.unavailable,
                "excluded_intervals": self.excluded, "ses_intervals": self.ses,
                "availability_ratio": self.ratio, "threshold": self.threshold, "n": self.n}


class AvailabilityTracker:
    """The Y.1563 availability state machine, fed one interval's FLR at a time."""

    def __init__(self, threshold: float = AVAILABILITY_THRESHOLD, n: int = AVAILABILITY_N, *,
                 on_decide: Callable[[int, bool], None] | None = None) -> None:
        self.threshold = check_threshold(threshold)
        self.n = check_n(n)
        self._on_decide = on_decide
        self._flags = bytearray()
        self._available = True
        self._pending: list[int] = []  # judged intervals of the other kind, in a run < n
        self._counts = [0, 0]  # unavailable, available
        self._excluded = 0
        self._ses = 0
        self._finished = False

    def add(self, flr: float | None) -> None:
        """The next interval's frame loss ratio in [0, 1]; None: excluded (nothing offered,
        or the generator failed)."""
        if self._finished:
            raise NetloadConfigError("availability tracker: add() after finish(); use a new "
                                     "tracker for a new run")
        index = len(self._flags)
        if flr is None:
            self._flags.append(_EXCLUDED)
            self._excluded += 1
            return
        if isinstance(flr, bool) or not isinstance(flr, numbers.Real) \
                or not math.isfinite(flr) or not 0 <= flr <= 1:
            raise NetloadConfigError(f"interval {index}: flr={flr!r}: give a frame loss ratio "
                                     "in [0, 1], or None for an interval not judged")
        ses = flr > self.threshold
        self._ses += ses
        self._flags.append(_PENDING)
        if ses == self._available:  # the other kind: SES while available, clean while not
            self._pending.append(index)
            if len(self._pending) == self.n:
                self._available = not self._available
                self._decide()
        else:
            self._pending.append(index)
            self._decide()

    def _decide(self) -> None:
        state = _AVAILABLE if self._available else _UNAVAILABLE
        for i in self._pending:
            self._flags[i] = state
            self._counts[state] += 1
            if self._on_decide is not None:
                self._on_decide(i, self._available)
        self._pending.clear()

    def finish(self) -> AvailabilityResult:
        """Decide the intervals still pending (they keep the current state) and the result.
        Idempotent."""
        if not self._finished:
            self._decide()
            self._finished = True
        return self.result()

    def result(self) -> AvailabilityResult:
        """The result so far; pending intervals read as the current state (without deciding
        them)."""
        state = self._available
        flags = tuple(state if f == _PENDING else _FLAG[f] for f in self._flags)
        pending = len(self._pending)
        return AvailabilityResult(
            flags, self._counts[_AVAILABLE] + (pending if state else 0),
            self._counts[_UNAVAILABLE] + (0 if state else pending), self._excluded,
            self._ses, self.threshold, self.n)

    @property
    def intervals(self) -> int:
        return len(self._flags)

    @property
    def ratio_so_far(self) -> float | None:
        """`result().ratio` in O(1) (a 24 h run's progress line asks every interval)."""
        pending = len(self._pending)
        available = self._counts[_AVAILABLE] + (pending if self._available else 0)
        judged = self._counts[_AVAILABLE] + self._counts[_UNAVAILABLE] + pending
        return available / judged if judged else None

    @property
    def pending(self) -> int:
        """Intervals not decided yet (fewer than n)."""
        return len(self._pending)

    @property
    def flags(self) -> tuple[bool | None, ...]:
        return self.result().flags

    @property
    def available_count(self) -> int:
        return self.result().available

    @property
    def unavailable_count(self) -> int:
        return self.result().unavailable

    @property
    def availability_ratio(self) -> float | None:
        return self.result().ratio


def availability(flrs: Iterable[float | None], threshold: float = AVAILABILITY_THRESHOLD,
                 n: int = AVAILABILITY_N) -> AvailabilityResult:
    """The availability of a series of interval FLRs (None: excluded), batch form."""
    tracker = AvailabilityTracker(threshold, n)
    for flr in flrs:
        tracker.add(flr)
    return tracker.finish()
