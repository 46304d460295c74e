"""A shortfall is explained by what the engine measured, never guessed: "the generator
stalled" only when its own lag counters show it."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_netload.measure.causes import shortfall_cause
from pytest_netload.measure.results import StreamResult


def stream(**kw: Any) -> StreamResult:
    base: dict[str, Any] = dict(
        name="s", stream_id=0, tx_packets=90_000, tx_bytes=60 * 90_000, tx_unsent=0,
        tx_alloc_failures=0, tx_first_ns=0, tx_last_ns=10**10, rx_packets=90_000,
        rx_bytes=60 * 90_000, duplicates=0, reordered=0, rx_first_ns=0, rx_last_ns=10**10,
        latency_min_ns=0, latency_max_ns=0, latency_sum_ns=0, tx_end_ns=10 * 10**9,
        tx_end_reason="duration")
    base.update(kw)
    return StreamResult(**base)


def test_a_stop_is_named_with_its_time() -> None:
    text = shortfall_cause(stream(tx_end_reason="stopped", tx_end_ns=3_300_000_000), 10_000, 10)
    assert text.startswith("the run was stopped (Ctrl-C or a stop call) at 3.30s of the 10s")


@pytest.mark.parametrize("reason", ["duration", "phases"])
def test_a_schedule_that_ended_early_is_the_engines_bug(reason: str) -> None:
    """What the 64-bit overflow looked like: TX ended on its 'duration' at 3.3 s of 60 s."""
    text = shortfall_cause(stream(tx_end_reason=reason, tx_end_ns=3_300_000_000,
                                  tx_max_lag_ns=10_000_000, tx_lagged_bursts=5), 10_000, 60)
    assert "TX ended at 3.30s of the 1m scheduled" in text and "a bug" in text
    assert "quieter CPU" not in text


def test_measured_lag_is_the_generators_fault() -> None:
    # 10,000 missing at 10 kpps: a worst lag of 1 s explains them
    text = shortfall_cause(stream(tx_max_lag_ns=1_000_000_000, tx_lagged_bursts=42), 10_000, 10)
    assert text.startswith("the generator fell behind its schedule (measured: worst lag "
                           "1.00s, 42 bursts")


def test_a_small_lag_does_not_take_the_blame() -> None:
    text = shortfall_cause(stream(tx_max_lag_ns=20_000, tx_lagged_bursts=3), 10_000, 10)
    assert text.startswith("no cause was measured: the generator's worst lag was 20.0us")


def test_refused_frames_and_an_empty_pool_are_named() -> None:
    text = shortfall_cause(stream(tx_unsent=128, tx_alloc_failures=7), 10_000, 10)
    assert "the port refused 128 frames" in text
    assert "mbuf pool ran empty 7 times" in text


def test_a_lag_blames_the_machine_only_with_measured_preemptions() -> None:
    busy = shortfall_cause(stream(tx_max_lag_ns=1_000_000_000, tx_lagged_bursts=42,
                                  tx_off_cpu_ns=1_200_000_000, tx_wait_cpu_ns=1_200_000_000,
                                  tx_preemptions=310),
                           10_000, 10)
    assert "its worker waited 1.20s for its CPU in 310 preemptions (another task took " \
        "the core): run it on a quieter CPU" in busy
    own = shortfall_cause(stream(tx_max_lag_ns=1_000_000_000, tx_lagged_bursts=42), 10_000, 10)
    assert "its worker kept its CPU (no wait for it measured)" in own
    assert "quieter CPU" not in own and "lower the rate or add TX cores" in own


def test_waiting_that_cannot_cover_the_lag_is_not_the_machines_alone() -> None:
    """CI's shaped-DUT runs: off the CPU 138 ms in 473 preemptions, yet 395 ms behind."""
    text = shortfall_cause(stream(tx_max_lag_ns=395_000_000, tx_lagged_bursts=2_622,
                                  tx_off_cpu_ns=138_000_000, tx_wait_cpu_ns=138_000_000,
                                  tx_preemptions=473), 52_083, 2)
    assert "waited 138ms for its CPU in 473 preemptions (another task took the core), " \
        "which covers 34.94% of the worst lag" in text
    assert "quieter CPU" not in text
    assert "the rest it spent on its CPU, in its own work" in text


def test_back_pressure_and_blocking_calls_are_named() -> None:
    text = shortfall_cause(stream(tx_max_lag_ns=400_000_000, tx_lagged_bursts=900,
                                  tx_refused_bursts=12_345, tx_off_cpu_ns=300_000_000,
                                  tx_wait_cpu_ns=10_000_000, tx_preemptions=3,
                                  tx_sleeps=77), 52_083, 2)
    assert "the port took only part of 12,345 TX calls (its TX ring was full" in text
    assert "its worker slept 290ms in 77 blocking calls" in text
    assert "the rest it spent" not in text and "quieter CPU" not in text


def test_preemptions_without_waiting_time_blame_nobody() -> None:
    """An engine whose schedstat said nothing: wait_cpu 0, so no time to blame."""
    text = shortfall_cause(stream(tx_max_lag_ns=1_000_000_000, tx_lagged_bursts=42,
                                  tx_preemptions=5), 10_000, 10)
    assert "its worker kept its CPU" in text
