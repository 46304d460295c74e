"""Latency at loads: one latency trial at each of several fractions of a found rate.

RFC 2544 §26.2 measures latency at the throughput rate only. A DUT's latency at lighter
loads is what its users meet most of the time, and how it grows towards the throughput
shows the buffering; FD.io CSIT reports it on every NDR/PDR run at four load levels:
no load (its latency streams alone, 9 kpps each way), 10 %, 50 % and 90 % of the PDR.

Here the latency of every timestamped frame of the load itself is measured, so there
are no separate latency streams: a fraction 0 ("no load") is a very low load,
CSIT's 9 kpps or 1 % of the base rate, whichever is lower. Loads run from the lowest
up, one trial each (retried when the generator failed it, like every trial); a load at
which every try was invalid is kept with its reasons and no latency, so the others
still report.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import NetloadConfigError
from ..measure.latency import DEFAULT_PERCENTILES, LatencyResult
from ..search.settings import TrialSettings
from ..search.trial import valid_trial
from .goals import MlrGoalResult
from .summary import check_trials
from .trial import FrameSize, Measurer, TrialResult, ValidTrialSums, frame_size_label

__all__ = ["CSIT_FRACTIONS", "LATENCY_AT_BASES", "LATENCY_AT_PRESETS", "NO_LOAD_PPS",
           "NO_LOAD_SHARE", "LatencyAt", "LatencyAtLoads", "LoadLatency", "check_latency_at",
           "latency_at_loads", "latency_base", "load_at"]

CSIT_FRACTIONS = (0.0, 0.1, 0.5, 0.9)
"""FD.io CSIT's latency load levels: no load, 10 %, 50 % and 90 % of the PDR."""
NO_LOAD_PPS = 9000.0
"""CSIT's latency streams' rate (per direction): the "no load" level's load, at most."""
NO_LOAD_SHARE = 0.01
"""...and at most this share of the base rate, so "no load" stays light on a slow DUT."""
LATENCY_AT_BASES = ("throughput", "pdr")

_FIX = ("give fractions of the throughput from 0 to 1, e.g. [0.1, 0.5, 0.9, 1.0] "
        "(0: a very low load, as FD.io CSIT's no-load level), or 'csit' (0, 10, 50 and "
        "90 % of the PDR)")


def _fractions(what: str, value: Any) -> tuple[float, ...]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise NetloadConfigError(f"{what}={value!r}: {_FIX}")
    if not value:
        raise NetloadConfigError(f"{what}=[] names no load: {_FIX}, or leave it out")
    for f in value:
        if isinstance(f, bool) or not isinstance(f, (int, float)) or not 0 <= f <= 1:
            # NaN compares false
            raise NetloadConfigError(f"{what}={list(value)!r}: {f!r} is not a fraction from "
                                     f"0 to 1; {_FIX}")
    out = tuple(sorted(float(f) for f in value))
    if len(set(out)) != len(out):
        raise NetloadConfigError(f"{what}={list(value)!r} lists a load twice; give each once")
    return out


@dataclass(frozen=True)
class LatencyAt:
    """Where to measure latency after a throughput search: `fractions` of its rate.

    `of` is the rate the fractions apply to: "throughput" (the search's figure: a
    binary search's throughput, an MLRsearch's first goal, its NDR) or "pdr" (an
    MLRsearch's first goal with a non-zero loss ratio; the throughput when it has none).
    """

    fractions: tuple[float, ...]
    of: str = "throughput"
    preset: str | None = None

    def __post_init__(self) -> None:
        if self.of not in LATENCY_AT_BASES:
            raise NetloadConfigError(f"LatencyAt(of={self.of!r}): use one of "
                                     f"{list(LATENCY_AT_BASES)}")
        object.__setattr__(self, "fractions", _fractions("LatencyAt.fractions",
                                                         self.fractions))

    def as_dict(self) -> dict[str, Any]:
        return {"fractions": list(self.fractions), "of": self.of, "preset": self.preset}


LATENCY_AT_PRESETS: dict[str, LatencyAt] = {
    "csit": LatencyAt(CSIT_FRACTIONS, of="pdr", preset="csit"),
}


def check_latency_at(value: Any, what: str = "latency_at") -> LatencyAt | None:
    """`latency_at` as a LatencyAt: None (none), a preset name ('csit'), fractions of the
    throughput in [0, 1] (sorted; each once), or a LatencyAt; NetloadConfigError naming
    `what` and the fix otherwise."""
    if value is None or isinstance(value, LatencyAt):
        return value
    if isinstance(value, str):
        preset = LATENCY_AT_PRESETS.get(value.strip().lower())
        if preset is None:
            raise NetloadConfigError(f"{what}={value!r} is not a preset ("
                                     f"{', '.join(map(repr, LATENCY_AT_PRESETS))}); {_FIX}")
        return preset
    return LatencyAt(_fractions(what, value))


def load_at(fraction: float, base_pps: float) -> float:
    """The load of `fraction` of `base_pps`; 0 is "no load": NO_LOAD_PPS or NO_LOAD_SHARE
    of the base, whichever is lower."""
    if fraction == 0:
        return min(NO_LOAD_PPS, NO_LOAD_SHARE * base_pps)
    return fraction * base_pps


def latency_base(at: LatencyAt, throughput_pps: float,
                 goals: Sequence[MlrGoalResult] = ()) -> tuple[str, float]:
    """The rate `at`'s fractions apply to, and its name: an MLRsearch's first goal with a
    non-zero loss ratio (its lower bound) when `at` is of the PDR and there is one; else
    the throughput, named after the search's first goal (its NDR) where it has goals."""
    if at.of == "pdr":
        for goal in goals:
            if goal.loss_ratio > 0:
                return goal.name, goal.lower_bound_pps or 0.0
    return (goals[0].name if goals else "throughput"), throughput_pps


@dataclass(frozen=True)
class LoadLatency(ValidTrialSums):
    """Latency at one load: its fraction of the base rate, the load, every try."""

    fraction: float
    load_pps: float
    """The load the latency was measured at: `asked_pps`, or below it where the generator
    could not offer that and the procedure stepped down."""
    trials: tuple[TrialResult, ...]
    asked_pps: float | None = None
    """The fraction of the base rate (`load_at`); None: `load_pps`."""

    @property
    def stepped_down(self) -> bool:
        """The load is below the one asked: the generator could not offer that."""
        return self.asked_pps is not None and self.load_pps < self.asked_pps

    @property
    def latency(self) -> LatencyResult | None:
        """The valid trials' latency merged; None when no try was valid or none kept
        a histogram."""
        return self.merged_latency()

    @property
    def invalid_reason(self) -> str | None:
        """Why there is no latency at this load: every try was invalid (their reasons)."""
        if self.valid_trials:
            return None
        return "; ".join(dict.fromkeys(t.invalid_reason or "?" for t in self.trials))

    def as_dict(self) -> dict[str, Any]:
        lat = self.latency
        return {
            "fraction": self.fraction, "load_pps": self.load_pps,
            "asked_pps": self.load_pps if self.asked_pps is None else self.asked_pps,
            "latency": None if lat is None else lat.as_dict(DEFAULT_PERCENTILES),
            "lost": self.lost, "tx_packets": self.tx_packets,
            "invalid_reason": self.invalid_reason,
            "trials": [t.as_dict() for t in self.trials],
        }


@dataclass(frozen=True)
class LatencyAtLoads:
    """Latency at fractions of one frame size's throughput (or PDR)."""

    settings: TrialSettings
    """The trials' common settings: frame size, its mean, duration, retries."""
    of: str
    """What `base_pps` is: "throughput", "ndr" or "pdr"."""
    base_pps: float
    loads: tuple[LoadLatency, ...]
    preset: str | None = None

    @property
    def frame_size(self) -> FrameSize:
        return self.settings.sized("latency at loads")[0]

    @property
    def duration_s(self) -> float:
        return self.settings.timed("latency at loads")

    def __getitem__(self, fraction: float) -> LoadLatency:
        for load in self.loads:
            if load.fraction == fraction:
                return load
        raise KeyError(f"no latency at {fraction!r} of the {self.of} at "
                       f"{frame_size_label(self.frame_size)}; measured at "
                       f"{[x.fraction for x in self.loads]}")

    def as_dict(self) -> dict[str, Any]:
        return {"of": self.of, "base_pps": self.base_pps, "preset": self.preset,
                "duration_s": self.duration_s, "loads": [x.as_dict() for x in self.loads]}


def latency_at_loads(
    measurer: Measurer,
    base_pps: float,
    fractions: Sequence[float],
    *,
    settings: TrialSettings,
    of: str = "throughput",
    preset: str | None = None,
    trials: int = 1,
    step_down: Sequence[float] = (),
) -> LatencyAtLoads:
    """`trials` latency trials at each of `fractions` of `base_pps` (lowest first; 0: no
    load, `load_at`). A base of 0 pps (nothing passed the search) measures nothing: the
    result has no loads.

    `step_down`: factors in (0, 1) applied in turn to a load at which every try was
    invalid, e.g. (0.95, 0.95, 0.95) after a throughput the generator set (its own
    ceiling, which it may not hold again): the load is then measured where the generator
    can offer it, below the one asked, and the result says so (`LoadLatency.asked_pps`).
    Empty: such a load is kept without latency, with its reasons."""
    settings.sized("latency_at_loads")
    duration_s = settings.timed("latency_at_loads")
    if isinstance(base_pps, bool) or not isinstance(base_pps, (int, float)) or \
            not math.isfinite(base_pps) or base_pps < 0:
        raise NetloadConfigError(f"base_pps={base_pps!r} (the {of}): give a rate >= 0")
    chosen = _fractions("fractions", fractions)
    check_trials(trials)
    if any(isinstance(f, bool) or not isinstance(f, (int, float)) or not 0 < f < 1
           for f in step_down):
        raise NetloadConfigError(f"step_down={list(step_down)!r}: give factors in (0, 1), "
                                 "e.g. [0.95, 0.95, 0.95]")
    out: list[LoadLatency] = []
    for fraction in chosen if base_pps > 0 else ():
        asked = load = load_at(fraction, base_pps)
        log: list[TrialResult] = []
        for factor in (1.0, *step_down):
            load *= factor
            start = len(log)
            for _ in range(trials):
                valid_trial(lambda x: measurer.measure(x, duration_s), load, settings.retries,
                            log, settings.on_trial)
            if any(t.valid for t in log[start:]):
                break
        out.append(LoadLatency(fraction, load, tuple(log), asked_pps=asked))
    return LatencyAtLoads(settings, of, float(base_pps), tuple(out), preset)
