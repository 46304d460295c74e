"""Progress of long runs: events from procedures and fixtures to whoever shows them.

The plugin installs a sink (the terminal's live line); without one (a plain
script, an xdist worker, -q) events go nowhere. `progress_line` formats an
event; it is pure so the terminal's wording is tested without a terminal.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from .. import format as fmt

Sink = Callable[[dict[str, Any]], None]
_SINK: list[Sink] = []


def report(**event: Any) -> None:
    """Pass an event (test, frame_size, trial, offered_pps, loss_ratio, ...) to the sink."""
    if _SINK:
        _SINK[-1](event)


@contextmanager
def sink(fn: Sink) -> Iterator[None]:
    _SINK.append(fn)
    try:
        yield
    finally:
        _SINK.remove(fn)


def progress_line(event: dict[str, Any]) -> str:
    """One line: test, frame size, procedure, trial n, offered rate, loss so far."""
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
