"""The DUT hooks example (conftest_examples/dut_hooks) on netns-lossy: it passes, every
lost frame of its trials is attributed (0 unaccounted), its report section reaches
results.json, and a kernel log error line written during a trial fails its tests."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from calm import judged_unless_the_machine_was_busy

pytest_plugins = ["pytester"]

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="built-in DUTs need root (CI runs as root)"),
]

EXAMPLES = Path(__file__).parents[2] / "conftest_examples"


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    shutil.copytree(EXAMPLES / "dut_hooks", pytester.path / "dut_hooks")
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly", "-s",
                                         "-rs", "dut_hooks", "--netload-report-dir=out",
                                         *args, timeout=300)


def test_example_passes_with_every_lost_frame_attributed(pytester: pytest.Pytester) -> None:
    result = _run(pytester)
    with judged_unless_the_machine_was_busy(result):
        result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*test_every_lost_frame_is_attributed*PASS*dropped by the "
                                 "DUT's filter*0 unaccounted*"])
    from pytest_netload.reports.load import load

    doc = load(pytester.path / "out" / "results.json")  # valid against the shipped schema
    assert doc["topology"]["dut"]["name"] == "netns-lossy"
    assert doc["topology"]["dut"]["kernel"] == os.uname().release  # pytest_netload_dut_info
    sections = doc["report_sections"]
    assert [s["title"] for s in sections] == ["DUT kernel log"], sections
    assert "no error line" in sections[0]["text"], sections
    assert "DUT kernel log" in (pytester.path / "out" / "report.html").read_text()
    lossy = [t for test in doc["tests"] for m in test["measurements"]
             for t in m.get("trials", ()) if (t.get("loss_attribution") or {}).get("lost")]
    assert lossy, "no trial record with lost frames and an attribution"
    for trial in lossy:
        assert trial["loss_attribution"]["unaccounted"] == 0, trial["loss_attribution"]
    assert all(t["dut_health"] == "ok" for t in lossy if t.get("valid", True))


def test_a_kernel_log_error_fails_the_tests(pytester: pytest.Pytester,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NETLOAD_EXAMPLE_INJECT", "1")  # before_trial writes to /dev/kmsg
    result = _run(pytester)
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines([
        "*DutHealthFailure: DUT health check of *conftest.py failed after throughput trial 1 "
        "*kernel log: *netload-example-error: injected before throughput trial 1*",
    ])
    text = (pytester.path / "out" / "results.json").read_text()
    assert "netload-example-error: injected" in text
    assert "failed on" in text  # the report section names the line
