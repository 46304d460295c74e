"""The native core's one time conversion, netload_time_scale: a 128-bit product, refused
(never wrapped) when the result does not fit 64 bits, at the extremes of 24 h runs."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pytest_netload_engine._netload_native import lib  # type: ignore[import-not-found]

from pytest_netload import units
from pytest_netload.engine import facade
from pytest_netload.errors import NetloadConfigError

U64 = st.integers(0, 2**64 - 1)
NS_PER_S = 10**9
DAY_NS = 86_400 * NS_PER_S
FP_SHIFT = 12  # run.h: deadlines in cycles << 12


@given(U64, U64, st.integers(1, 2**64 - 1))
def test_scale_is_exact_or_refused(value: int, mul: int, div: int) -> None:
    exact = value * mul // div
    if exact < 2**64:
        assert facade.time_scale(value, mul, div) == exact
    else:
        with pytest.raises(NetloadConfigError, match="does not fit 64 bits"):
            facade.time_scale(value, mul, div)


def test_division_by_zero_is_refused() -> None:
    with pytest.raises(NetloadConfigError, match="does not fit"):
        facade.time_scale(1, 1, 0)


@given(st.integers(0, DAY_NS), st.integers(10**8, 52 * 10**9))
def test_24_hours_convert_at_any_tsc_rate(ns: int, hz: int) -> None:
    """Every duration up to 24 h converts to TSC cycles and to fixed-point deadlines at any
    TSC from 100 MHz to 52 GHz (docs/engine.md: beyond that a 24 h deadline with 12
    fractional bits needs more than 64 bits, and is refused), and back to ns within one
    cycle."""
    cycles = facade.time_scale(ns, hz, NS_PER_S)
    assert cycles == ns * hz // NS_PER_S
    assert facade.time_scale(ns, hz << FP_SHIFT, NS_PER_S) == (ns * hz << FP_SHIFT) // NS_PER_S
    back = facade.time_scale(cycles, NS_PER_S, hz)
    assert ns - NS_PER_S / hz - 1 <= back <= ns


def test_the_old_64_bit_product_overflowed_where_this_does_not() -> None:
    """The bug: duration_ns * hz / 1e9 in 64 bits wrapped beyond 2^64 / hz ns (8 s at
    2.3 GHz), so a 60 s run stopped at 60 mod 8 s."""
    hz = 2_300_000_000
    ns = 60 * NS_PER_S
    assert ns * hz >= 2**64  # what C's uint64_t product did not hold
    assert facade.time_scale(ns, hz, NS_PER_S) == 60 * hz


def test_the_limit_is_one_fact() -> None:
    assert units.MAX_RUN_S == lib.NETLOAD_MAX_RUN_S == facade.constants()["max_run_s"]
