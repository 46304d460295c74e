"""Runs at the lengths users run them: an RFC 2544 trial is 60 s, a soak hours.

Before the time conversions went through one 128-bit helper, any run longer than
2^64 / tsc_hz ns (about 8 s here) stopped at `duration mod 8 s`. These runs send exactly
rate x duration frames, and a 24 h schedule is kept to the nanosecond.
"""

from __future__ import annotations

import _thread
import os
import threading
from collections.abc import Callable
from typing import Any

import pytest

from calm import excuse_failure, judged_unless_the_machine_was_busy, machine_took_the_cpu

from pytest_netload import UDP, Eth, IPv4, Rate, RateController, Stream
from pytest_netload.engine.client import Engine, Port, Tx
from pytest_netload.measure.causes import shortfall_cause
from pytest_netload.traffic.patterns import CBR

pytest_plugins = ["pytester"]

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="the engine needs root (run as root or in CI)"),
]

T4 = (Eth(dst="02:00:00:00:00:02") / IPv4(src="198.18.0.1", dst="198.19.0.1") / UDP()).build()
RATE_PPS = 10_000
RETRIES = 2  # runs whose generator lagged at the end (a busy machine) are run again


def _cbr_run(engine: Engine, port: Port, seconds: float) -> tuple[Any, int]:
    """A CBR run of `seconds` at RATE_PPS; its stream result and the frames scheduled.
    The premise is an exact count: a lag the generator catches up on costs nothing, so a
    run is repeated only when it came out short by no more than its own measured lag
    explains (CI may be busy); if every try was short that way and the engine measured
    that the machine took the worker's CPU, the test is skipped naming the measurement."""
    expected = int(RATE_PPS * seconds)
    rc = RateController(engine, port, rx=[port])
    for _ in range(RETRIES + 1):
        run = rc.run(Stream(T4, size=64, name="long"), f"{RATE_PPS}pps", pattern="cbr",
                     duration=f"{seconds}s").run
        s = run.streams[0]
        lag_frames = s.tx_max_lag_ns * RATE_PPS / 1e9
        if s.tx_packets == expected or expected - s.tx_packets > lag_frames + 1:
            return s, expected  # exact, or short by more than the generator's own lag
    proof = machine_took_the_cpu(run)
    if proof is not None:
        excuse_failure(f"every run came out short by its lag ({proof})")
    return s, expected


@pytest.mark.parametrize("seconds", [8, 65])
def test_runs_past_the_old_overflow_send_rate_times_duration(
        engine: Engine, ring: Callable[..., Port], seconds: int) -> None:
    s, expected = _cbr_run(engine, ring(), seconds)
    print(f"{seconds} s at {RATE_PPS} pps: sent {s.tx_packets:,}, received {s.rx_packets:,}, "
          f"expected {expected:,}; TX ended at {s.tx_end_ns / 1e9:.6f} s ({s.tx_end_reason})")
    assert s.tx_end_reason == "duration"
    assert s.tx_end_ns >= seconds * 1e9
    assert s.tx_packets == expected
    assert s.rx_packets == s.tx_packets and s.lost == 0
    assert s.rx_by_tx_end >= s.tx_packets - 2  # a ring delivers at once: nothing left to drain


@pytest.mark.usefixtures("ctrl_c")
def test_a_24_hour_schedule_keeps_its_end(engine: Engine, ring: Callable[..., Port]) -> None:
    """A run of the longest duration allowed starts with its end 24 h out (to the ns), and
    a stop is reported as the reason it ended, not as a slow generator."""
    port = ring()
    stream = engine.load(port, Stream(T4, size=64, name="day"))
    seen: list[dict[str, Any]] = []

    def progress(status: dict[str, Any]) -> None:
        seen.append(status)
        if status["state"] == "sending" and status["elapsed_ns"] > 300_000_000:
            _thread.interrupt_main()

    paced = Tx(stream, 0, tuple(CBR().phases(lambda _r: 1000.0, Rate("1kpps"), seed=1)))
    with pytest.raises(KeyboardInterrupt):
        engine.run([paced], [port], duration_s=86_400, progress=progress)
    ends = {st["end_ns"] for st in seen}
    assert len(ends) == 1 and abs(ends.pop() - 86_400 * 10**9) <= 1
    result = engine.last_result
    assert result is not None and result.interrupted
    s = result.streams[0]
    assert s.tx_end_reason == "stopped"
    assert 0.3e9 < s.tx_end_ns < 60e9


def test_longer_than_24_hours_is_refused_before_traffic(engine: Engine,
                                                        ring: Callable[..., Port]) -> None:
    port = ring()
    rc = RateController(engine, port, rx=[port])
    with pytest.raises(ValueError, match=r"duration '25h' is 90000 s, more than 24 h"):
        rc.run(Stream(T4, size=64), "1kpps", duration="25h")
    stream = engine.load(port, Stream(T4, size=64, name="nan"))
    with pytest.raises(ValueError, match="drain_s nan is not finite"):
        engine.run([stream], [port], count=10, drain_s=float("nan"))
    with pytest.raises(ValueError, match="duration_s -1 is negative"):
        engine.run([stream], [port], duration_s=-1)


@pytest.mark.usefixtures("ctrl_c")
def test_a_stopped_rate_controller_run_says_it_was_stopped(
        engine: Engine, ring: Callable[..., Port]) -> None:
    """The shortfall warning names the stop, not the CPU (the old text blamed the CPU)."""
    port = ring()
    timer = threading.Timer(0.5, _thread.interrupt_main)
    timer.start()
    rc = RateController(engine, port, rx=[port])
    with pytest.raises(KeyboardInterrupt):
        rc.run(Stream(T4, size=64), "10kpps", duration="20s")
    timer.cancel()
    s = engine.last_result.streams[0]  # type: ignore[union-attr]
    assert s.tx_end_reason == "stopped"
    assert shortfall_cause(s, 10_000, 20.0).startswith("the run was stopped")


def test_rfc2544_throughput_at_its_default_60_s_trial(pytester: pytest.Pytester) -> None:
    """The marker a user writes first, at its default trial duration: one 60 s trial at a
    maximum the router forwards, valid and passing (before the fix every default trial
    was invalid: 'the generator sent 29 % of scheduled frames')."""
    pytester.makepyfile("""
        import pytest

        @pytest.mark.rfc2544(frame_sizes=[64], max_rate="20kpps")
        def test_default(rfc2544):
            result = rfc2544.throughput()[64]
            (trial,) = result.trials
            print("trial", trial.as_dict())
            assert trial.duration_s == 60.0 and trial.valid
            # the whole schedule left (within 60 ms of it, for a busy machine)
            assert 20_000 * (60 - 0.06) <= trial.tx_packets <= 20_000 * 60
            assert trial.lost == 0
            assert result.throughput_pps == 20_000
    """)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-s", timeout=300)
    with judged_unless_the_machine_was_busy(result):
        result.assert_outcomes(passed=1)
