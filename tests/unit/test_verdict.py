"""The overall verdict counts failures, errors, interruptions and tests that never ran:
an interrupted or broken session never reads PASS (reports/verdict.py, the HTML cover)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_netload.reports import html
from pytest_netload.reports.verdict import overall_verdict, session_counts, verdict_line

SAMPLE = Path(__file__).parent.parent / "data" / "results-sample.json"


def doc(*outcomes: str, **session: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"tests": [{"nodeid": f"t.py::test_{i}", "outcome": o, "duration_s": 0.1,
                                    "measurements": [], "verdicts": []}
                                   for i, o in enumerate(outcomes)]}
    if session:
        d["session"] = session
    return d


@pytest.mark.parametrize(("d", "line"), [
    (doc(), "NO VERDICT: no test passed or failed"),
    (doc("skipped"), "NO VERDICT: no test passed or failed (1 skipped)"),
    (doc("passed", "passed"), "PASS: 2 of 2 tests passed"),
    (doc("passed", "skipped", collected=2, ran=2), "PASS: 1 of 2 tests passed (1 skipped)"),
    (doc("passed", collected=5, ran=1, interrupted=True, stop_reason="KeyboardInterrupt"),
     "INCOMPLETE: 1 of 5 tests ran (interrupted: KeyboardInterrupt)"),
    (doc("passed", "passed", collected=3, ran=2), "INCOMPLETE: 2 of 3 tests ran"),
    (doc("passed", "passed", "passed", collected=3, ran=3, interrupted=True),
     "INCOMPLETE: 3 of 3 tests ran (interrupted)"),
    (doc("passed", "error", "passed", collected=3, ran=3, engine_crashes=["t.py::test_1"]),
     "ERROR: 1 of 3 tests errored (the engine crashed in 1 test)"),
    (doc("passed", "failed", "error", collected=5, ran=3,
         stop_reason="stopping after 1 failures"),
     "FAIL: 1 of 5 tests failed (stopping after 1 failures; 2 not run; 1 errored)"),
    (doc("error", collected=4, ran=1, interrupted=True),
     "INCOMPLETE: 1 of 4 tests ran (interrupted; 1 errored)"),
])
def test_verdict_line(d: dict[str, Any], line: str) -> None:
    assert verdict_line(d) == line
    assert overall_verdict(d) == line.partition(":")[0]


def test_documents_without_a_session_record_count_what_they_list() -> None:
    c = session_counts(doc("passed", "failed"))
    assert (c["collected"], c["ran"], c["not_run"], c["interrupted"]) == (2, 2, 0, False)
    # a record that claims fewer collected than listed cannot make not_run negative
    assert session_counts(doc("passed", "passed", collected=1, ran=2))["not_run"] == 0


def test_the_report_cover_says_incomplete_with_its_reason() -> None:
    sample = json.loads(SAMPLE.read_text())
    d = copy.deepcopy(sample)
    d["tests"] = d["tests"][:1]
    d["tests"][0]["outcome"] = "passed"
    d["session"] = {"exit_status": 2, "exit_status_name": "INTERRUPTED", "interrupted": True,
                    "stop_reason": "KeyboardInterrupt", "collected": 5, "ran": 1,
                    "engine_crashes": []}
    page = html.render(d)
    assert html.overall_verdict(d) == "INCOMPLETE"
    assert '<div class="word">INCOMPLETE</div>' in page
    assert '<div id="verdict-line">1 of 5 tests ran (interrupted: KeyboardInterrupt)</div>' in page
    assert "4 of 5 collected never ran" in page
    assert '<td id="session-stop">interrupted: KeyboardInterrupt</td>' in page


def test_the_report_lists_an_engine_crash_and_its_log() -> None:
    d = copy.deepcopy(json.loads(SAMPLE.read_text()))
    crashed = dict(d["tests"][0], nodeid="t.py::test_crash", outcome="error", measurements=[],
                   verdicts=[], error="engine host died or hung during 'crash'\n"
                   "--- last engine log lines ---\nFatal Python error: Segmentation fault")
    d["tests"] = [dict(d["tests"][0], outcome="passed"), crashed]
    d["session"] = {"collected": 2, "ran": 2, "interrupted": False,
                    "engine_crashes": ["t.py::test_crash"]}
    page = html.render(d)
    assert '<div class="word">ERROR</div>' in page
    assert '<td id="engine-crashes"><code>t.py::test_crash</code>' in page
    assert "Fatal Python error: Segmentation fault</pre>" in page
