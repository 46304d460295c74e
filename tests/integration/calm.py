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

from collections.abc import Callable
from typing import Any, TypeVar

from pytest_netload import RateController, RateResult

CALM_LAG_NS = 1_000_000  # this VM's ordinary noise is a few hundred us
CALM_TRIES = 4

T = TypeVar("T")


def worst_lag_ns(result: Any) -> int:
    """The largest TX lag of any stream of a RunResult or RateResult."""
    streams = [getattr(s, "result", s) for s in result.streams]
    return max((s.tx_max_lag_ns for s in streams), default=0)


def calm_run(run: Callable[[], T], tries: int = CALM_TRIES,
             lag_of: Callable[[T], int] = worst_lag_ns) -> T:
    """`run()` repeated while its generator lagged beyond CALM_LAG_NS; the calmest result.
    `lag_of` finds the worst lag in what `run` returns (default: a Run/RateResult)."""
    best: tuple[int, T] | None = None
    for _ in range(tries):
        result = run()
        lag = lag_of(result)
        if best is None or lag < best[0]:
            best = (lag, result)
        if lag <= CALM_LAG_NS:
            break
    assert best is not None
    return best[1]


class CalmController(RateController):
    """A RateController whose runs go through `calm_run`."""

    def run(self, *args: Any, **kwargs: Any) -> RateResult:
        return calm_run(lambda: super(CalmController, self).run(*args, **kwargs))
