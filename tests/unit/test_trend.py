"""Change points by minimum description length over histories of runs (pure logic)."""

from __future__ import annotations

import itertools
import json
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_netload.errors import NetloadConfigError
from pytest_netload.reports import trend
from pytest_netload.reports.baseline import HIGHER, LOWER, Key
from pytest_netload.reports.json import session_document
from pytest_netload.reports.trend import Group, classify, description_length, detect

NODE = "t.py::test_a[64B]"


def step(seed: int, at: int = 60, n: int = 100, size: float = 5.0, sigma: float = 1.0
         ) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return 1000 + rng.normal(0, sigma, n) + np.where(np.arange(n) >= at, size * sigma, 0.0)


def test_a_step_is_found_at_its_index() -> None:
    groups = detect(step(1), noise=1.0)
    assert [(g.start, g.end) for g in groups] == [(0, 60), (60, 100)]
    assert groups[0].mean == pytest.approx(1000, abs=0.5)
    assert groups[1].mean == pytest.approx(1005, abs=0.5)
    assert groups[0].stdev == pytest.approx(1, rel=0.3)
    (change,) = classify(groups, HIGHER)
    assert (change.index, change.kind) == (60, "progression")
    assert change.relative_change == pytest.approx(0.005, rel=0.2)
    assert classify(groups, LOWER)[0].kind == "regression"


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), at=st.integers(15, 85), down=st.booleans(),
       given_noise=st.booleans())
def test_a_large_step_is_found_near_its_index(seed: int, at: int, down: bool,
                                              given_noise: bool) -> None:
    values = step(seed, at, size=-6.0 if down else 6.0)
    groups = detect(values, 1.0 if given_noise else None)
    changes = classify(groups, HIGHER)
    assert any(abs(c.index - at) <= 1 and c.kind == ("regression" if down else "progression")
               for c in changes)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(3, 120), level=st.floats(-1e9, 1e9),
       sigma=st.floats(1e-3, 1e6), stated=st.floats(1.0, 3.0))
def test_noise_alone_makes_one_group(seed: int, n: int, level: float, sigma: float,
                                     stated: float) -> None:
    """40 histories of pure noise per example, each run's noise stated (at or above the
    truth): one group in at least 95 % of them (about 99.9 % measured)."""
    rng = np.random.default_rng(seed)
    single = sum(len(detect(level + rng.normal(0, sigma, n), sigma * stated)) == 1
                 for _ in range(40))
    assert single >= 38


@pytest.mark.parametrize(("n", "noise"), [(5, None), (12, None), (40, None), (8, 0.5),
                                          (20, 1 / 3)])
def test_noise_alone_with_unknown_or_understated_noise(n: int, noise: float | None) -> None:
    """The floor estimated from the history, or a stated noise below the truth: false
    change points stay under 5 % of 500 histories (about 1.5 % for short ones)."""
    rng = np.random.default_rng(n)
    false = sum(len(detect(rng.normal(0, 1, n), noise)) > 1 for _ in range(500))
    assert false <= 25


def test_a_ramp_becomes_a_staircase() -> None:
    rng = np.random.default_rng(5)
    values = np.linspace(0, 12, 120) + rng.normal(0, 1, 120)
    groups = detect(values, 1.0)
    assert len(groups) >= 3
    means = [g.mean for g in groups]
    assert means == sorted(means)
    assert {c.kind for c in classify(groups, HIGHER)} == {"progression"}
    assert {c.kind for c in classify(groups, LOWER)} == {"regression"}


def test_the_partition_is_the_shortest_description() -> None:
    """Dynamic programming against every partition of short histories."""
    rng = np.random.default_rng(9)
    for trial in range(8):
        values = list(rng.normal(0, 1, 9) + np.where(np.arange(9) >= 3 + trial % 4, 3, 0))
        noise = list(rng.uniform(0.2, 1.5, 9))
        best = min(
            (description_length(values, [0, *cut], noise), [0, *cut])
            for k in range(9) for cut in itertools.combinations(range(1, 9), k))
        got = [g.start for g in detect(values, noise)]
        assert description_length(values, got, noise) == pytest.approx(best[0], abs=1e-9)
        assert got == best[1]


def test_small_and_exact_histories() -> None:
    assert detect([]) == []
    assert detect([5.0]) == [Group(0, 1, 5.0, pytest.approx(0, abs=1e-6))]  # type: ignore[arg-type]
    assert len(detect([3.0] * 50)) == 1
    groups = detect([1.0] * 10 + [2.0] * 10)   # noiseless: any step is real
    assert [(g.start, g.mean) for g in groups] == [(0, 1.0), (10, 2.0)]
    assert classify([], HIGHER) == [] and classify(groups[:1], HIGHER) == []


def test_an_outlier_does_not_move_the_level() -> None:
    values = step(2, at=200, n=100)   # no step
    values[40] += 12
    groups = detect(values, 1.0)
    assert groups[0].mean == pytest.approx(groups[-1].mean, abs=0.6)


def test_per_run_noise_with_unknown_entries() -> None:
    values = step(3)
    noise: list[float | None] = [1.0] * 100
    noise[10] = None
    noise[11] = 0.0
    assert [g.start for g in detect(values, noise)] == [0, 60]


@pytest.mark.parametrize(("values", "noise", "message"), [
    ([1.0, float("nan")], None, "finite numbers"),
    ([[1.0]], None, "finite numbers"),
    ([1.0, 2.0], [1.0], "noise has 1 entries for 2 values"),
    ([1.0, 2.0], -1.0, "noise: give standard uncertainties >= 0"),
    ([1.0, 2.0], [1.0, float("inf")], "noise: give standard uncertainties >= 0"),
])
def test_bad_input(values: Any, noise: Any, message: str) -> None:
    with pytest.raises(NetloadConfigError, match=message):
        detect(values, noise)


def test_bad_direction_and_partition() -> None:
    with pytest.raises(NetloadConfigError, match="direction='up'"):
        classify([], "up")
    with pytest.raises(NetloadConfigError, match="increasing indexes from 0"):
        description_length([1.0, 2.0, 3.0], [0, 2, 2])
    with pytest.raises(NetloadConfigError, match="increasing indexes from 0"):
        description_length([1.0, 2.0, 3.0], [1])


def test_three_hundred_runs_are_quick() -> None:
    import time

    values = step(4, at=150, n=300)
    start = time.perf_counter()
    assert [g.start for g in detect(values, 1.0)] == [0, 150]
    assert time.perf_counter() - start < 1.0


# ---- histories from results documents -------------------------------------------------


def session(created: str, throughput_pps: float, upper: float | None = None,
            latency: bool = True) -> dict[str, Any]:
    ms: list[dict[str, Any]] = [{"kind": "throughput", "frame_size": 64,
                                 "throughput_pps": throughput_pps,
                                 "upper_pps": upper or throughput_pps + 3464.1}]
    if latency:
        ms.append({"kind": "latency", "stream": "s", "latency": {"percentiles": {
            "p99": {"value_ns": 100.0, "ci_low_ns": 90.0, "ci_high_ns": 110.0,
                    "confidence": 0.95}}}})
    out = session_document([{"nodeid": NODE, "measurements": ms}], topology={}, settings={})
    out["created"] = created
    as_read: dict[str, Any] = json.loads(json.dumps(out))
    return as_read


def test_history_is_ordered_by_creation_time() -> None:
    docs = [session("2026-01-03T00:00:00+00:00", 3e5),
            session("2026-01-01T00:00:00+00:00", 1e5, latency=False),
            session("2026-01-02T00:00:00", 2e5)]   # naive times read as UTC
    history = trend.history_from_documents(docs)
    tput = history[Key(NODE, "throughput", 64)]
    assert [p.value for p in tput] == [1e5, 2e5, 3e5]
    assert tput[0].created == "2026-01-01T00:00:00+00:00"
    assert tput[0].noise == pytest.approx(1000, rel=1e-4)   # 3464.1 / sqrt(12)
    assert len(history[Key(NODE, "latency[s].p99", None)]) == 2


def test_history_errors_name_the_document() -> None:
    broken = session("2026-01-01T00:00:00+00:00", 1e5)
    del broken["tests"][0]["measurements"][0]["throughput_pps"]
    with pytest.raises(NetloadConfigError, match=r"documents\[1\]: .*throughput_pps is missing"):
        trend.history_from_documents([session("2026-01-02T00:00:00+00:00", 1e5), broken])
    with pytest.raises(NetloadConfigError, match=r"documents\[0\].created = 'soon'"):
        trend.history_from_documents([session("soon", 1e5)])


def test_analyse_finds_a_throughput_regression() -> None:
    rng = np.random.default_rng(8)
    values = np.r_[rng.normal(1e6, 2e3, 20), rng.normal(0.95e6, 2e3, 15)]
    docs = [session(f"2026-02-{1 + i // 24:02d}T{i % 24:02d}:00:00+00:00", v)
            for i, v in enumerate(values)]
    trends = trend.analyse(docs)
    tput = trends[Key(NODE, "throughput", 64)]
    assert tput.direction == HIGHER and len(tput.points) == 35
    assert [(c.index, c.kind) for c in tput.changes] == [(20, "regression")]
    assert trends[Key(NODE, "latency[s].p99", None)].changes == ()
