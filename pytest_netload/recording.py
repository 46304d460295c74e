"""Where measurements and verdicts of the running test are collected.

The plugin opens a `TestRecord` around each test's call; fixtures add
measurements and the assertion helpers add verdicts to it. Outside a
pytest run (a plain script) there is no current record and nothing is
kept. Records hold only JSON-able values, so they travel with pytest's
reports (also from xdist workers) as `user_properties`.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

_CURRENT: contextvars.ContextVar[TestRecord | None] = contextvars.ContextVar(
    "netload_record", default=None)


@dataclass
class TestRecord:
    """What one test measured (`measurements`) and concluded (`verdicts`)."""

    __test__ = False  # not a pytest test class

    nodeid: str
    measurements: list[dict[str, Any]] = field(default_factory=list)
    verdicts: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"nodeid": self.nodeid, "measurements": list(self.measurements),
                "verdicts": list(self.verdicts)}


def current_record() -> TestRecord | None:
    return _CURRENT.get()


@contextmanager
def recording(nodeid: str) -> Iterator[TestRecord]:
    record = TestRecord(nodeid)
    token = _CURRENT.set(record)
    try:
        yield record
    finally:
        _CURRENT.reset(token)


def record_measurement(kind: str, data: dict[str, Any]) -> None:
    """Keep a measurement (e.g. kind "throughput", "latency", "run") for the current test."""
    record = _CURRENT.get()
    if record is not None:
        record.measurements.append({"kind": kind, **data})


def record_verdict(check: str, passed: bool, measured: Any, required: Any,
                   **details: Any) -> None:
    """Keep an assertion's outcome: which check, pass/fail, measured beside required."""
    record = _CURRENT.get()
    if record is not None:
        record.verdicts.append({"check": check, "passed": bool(passed), "measured": measured,
                                "required": required, **details})
