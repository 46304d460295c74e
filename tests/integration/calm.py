"""Timing checks that survive a busy machine: a run is judged only when the generator's
own lag counters say it kept its schedule.

CI may run beside other work. A worst TX lag over CALM_LAG_NS means the engine's worker
lost its CPU (another job, a second engine on the same core); a timing check of that run
would test the machine, not the pacer. Such a run is repeated, up to CALM_TRIES times, and
the calmest one is judged, so a test fails only when a calm run is wrong (its failure
messages show its lag). Counts and invariants that no lag can change are checked on every
run as usual.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import pytest

from pytest_netload import RateController, RateResult

CALM_LAG_NS = 1_000_000  # this VM's ordinary noise is a few hundred us
CALM_TRIES = 4

T = TypeVar("T")


def _streams(result: Any) -> list[Any]:
    return [getattr(s, "result", s) for s in result.streams]


def worst_lag_ns(result: Any) -> int:
    """The largest TX lag of any stream of a RunResult or RateResult."""
    return max((s.tx_max_lag_ns for s in _streams(result)), default=0)


def machine_took_the_cpu(result: Any) -> str | None:
    """The measured proof that a lagging run's generator lost its CPU to another task
    (its worker's preemptions and time off the CPU cover the worst lag); None when the
    lag is not explained by the machine, so the run is the generator's to answer for."""
    worst = max(_streams(result), key=lambda s: s.tx_max_lag_ns, default=None)
    if worst is None or not worst.tx_preemptions or \
            worst.tx_off_cpu_ns < worst.tx_max_lag_ns:
        return None
    return (f"worst lag {worst.tx_max_lag_ns / 1e6:,.1f} ms; its worker was off its CPU "
            f"{worst.tx_off_cpu_ns / 1e6:,.1f} ms in {worst.tx_preemptions:,} preemptions")


def calm_run(run: Callable[[], T], tries: int = CALM_TRIES,
             result_of: Callable[[T], Any] = lambda r: r) -> T:
    """`run()` repeated while its generator lagged beyond CALM_LAG_NS; the calmest result.
    `result_of` finds the Run/RateResult in what `run` returns.

    When no run was calm and the calmest one's lag is covered by measured preemptions, the
    test's premise (a generator that keeps its schedule) never held: it is skipped, naming
    the measurement, since judging it would test the machine. A lag without that proof is
    the generator's own, and the calmest run is judged."""
    best: tuple[int, T] | None = None
    for _ in range(tries):
        result = run()
        lag = worst_lag_ns(result_of(result))
        if best is None or lag < best[0]:
            best = (lag, result)
        if lag <= CALM_LAG_NS:
            break
    assert best is not None
    if best[0] > CALM_LAG_NS:
        proof = machine_took_the_cpu(result_of(best[1]))
        if proof is not None:
            pytest.skip(f"busy machine: no calm generator in {tries} runs ({proof}); "
                        "a timing check of these runs would test the machine, not the pacer")
    return best[1]


class CalmController(RateController):
    """A RateController whose runs go through `calm_run`."""

    def run(self, *args: Any, **kwargs: Any) -> RateResult:
        return calm_run(lambda: super(CalmController, self).run(*args, **kwargs))


BUSY_PROOF = "(another task took the core)"  # how lag_cause() names a measured preemption


@contextmanager
def judged_unless_the_machine_was_busy(result: pytest.RunResult) -> Iterator[None]:
    """Checks on a pytester session's outcome, excused only with proof: when they fail and
    the session printed a generator lag that the engine measured as preemptions (an
    InvalidTrial, or an inner test's own "busy machine:" skip), the session measured the
    machine, not the code, and the test is skipped naming that line. Without the proof,
    the failure stands."""
    try:
        yield
    except (AssertionError, pytest.fail.Exception):
        proof = next((line.strip() for line in result.outlines
                      if BUSY_PROOF in line or "busy machine:" in line), None)
        if proof is None:
            raise
        pytest.skip(f"busy machine: the session's generator lost its CPU: {proof[:400]}")


def skip_if_busy_ceiling(trials: Any, ceiling_pps: float | None) -> None:
    """For a search run inside a pytester session: a generator ceiling whose trials were
    invalid with measured preemptions is the machine's, and the inner test skips with
    "busy machine:" (which judged_unless_the_machine_was_busy reads); without the proof a
    ceiling is the generator's own failure and the test goes on to fail."""
    if ceiling_pps is None:
        return
    reasons = [t.invalid_reason for t in trials if t.invalid_reason and BUSY_PROOF in
               t.invalid_reason]
    if reasons:
        pytest.skip(f"busy machine: generator ceiling {ceiling_pps:,.0f} pps: {reasons[0]}")
