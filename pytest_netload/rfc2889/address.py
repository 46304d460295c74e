"""RFC 2889 §5.7 address caching capacity and §5.8 address learning rate.

Both run over three ports. The learning port sends `count` learning frames, each
from a distinct source MAC, at the learning rate; the switch should learn that each
address lives behind the learning port. Then the test port sends test frames to each
of those addresses at the test rate. A test frame to a learned address is forwarded
to the learning port only; one to an address the switch did not learn is flooded,
and the monitor port sees it. An address count passes when every test frame reached
the learning port and none was flooded (`AddressTrial.learned_all`).

Caching capacity (§5.7): the largest address count that passes, by binary search
between an initial `low` and `high` count: the high count is tried first, then the
low one, then the bracket is halved down to adjacent counts. Each count may be tried
`repeats` times, and passes only when every try does. Between trials the measurer
ages out or flushes the address table, so each trial starts from an empty table; the
learning frames must all be sent within the table's aging time (`age_time_s`), or
early addresses age out before they are tested.

Learning rate (§5.8): the highest learning rate (frames per second) at which all of
`count` addresses are learned, by binary search between `min_rate_fps` and
`max_rate_fps` to `resolution` (a ratio of the lower bound). `count` is at most the
caching capacity, or the test measures the table size instead.

A trial the generator failed (invalid) is retried at most `retries` times; a count or
rate at which every try was invalid caps the search as a ceiling, never as the
switch's failure.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import NetloadConfigError
from ..measure.dut import LossAttribution, dut_record
from ..search.bisection import check_count, check_rate, search_count, search_rate
from ..search.lower_bound import lower_bound_by_generator
from ..search.resolution import Resolution, check_reachable
from ..search.settings import TrialSettings
from ..search.trial import Measurer

__all__ = ["DEFAULT_HIGH_ADDRESSES", "DEFAULT_LEARNING_RATE_FPS", "DEFAULT_MIN_RATE_FPS",
           "DEFAULT_TEST_RATE_FPS", "AddressCapacityResult", "AddressLoad", "AddressMeasurer",
           "AddressTrial", "LearningRateResult", "address_caching_capacity",
           "address_learning_rate"]

DEFAULT_HIGH_ADDRESSES = 65536
"""The initial high address count: 64 Ki, above the tables of most small switches."""
DEFAULT_LEARNING_RATE_FPS = 1000.0
DEFAULT_TEST_RATE_FPS = 1000.0
"""Slow enough for any switch to forward, so a failure is a learning failure."""
DEFAULT_MIN_RATE_FPS = 1.0
DEFAULT_LEARNING_RESOLUTION = 0.01
DEFAULT_LEARNING_MAX_TRIALS = 32
"""Enough to narrow [1 fps, 1 Mfps] to 1 % of a rate of a few fps."""


@dataclass(frozen=True)
class AddressTrial:
    """One address trial: `count` addresses learned, `tx` test frames sent to them;
    `forwarded` of those reached the learning port, `flooded` the monitor port."""

    count: int
    tx: int
    forwarded: int
    flooded: int
    valid: bool = True
    invalid_reason: str | None = None
    learning_rate_fps: float | None = None
    test_rate_fps: float | None = None
    attribution: LossAttribution | None = field(default=None, compare=False, repr=False)
    """The trial's loss attributed to the DUT's and the generator's counters (the DUT
    hooks, bench/dut_trial.py); None where not read."""
    dut_health: str | None = None
    """"ok", or the DUT health hooks' reason; None when health checks are off."""

    def __post_init__(self) -> None:
        check_count(self.count, "address trial count")
        for name in ("tx", "forwarded", "flooded"):
            check_count(getattr(self, name), f"address trial {name}", least=0)

    @property
    def lost(self) -> int:
        """Test frames that did not reach the learning port."""
        return max(self.tx - self.forwarded, 0)

    @property
    def learned_all(self) -> bool:
        """Every test frame was forwarded and none flooded: all addresses were learned."""
        return self.forwarded == self.tx and self.flooded == 0

    def as_dict(self) -> dict[str, Any]:
        return {"count": self.count, "tx": self.tx, "forwarded": self.forwarded,
                "flooded": self.flooded, "lost": self.lost, "learned_all": self.learned_all,
                "learning_rate_fps": self.learning_rate_fps,
                "test_rate_fps": self.test_rate_fps, "valid": self.valid,
                "invalid_reason": self.invalid_reason,
                **dut_record(self.attribution, self.dut_health)}


@dataclass(frozen=True)
class AddressLoad:
    """What an address trial offers: `count` addresses, learned at `learning_rate_fps`
    and tested at `test_rate_fps` (frames per second)."""

    count: int
    learning_rate_fps: float
    test_rate_fps: float

    def __post_init__(self) -> None:
        check_count(self.count, "count")
        check_rate(self.learning_rate_fps, "learning_rate_fps")
        check_rate(self.test_rate_fps, "test_rate_fps")

    @property
    def duration_s(self) -> float:
        """How long the trial offers traffic: `count` learning frames at the learning
        rate, then `count` test frames at the test rate. The load fixes it; it is what
        an address trial's measurer is given as its duration."""
        return self.count / self.learning_rate_fps + self.count / self.test_rate_fps


AddressMeasurer = Measurer[AddressLoad, AddressTrial]
"""One address trial on an aged-out (flushed) table: `load.count` learning frames with
distinct source MACs at `load.learning_rate_fps`, then test frames to each of those
addresses at `load.test_rate_fps`, counted on the learning and the monitor port; its
`duration_s` is the load's own (`AddressLoad.duration_s`)."""


UNTIMED = TrialSettings()
"""The address procedures' default settings: the default retries; no duration (each
trial's load sets its own)."""


def _measure(measurer: AddressMeasurer, load: AddressLoad) -> AddressTrial:
    return measurer.measure(load, load.duration_s)


def _untimed(settings: TrialSettings, procedure: str) -> TrialSettings:
    if settings.duration_s is not None:
        raise NetloadConfigError(
            f"{procedure}: TrialSettings(duration_s={settings.duration_s!r}): an address "
            "trial's count and rates set its duration; leave duration_s None")
    return settings


@dataclass(frozen=True)
class AddressCapacityResult:
    """RFC 2889 §5.7: the largest address count whose every address was learned."""

    capacity: int
    """The largest count that passed; 0 when even `low` failed (the capacity is below it)."""
    trials: tuple[AddressTrial, ...]
    low: int
    high: int
    upper: int | None
    """The smallest count that failed; None when `high` passed."""
    ceiling: int | None
    """The smallest count at which every try was invalid; None if none."""
    learning_rate_fps: float
    test_rate_fps: float
    repeats: int = 1
    age_time_s: float | None = None
    settings: TrialSettings = field(default=TrialSettings(), compare=False)
    """The trials' common settings: retries (their duration is each load's own)."""

    @property
    def at_maximum(self) -> bool:
        """`high` passed: the table holds at least that many addresses."""
        return self.capacity == self.high

    @property
    def below_low(self) -> bool:
        return self.capacity == 0

    def as_dict(self) -> dict[str, Any]:
        return {"procedure": "rfc2889_address_caching_capacity", "capacity": self.capacity,
                "low": self.low, "high": self.high, "upper": self.upper,
                "ceiling": self.ceiling, "at_maximum": self.at_maximum,
                "below_low": self.below_low, "learning_rate_fps": self.learning_rate_fps,
                "test_rate_fps": self.test_rate_fps, "repeats": self.repeats,
                "age_time_s": self.age_time_s, "trials": [t.as_dict() for t in self.trials]}


def _check_age(count: int, learning_rate_fps: float, age_time_s: float | None) -> None:
    if age_time_s is None:
        return
    learning_s = count / learning_rate_fps
    if learning_s >= age_time_s:
        raise NetloadConfigError(
            f"high={count} addresses at learning_rate_fps={learning_rate_fps:g} take "
            f"{learning_s:g} s to learn, not less than age_time_s={age_time_s:g}: the first "
            f"addresses would age out before they are tested; raise learning_rate_fps above "
            f"{count / age_time_s:g} or lower high")


def address_caching_capacity(
    measurer: AddressMeasurer,
    *,
    low: int = 1,
    high: int = DEFAULT_HIGH_ADDRESSES,
    learning_rate_fps: float = DEFAULT_LEARNING_RATE_FPS,
    test_rate_fps: float = DEFAULT_TEST_RATE_FPS,
    repeats: int = 1,
    age_time_s: float | None = None,
    settings: TrialSettings = UNTIMED,
) -> AddressCapacityResult:
    """RFC 2889 §5.7: binary search over address counts in [low, high] for the largest
    count whose every address is learned (see the module's docstring)."""
    check_count(low, "low")
    check_count(high, "high")
    if high < low:
        raise NetloadConfigError(f"high={high!r} is below low={low!r}: give high >= low")
    learn = check_rate(learning_rate_fps, "learning_rate_fps")
    test = check_rate(test_rate_fps, "test_rate_fps")
    check_count(repeats, "repeats")
    _untimed(settings, "address_caching_capacity")
    if age_time_s is not None:
        _check_age(high, learn, check_rate(age_time_s, "age_time_s"))
    out = search_count(lambda n: _measure(measurer, AddressLoad(n, learn, test)),
                       lambda t: t.learned_all, low=low, high=high, repeats=repeats,
                       retries=settings.retries, on_trial=settings.on_trial,
                       what="the address caching capacity search")
    return AddressCapacityResult(out.found, out.trials, low, high, out.upper, out.ceiling,
                                 learn, test, repeats,
                                 None if age_time_s is None else float(age_time_s), settings)


@dataclass(frozen=True)
class LearningRateResult:
    """RFC 2889 §5.8: the highest learning rate at which all `count` addresses were
    learned."""

    count: int
    learning_rate_fps: float
    """The highest rate that passed; 0.0 when even `min_rate_fps` failed."""
    upper_fps: float | None
    """The lowest rate that failed; None when `max_rate_fps` passed."""
    ceiling_fps: float | None
    """The lowest rate at which every try was invalid; None if none."""
    max_rate_fps: float
    min_rate_fps: float
    test_rate_fps: float
    resolution: Resolution
    resolution_reached: bool
    trials: tuple[AddressTrial, ...]
    settings: TrialSettings = field(default=TrialSettings(), compare=False)
    """The trials' common settings: retries (their duration is each load's own)."""

    @property
    def at_maximum(self) -> bool:
        return self.learning_rate_fps == self.max_rate_fps

    @property
    def lower_bound_by_generator(self) -> bool:
        """The learning rate is only a lower bound of the switch's, set by the generator:
        every valid trial learned every address, and a rate the generator could not offer
        (`ceiling_fps`) closed the search (search.lower_bound). The maximum rate is given
        (the marker's max_rate or 100,000 fps), never the generator's, so a learning rate
        at it is the search's limit, not the generator's."""
        return lower_bound_by_generator(self.learning_rate_fps, self.upper_fps,
                                        self.ceiling_fps, self.max_rate_fps, None)

    def as_dict(self) -> dict[str, Any]:
        return {"procedure": "rfc2889_address_learning_rate", "count": self.count,
                "learning_rate_fps": self.learning_rate_fps, "upper_fps": self.upper_fps,
                "ceiling_fps": self.ceiling_fps,
                "lower_bound_by_generator": self.lower_bound_by_generator,
                "max_rate_fps": self.max_rate_fps,
                "min_rate_fps": self.min_rate_fps, "test_rate_fps": self.test_rate_fps,
                "at_maximum": self.at_maximum, **self.resolution.as_dict(),
                "resolution_reached": self.resolution_reached,
                "trials": [t.as_dict() for t in self.trials]}


def address_learning_rate(
    measurer: AddressMeasurer,
    *,
    count: int,
    max_rate_fps: float,
    min_rate_fps: float = DEFAULT_MIN_RATE_FPS,
    test_rate_fps: float = DEFAULT_TEST_RATE_FPS,
    resolution: float = DEFAULT_LEARNING_RESOLUTION,
    max_trials: int = DEFAULT_LEARNING_MAX_TRIALS,
    settings: TrialSettings = UNTIMED,
) -> LearningRateResult:
    """RFC 2889 §5.8: binary search over learning rates in [min_rate_fps, max_rate_fps]
    for the highest at which all `count` addresses are learned, to `resolution` (a
    ratio of the lower bound in (0, 1))."""
    check_count(count, "count")
    top = check_rate(max_rate_fps, "max_rate_fps")
    bottom = check_rate(min_rate_fps, "min_rate_fps")
    if bottom >= top:
        raise NetloadConfigError(f"min_rate_fps={min_rate_fps!r} is not below max_rate_fps="
                                 f"{max_rate_fps!r}: give min_rate_fps < max_rate_fps")
    test = check_rate(test_rate_fps, "test_rate_fps")
    res = Resolution(ratio=resolution)
    check_count(max_trials, "max_trials")
    check_reachable(res, max_trials, top)
    _untimed(settings, "address_learning_rate")
    out = search_rate(lambda rate: _measure(measurer, AddressLoad(count, rate, test)),
                      lambda t: t.learned_all, max_value=top, min_value=bottom,
                      resolution=res, max_trials=max_trials, retries=settings.retries,
                      on_trial=settings.on_trial, what=f"the address learning rate search ({count} "
                                              "addresses)")
    return LearningRateResult(count, out.found, out.upper, out.ceiling, top, bottom, test,
                              res, out.reached, out.trials, settings)
