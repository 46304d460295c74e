"""`assert_sac`: a Y.1564 result against its services' acceptance criteria (SAC).

The criteria travel with the services (y1564/services.py), and the procedures judge
every step and interval against them; this helper turns that judgement into a pytest
verdict: one recorded verdict per result (per service of a configuration test, the
whole performance test), then an AssertionError listing every criterion missed::

    Y.1564 SAC not met: 1 of 2 results failed
    service configuration test: service 'data' policing: IR 6.24 Mbit/s fails <= 5.12 Mbit/s

A step the generator could not offer is "not measured": not a DUT failure, but not a
pass either, so it fails the assertion with its reason.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..errors import NetloadConfigError
from ..measure.recording import record_verdict

__all__ = ["assert_sac"]


def _parts(result: Any) -> list[Any]:
    """The SCT/burst/SPT results inside `result`: one, a sequence of them, or a whole run
    (anything with `sct` and `spt`)."""
    if hasattr(result, "sct") and hasattr(result, "spt"):
        return [*result.sct, *getattr(result, "bursts", ()),
                *([result.spt] if result.spt is not None else [])]
    if hasattr(result, "failures") and hasattr(result, "passed"):
        return [result]
    if isinstance(result, Iterable) and not isinstance(result, (str, bytes)):
        parts = [p for r in result for p in _parts(r)]
        if parts:
            return parts
    raise NetloadConfigError(
        f"assert_sac got {type(result).__name__}; give what the y1564 fixture returns: "
        "y1564.sct(...), y1564.bursts(...), y1564.spt(...) or y1564.run()")


def _what(part: Any) -> tuple[str, str]:
    if hasattr(part, "tolerance_frames"):
        return "burst test", f"service {part.service.name!r}"
    if hasattr(part, "steps"):
        return "service configuration test", f"service {part.service.name!r}" \
            if hasattr(part.service, "name") else f"service {part.service!r}"
    names = [getattr(s, "name", s) for s in getattr(part, "services", ())]
    return "service performance test", "services " + ", ".join(repr(n) for n in names)


def assert_sac(result: Any) -> None:
    """Pass when every step (SCT) and every service over the run (SPT) met its SAC;
    else raise AssertionError naming each service, step and criterion missed."""
    parts = _parts(result)
    failed: list[str] = []
    for part in parts:
        test, who = _what(part)
        lines = list(part.failures())
        passed = bool(part.passed) and not lines
        record_verdict("sac", passed, measured="; ".join(lines) if lines else "every SAC met",
                       required="Y.1564 SAC of each service", procedure=test, subject=who)
        failed += [f"{test}: {line}" for line in lines] or \
            ([] if passed else [f"{test} of {who}: not passed"])
    if failed:
        bad = sum(1 for p in parts if not p.passed or list(p.failures()))
        raise AssertionError(f"Y.1564 SAC not met: {bad} of {len(parts)} results failed\n"
                             + "\n".join(failed))
