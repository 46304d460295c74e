"""A session's overall verdict from its results document, in one word and one line.

Pure and light (no plotting, no templates): the terminal summary, the HTML report
and `netload report` all say the same. The word is, in this order:
- FAIL: a test failed (a DUT verdict; it stands whatever else happened);
- INCOMPLETE: the session was interrupted, or tests it collected never ran;
- ERROR: a test errored (a harness problem: the DUT was not judged there);
- PASS: at least one test passed and none of the above;
- NO VERDICT: nothing passed or failed (no test, or every test skipped).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

OUTCOMES = ("passed", "failed", "error", "skipped")


def session_counts(doc: Mapping[str, Any]) -> dict[str, Any]:
    """Outcome counts, and from the document's optional `session` record: tests
    collected, tests that ran (reached an outcome, skips included), tests not run,
    whether the session was interrupted and why it stopped. A document without a
    `session` record (written before it existed) counts every listed test as collected
    and run."""
    outcomes = [t.get("outcome") for t in doc.get("tests", ())]
    out: dict[str, Any] = {o: outcomes.count(o) for o in OUTCOMES}
    session = doc.get("session") or {}
    ran = int(session.get("ran", len(outcomes)))
    collected = max(int(session.get("collected", len(outcomes))), ran)
    out.update(tests=len(outcomes), collected=collected, ran=ran, not_run=collected - ran,
               interrupted=bool(session.get("interrupted", False)),
               stop_reason=session.get("stop_reason"),
               engine_crashes=list(session.get("engine_crashes") or ()))
    return out


def overall_verdict(doc: Mapping[str, Any]) -> str:
    """FAIL, INCOMPLETE, ERROR, PASS or NO VERDICT (see the module's docstring)."""
    c = session_counts(doc)
    if c["failed"]:
        return "FAIL"
    if c["interrupted"] or c["not_run"]:
        return "INCOMPLETE"
    if c["error"]:
        return "ERROR"
    return "PASS" if c["passed"] else "NO VERDICT"


def verdict_line(doc: Mapping[str, Any]) -> str:
    """The verdict with its reason: 'INCOMPLETE: 1 of 5 tests ran (interrupted:
    KeyboardInterrupt)', 'FAIL: 1 of 5 tests failed (1 errored)', 'PASS: 3 of 3 tests
    passed'."""
    c = session_counts(doc)
    word = overall_verdict(doc)
    of = c["collected"]
    if word == "FAIL":
        head = f"{c['failed']} of {of} tests failed"
    elif word == "INCOMPLETE":
        head = f"{c['ran']} of {of} tests ran"
    elif word == "ERROR":
        head = f"{c['error']} of {of} tests errored"
    elif word == "PASS":
        head = f"{c['passed']} of {of} tests passed"
    else:
        head = "no test passed or failed"
    why = []
    if c["interrupted"] or c["stop_reason"]:
        why.append("interrupted" + (f": {c['stop_reason']}" if c["stop_reason"] else "")
                   if c["interrupted"] else str(c["stop_reason"]))
    if word != "INCOMPLETE" and c["not_run"]:
        why.append(f"{c['not_run']} not run")
    if word != "ERROR" and c["error"]:
        why.append(f"{c['error']} errored")
    if c["engine_crashes"]:
        n = len(c["engine_crashes"])
        why.append(f"the engine crashed in {n} test{'s' if n > 1 else ''}")
    if word in ("PASS", "NO VERDICT") and c["skipped"]:
        why.append(f"{c['skipped']} skipped")
    return f"{word}: {head}" + (f" ({'; '.join(why)})" if why else "")
