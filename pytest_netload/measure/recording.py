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
    captures: list[str] = field(default_factory=list)
    """pcap files written for this test (a failed verdict's last packets)."""
    last_run: Any = field(default=None, repr=False)
    """The engine's last RunResult in this test (not part of the record)."""

    @property
    def failed(self) -> bool:
        """A verdict failed: the DUT's, not one that could not judge it (``outcome``
        "error": a lower bound the generator set, below the requirement)."""
        return any(not v["passed"] and v.get("outcome") != "error" for v in self.verdicts)

    def as_dict(self) -> dict[str, Any]:
        return {"nodeid": self.nodeid, "measurements": list(self.measurements),
                "verdicts": list(self.verdicts), "captures": list(self.captures)}


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


def note_run(result: Any) -> None:
    """Remember the engine's latest run of the current test (for failure captures)."""
    record = _CURRENT.get()
    if record is not None:
        record.last_run = result


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
