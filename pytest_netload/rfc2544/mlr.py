"""Multiple Loss Ratio search (RFC 9971) over our trials, driven by FD.io CSIT's MLRsearch.

Pure logic: no engine, no pytest. `mlr_search` adapts the same `Measurer` the binary
search uses (``measure(load_pps, duration_s) -> TrialResult``, at each goal's durations) to the
``MLRsearch`` package's ``AbstractMeasurer`` and reports, per named `LossGoal`, the relevant
lower bound (conditional throughput), the relevant upper bound and every trial that led there.

What the package is told, and why:

- A valid trial becomes ``MeasurementResult(offered_count=tx_packets, loss_count=judged_lost)``
  (its lost frames, plus its backlog when it was not steady and steady_state is "fail"). A
  both-ways trial gives the counts of the direction that lost the largest share
  (``TrialResult.judged_counts``): the load is per direction, and a loss in either fails.
  No ``intended_count`` is given (the package would count a generator shortfall as loss) and
  no ``offered_duration`` (the package sums durations; a trial that ran 59.99 s of a 60-s goal
  would then never complete its duration sum). Durations are the intended ones.
- An invalid trial (the generator failed) is retried at the same load up to ``retries`` times;
  only a valid try reaches the package. When every try was invalid, the load is above what the
  generator can offer: the package gets the answer it defines for that case, nothing sent
  (``offered_count=0``, ``intended_count`` = the frames intended, ``loss_count=0``), which it
  scores as loss ratio 1 through its ``unsent_count`` -- a bound the generator set, never frames
  the DUT lost. The lowest such load is the result's `generator_ceiling_pps`; later requests at
  or above it are answered the same way without a trial (`unmeasured_loads_pps` lists them),
  and a goal whose upper bound lies there says so (`upper_bound_by_generator`).
- A goal whose lower bound the generator set (its upper bound is the generator's, or there is
  none and the maximum was the generator's calibrated ceiling: `max_source` "generator") says
  so too (`lower_bound_by_generator`): the DUT was never saturated, and the goal's figure is
  only a lower bound of the DUT's.
- Goals never fail fast: a goal whose lower bound is not found reports None.
- `time_budget_s` counts intended trial durations (every try, warmup included), so it is
  deterministic; a trial that would cross it is not started, and the result keeps the bounds
  found so far. The package's own limit (``search_duration_max``) is wall-clock time; it is set
  from `wall_limit_s` (no limit by default).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from MLRsearch import (  # type: ignore[import-untyped]
    AbstractMeasurer,
    Config,
    GoalResult,
    MeasurementResult,
    MultipleLossRatioSearch,
    SearchGoal,
)

from ..errors import InvalidTrial, NetloadConfigError
from ..search.lower_bound import MaxSource, check_max_source
from ..search.settings import TrialSettings
from ..units import frame_bits
from .goals import PRESETS, LossGoal, MlrGoalResult, _real, check_goals, preset
from .throughput import FrameSizeThroughput
from .trial import FrameSize, Measurer, TrialResult, frame_size_label

__all__ = ["DEFAULT_RETRIES", "METHOD", "PRESETS", "LossGoal", "MlrGoalResult", "MlrResult",
           "check_goals", "mlr_search", "preset"]

METHOD = "mlrsearch"
DEFAULT_RETRIES = 2   # an invalid trial is tried again at most this often, as in binary_search
_LOG = logging.getLogger(__name__)


def _search_goal(goal: LossGoal) -> Any:
    """The package's SearchGoal (never failing fast: a missing bound is reported as None)."""
    return SearchGoal(
        loss_ratio=goal.loss_ratio, exceed_ratio=goal.exceed_ratio,
        relative_width=goal.relative_width,
        initial_trial_duration=goal.initial_trial_duration_s,
        final_trial_duration=goal.final_trial_duration_s, duration_sum=goal.duration_sum_s,
        preceding_targets=goal.preceding_targets,
        expansion_coefficient=goal.expansion_coefficient, fail_fast=False)


@dataclass(frozen=True)
class MlrResult:
    """An MLRsearch at one frame size: per-goal bounds and the audit log of every trial."""

    goals: tuple[MlrGoalResult, ...]
    trials: tuple[TrialResult, ...]
    """Every trial in order, invalid tries included (RFC 9971 asks for all of them)."""
    settings: TrialSettings
    """The trials' common settings (their durations are the goals')."""
    min_pps: float
    max_pps: float
    total_trial_time_s: float
    """Sum of the trials' intended durations (what time_budget_s counts)."""
    budget_exhausted: bool = False
    stop_reason: str | None = None
    """None when every goal was reached; else "time budget" or "wall-clock limit"."""
    time_budget_s: float | None = None
    generator_ceiling_pps: float | None = None
    """Lowest load at which every try was invalid; None if none."""
    unmeasured_loads_pps: tuple[float, ...] = ()
    """Loads asked for at or above the ceiling and answered "nothing sent" without a trial."""
    method: str = METHOD
    max_source: MaxSource | None = None
    """Where `max_pps` came from: "line_rate", "max_rate" or "generator"; None: not said."""
    generator_max_pps: float | None = None
    """The generator's calibrated ceiling when `max_source` is "generator"; None otherwise."""

    @property
    def frame_size(self) -> FrameSize:
        return self.settings.sized("an MLRsearch result")[0]

    @property
    def mean_frame_size(self) -> float:
        return self.settings.sized("an MLRsearch result")[1]

    @property
    def line_rate_bps(self) -> float | None:
        return self.settings.line_rate_bps

    @property
    def label(self) -> str:
        return frame_size_label(self.frame_size)

    def goal(self, name: str) -> MlrGoalResult:
        for g in self.goals:
            if g.name == name or (isinstance(name, str) and g.name.casefold() == name.casefold()):
                return g
        raise KeyError(f"no MLR goal named {name!r}; goals: {[g.name for g in self.goals]}")

    @property
    def ndr(self) -> MlrGoalResult:
        return self.goal("NDR")

    @property
    def pdr(self) -> MlrGoalResult:
        return self.goal("PDR")

    @property
    def valid_trials(self) -> tuple[TrialResult, ...]:
        return tuple(t for t in self.trials if t.valid)

    def throughput(self, goal: str | None = None) -> FrameSizeThroughput:
        """RFC 2544 §26.1 throughput from one goal (default: the first, as `throughput()`):
        its relevant lower bound (0 when not found), its upper bound, loss ratio and final
        trial duration. Every goal's bounds ride along in `goals`, that goal first."""
        g = self.goals[0] if goal is None else self.goal(goal)
        return FrameSizeThroughput(
            replace(self.settings, duration_s=g.goal.final_trial_duration_s),
            g.lower_bound_pps or 0.0, g.upper_bound_pps, self.max_pps, self.trials,
            g.loss_ratio, generator_ceiling_pps=self.generator_ceiling_pps,
            method=self.method, goals=(g, *(o for o in self.goals if o is not g)),
            max_source=self.max_source, generator_max_pps=self.generator_max_pps)

    def bps(self, name: str, layer: str = "l1") -> float | None:
        """A goal's conditional throughput as a bit rate at `layer`; None without a lower bound."""
        pps = self.goal(name).conditional_throughput_pps
        return None if pps is None else pps * frame_bits(self.mean_frame_size, layer)

    def as_dict(self) -> dict[str, Any]:
        return {
            "procedure": "throughput", "method": self.method,
            "frame_size": self.frame_size, "mean_frame_size": self.mean_frame_size,
            "min_pps": self.min_pps, "max_pps": self.max_pps,
            "line_rate_bps": self.line_rate_bps,
            "goals": [dict(g.as_dict(), throughput_bps_l1=self.bps(g.name, "l1"))
                      for g in self.goals],
            "total_trial_time_s": self.total_trial_time_s, "time_budget_s": self.time_budget_s,
            "budget_exhausted": self.budget_exhausted, "stop_reason": self.stop_reason,
            "generator_ceiling_pps": self.generator_ceiling_pps,
            "max_source": self.max_source, "generator_max_pps": self.generator_max_pps,
            "unmeasured_loads_pps": list(self.unmeasured_loads_pps),
            "trials": [t.as_dict() for t in self.trials],
        }


class _BudgetExhausted(Exception):
    """The next trial would cross time_budget_s (raised through the package, caught below)."""


class _Measurer(AbstractMeasurer):  # type: ignore[misc]
    """The package's measurer over our trials: retries, audit log, budget, generator ceiling."""

    def __init__(self, measurer: Measurer, retries: int, budget_s: float | None,
                 on_trial: Callable[[TrialResult], None] | None) -> None:
        self._measure, self._retries, self._budget_s = measurer.measure, retries, budget_s
        self._on_trial = on_trial
        self.trials: list[TrialResult] = []
        self.spent_s = 0.0
        self.ceiling_pps: float | None = None
        self.unmeasured: list[float] = []

    def measure(self, intended_duration: float, intended_load: float) -> Any:
        if self.ceiling_pps is None or intended_load < self.ceiling_pps:
            for _ in range(self._retries + 1):
                if self._budget_s is not None and \
                        self.spent_s + intended_duration > self._budget_s * (1 + 1e-12):
                    raise _BudgetExhausted
                trial = self._measure(intended_load, intended_duration)
                if not isinstance(trial, TrialResult):
                    raise NetloadConfigError(f"measure({intended_load}, {intended_duration}) "
                                             f"returned {trial!r}: it must return a TrialResult")
                self.trials.append(trial)
                self.spent_s += intended_duration
                if self._on_trial is not None:
                    self._on_trial(trial)
                if trial.valid:
                    offered, lost = trial.judged_counts()
                    return MeasurementResult(intended_duration=intended_duration,
                                             intended_load=intended_load,
                                             offered_count=offered, loss_count=lost)
            self.ceiling_pps = intended_load
        else:
            self.unmeasured.append(intended_load)
        return MeasurementResult(  # nothing sent: unsent_count carries it, loss_count stays 0
            intended_duration=intended_duration, intended_load=intended_load, offered_count=0,
            loss_count=0, intended_count=max(1, round(intended_load * intended_duration)))


def _check_rate(name: str, value: Any, optional: bool = False) -> None:
    if (value is None and optional) or (_real(value) and value > 0):
        return
    raise NetloadConfigError(f"{name}={value!r}: give a positive finite number"
                             + (" or None" if optional else ""))


def mlr_search(
    measurer: Measurer,
    *,
    min_pps: float,
    max_pps: float,
    goals: str | Sequence[LossGoal],
    settings: TrialSettings,
    time_budget_s: float | None = None,
    warmup_s: float = 0.0,
    wall_limit_s: float | None = None,
    max_source: MaxSource | None = None,
    generator_max_pps: float | None = None,
) -> MlrResult:
    """RFC 9971 MLRsearch between `min_pps` and `max_pps` for every goal at once.

    `measurer.measure(load_pps, duration_s)` runs one trial, for the durations the goals
    set (so `settings` has no duration_s). `goals` is a preset name
    (``rfc2544-strict``, ``etsi-tst009``, ``ci-fast``) or a tuple of LossGoal. `warmup_s` > 0
    runs one trial at `max_pps` first, logged and budgeted but not used. InvalidTrial names
    the reasons when no trial was valid at all. `max_source` says where `max_pps` came from
    ("line_rate", "max_rate" or "generator", with the generator's calibrated ceiling in
    `generator_max_pps`), so each goal can say whether the generator set its lower bound.
    """
    goal_tuple = check_goals(goals)
    size, mean = settings.sized("mlr_search")
    settings = replace(settings, mean_frame_size=float(mean))  # as MlrResult has always said
    if settings.duration_s is not None:
        raise NetloadConfigError(
            f"mlr_search: TrialSettings(duration_s={settings.duration_s!r}): the goals set "
            "every trial's duration (initial_trial_duration, final_trial_duration); leave "
            "duration_s None")
    _check_rate("min_pps", min_pps)
    _check_rate("max_pps", max_pps)
    if not max_pps > min_pps:
        raise NetloadConfigError(f"max_pps={max_pps!r} must be above min_pps={min_pps!r}")
    _check_rate("wall_limit_s", wall_limit_s, optional=True)
    if not _real(warmup_s) or warmup_s < 0:
        raise NetloadConfigError(f"warmup_s={warmup_s!r}: give seconds >= 0 (0: no warmup)")
    _check_rate("time_budget_s", time_budget_s, optional=True)
    max_source, generator_max_pps = check_max_source(max_source, generator_max_pps)
    first_s = warmup_s or max(g.initial_trial_duration_s for g in goal_tuple)
    if time_budget_s is not None and time_budget_s < first_s:
        raise NetloadConfigError(f"time_budget_s={time_budget_s!r} leaves no room for the first "
                                 f"trial ({first_s} s); give at least that")
    search_goals: dict[Any, None] = {}   # goals differing only by name share one package goal
    for g in goal_tuple:
        search_goals.setdefault(_search_goal(g))
    config = Config(goals=tuple(search_goals), min_load=float(min_pps),
                    max_load=float(max_pps), warmup_duration=float(warmup_s),
                    search_duration_max=math.inf if wall_limit_s is None else float(wall_limit_s))
    mlr_measurer = _Measurer(measurer, settings.retries, time_budget_s, settings.on_trial)
    searcher = MultipleLossRatioSearch(config=config)
    stop_reason: str | None = None
    try:
        found = dict(searcher.search(measurer=mlr_measurer, debug=_LOG.debug))
    except _BudgetExhausted:
        stop_reason = "time budget"
    except RuntimeError as exc:   # the package's wall-clock limit; anything else propagates
        stop_time = searcher.stop_time   # None until search() starts its clock
        if stop_time is None or time.monotonic() < stop_time or "too long" not in str(exc):
            raise
        stop_reason = "wall-clock limit"
    if stop_reason is not None:   # the bounds so far, as search() itself would compute them
        found = {sg: GoalResult.from_bounds(searcher.database.get_relevant_bounds(
            target=searcher.scaling.goal_to_final_target[sg])) for sg in search_goals}
    if not any(t.valid for t in mlr_measurer.trials):
        raise InvalidTrial(
            f"every MLRsearch trial at {frame_size_label(size)} was invalid (the generator, not "
            "the DUT, failed): "
            f"{'; '.join(dict.fromkeys(t.invalid_reason or '?' for t in mlr_measurer.trials))}")
    ceiling = mlr_measurer.ceiling_pps
    results = []
    for g in goal_tuple:
        found_goal = found[_search_goal(g)]
        low, high = found_goal.relevant_lower_bound, found_goal.relevant_upper_bound
        throughput = found_goal.conditional_throughput
        by_generator = high is not None and ceiling is not None and float(high) >= ceiling
        results.append(MlrGoalResult(
            g, None if low is None else float(low), None if high is None else float(high),
            None if throughput is None else float(throughput),
            upper_bound_by_generator=by_generator,
            lower_bound_by_generator=low is not None and (
                by_generator or (high is None and max_source == "generator"))))
    return MlrResult(
        tuple(results), tuple(mlr_measurer.trials), settings, float(min_pps),
        float(max_pps), mlr_measurer.spent_s, budget_exhausted=stop_reason is not None,
        stop_reason=stop_reason, time_budget_s=time_budget_s, generator_ceiling_pps=ceiling,
        unmeasured_loads_pps=tuple(mlr_measurer.unmeasured),
        max_source=max_source, generator_max_pps=generator_max_pps)
