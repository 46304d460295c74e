"""RFC 9971 loss goals (NDR, PDR, ...) and each goal's outcome: what an MLRsearch is asked
for and what it found, as plain data.

Pure and light (no MLRsearch package): `throughput.FrameSizeThroughput` carries the goals
of the search it came from, and `mlr.py` (the search itself) builds them, so both import
this module and neither imports the other.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import NetloadConfigError
from ..units import MAX_RUN_S, MIN_TRIAL_S

__all__ = ["PRESETS", "LossGoal", "MlrGoalResult", "check_goals", "preset"]


def _real(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class LossGoal:
    """One RFC 9971 Search Goal, with a name ("NDR", "PDR") to find its result by.

    A load is a lower bound when trials at it, of at least `final_trial_duration_s` and
    summing to at least `duration_sum_s`, exceed `loss_ratio` for no more than
    `exceed_ratio` of that sum (shorter trials count as RFC 9971 Appendix A says). The search
    ends for the goal when its bounds are within `relative_width` of the upper bound.
    `preceding_targets` and `expansion_coefficient` only change how fast it gets there.
    The defaults are RFC 2544 §24/§26.1: one 60-s trial, no frame lost.
    """

    name: str
    loss_ratio: float
    exceed_ratio: float = 0.0
    relative_width: float = 0.005
    initial_trial_duration_s: float = 1.0
    final_trial_duration_s: float = 60.0
    duration_sum_s: float = 60.0
    preceding_targets: int = 2
    expansion_coefficient: int = 2

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name or self.name != self.name.strip():
            raise NetloadConfigError(
                f"loss goal name={self.name!r}: give a non-empty name without surrounding "
                "spaces, e.g. 'NDR' or 'PDR'")
        where = f"loss goal {self.name!r}"
        initial, final = self.initial_trial_duration_s, self.final_trial_duration_s
        rules: tuple[tuple[str, Callable[[float], bool], str], ...] = (
            ("loss_ratio", lambda v: 0 <= v < 1, " is outside [0, 1) (0: no frame may be lost)"),
            ("exceed_ratio", lambda v: 0 <= v < 1,
             " is outside [0, 1) (the share of the duration sum that may exceed loss_ratio)"),
            ("relative_width", lambda v: 0 < v < 1, " is outside (0, 1), e.g. 0.005 for 0.5 %"),
            ("initial_trial_duration_s", lambda v: MIN_TRIAL_S <= v <= MAX_RUN_S,
             f": give seconds from {MIN_TRIAL_S:g} (1 ms: a shorter trial sends too few "
             f"frames to judge) to {MAX_RUN_S} (24 h), e.g. 1.0"),
            ("final_trial_duration_s", lambda v: initial <= v <= MAX_RUN_S,
             f": give seconds >= initial_trial_duration_s ({initial} s) and at most "
             f"{MAX_RUN_S} (24 h, the longest run), e.g. 60.0"),
            ("duration_sum_s", lambda v: v >= final,
             f": give seconds >= final_trial_duration_s ({final} s)"),
        )
        for name, allowed, text in rules:   # in this order: later rules rely on earlier ones
            value = getattr(self, name)
            if not (_real(value) and allowed(value)):
                raise NetloadConfigError(f"{where}: {name}={value!r}{text}")
        if not _whole(self.preceding_targets) or self.preceding_targets < 0:
            raise NetloadConfigError(f"{where}: preceding_targets={self.preceding_targets!r}: "
                                     "give a whole number >= 0 (default 2)")
        if self.preceding_targets == 0 and self.initial_trial_duration_s < self.duration_sum_s:
            raise NetloadConfigError(
                f"{where}: preceding_targets=0 needs initial_trial_duration_s == duration_sum_s "
                f"(got {self.initial_trial_duration_s} s and {self.duration_sum_s} s); give "
                "preceding_targets >= 1")
        if not _whole(self.expansion_coefficient) or self.expansion_coefficient < 2:
            raise NetloadConfigError(f"{where}: expansion_coefficient="
                                     f"{self.expansion_coefficient!r}: give a whole number >= 2")

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


# RFC 9971 Appendix C ("Example Goals") names these two goal settings: "RFC2544" (60 s final
# trial, 60 s duration sum, 0 % loss, 0 % exceed) and "TST009" (60 s, 120 s, 0 %, 50 %: ETSI GS
# NFV-TST 009 §12.3.3 binary search with loss verification, r = 2, z = infinity).
PRESETS: dict[str, tuple[LossGoal, ...]] = {
    "rfc2544-strict": (
        LossGoal("NDR", 0.0, exceed_ratio=0.0, relative_width=0.005,
                 initial_trial_duration_s=1.0, final_trial_duration_s=60.0, duration_sum_s=60.0),
    ),
    "etsi-tst009": (
        LossGoal("NDR", 0.0, exceed_ratio=0.5, relative_width=0.005,
                 initial_trial_duration_s=1.0, final_trial_duration_s=60.0,
                 duration_sum_s=120.0),
        LossGoal("PDR", 0.005, exceed_ratio=0.5, relative_width=0.005,
                 initial_trial_duration_s=1.0, final_trial_duration_s=60.0,
                 duration_sum_s=120.0),
    ),
    "ci-fast": (
        LossGoal("NDR", 0.0, exceed_ratio=0.5, relative_width=0.02,
                 initial_trial_duration_s=0.2, final_trial_duration_s=1.0, duration_sum_s=2.0),
        LossGoal("PDR", 0.005, exceed_ratio=0.5, relative_width=0.02,
                 initial_trial_duration_s=0.2, final_trial_duration_s=1.0, duration_sum_s=2.0),
    ),
}
"""Named goal sets.

- ``rfc2544-strict``: RFC 9971's "RFC2544" goal as NDR: one 60-s trial with no loss decides.
- ``etsi-tst009``: NDR is RFC 9971's "TST009" goal (a 60-s trial; a lossy one is repeated and
  the load is a lower bound when at least half of 120 s passed). PDR uses the same trials at
  loss ratio 0.5 %: TST009 leaves the PDR loss ratio to the tester; 0.5 % is FD.io CSIT's PDR
  and the non-zero ratio of RFC 9971's example goals.
- ``ci-fast``: short trials for CI smoke runs (1-s final trials, 2 s per load, width 2 %):
  the results are not RFC 2544 throughput.
"""


def preset(name: str) -> tuple[LossGoal, ...]:
    """The goals of a named preset; NetloadConfigError names the presets otherwise."""
    if isinstance(name, str) and name.strip().lower() in PRESETS:
        return PRESETS[name.strip().lower()]
    raise NetloadConfigError(f"MLR goal preset {name!r} is unknown; choose one of "
                             f"{', '.join(PRESETS)}, or pass a tuple of LossGoal")


def check_goals(goals: str | Sequence[LossGoal]) -> tuple[LossGoal, ...]:
    """Goals as a non-empty tuple of LossGoal with distinct names (a preset name is expanded)."""
    if isinstance(goals, str):
        return preset(goals)
    if not isinstance(goals, Sequence) or not goals:
        raise NetloadConfigError(f"goals={goals!r}: give a preset name ({', '.join(PRESETS)}) "
                                 "or a non-empty tuple of LossGoal")
    out: list[LossGoal] = []
    for goal in goals:
        if not isinstance(goal, LossGoal):
            raise NetloadConfigError(f"goals: {goal!r} is not a LossGoal; give LossGoal(...) "
                                     f"objects (rfc2544.mlr) or a preset name "
                                     f"({', '.join(PRESETS)})")
        out.append(goal)
    names = [g.name.casefold() for g in out]
    if len(set(names)) != len(names):
        raise NetloadConfigError(f"goals {[g.name for g in out]} repeat a name; give each "
                                 "goal its own (case-insensitive) name")
    return tuple(out)


@dataclass(frozen=True)
class MlrGoalResult:
    """One goal's outcome: its relevant bounds (intended loads) and conditional throughput."""

    goal: LossGoal
    lower_bound_pps: float | None
    """Relevant lower bound; None when not found (min_pps was already an upper bound)."""
    upper_bound_pps: float | None
    """Relevant upper bound; None when max_pps is a lower bound."""
    conditional_throughput_pps: float | None
    """Lower bound x (1 - its quantile loss ratio), RFC 9971; <= lower_bound_pps."""
    upper_bound_by_generator: bool = False
    """The upper bound is at or above the generator ceiling: set by the generator, not the DUT."""
    lower_bound_by_generator: bool = False
    """The lower bound is only a lower bound of the DUT's, set by the generator: the upper
    bound is the generator's (`upper_bound_by_generator`), or there is none and the search's
    maximum was the generator's calibrated ceiling. The DUT was never saturated."""

    @property
    def name(self) -> str:
        return self.goal.name

    @property
    def loss_ratio(self) -> float:
        return self.goal.loss_ratio

    @property
    def exceed_ratio(self) -> float:
        return self.goal.exceed_ratio

    @property
    def relative_width(self) -> float | None:
        """Achieved (upper - lower) / upper; None without both bounds."""
        if self.lower_bound_pps is None or self.upper_bound_pps is None:
            return None
        return (self.upper_bound_pps - self.lower_bound_pps) / self.upper_bound_pps

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "loss_ratio": self.loss_ratio,
                "exceed_ratio": self.exceed_ratio, "goal": self.goal.as_dict(),
                "lower_bound_pps": self.lower_bound_pps, "upper_bound_pps": self.upper_bound_pps,
                "conditional_throughput_pps": self.conditional_throughput_pps,
                "relative_width": self.relative_width,
                "upper_bound_by_generator": self.upper_bound_by_generator,
                "lower_bound_by_generator": self.lower_bound_by_generator}
