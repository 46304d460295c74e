"""Traffic patterns compiled into pacing phases: gap tables the native TX loop replays.

A phase is a table of inter-departure gaps in integer picoseconds and a duration in ns (0: until
the run ends; only the last phase may have it). The TX loop sends packet k+1 exactly
``gaps_ps[k mod n]`` after packet k's *deadline* (deadlines accumulate from the run's start, so
the mean rate does not drift when a packet leaves late); an empty table means as fast as the port
takes packets. A stream stops sending when its last timed phase ends.

Every pattern has one signature::

    pattern.phases(to_pps, rate, *, seed) -> list[Phase]

``rate`` is the run's `units.Rate` (None when the user gave none) and ``to_pps`` converts a Rate
into the stream's mean packet rate (the caller knows the frame sizes and the line rate, e.g.
``lambda r: r.pps(stream, line_rate_bps)``). Patterns that pace at one rate (CBR, Poisson,
Gaps(rescale=True), Bursts: ``uses_rate`` is True) need ``rate``; the others (MaxRate,
Gaps(rescale=False), Ramp) refuse one, since they would ignore it. ``seed`` makes random tables
reproducible: the same seed gives the same table.
"""

from __future__ import annotations

import math
import numbers
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from pytest_netload.errors import NetloadConfigError
from pytest_netload import _native_facts
from pytest_netload.units import MAX_RUN_S, Duration, Rate, as_duration, as_rate, run_seconds

__all__ = [
    "CBR",
    "DEFAULT_TABLE_SIZE",
    "MAX_GAPS",
    "MAX_GAP_PS",
    "MAX_PHASES",
    "PATTERN_NAMES",
    "PS_PER_S",
    "Bursts",
    "Gaps",
    "MaxRate",
    "Pattern",
    "Phase",
    "Poisson",
    "Ramp",
    "RatePattern",
    "ToPps",
    "parse_pattern",
    "phase_specs",
]

PS_PER_S = 10**12
MAX_GAPS = _native_facts.MAX_GAPS  # entries per gap table (NETLOAD_MAX_GAPS)
MAX_PHASES = _native_facts.MAX_PHASES  # phases per stream (NETLOAD_MAX_PHASES)
#: Longest gap: one hour. The native core turns gaps into TSC cycles << 16 in a uint64, which
#: holds about 15 hours at a 5 GHz TSC.
MAX_GAP_PS = 3600 * PS_PER_S
_MAX_PERIOD_PS = 1 << 62  # a table's sum stays exact in int64
DEFAULT_TABLE_SIZE = 65536

#: Converts a Rate into the stream's mean packet rate (pps).
ToPps = Callable[[Rate], float]
GapTable = npt.NDArray[np.uint64]


# ---- phases ------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Phase:
    """One pacing phase: gaps in ps (uint64, each > 0; empty: maximum rate) and a duration.

    ``duration_ns`` 0 means until the run ends. The table is copied and made read-only.
    """

    gaps_ps: GapTable
    duration_ns: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "gaps_ps", _check_table(self.gaps_ps))
        d = self.duration_ns
        if not isinstance(d, numbers.Integral) or isinstance(d, bool) or not 0 <= d < 1 << 64:
            raise NetloadConfigError(f"phase duration_ns {d!r} is invalid; give an int >= 0 "
                                     "(0: until the run ends)")
        object.__setattr__(self, "duration_ns", int(d))

    @property
    def n_gaps(self) -> int:
        return int(self.gaps_ps.size)

    @property
    def period_ps(self) -> int:
        """Sum of the table: the time one pass over it takes (0 for an empty table)."""
        return int(self.gaps_ps.sum(dtype=np.uint64))

    @property
    def mean_pps(self) -> float | None:
        """The phase's mean packet rate over one table period; None for maximum rate."""
        return self.n_gaps * PS_PER_S / self.period_ps if self.n_gaps else None

    def as_spec(self) -> dict[str, Any]:
        """Plain types for the engine host: little-endian uint64 bytes, count, duration."""
        return {"gaps_ps": self.gaps_ps.astype("<u8").tobytes(), "n_gaps": self.n_gaps,
                "duration_ns": self.duration_ns}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Phase):
            return NotImplemented
        return (self.duration_ns == other.duration_ns
                and np.array_equal(self.gaps_ps, other.gaps_ps))

    def __hash__(self) -> int:
        return hash((self.duration_ns, self.gaps_ps.tobytes()))


def phase_specs(phases: Sequence[Phase]) -> list[dict[str, Any]]:
    """``[p.as_spec() for p in phases]``: what `engine.client.Tx` and the facade take."""
    return [p.as_spec() for p in phases]


def _check_table(gaps: object) -> GapTable:
    arr = np.asarray(gaps)
    if arr.size == 0:
        out = np.zeros(0, dtype=np.uint64)
    else:
        if arr.ndim != 1 or arr.dtype.kind not in "iu":
            raise NetloadConfigError(f"gap table of dtype {arr.dtype} and shape {arr.shape} is "
                                     "invalid; give a 1-D integer array of picoseconds (or use "
                                     "Gaps(seconds))")
        if arr.size > MAX_GAPS:
            raise NetloadConfigError(f"gap table of {arr.size} entries is longer than "
                                     f"{MAX_GAPS}; use a shorter table")
        bad = np.flatnonzero((arr <= 0) | (arr > MAX_GAP_PS))
        if bad.size:
            i = int(bad[0])
            raise NetloadConfigError(f"gap table entry [{i}] = {int(arr[i])} ps is invalid; gaps "
                                     f"must be 1..{MAX_GAP_PS} ps (use an empty table for "
                                     "maximum rate)")
        if float(arr.sum(dtype=np.float64)) > _MAX_PERIOD_PS:
            raise NetloadConfigError(f"gap table of {arr.size} entries sums to over 2**62 ps "
                                     "(53 days); use shorter gaps or a shorter table")
        out = arr.astype(np.uint64)
    out.flags.writeable = False
    return out


# ---- the Pattern protocol ----------------------------------------------------------------


@runtime_checkable
class Pattern(Protocol):
    """What the TX side asks of a traffic pattern."""

    @property
    def name(self) -> str:
        """Short text for reports, e.g. "cbr" or "poisson"."""
        ...

    @property
    def uses_rate(self) -> bool:
        """Whether `phases` needs the run's rate (and refuses to run without one)."""
        ...

    def phases(self, to_pps: ToPps, rate: Rate | None, *, seed: int) -> list[Phase]:
        """The phases of one stream; see the module text for the arguments."""
        ...


def _check_seed(seed: object) -> int:
    if not isinstance(seed, numbers.Integral) or isinstance(seed, bool) or seed < 0:
        raise NetloadConfigError(f"pattern seed {seed!r} is invalid; give an int >= 0")
    return int(seed)


def _check_pps(pps: object, source: object) -> float:
    if (not isinstance(pps, numbers.Real) or isinstance(pps, bool)
            or not math.isfinite(float(pps)) or pps <= 0):
        raise NetloadConfigError(f"{source} gives a packet rate of {pps!r} pps; a pattern needs "
                                 "a positive, finite packet rate")
    return float(pps)


def _check_count(n: object, what: str) -> int:
    if isinstance(n, numbers.Integral) and not isinstance(n, bool) and 1 <= int(n) <= MAX_GAPS:
        return int(n)
    raise NetloadConfigError(f"{what} {n!r} is invalid; give an int from 1 to {MAX_GAPS}")


def _period_ps(n: int, pps: float, what: str) -> int:
    """round(n / pps) in ps, exactly (pps as the binary float it is)."""
    total = round(Fraction(n * PS_PER_S) / Fraction(pps))
    if total < n:
        raise NetloadConfigError(f"{what} at {pps!r} pps needs gaps under 1 ps; give a rate "
                                 f"below {PS_PER_S:.0e} pps")
    if total > _MAX_PERIOD_PS or total > n * MAX_GAP_PS:
        raise NetloadConfigError(f"{what} at {pps!r} pps needs gaps over an hour (or a table "
                                 "period over 2**62 ps); give a higher rate or a shorter table")
    return total


def _exact_table(x: npt.NDArray[np.float64], total_ps: int) -> GapTable:
    """Integer gaps proportional to ``x`` (all > 0) that sum to exactly ``total_ps``.

    Largest-remainder rounding of the ideal gaps y = x * total / sum(x): each gap is within 1 ps
    of its ideal value. Gaps whose ideal is under 1 ps become 1 ps, paid for by taking 1 ps from
    each of the longest gaps (again, if too few gaps can spare one).
    """
    n = x.size
    y = x * (total_ps / float(x.sum()))
    floor = np.floor(y)
    gaps = np.maximum(floor, 1).astype(np.int64)
    frac = np.where(floor >= 1, y - floor, -1.0)  # clamped gaps get no extra ps
    rest = total_ps - int(gaps.sum())
    if rest > 0:
        whole, part = divmod(rest, n)
        gaps += whole
        if part:
            gaps[np.argpartition(-frac, part - 1)[:part]] += 1
    while rest < 0:  # only after clamping to 1 ps (or float noise): take from the others
        spare = np.flatnonzero(gaps > 1)
        take = spare[np.argsort(-gaps[spare], kind="stable")[:-rest]]
        gaps[take] -= 1
        rest += take.size
    return gaps.astype(np.uint64)


def _checked_seconds(x: npt.NDArray[Any], what: str) -> npt.NDArray[np.float64]:
    """``x`` as float64 seconds, or NetloadConfigError naming the first bad entry."""
    bad = np.flatnonzero(~(np.isfinite(x) & (x > 0)))
    if bad.size:
        i = int(bad[0])
        raise NetloadConfigError(f"{what}: gap [{i}] = {x[i].item()!r} s is not a positive, finite "
                                 "number of seconds; every gap must be > 0 (use MaxRate() for "
                                 "no gaps)")
    return x.astype(np.float64)


class RatePattern(ABC):
    """A pattern that paces one stream at one mean rate: one phase, until the run ends.

    Subclasses make the table with `table_ps`; `Ramp` reuses them for its steps.
    """

    @property
    @abstractmethod
    def name(self) -> str: ...

    @property
    def uses_rate(self) -> bool:
        return True

    @abstractmethod
    def table_ps(self, pps: float, *, seed: int) -> GapTable:
        """The gap table (ps, > 0) whose mean rate is ``pps``."""

    def phases(self, to_pps: ToPps, rate: Rate | None, *, seed: int) -> list[Phase]:
        if rate is None:
            raise NetloadConfigError(f"pattern {self.name!r} paces at a rate, but none was "
                                     "given; give a rate (e.g. '1Mpps') or use pattern 'max'")
        pps = _check_pps(to_pps(rate), f"rate '{rate}'")
        return [Phase(self.table_ps(pps, seed=_check_seed(seed)), 0)]


# ---- patterns ----------------------------------------------------------------------------


@dataclass(frozen=True)
class MaxRate:
    """As fast as the port takes packets: one phase with an empty table."""

    @property
    def name(self) -> str:
        return "max"

    @property
    def uses_rate(self) -> bool:
        return False

    def phases(self, to_pps: ToPps, rate: Rate | None, *, seed: int) -> list[Phase]:
        if rate is not None:
            raise NetloadConfigError(f"pattern 'max' sends as fast as possible, but rate "
                                     f"'{rate}' was given; drop the rate or use pattern 'cbr'")
        _check_seed(seed)
        return [Phase(np.zeros(0, dtype=np.uint64), 0)]


@dataclass(frozen=True)
class CBR(RatePattern):
    """Constant bit rate: one gap of round(1e12 / pps) ps.

    The gap is quantised to 1 ps: at most 0.5 ps off, so the rate's relative error is at most
    0.5 ps / gap, i.e. <= 0.5e-12 * pps (7.4e-6 at 14.88 Mpps, 0 for gaps that are whole ps).
    """

    @property
    def name(self) -> str:
        return "cbr"

    def table_ps(self, pps: float, *, seed: int = 0) -> GapTable:
        pps = _check_pps(pps, "cbr")
        return np.array([_period_ps(1, pps, "cbr")], dtype=np.uint64)


@dataclass(frozen=True)
class Poisson(RatePattern):
    """Poisson departures: ``table_size`` exponential gaps, rescaled to a mean of exactly 1/pps.

    Gaps are drawn with ``numpy.random.default_rng(seed).exponential`` and multiplied by one
    constant so that the table sums to round(table_size / pps) in ps (largest-remainder rounding,
    each gap within 1 ps of its scaled value): the mean rate is exact over each table period. A
    constant multiple of an exponential variable is exponential (c * Exp(rate l) = Exp(l / c));
    strictly, fixing the sum makes the departure times of one period the order statistics of
    uniform points, i.e. a Poisson process conditioned on its count in the period.
    """

    table_size: int = DEFAULT_TABLE_SIZE

    def __post_init__(self) -> None:
        _check_count(self.table_size, "poisson table_size")

    @property
    def name(self) -> str:
        return "poisson"

    def table_ps(self, pps: float, *, seed: int) -> GapTable:
        pps = _check_pps(pps, "poisson")
        total = _period_ps(self.table_size, pps, "poisson")
        x = np.random.default_rng(_check_seed(seed)).exponential(1.0, self.table_size)
        return _exact_table(np.maximum(x, np.finfo(np.float64).tiny), total)


def _is_distribution(source: object) -> bool:
    return (not isinstance(source, np.ndarray) and callable(getattr(source, "rvs", None))
            and callable(getattr(source, "mean", None)))


@dataclass(frozen=True, eq=False)
class Gaps(RatePattern):
    """Gaps from a frozen scipy.stats distribution or an array, in seconds.

    A distribution (anything with ``rvs`` and ``mean``, e.g. ``scipy.stats.uniform(1e-6, 1e-6)``)
    is sampled ``table_size`` times (default DEFAULT_TABLE_SIZE) with ``random_state=
    numpy.random.default_rng(seed)``; its mean must be positive and finite. An array (or list)
    of gaps is used in order and cycled; ``table_size`` does not apply to it. Non-positive or
    non-finite gaps are refused, naming the first.

    ``rescale=True``: the table is scaled (as in Poisson) so that its mean is 1/pps exactly; only
    the shape of the gaps matters. ``rescale=False``: the gaps are used as given, each rounded to
    the nearest ps (at most 0.5 ps off), and the table's own mean defines the rate: such a
    pattern takes no run rate (``uses_rate`` is False) and refuses one.
    """

    source: Any
    rescale: bool = True
    table_size: int | None = None
    _seconds: npt.NDArray[np.float64] | None = field(init=False, repr=False, default=None)

    def __post_init__(self) -> None:
        if not isinstance(self.rescale, bool):
            raise NetloadConfigError(f"gaps rescale={self.rescale!r} is invalid; give True or "
                                     "False")
        if _is_distribution(self.source):
            if self.table_size is not None:
                _check_count(self.table_size, "gaps table_size")
            try:
                mean = float(self.source.mean())
            except (TypeError, ValueError) as exc:
                raise NetloadConfigError(f"gaps distribution {self._label}: its mean fails "
                                         f"({exc}); give a univariate distribution "
                                         "with a finite mean") from exc
            if not math.isfinite(mean) or mean <= 0:
                raise NetloadConfigError(f"gaps distribution {self._label} has mean {mean!r} s; "
                                         "give one with a positive, finite mean (in seconds)")
            return
        if self.table_size is not None:
            raise NetloadConfigError(f"gaps table_size={self.table_size!r} applies to "
                                     "distributions only; an array's length is its table size")
        if isinstance(self.source, (str, bytes)) or not isinstance(
                self.source, (np.ndarray, Sequence)):
            raise NetloadConfigError(f"gaps source {self.source!r} is invalid; give a frozen "
                                     "scipy.stats distribution or a 1-D array of gaps in seconds")
        try:
            arr = np.asarray(self.source)
        except ValueError as exc:
            raise NetloadConfigError(f"gaps source {self.source!r} is not a 1-D array of "
                                     f"seconds ({exc})") from exc
        if arr.ndim != 1 or arr.dtype.kind not in "iuf" or not 1 <= arr.size <= MAX_GAPS:
            raise NetloadConfigError(f"gaps array of dtype {arr.dtype} and shape {arr.shape} is "
                                     f"invalid; give 1 to {MAX_GAPS} gaps in seconds, as numbers")
        seconds = _checked_seconds(arr, "gaps array").copy()
        seconds.flags.writeable = False
        object.__setattr__(self, "_seconds", seconds)

    @property
    def _label(self) -> str:
        dist = getattr(self.source, "dist", None)
        return str(getattr(dist, "name", type(self.source).__name__))

    @property
    def name(self) -> str:
        if self._seconds is not None:
            return f"gaps({self._seconds.size} entries)"
        return f"gaps({self._label})"

    @property
    def uses_rate(self) -> bool:
        return self.rescale

    def seconds(self, *, seed: int) -> npt.NDArray[np.float64]:
        """The gaps in seconds before quantising: the array, or ``table_size`` draws."""
        if self._seconds is not None:
            return self._seconds
        n = self.table_size or DEFAULT_TABLE_SIZE
        rng = np.random.default_rng(_check_seed(seed))
        drawn = np.asarray(self.source.rvs(size=n, random_state=rng), dtype=np.float64)
        if drawn.shape != (n,):
            raise NetloadConfigError(f"gaps distribution {self._label} drew shape "
                                     f"{drawn.shape}, not ({n},); give a univariate "
                                     "distribution")
        return _checked_seconds(drawn, f"gaps distribution {self._label} (seed {seed})")

    def table_ps(self, pps: float, *, seed: int) -> GapTable:
        if not self.rescale:
            raise NetloadConfigError(f"pattern {self.name!r} has rescale=False: its own gaps set "
                                     "the rate; use rescale=True to pace it at a given rate")
        pps = _check_pps(pps, self.name)
        x = self.seconds(seed=seed)
        return _exact_table(x, _period_ps(x.size, pps, self.name))

    def phases(self, to_pps: ToPps, rate: Rate | None, *, seed: int) -> list[Phase]:
        if self.rescale:
            return super().phases(to_pps, rate, seed=seed)
        if rate is not None:
            raise NetloadConfigError(f"pattern {self.name!r} has rescale=False, so its own gaps "
                                     f"set the rate, but rate '{rate}' was given; drop the rate "
                                     "or use rescale=True")
        x = self.seconds(seed=seed)
        gaps = np.rint(x * PS_PER_S)
        bad = np.flatnonzero((gaps < 1) | (gaps > MAX_GAP_PS))
        if bad.size:
            i = int(bad[0])
            raise NetloadConfigError(f"pattern {self.name!r}: gap [{i}] = {x[i].item()!r} s rounds to "
                                     f"{int(gaps[i])} ps; gaps must be 1 ps to one hour")
        return [Phase(gaps.astype(np.uint64), 0)]


@dataclass(frozen=True)
class Bursts(RatePattern):
    """On/off bursts at a given *average* rate.

    ``size`` packets leave ``in_burst_gap`` = max(1, round(1e12 / in_burst_pps)) ps apart (the
    default 1e9 pps is 1 ns: back to back on any real port); then the off gap makes each period
    of ``size`` packets last exactly round(size / pps) in ps: off = period - (size - 1) *
    in_burst_gap. An average rate at or above the in-burst rate (off < in_burst_gap) is refused.
    Deadlines accumulate, so a burst that leaves slower than ``in_burst_pps`` shortens the off
    gap that follows it and the average rate holds.
    """

    size: int
    in_burst_pps: float = 1e9

    def __post_init__(self) -> None:
        _check_count(self.size, "burst size")
        _check_pps(self.in_burst_pps, f"bursts in_burst_pps={self.in_burst_pps!r}")

    @property
    def name(self) -> str:
        return f"bursts({self.size})"

    @property
    def in_burst_gap_ps(self) -> int:
        return max(1, round(Fraction(PS_PER_S) / Fraction(float(self.in_burst_pps))))

    def table_ps(self, pps: float, *, seed: int = 0) -> GapTable:
        pps = _check_pps(pps, self.name)
        period = _period_ps(self.size, pps, self.name)
        gap = self.in_burst_gap_ps
        off = period - (self.size - 1) * gap
        if off < gap:
            raise NetloadConfigError(
                f"pattern {self.name!r}: an average of {pps!r} pps is at or above the in-burst "
                f"rate of {self.in_burst_pps!r} pps; lower the rate or raise in_burst_pps")
        table = np.full(self.size, gap, dtype=np.uint64)
        table[-1] = off
        return table


@dataclass(frozen=True)
class Ramp:
    """Steps of (rate, duration), each one phase paced by ``pattern`` (default CBR()).

    Rates are Rate-likes ("1Mpps", "5Gbit/s", "50%"), converted with ``to_pps``; durations are
    Duration-likes ("10s", 0.5). Every step needs a duration of at least 1 ns, except the last:
    0 holds its rate until the run ends (otherwise the stream stops after the last step). Step i
    draws its table with a seed derived from (seed, i). A ramp takes no run rate.
    """

    steps: Sequence[tuple[Rate | str | float, Duration | str | float]]
    pattern: RatePattern = field(default_factory=CBR)

    def __post_init__(self) -> None:
        raw = self.steps
        if isinstance(raw, (str, bytes)) or not isinstance(raw, Sequence) or not raw:
            raise NetloadConfigError(f"ramp steps {raw!r} are invalid; give a list of "
                                     "(rate, duration) pairs, e.g. [('1Mpps', '5s')]")
        if len(raw) > MAX_PHASES:
            raise NetloadConfigError(f"ramp of {len(raw)} steps has more than {MAX_PHASES}; "
                                     "use fewer, longer steps")
        steps: list[tuple[Rate, Duration]] = []
        for i, step in enumerate(raw):
            if isinstance(step, (str, bytes)) or not isinstance(step, Sequence) or len(step) != 2:
                raise NetloadConfigError(f"ramp step {i} {step!r} is invalid; give a "
                                         "(rate, duration) pair, e.g. ('1Mpps', '5s')")
            rate = as_rate(step[0], what=f"ramp step {i} rate")
            duration = as_duration(step[1], what=f"ramp step {i} duration")
            if duration.seconds > MAX_RUN_S:
                run_seconds(step[1], what=f"ramp step {i} duration")  # raises: over 24 h
            if duration.ns == 0 and i + 1 < len(raw):
                raise NetloadConfigError(f"ramp step {i} duration '{duration}' is under 1 ns; "
                                         "only the last step may be 0 (until the run ends)")
            steps.append((rate, duration))
        if not isinstance(self.pattern, RatePattern) or not self.pattern.uses_rate:
            raise NetloadConfigError(f"ramp pattern {self.pattern!r} cannot pace a step at a "
                                     "rate; use CBR(), Poisson(), Gaps(..., rescale=True) or "
                                     "Bursts(...)")
        object.__setattr__(self, "steps", tuple(steps))

    @property
    def name(self) -> str:
        return f"ramp({len(self.steps)} steps, {self.pattern.name})"

    @property
    def uses_rate(self) -> bool:
        return False

    def phases(self, to_pps: ToPps, rate: Rate | None, *, seed: int) -> list[Phase]:
        if rate is not None:
            raise NetloadConfigError(f"pattern {self.name!r} sets a rate per step, but rate "
                                     f"'{rate}' was given too; drop it")
        seed = _check_seed(seed)
        out = []
        for i, (step_rate, duration) in enumerate(self.steps):
            pps = _check_pps(to_pps(as_rate(step_rate)), f"ramp step {i} rate '{step_rate}'")
            table = self.pattern.table_ps(pps, seed=_step_seed(seed, i))
            out.append(Phase(table, as_duration(duration).ns))
        return out


def _step_seed(seed: int, index: int) -> int:
    return int(np.random.SeedSequence([seed, index]).generate_state(1, dtype=np.uint64)[0])


# ---- parsing -----------------------------------------------------------------------------

PATTERN_NAMES: dict[str, Callable[[], Pattern]] = {"max": MaxRate, "cbr": CBR, "poisson": Poisson}


def parse_pattern(x: object, *, what: str = "pattern") -> Pattern:
    """A Pattern from a name ("max", "cbr", "poisson"), a Pattern, a frozen scipy.stats
    distribution or an array of gaps in seconds (both as ``Gaps(x)``)."""
    if isinstance(x, str):
        key = x.strip().lower()
        if key in PATTERN_NAMES:
            return PATTERN_NAMES[key]()
    elif isinstance(x, Pattern):
        return x
    elif _is_distribution(x) or isinstance(x, (np.ndarray, list, tuple)):
        return Gaps(x)
    raise NetloadConfigError(
        f"{what} {x!r} is unknown; use one of {', '.join(map(repr, PATTERN_NAMES))}, a pattern "
        "(MaxRate(), CBR(), Poisson(), Gaps(...), Bursts(...), Ramp(...)), a frozen scipy.stats "
        "distribution or an array of gaps in seconds")
