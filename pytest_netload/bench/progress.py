"""Progress of long runs: events from procedures and fixtures to whoever shows them.

Every procedure feeds this one path. The runner says what a procedure will do before
its first trial (`start`: at most how many trials of how long, the search's resolution),
the measurers say when a trial's traffic starts (`trial_start`), the procedures'
``on_trial`` callbacks report each trial as it ends (``event="trial"``), Y.1564's
``on_step``/``on_interval`` the steps and intervals, and long engine runs (traffic,
soak) their frames so far from the engine's poll (`poller`).

The plugin installs the sinks (plugin/live.py: the terminal's line, xdist's forwarding
to the controller, allure's steps); without one (a plain script) events go nowhere and
cost a list test. The time every consumer reads comes from `now`, which a test replaces
with a simulated clock (`clock`): ETAs and the 30 s cadence of CI logs are tested so.
`progress_line` formats an event on its own (bench/progress_model.py has the model that
adds elapsed time and ETA).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from .. import format as fmt

Sink = Callable[[dict[str, Any]], None]
Clock = Callable[[], float]
_SINK: list[Sink] = []
_CLOCK: list[Clock] = [time.monotonic]


def report(**event: Any) -> None:
    """Pass an event (test, frame_size, procedure, trial, offered_pps, loss_ratio, note,
    and ``event``: "start", "trial_start", "trial", "interval", "run"; none: a note) to
    the innermost sink."""
    if _SINK:
        _SINK[-1](event)


def active() -> bool:
    """Whether a sink listens (a caller skips building events nobody reads)."""
    return bool(_SINK)


@contextmanager
def sink(fn: Sink) -> Iterator[None]:
    _SINK.append(fn)
    try:
        yield
    finally:
        _SINK.remove(fn)


def now() -> float:
    """Seconds on the progress clock: time.monotonic, or the simulated clock of `clock`."""
    return _CLOCK[-1]()


@contextmanager
def clock(fn: Clock) -> Iterator[None]:
    """Read time from `fn` inside the block (a test's simulated clock)."""
    _CLOCK.append(fn)
    try:
        yield
    finally:
        _CLOCK.remove(fn)


def start(procedure: str, *, test: str = "", frame_size: Any = None, what: str = "trial",
          total: int | None = None, exact: bool = False, trial_s: float | None = None,
          resolution: Any = None, max_pps: float | None = None,
          budget_s: float | None = None, done: int = 0) -> None:
    """A procedure begins: `total` trials (steps, intervals) at most, or exactly with
    `exact`; each `trial_s` long; a search's `resolution` (search.Resolution) and its
    maximum `max_pps`; MLRsearch's time `budget_s`; `done` intervals already measured
    (a resumed run)."""
    if not _SINK:
        return
    report(event="start", test=test, procedure=procedure, frame_size=frame_size, what=what,
           total=total, exact=exact, trial_s=trial_s, max_pps=max_pps, budget_s=budget_s,
           done=done,
           resolution=None if resolution is None else
           {"ratio": resolution.ratio, "pps": resolution.pps})


def trial_start(offered_pps: float | None = None, offered_bps: float | None = None) -> None:
    """A trial's traffic starts now (the measurers say so; allure opens its step)."""
    if _SINK:
        report(event="trial_start", offered_pps=offered_pps, offered_bps=offered_bps)


def poller(duration_s: float | None = None) -> Callable[[dict[str, Any]], None] | None:
    """The engine's ``progress=`` callback of a long run: each poll's frames so far as a
    "run" event; None without a sink (the run then polls with no callback at all)."""
    if not _SINK:
        return None

    def poll(status: dict[str, Any]) -> None:
        report(event="run", state=status.get("state"), tx_packets=status.get("tx_packets", 0),
               rx_packets=status.get("rx_packets", 0),
               elapsed_s=status.get("elapsed_ns", 0) / 1e9,
               end_s=(status.get("end_ns") or 0) / 1e9 or duration_s)

    return poll


def trial_fields(t: Any, loss_tolerance: float | None = None) -> dict[str, Any]:
    """A trial result's part of a "trial" event: load, loss, validity and whether it
    passed (RFC 2544's by `loss_tolerance`, RFC 2889's: nothing lost, every address
    learned), whatever the procedure's trial type."""
    loss = getattr(t, "loss_ratio", None)
    if loss is None and getattr(t, "tx_packets", 0):
        loss = t.lost / t.tx_packets
    # per port where the procedure searches per port (RFC 2889), as its bracket is
    offered = getattr(t, "offered_pps_per_port", None) or getattr(t, "load_pps_per_port", None) \
        or getattr(t, "offered_pps", None) or getattr(t, "overload_pps", None) \
        or getattr(t, "load_pps", None)
    valid = bool(getattr(t, "valid", True))
    passed: bool | None = None
    if valid:
        verdict = getattr(t, "passed", None)
        if callable(verdict) and loss_tolerance is not None:
            passed = bool(verdict(loss_tolerance))
        elif hasattr(t, "all_received"):
            passed = bool(t.all_received)
        elif hasattr(t, "learned_all"):
            passed = bool(t.learned_all)
        elif isinstance(getattr(t, "lost", None), int) and loss_tolerance is not None:
            passed = t.lost == 0
    return {"offered_pps": offered, "loss_ratio": None if loss is None else float(loss),
            "valid": valid, "passed": passed,
            "note": None if valid else f"invalid: {getattr(t, 'invalid_reason', '')}"}


def progress_line(event: dict[str, Any]) -> str:
    """One line of an event alone: test, frame size, procedure, trial n, offered rate,
    loss so far."""
    parts = [str(event.get("test", ""))]
    if event.get("frame_size") is not None:
        parts.append(fmt.frame_size(event["frame_size"]))
    if event.get("procedure"):
        parts.append(str(event["procedure"]))
    if event.get("trial") is not None:
        parts.append(f"trial {event['trial']}")
    if event.get("offered_pps"):
        parts.append(f"offered {fmt.rate_pps(float(event['offered_pps']))}")
    if event.get("loss_ratio") is not None:
        parts.append(f"loss {fmt.loss_ratio(float(event['loss_ratio']))}")
    if event.get("note"):
        parts.append(str(event["note"]))
    return "netload: " + " | ".join(p for p in parts if p)
