"""Unit tests of pytest_netload.rfc2544.mlr: MLRsearch against fake DUT models (no engine)."""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_netload.errors import InvalidTrial, NetloadConfigError
from pytest_netload.rfc2544.mlr import (
    PRESETS,
    LossGoal,
    MlrResult,
    mlr_search,
    preset,
)
from pytest_netload.rfc2544.trial import TrialResult
from pytest_netload.search import FunctionMeasurer, TrialSettings

# ---- fake DUTs -------------------------------------------------------------------------


@dataclass
class FakeDut:
    """A DUT with capacity C: no loss up to `ndr_pps` (default C), `background_loss_ratio`
    between `ndr_pps` and C, and max(background, 1 - C / load) above C. Without noise the loss
    is rounded up, so any load above a threshold loses at least one frame; with a seed it is
    binomial. The generator fails (an invalid trial) on every `fail_every`-th call and at every
    load above `generator_max_pps`."""

    capacity_pps: float
    ndr_pps: float | None = None
    background_loss_ratio: float = 0.0
    seed: int | None = None
    fail_every: int = 0
    generator_max_pps: float | None = None
    calls: list[TrialResult] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.rng = None if self.seed is None else np.random.default_rng(self.seed)

    def loss_probability(self, load: float) -> float:
        if load <= (self.capacity_pps if self.ndr_pps is None else self.ndr_pps):
            return 0.0
        if load <= self.capacity_pps:
            return self.background_loss_ratio
        return max(self.background_loss_ratio, 1.0 - self.capacity_pps / load)

    def measure(self, load_pps: float, duration_s: float) -> TrialResult:
        tx = max(1, round(load_pps * duration_s))
        broken = (self.fail_every and (len(self.calls) + 1) % self.fail_every == 0) or (
            self.generator_max_pps is not None and load_pps > self.generator_max_pps)
        if broken:   # counts that would read as 100 % loss if anyone took them for the DUT's
            trial = TrialResult(64, 64.0, load_pps, duration_s, tx // 2, 0,
                                achieved_tx_pps=load_pps / 2, valid=False,
                                invalid_reason="tx short: the generator sent half the frames")
        else:
            p = self.loss_probability(load_pps)
            if self.rng is not None:
                lost = int(self.rng.binomial(tx, p))
            else:
                lost = math.ceil(p * tx) if p > 0 else 0
            trial = TrialResult(64, 64.0, load_pps, duration_s, tx, tx - lost,
                                achieved_tx_pps=load_pps)
        self.calls.append(trial)
        return trial


def search(dut: FakeDut, goals: object = "ci-fast", **kwargs: object) -> MlrResult:
    """An MLRsearch of `dut` at 64 B; `kwargs` may set the trials' settings too."""
    trial: dict[str, object] = {"frame_size": 64, "mean_frame_size": 64.0}
    trial.update({k: kwargs.pop(k) for k in ("frame_size", "mean_frame_size", "retries",
                                             "line_rate_bps", "on_trial") if k in kwargs})
    args: dict[str, object] = {"min_pps": 1e3, "max_pps": 2e7}
    args.update(kwargs)
    return mlr_search(dut, settings=TrialSettings(**trial),  # type: ignore[arg-type]
                      goals=goals, **args)  # type: ignore[arg-type]


SHORT_STRICT = LossGoal("NDR", 0.0, exceed_ratio=0.0, relative_width=0.005,
                        initial_trial_duration_s=0.1, final_trial_duration_s=1.0,
                        duration_sum_s=1.0)
EPS = 1e-9

# ---- presets ---------------------------------------------------------------------------


def test_presets_contents() -> None:
    assert list(PRESETS) == ["rfc2544-strict", "etsi-tst009", "ci-fast"]
    (ndr,) = PRESETS["rfc2544-strict"]
    assert (ndr.name, ndr.loss_ratio, ndr.exceed_ratio, ndr.relative_width,
            ndr.final_trial_duration_s, ndr.duration_sum_s) == ("NDR", 0.0, 0.0, 0.005, 60.0, 60.0)
    ndr, pdr = PRESETS["etsi-tst009"]
    assert (ndr.name, ndr.loss_ratio, ndr.exceed_ratio, ndr.final_trial_duration_s,
            ndr.duration_sum_s, ndr.relative_width) == ("NDR", 0.0, 0.5, 60.0, 120.0, 0.005)
    assert (pdr.name, pdr.loss_ratio, pdr.exceed_ratio, pdr.final_trial_duration_s,
            pdr.duration_sum_s) == ("PDR", 0.005, 0.5, 60.0, 120.0)
    ndr, pdr = PRESETS["ci-fast"]
    for goal in (ndr, pdr):
        assert (goal.exceed_ratio, goal.relative_width, goal.initial_trial_duration_s,
                goal.final_trial_duration_s, goal.duration_sum_s) == (0.5, 0.02, 0.2, 1.0, 2.0)
    assert (ndr.name, ndr.loss_ratio, pdr.name, pdr.loss_ratio) == ("NDR", 0.0, "PDR", 0.005)


def test_preset_lookup() -> None:
    assert preset("ci-fast") is PRESETS["ci-fast"]
    assert preset(" RFC2544-Strict ") is PRESETS["rfc2544-strict"]
    with pytest.raises(NetloadConfigError, match="rfc2544-strict, etsi-tst009, ci-fast"):
        preset("fast")
    with pytest.raises(NetloadConfigError, match="unknown"):
        search(FakeDut(1e6), goals="nope")


def test_goal_defaults_are_rfc2544() -> None:
    goal = LossGoal("NDR", 0.0)
    assert (goal.exceed_ratio, goal.final_trial_duration_s, goal.duration_sum_s) == (0, 60, 60)

# ---- search results against noise-free DUTs -------------------------------------------


@settings(max_examples=40, deadline=None)
@given(capacity=st.floats(1e4, 1e7))
def test_strict_ndr_is_within_width_below_capacity(capacity: float) -> None:
    dut = FakeDut(capacity)
    result = search(dut, "rfc2544-strict")
    ndr = result.ndr
    width = ndr.goal.relative_width
    assert ndr.lower_bound_pps is not None and ndr.upper_bound_pps is not None
    assert capacity * (1 - width) < ndr.lower_bound_pps <= capacity < ndr.upper_bound_pps
    assert ndr.relative_width is not None and ndr.relative_width <= width + EPS
    assert ndr.conditional_throughput_pps == ndr.lower_bound_pps   # zero loss at the bound
    assert list(result.trials) == dut.calls                       # every trial, in order
    assert result.total_trial_time_s == pytest.approx(sum(t.duration_s for t in dut.calls))
    assert not result.budget_exhausted and result.stop_reason is None
    # the lower bound rests on a full-length (60 s) zero-loss trial at that very load
    assert any(t.offered_pps == ndr.lower_bound_pps and t.duration_s == 60.0 and t.lost == 0
               for t in result.trials)


@settings(max_examples=30, deadline=None)
@given(capacity=st.floats(1e4, 1e7))
def test_ndr_and_pdr_are_separated(capacity: float) -> None:
    dut = FakeDut(capacity, ndr_pps=0.9 * capacity, background_loss_ratio=1e-3)
    result = search(dut, "ci-fast")
    ndr, pdr = result.ndr, result.pdr
    assert ndr.lower_bound_pps is not None and pdr.lower_bound_pps is not None
    assert pdr.upper_bound_pps is not None and pdr.conditional_throughput_pps is not None
    w = ndr.goal.relative_width
    assert 0.9 * capacity * (1 - w) < ndr.lower_bound_pps <= 0.9 * capacity
    pdr_load = capacity / (1 - pdr.loss_ratio)   # above it, 1 - C / load > 0.5 %
    # whole frames: a trial of n frames can read up to 1/n above the model's loss ratio
    assert pdr_load * (1 - w) * (1 - 1e-3) < pdr.lower_bound_pps <= pdr_load < pdr.upper_bound_pps
    assert pdr.lower_bound_pps * (1 - pdr.loss_ratio) <= pdr.conditional_throughput_pps \
        <= pdr.lower_bound_pps
    assert list(result.trials) == dut.calls


@pytest.mark.parametrize(("capacity", "seed"), [(1e5, 1), (1e6, 2), (5e6, 3), (2e6, 4)])
def test_binomial_noise(capacity: float, seed: int) -> None:
    dut = FakeDut(capacity, ndr_pps=0.9 * capacity, background_loss_ratio=1e-3, seed=seed)
    result = search(dut, "ci-fast")
    ndr, pdr = result.ndr, result.pdr
    assert ndr.lower_bound_pps is not None and pdr.lower_bound_pps is not None
    assert 0.9 * capacity * (1 - 0.02) < ndr.lower_bound_pps <= 0.9 * capacity
    pdr_load = capacity / (1 - 0.005)
    assert pdr_load * 0.97 < pdr.lower_bound_pps < pdr_load * 1.01
    assert list(result.trials) == dut.calls


def test_max_load_is_a_lower_bound() -> None:
    result = search(FakeDut(5e7), (SHORT_STRICT,))
    ndr = result.ndr
    assert (ndr.lower_bound_pps, ndr.upper_bound_pps, ndr.relative_width) == (2e7, None, None)


def test_min_load_is_an_upper_bound() -> None:
    result = search(FakeDut(500.0), (SHORT_STRICT,))
    ndr = result.ndr
    assert ndr.lower_bound_pps is None and ndr.conditional_throughput_pps is None
    assert ndr.upper_bound_pps == 1e3
    assert result.bps("NDR") is None


def test_goals_differing_only_by_name() -> None:
    twin = LossGoal("ZERO", **{k: v for k, v in SHORT_STRICT.as_dict().items() if k != "name"})
    result = search(FakeDut(1e6), (SHORT_STRICT, twin))
    assert result.goal("ZERO").lower_bound_pps == result.ndr.lower_bound_pps is not None


def test_warmup_trial_is_logged_and_counted() -> None:
    dut = FakeDut(1e6)
    result = search(dut, (SHORT_STRICT,), warmup_s=0.5)
    first = result.trials[0]
    assert (first.offered_pps, first.duration_s) == (2e7, 0.5)
    assert result.total_trial_time_s == pytest.approx(sum(t.duration_s for t in dut.calls))

# ---- invalid trials --------------------------------------------------------------------


@pytest.mark.parametrize("goals", ["ci-fast", "rfc2544-strict"])
def test_invalid_trials_are_retried_and_never_count_as_loss(goals: str) -> None:
    clean = search(FakeDut(1e6, ndr_pps=9e5, background_loss_ratio=1e-3), goals)
    seen: list[TrialResult] = []
    dut = FakeDut(1e6, ndr_pps=9e5, background_loss_ratio=1e-3, fail_every=3)
    result = search(dut, goals, on_trial=seen.append)
    assert result.goals == clean.goals          # the package saw the same valid trials
    assert result.valid_trials == clean.trials
    assert list(result.trials) == dut.calls == seen
    invalid = [i for i, t in enumerate(result.trials) if not t.valid]
    assert invalid and len(invalid) == len(dut.calls) // 3
    for i in invalid:   # each failure is retried at once, at the same load and duration
        again = result.trials[i + 1]
        assert (again.offered_pps, again.duration_s) == (result.trials[i].offered_pps,
                                                         result.trials[i].duration_s)
    assert result.generator_ceiling_pps is None and result.unmeasured_loads_pps == ()
    assert result.total_trial_time_s > clean.total_trial_time_s


@pytest.mark.parametrize("retries", [0, 2])
def test_generator_ceiling(retries: int) -> None:
    gen_max = 6e5
    dut = FakeDut(1e6, generator_max_pps=gen_max)
    result = search(dut, (SHORT_STRICT,), retries=retries)
    ndr = result.ndr
    ceiling = result.generator_ceiling_pps
    assert ceiling is not None and ceiling > gen_max
    assert ndr.lower_bound_pps is not None and ndr.upper_bound_pps is not None
    assert gen_max * (1 - 0.005) < ndr.lower_bound_pps <= gen_max
    assert ndr.upper_bound_by_generator and ndr.upper_bound_pps >= ceiling
    above = [t for t in result.trials if t.offered_pps > gen_max]
    assert above and not any(t.valid for t in above)
    assert all(t.lost == 0 for t in result.valid_trials)   # no DUT loss anywhere: C > gen_max
    assert set(Counter(t.offered_pps for t in above).values()) == {retries + 1}
    assert all(load >= ceiling for load in result.unmeasured_loads_pps)
    assert list(result.trials) == dut.calls


def test_dut_bound_is_not_marked_as_generator() -> None:
    result = search(FakeDut(5e5, generator_max_pps=1.5e6), (SHORT_STRICT,))
    assert result.generator_ceiling_pps is not None   # the first trial, at max_pps, failed
    assert result.ndr.upper_bound_pps is not None
    assert result.ndr.upper_bound_pps < result.generator_ceiling_pps
    assert not result.ndr.upper_bound_by_generator
    assert 5e5 * (1 - 0.005) < (result.ndr.lower_bound_pps or 0) <= 5e5


def test_every_trial_invalid_raises() -> None:
    dut = FakeDut(1e6, generator_max_pps=1.0)
    with pytest.raises(InvalidTrial, match="tx short: the generator sent half"):
        search(dut, "ci-fast")
    assert dut.calls and not any(t.valid for t in dut.calls)

# ---- budgets ---------------------------------------------------------------------------


def test_budget_exhausted_keeps_bounds_so_far() -> None:
    dut = FakeDut(1e6)
    result = search(dut, "rfc2544-strict", time_budget_s=30.0)   # no room for a 60-s trial
    assert result.budget_exhausted and result.stop_reason == "time budget"
    assert result.total_trial_time_s <= 30.0 and list(result.trials) == dut.calls
    assert all(t.duration_s < 60 for t in result.trials)
    assert result.ndr.lower_bound_pps is None   # only a 60-s zero-loss trial makes one
    if result.ndr.upper_bound_pps is not None:
        assert result.ndr.upper_bound_pps > 1e6


def test_budget_is_deterministic_and_exact() -> None:
    full = search(FakeDut(1e6, ndr_pps=9e5, background_loss_ratio=1e-3), "ci-fast")
    exact = search(FakeDut(1e6, ndr_pps=9e5, background_loss_ratio=1e-3), "ci-fast",
                   time_budget_s=full.total_trial_time_s)
    assert not exact.budget_exhausted and exact.goals == full.goals
    short = search(FakeDut(1e6, ndr_pps=9e5, background_loss_ratio=1e-3), "ci-fast",
                   time_budget_s=full.total_trial_time_s / 2)
    assert short.budget_exhausted and short.total_trial_time_s <= full.total_trial_time_s / 2
    assert short.trials == full.trials[:len(short.trials)]   # the same search, cut short
    for goal in short.goals:   # whatever bounds exist are still true bounds
        threshold = 9e5 if goal.name == "NDR" else 1e6 / 0.995
        assert goal.lower_bound_pps is None or goal.lower_bound_pps <= threshold
        assert goal.upper_bound_pps is None or goal.upper_bound_pps > threshold


def test_wall_clock_limit() -> None:
    result = search(FakeDut(1e6), "ci-fast", wall_limit_s=1e-9)
    assert result.budget_exhausted and result.stop_reason == "wall-clock limit"
    assert result.trials   # the package's initial trials ran before its clock check

# ---- reporting -------------------------------------------------------------------------


def test_result_accessors_and_dict() -> None:
    result = search(FakeDut(1e6, ndr_pps=9e5, background_loss_ratio=1e-3), "ci-fast",
                    line_rate_bps=10e9)
    assert result.goal("ndr") is result.ndr and result.goal("PDR") is result.pdr
    with pytest.raises(KeyError, match=r"no MLR goal named 'XDR'.*'NDR', 'PDR'"):
        result.goal("XDR")
    assert result.method == "mlrsearch" and result.label == "64B"
    assert result.ndr.conditional_throughput_pps is not None
    assert result.bps("NDR") == pytest.approx(result.ndr.conditional_throughput_pps * 84 * 8)
    data = json.loads(json.dumps(result.as_dict()))
    assert data["method"] == "mlrsearch" and data["line_rate_bps"] == 10e9
    assert [g["name"] for g in data["goals"]] == ["NDR", "PDR"]
    assert data["goals"][0]["lower_bound_pps"] == result.ndr.lower_bound_pps
    assert data["goals"][1]["goal"]["loss_ratio"] == 0.005
    assert len(data["trials"]) == len(result.trials)
    assert data["trials"][0] == result.trials[0].as_dict()
    strict = search(FakeDut(1e6), (SHORT_STRICT,))
    with pytest.raises(KeyError, match="no MLR goal named 'PDR'"):
        _ = strict.pdr

# ---- bad input -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"name": ""}, r"name='': give a non-empty name"),
        ({"name": " NDR"}, r"surrounding spaces"),
        ({"loss_ratio": 1.0}, r"loss_ratio=1.0 is outside \[0, 1\)"),
        ({"loss_ratio": -0.1}, r"loss_ratio=-0.1 is outside \[0, 1\)"),
        ({"loss_ratio": math.nan}, r"loss_ratio=nan is outside"),
        ({"loss_ratio": True}, r"loss_ratio=True is outside"),
        ({"exceed_ratio": 1.0}, r"exceed_ratio=1.0 is outside \[0, 1\)"),
        ({"relative_width": 0.0}, r"relative_width=0.0 is outside \(0, 1\)"),
        ({"relative_width": 1.0}, r"relative_width=1.0 is outside \(0, 1\)"),
        ({"initial_trial_duration_s": 0},
         r"initial_trial_duration_s=0: give seconds from 0.001 \(1 ms"),
        ({"initial_trial_duration_s": 1e-9, "final_trial_duration_s": 1e-9,
          "duration_sum_s": 1e-9}, r"initial_trial_duration_s=1e-09: give seconds from 0.001"),
        ({"final_trial_duration_s": 0.5},
         r"final_trial_duration_s=0.5: give seconds >= initial_trial_duration_s \(1.0 s\)"),
        ({"final_trial_duration_s": 90_000.0, "duration_sum_s": 90_000.0},
         r"final_trial_duration_s=90000.0: .* at most 86400 \(24 h"),
        ({"duration_sum_s": 30.0},
         r"duration_sum_s=30.0: give seconds >= final_trial_duration_s \(60.0 s\)"),
        ({"preceding_targets": -1}, r"preceding_targets=-1: give a whole number >= 0"),
        ({"preceding_targets": 1.5}, r"preceding_targets=1.5"),
        ({"preceding_targets": 0}, r"preceding_targets=0 needs initial_trial_duration_s =="),
        ({"expansion_coefficient": 1}, r"expansion_coefficient=1: give a whole number >= 2"),
    ],
)
def test_bad_goal(kwargs: dict[str, object], message: str) -> None:
    args: dict[str, object] = {"name": "NDR", "loss_ratio": 0.0}
    args.update(kwargs)
    with pytest.raises(NetloadConfigError, match=message) as info:
        LossGoal(**args)  # type: ignore[arg-type]
    assert isinstance(info.value, ValueError)
    if args["name"] == "NDR":
        assert "loss goal 'NDR'" in str(info.value)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"min_pps": 0}, r"min_pps=0: give a positive finite number"),
        ({"max_pps": 1e3}, r"max_pps=1000.0 must be above min_pps=1000.0"),
        ({"max_pps": math.inf}, r"max_pps=inf: give a positive finite number"),
        ({"retries": -1}, r"retries=-1: give a whole number >= 0"),
        ({"time_budget_s": 0}, r"time_budget_s=0: give a positive finite number or None"),
        ({"time_budget_s": 0.1}, r"time_budget_s=0.1 leaves no room for the first trial \(0.2 s"),
        ({"goals": ()}, r"goals=\(\): give a preset name"),
        ({"goals": ("NDR",)}, r"goals: 'NDR' is not a LossGoal"),
        ({"goals": (SHORT_STRICT, LossGoal("ndr", 0.001))}, r"repeat a name"),
        ({"frame_size": 12}, r"frame_size: 12 is not a frame size"),
        ({"mean_frame_size": 0}, r"mean_frame_size=0: give a positive finite number"),
        ({"line_rate_bps": -1}, r"line_rate_bps=-1: give a positive finite number or None"),
        ({"warmup_s": -1}, r"warmup_s=-1: give seconds >= 0"),
        ({"wall_limit_s": 0}, r"wall_limit_s=0: give a positive finite number or None"),
    ],
)
def test_bad_search_parameters(kwargs: dict[str, object], message: str) -> None:
    dut = FakeDut(1e6)
    args: dict[str, object] = {"goals": "ci-fast"}
    args.update(kwargs)
    with pytest.raises(NetloadConfigError, match=message):
        search(dut, **args)
    assert dut.calls == []   # rejected before any trial


def test_measure_must_return_a_trial() -> None:
    def measure(load_pps: float, duration_s: float) -> object:
        return None

    with pytest.raises(NetloadConfigError, match=r"returned None: it must return a TrialResult"):
        mlr_search(FunctionMeasurer(measure),  # type: ignore[arg-type]
                   settings=TrialSettings(frame_size=64, mean_frame_size=64.0),
                   min_pps=1e3, max_pps=1e6, goals="ci-fast")


def test_errors_from_measure_propagate() -> None:
    def measure(load_pps: float, duration_s: float) -> TrialResult:
        raise RuntimeError("engine gone")

    with pytest.raises(RuntimeError, match="engine gone"):
        mlr_search(FunctionMeasurer(measure),
                   settings=TrialSettings(frame_size=64, mean_frame_size=64.0),
                   min_pps=1e3, max_pps=1e6, goals="ci-fast", wall_limit_s=1e-9)
