"""Unit tests of pytest_netload.traffic.patterns: gap tables and phases for the native TX loop."""

from __future__ import annotations

import dataclasses
import re
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
import scipy.stats  # type: ignore[import-untyped]
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_netload.errors import NetloadConfigError
from pytest_netload.traffic.patterns import (
    CBR,
    DEFAULT_TABLE_SIZE,
    MAX_GAP_PS,
    MAX_GAPS,
    MAX_PHASES,
    PATTERN_NAMES,
    Bursts,
    Gaps,
    MaxRate,
    Pattern,
    Phase,
    Poisson,
    Ramp,
    RatePattern,
    parse_pattern,
    phase_specs,
)
from pytest_netload.units import Duration, Rate

LINE_10G_BPS = 10e9
ALPHA = 0.01  # significance level of the goodness-of-fit tests


def raises(match: str) -> Any:
    """pytest.raises for a NetloadConfigError whose message matches ``match``."""
    return pytest.raises(NetloadConfigError, match=match)


def to_pps(rate: Rate) -> float:
    """A caller's converter: 64-byte frames on a 10 Gbit/s port."""
    return rate.pps(64, LINE_10G_BPS)


def period_ps(n: int, pps: float) -> int:
    return round(Fraction(n * 10**12) / Fraction(pps))


def decode(spec: dict[str, Any]) -> np.ndarray:
    return np.frombuffer(spec["gaps_ps"], dtype="<u8")


# ---- Phase -------------------------------------------------------------------------------

def test_phase_spec_decodes() -> None:
    p = Phase(np.array([1, 2, 3_000_000_000_000], dtype=np.uint64), 5)
    spec = p.as_spec()
    assert set(spec) == {"gaps_ps", "n_gaps", "duration_ns"}
    assert isinstance(spec["gaps_ps"], bytes) and len(spec["gaps_ps"]) == 24
    assert decode(spec).tolist() == [1, 2, 3_000_000_000_000]
    assert (spec["n_gaps"], spec["duration_ns"]) == (3, 5)
    assert type(spec["n_gaps"]) is int and type(spec["duration_ns"]) is int
    assert phase_specs([p, p]) == [spec, spec]
    assert p.period_ps == 3_000_000_000_003 and p.mean_pps == 3e12 / 3_000_000_000_003


def test_empty_phase_is_max_rate() -> None:
    p = Phase(np.zeros(0, dtype=np.uint64))
    assert p.as_spec() == {"gaps_ps": b"", "n_gaps": 0, "duration_ns": 0}
    assert p.mean_pps is None and p.period_ps == 0
    assert Phase([]) == p  # type: ignore[arg-type]


def test_phase_is_a_frozen_copy() -> None:
    source = np.array([10, 20], dtype=np.int64)
    p = Phase(source, 0)  # type: ignore[arg-type]
    source[0] = 99
    assert p.gaps_ps.dtype == np.uint64 and p.gaps_ps.tolist() == [10, 20]
    with pytest.raises(ValueError):
        p.gaps_ps[0] = 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.duration_ns = 1  # type: ignore[misc]
    assert p == Phase(np.array([10, 20], dtype=np.uint64)) and p != Phase(p.gaps_ps, 1)
    assert hash(p) == hash(Phase(np.array([10, 20], dtype=np.uint64)))


@pytest.mark.parametrize(("gaps", "duration", "match"), [
    ([5, 0, 7], 0, r"gap table entry \[1\] = 0 ps is invalid"),
    ([5, -3], 0, r"gap table entry \[1\] = -3 ps is invalid"),
    ([MAX_GAP_PS + 1], 0, r"gap table entry \[0\] = 3600000000000001 ps"),
    ([1.5, 2.0], 0, "gap table of dtype float64 .* is invalid; give a 1-D integer array"),
    ([[1, 2]], 0, r"shape \(1, 2\) is invalid"),
    ([1], -1, "phase duration_ns -1 is invalid"),
    ([1], 1.5, "phase duration_ns 1.5 is invalid"),
    ([1], True, "phase duration_ns True is invalid"),
])
def test_bad_phases(gaps: Any, duration: Any, match: str) -> None:
    with raises(match):
        Phase(np.asarray(gaps), duration)


def test_phase_table_size_is_bounded() -> None:
    Phase(np.ones(MAX_GAPS, dtype=np.uint64))
    with raises(f"gap table of {MAX_GAPS + 1} entries is longer than {MAX_GAPS}"):
        Phase(np.ones(MAX_GAPS + 1, dtype=np.uint64))


# ---- MaxRate and CBR ---------------------------------------------------------------------

def test_max_rate() -> None:
    assert MaxRate().phases(to_pps, None, seed=0) == [Phase(np.zeros(0, dtype=np.uint64))]
    assert MaxRate().name == "max" and not MaxRate().uses_rate
    with raises("pattern 'max' sends as fast as possible, but rate '1Mpps' was given"):
        MaxRate().phases(to_pps, Rate("1Mpps"), seed=0)


@pytest.mark.parametrize(("rate", "gap_ps"), [
    ("1Mpps", 1_000_000),
    ("100%", 67_200),  # 84 B * 8 / 10 Gbit/s = 67.2 ns
    ("3pps", 333_333_333_333),
    ("1Gbit/s@l1", 672_000),
    ("7Mpps", 142_857),  # 142857.142...
])
def test_cbr_gap(rate: str, gap_ps: int) -> None:
    (phase,) = CBR().phases(to_pps, Rate(rate), seed=0)
    assert phase.gaps_ps.tolist() == [gap_ps] and phase.duration_ns == 0


@given(st.floats(min_value=1e-3, max_value=1e11))
def test_cbr_quantisation_bound(pps: float) -> None:
    (gap,) = CBR().table_ps(pps).tolist()
    assert gap == round(Fraction(10**12) / Fraction(pps))
    assert abs(gap * 1e-12 * pps - 1) <= 0.5e-12 * pps * (1 + 1e-9)


def test_cbr_needs_a_rate() -> None:
    with raises("pattern 'cbr' paces at a rate, but none was given"):
        CBR().phases(to_pps, None, seed=0)
    with raises("rate '95%' is a share of the line rate"):
        CBR().phases(lambda r: r.pps(64), Rate("95%"), seed=0)
    for bad in (0.0, -1.0, float("nan"), float("inf"), True, "1e6"):
        def convert(rate: Rate, bad: Any = bad) -> Any:
            return bad

        with raises(f"rate '1Mpps' gives a packet rate of {re.escape(repr(bad))} pps"):
            CBR().phases(convert, Rate("1Mpps"), seed=0)
    with raises("needs gaps under 1 ps"):
        CBR().table_ps(3e12)
    with raises("needs gaps over an hour"):
        CBR().table_ps(1e-4)


# ---- Poisson -----------------------------------------------------------------------------

def test_poisson_mean_is_exact_and_gaps_exponential() -> None:
    pps = 14_880_952.380952381
    table = Poisson().table_ps(pps, seed=2024)
    assert table.dtype == np.uint64 and table.size == DEFAULT_TABLE_SIZE and table.min() >= 1
    total = period_ps(table.size, pps)
    assert int(table.sum()) == total  # so the mean gap is 1/pps to under 1 ps over the table
    assert abs(total / table.size - 1e12 / pps) <= 0.5 / table.size
    scale_ps = 1e12 / pps
    result = scipy.stats.kstest(table.astype(float), scipy.stats.expon(scale=scale_ps).cdf)
    assert result.pvalue > ALPHA, result


def test_poisson_gaps_are_the_scaled_draws() -> None:
    pps, seed, n = 1e6, 7, 4096
    draws = np.random.default_rng(seed).exponential(1.0, n)
    ideal = draws * (period_ps(n, pps) / draws.sum())
    table = Poisson(n).table_ps(pps, seed=seed)
    assert np.abs(table.astype(float) - ideal).max() < 1.0


def test_poisson_seeds() -> None:
    a, b = Poisson(1000).table_ps(1e6, seed=1), Poisson(1000).table_ps(1e6, seed=1)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, Poisson(1000).table_ps(1e6, seed=2))
    big = Poisson(16).table_ps(1e6, seed=2**64 - 1)
    assert big.size == 16
    (phase,) = Poisson(1000).phases(to_pps, Rate("1Mpps"), seed=1)
    assert np.array_equal(phase.gaps_ps, a) and phase.mean_pps == 1e6
    for bad in (-1, 1.5, True, None):
        with raises(f"pattern seed {bad!r} is invalid"):
            Poisson(10).phases(to_pps, Rate("1Mpps"), seed=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("size", [0, -1, MAX_GAPS + 1, 1.0, True])
def test_poisson_table_size_bounds(size: Any) -> None:
    with raises(f"poisson table_size {size!r} is invalid; give an int from 1 to {MAX_GAPS}"):
        Poisson(size)


def test_poisson_at_a_very_high_rate_keeps_gaps_positive() -> None:
    pps = 2e11  # mean gap 5 ps: many ideal gaps fall under 1 ps
    table = Poisson(10_000).table_ps(pps, seed=3)
    assert table.min() >= 1 and int(table.sum()) == period_ps(10_000, pps)


# ---- Gaps --------------------------------------------------------------------------------

def test_gaps_from_uniform_distribution() -> None:
    dist = scipy.stats.uniform(loc=1e-6, scale=1e-6)  # 1..2 us, mean 1.5 us
    pattern = Gaps(dist, table_size=20_000)
    assert pattern.name == "gaps(uniform)" and pattern.uses_rate
    (phase,) = pattern.phases(to_pps, Rate("1Mpps"), seed=5)
    table = phase.gaps_ps
    assert table.size == 20_000 and int(table.sum()) == period_ps(20_000, 1e6)
    draws = pattern.seconds(seed=5)
    ideal = draws * (period_ps(20_000, 1e6) / draws.sum())
    assert np.abs(table.astype(float) - ideal).max() < 1.0
    # rescaling by one constant keeps the shape: uniform on [c, 2c] us with c about 2/3
    c = 1e-6 * period_ps(20_000, 1e6) / draws.sum()
    assert c == pytest.approx(1e6 * 2 / 3, rel=0.01)
    assert table.min() >= c - 1 and table.max() <= 2 * c + 1
    scaled = scipy.stats.uniform(loc=c, scale=c)
    assert scipy.stats.kstest(table.astype(float), scaled.cdf).pvalue > ALPHA


def test_gaps_from_distribution_unscaled() -> None:
    dist = scipy.stats.uniform(loc=1e-6, scale=1e-6)
    pattern = Gaps(dist, rescale=False)
    assert not pattern.uses_rate
    (phase,) = pattern.phases(to_pps, None, seed=5)
    assert phase.n_gaps == DEFAULT_TABLE_SIZE
    assert phase.gaps_ps.min() >= 1_000_000 and phase.gaps_ps.max() <= 2_000_000
    assert np.array_equal(phase.gaps_ps, np.rint(pattern.seconds(seed=5) * 1e12))
    with raises("has rescale=False, so its own gaps set the rate, but rate '1Mpps' was given"):
        pattern.phases(to_pps, Rate("1Mpps"), seed=5)
    with raises("has rescale=False"):
        pattern.table_ps(1e6, seed=0)


def test_gaps_from_array() -> None:
    seconds = [1e-6, 2e-6, 3e-6, 4e-6]
    (phase,) = Gaps(np.array(seconds), rescale=False).phases(to_pps, None, seed=0)
    assert phase.gaps_ps.tolist() == [1_000_000, 2_000_000, 3_000_000, 4_000_000]
    assert phase.mean_pps == 4e12 / 10_000_000
    # rescaled: same order and proportions, mean 1/pps
    (phase,) = Gaps(seconds).phases(to_pps, Rate("1Mpps"), seed=0)
    assert phase.gaps_ps.tolist() == [400_000, 800_000, 1_200_000, 1_600_000]
    assert Gaps(seconds).name == "gaps(4 entries)"
    assert Gaps([1, 2]).phases(to_pps, Rate("1kpps"), seed=0)[0].mean_pps == 1e3


@settings(max_examples=200)
@given(st.lists(st.floats(min_value=1e-9, max_value=1.0), min_size=1, max_size=300),
       st.floats(min_value=1.0, max_value=1e9))
def test_rescaled_tables_are_exact(seconds: list[float], pps: float) -> None:
    table = Gaps(seconds).table_ps(pps, seed=0)
    total = period_ps(len(seconds), pps)
    assert int(table.sum()) == total and table.min() >= 1
    x = np.array(seconds)
    ideal = x * (total / x.sum())
    clamped = int((ideal < 1).sum())  # gaps under 1 ps become 1 ps; the longest pay for them
    assert np.abs(table.astype(float) - ideal).max() < 1.0 + clamped + 1e-6


@pytest.mark.parametrize(("source", "match"), [
    ([1e-6, 0.0, -1.0], r"gaps array: gap \[1\] = 0\.0 s is not a positive, finite number"),
    ([1e-6, -2e-6], r"gap \[1\] = -2e-06 s"),
    ([float("nan")], r"gap \[0\] = nan s"),
    ([1.0, float("inf")], r"gap \[1\] = inf s"),
    ([], r"gaps array of dtype float64 and shape \(0,\) is invalid"),
    ([[1e-6]], r"shape \(1, 1\) is invalid"),
    (["1us"], "gaps array of dtype <U3"),
    ([True, False], "gaps array of dtype bool"),
    ([1e-6, None], "gaps array of dtype object"),
    ("1us", "gaps source '1us' is invalid"),
    (42, "gaps source 42 is invalid"),
])
def test_bad_gap_arrays(source: Any, match: str) -> None:
    with raises(match):
        Gaps(source)


def test_gap_table_bounds() -> None:
    with raises(f"give 1 to {MAX_GAPS} gaps"):
        Gaps(np.full(MAX_GAPS + 1, 1e-6))
    with raises("table_size=10 applies to distributions only"):
        Gaps([1e-6], table_size=10)
    with raises(f"gaps table_size {MAX_GAPS + 1} is invalid"):
        Gaps(scipy.stats.expon(scale=1e-6), table_size=MAX_GAPS + 1)
    with raises(r"pattern 'gaps\(1 entries\)': gap \[0\] = 1e-13 s rounds to 0 ps"):
        Gaps([1e-13], rescale=False).phases(to_pps, None, seed=0)
    with raises("gaps rescale='no' is invalid"):
        Gaps([1e-6], rescale="no")  # type: ignore[arg-type]


def test_bad_distributions() -> None:
    with raises(r"gaps distribution norm \(seed 0\): gap \[\d+\] = -[\d.e-]+ s is not a "
                "positive"):
        Gaps(scipy.stats.norm(loc=1e-6, scale=1e-6)).table_ps(1e6, seed=0)
    with raises("gaps distribution pareto has mean inf s; give one with a positive, finite mean"):
        Gaps(scipy.stats.pareto(0.5))
    with raises("gaps distribution cauchy has mean nan s"):
        Gaps(scipy.stats.cauchy())
    with raises("gaps distribution dirichlet_frozen: its mean fails .*; give a univariate"):
        Gaps(scipy.stats.dirichlet([1.0, 1.0]))
    with raises("gaps source .*multivariate_normal.* is invalid; give a frozen scipy.stats"):
        Gaps(scipy.stats.multivariate_normal([1, 1]))


# ---- Bursts ------------------------------------------------------------------------------

def test_bursts_period_and_mean_rate() -> None:
    (phase,) = Bursts(10).phases(to_pps, Rate("1Mpps"), seed=0)
    assert phase.gaps_ps.tolist() == [1000] * 9 + [10_000_000 - 9000]
    assert phase.period_ps == 10_000_000 and phase.mean_pps == 1e6
    b = Bursts(32, in_burst_pps=14_880_952.380952381)
    assert b.in_burst_gap_ps == 67_200 and b.name == "bursts(32)" and b.uses_rate
    table = b.table_ps(3e6)
    assert table[:-1].tolist() == [67_200] * 31
    assert int(table.sum()) == period_ps(32, 3e6)


@given(st.integers(1, 5000), st.floats(1.0, 1e8), st.floats(1e8, 1e12))
def test_bursts_mean_rate_is_exact(size: int, pps: float, in_burst_pps: float) -> None:
    table = Bursts(size, in_burst_pps).table_ps(pps)
    assert table.size == size and int(table.sum()) == period_ps(size, pps)
    gap = max(1, round(Fraction(10**12) / Fraction(in_burst_pps)))
    assert (table[:-1] == gap).all() and table[-1] >= gap


def test_bursts_errors() -> None:
    assert Bursts(1).table_ps(1e6).tolist() == [1_000_000]
    with raises(r"pattern 'bursts\(10\)': an average of 2000000.0 pps is at or above the "
                "in-burst rate of 1000000.0 pps"):
        Bursts(10, in_burst_pps=1e6).table_ps(2e6)
    with raises("burst size 0 is invalid"):
        Bursts(0)
    with raises(f"burst size {MAX_GAPS + 1} is invalid"):
        Bursts(MAX_GAPS + 1)
    with raises("bursts in_burst_pps=0 gives a packet rate of 0 pps"):
        Bursts(4, in_burst_pps=0)
    with raises("pattern 'bursts.4.' paces at a rate, but none was given"):
        Bursts(4).phases(to_pps, None, seed=0)


# ---- Ramp --------------------------------------------------------------------------------

def test_ramp_phases_and_durations() -> None:
    ramp = Ramp([("1Mpps", "1s"), ("50%", 2), (Rate("2Mpps"), Duration("500ms")), ("3Mpps", 0)])
    assert ramp.name == "ramp(4 steps, cbr)" and not ramp.uses_rate
    assert ramp.steps[1] == (Rate("50%"), Duration(2))
    phases = ramp.phases(to_pps, None, seed=0)
    assert [p.gaps_ps.tolist() for p in phases] == [[1_000_000], [134_400], [500_000], [333_333]]
    assert [p.duration_ns for p in phases] == [10**9, 2 * 10**9, 500_000_000, 0]
    assert decode(phases[1].as_spec()).tolist() == [134_400]


def test_ramp_with_poisson_steps() -> None:
    ramp = Ramp([("1Mpps", "10ms"), ("1Mpps", "10ms"), ("4Mpps", "10ms")], Poisson(512))
    phases = ramp.phases(to_pps, None, seed=9)
    assert [p.mean_pps for p in phases] == [1e6, 1e6, 4e6]
    assert not np.array_equal(phases[0].gaps_ps, phases[1].gaps_ps)  # a seed per step
    again = ramp.phases(to_pps, None, seed=9)
    assert all(a == b for a, b in zip(phases, again, strict=True))


def test_ramp_errors() -> None:
    with raises("ramp steps .* are invalid"):
        Ramp([])
    with raises("ramp step 0 '1Mpps' is invalid; give a .rate, duration. pair"):
        Ramp(["1Mpps"])  # type: ignore[list-item]
    with raises("ramp step 1 rate 'fast': cannot parse"):
        Ramp([("1Mpps", 1), ("fast", 1)])
    with raises("ramp step 0 duration '-1s' is negative"):
        Ramp([("1Mpps", "-1s")])
    with raises("ramp step 0 duration '0s' is under 1 ns; only the last step may be 0"):
        Ramp([("1Mpps", 0), ("2Mpps", 1)])
    with raises(f"ramp of {MAX_PHASES + 1} steps has more than {MAX_PHASES}"):
        Ramp([("1Mpps", 1)] * (MAX_PHASES + 1))
    with raises("ramp pattern MaxRate.. cannot pace a step at a rate"):
        Ramp([("1Mpps", 1)], MaxRate())  # type: ignore[arg-type]
    with raises("cannot pace a step at a rate"):
        Ramp([("1Mpps", 1)], Gaps([1e-6], rescale=False))
    ramp = Ramp([("1Mpps", 1), ("95%", 1)])
    with raises(r"pattern 'ramp\(2 steps, cbr\)' sets a rate per step, but rate '1Mpps' was "
                "given too"):
        ramp.phases(to_pps, Rate("1Mpps"), seed=0)
    with raises("rate '95%' is a share of the line rate"):
        ramp.phases(lambda r: r.pps(64), None, seed=0)


# ---- parsing -----------------------------------------------------------------------------

def test_parse_pattern() -> None:
    assert parse_pattern("max") == MaxRate() and parse_pattern(" CBR ") == CBR()
    assert parse_pattern("poisson") == Poisson()
    assert set(PATTERN_NAMES) == {"max", "cbr", "poisson"}
    bursts = Bursts(8)
    assert parse_pattern(bursts) is bursts
    assert parse_pattern(scipy.stats.expon(scale=1e-6)).name == "gaps(expon)"
    assert parse_pattern(np.array([1e-6, 2e-6])).name == "gaps(2 entries)"
    assert parse_pattern([1e-6]).name == "gaps(1 entries)"
    for pattern in (MaxRate(), CBR(), Poisson(), bursts, Gaps([1e-6]), Ramp([("1Mpps", 1)])):
        assert isinstance(pattern, Pattern)
    assert isinstance(CBR(), RatePattern)


@pytest.mark.parametrize("value", ["burst", "", 42, None, {"cbr": 1}])
def test_parse_pattern_unknown(value: Any) -> None:
    with raises(f"pattern {value!r} is unknown; use one of 'max', 'cbr', 'poisson', a pattern"):
        parse_pattern(value)
    with raises(f"tx_pattern {value!r} is unknown"):
        parse_pattern(value, what="tx_pattern")
