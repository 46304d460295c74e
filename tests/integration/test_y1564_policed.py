"""Y.1564 end to end on the real engine and the built-in netns-policed DUT, whose
answers are known: its policer's CIR and CBS, and an outage of known length.

- the example suite (conftest_examples/y1564) passes, its records validate, and the
  report shows the service-by-step table;
- the policing step's verdict follows the configured policer at two operating points:
  a service whose CIR is the policer's passes every step; a service that claims 8
  Mbit/s on a 10 Mbit/s policer fails policing (IR 10 Mbit/s, above 8 Mbit/s + 2 % +
  the burst); a service that claims 12.5 Mbit/s fails CIR 100 % on loss and passes 75 %;
- the SPT's availability follows an outage: forwarding off for about 4 s of an 11 s run
  (availability_n=3) makes 3-4 intervals unavailable, the rest available;
- a run killed mid-way (SIGKILL) resumes from its checkpoint: the second session reads
  the intervals done back and measures only the rest.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from calm import judged_unless_the_machine_was_busy

pytest_plugins = ["pytester"]

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="built-in DUTs need root (CI runs as root)"),
]

EXAMPLES = Path(__file__).parents[2] / "conftest_examples"
POLICED = "netns-policed:cir_bps=10000000,cbs_bytes=12500"


def _doc(path: Path) -> dict[str, Any]:
    from pytest_netload.reports.load import load

    return load(path)  # valid against the shipped schema


def _records(doc: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [m for t in doc["tests"] for m in t["measurements"] if m["kind"] == kind]


def test_example_suite_passes(pytester: pytest.Pytester) -> None:
    shutil.copytree(EXAMPLES / "y1564", pytester.path / "y1564")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly",
                                           "-s", "y1564", "--netload-report-dir=out",
                                           timeout=300)
    with judged_unless_the_machine_was_busy(result):
        result.assert_outcomes(passed=2)
    doc = _doc(pytester.path / "out" / "results.json")
    (sct,) = _records(doc, "y1564_sct")
    assert [s["name"] for s in sct["steps"]] == ["CIR 25%", "CIR 50%", "CIR 75%", "CIR 100%",
                                                 "policing"]
    policing = sct["steps"][-1]
    # 12.5 Mbit/s offered; the policer passes its CIR + its full bucket over the 1-s step
    assert 10e6 * 0.99 <= policing["ir_bps"] <= 10e6 + 12_500 * 8 / 1 + 10e6 * 0.01
    (spt,) = _records(doc, "y1564_spt")
    assert spt["intervals"] == 6 and spt["passed"]
    html = (pytester.path / "out" / "report.html").read_text()
    assert '<table class="y1564-sct">' in html and '<table class="y1564-spt">' in html
    assert not (pytester.path / "out" / "y1564-checkpoints").exists()  # done: removed


SCT_TESTS = """
import pytest
from pytest_netload import assert_sac

pytestmark = pytest.mark.netload_topology("{policed}", ids=["policed"])
SAC = {{"flr": "0.1%", "ftd": "10ms"}}

@pytest.mark.y1564(services=[{{"name": "loose", "cir": "8Mbit/s", "cbs": "12500B",
                               "frame_size": 512, "sac": SAC}}], step_duration="1s",
                   steps=[0.5, 1.0])
def test_a_policer_above_the_cir_fails_policing(y1564):
    result = y1564.sct("loose")
    assert [s.passed for s in result.steps] == [True, True, False], result.failures()
    with pytest.raises(AssertionError, match="policing: IR"):
        assert_sac(result)

@pytest.mark.y1564(services=[{{"name": "tight", "cir": "12.5Mbit/s", "cbs": "12500B",
                               "frame_size": 512, "sac": SAC}}], step_duration="1s",
                   steps=[0.75, 1.0], policing=False)
def test_a_policer_below_the_cir_fails_the_cir_step(y1564):
    result = y1564.sct("tight")
    below, at = result.steps
    assert below.passed is True, below.reason      # 9.375 Mbit/s: under the 10 Mbit/s CIR
    assert at.passed is False and "FLR" in at.reason, at.reason
    assert 0.18 <= at.sample.flr <= 0.22, at.sample.flr  # 1 - 10/12.5 = 0.2
"""


def test_policing_verdict_follows_the_configured_policer(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_sct=SCT_TESTS.format(policed=POLICED))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly",
                                           "-s", "--netload-report-dir=out", timeout=300)
    with judged_unless_the_machine_was_busy(result):
        result.assert_outcomes(passed=2)
    doc = _doc(pytester.path / "out" / "results.json")
    loose = next(m for m in _records(doc, "y1564_sct") if m["service"]["name"] == "loose")
    policing = loose["steps"][-1]
    assert policing["offered_bps"] == pytest.approx(10e6)  # 125 % of 8 Mbit/s
    assert policing["ir_bps"] > 8e6 * 1.02 + 12_500 * 8 / 1  # the policer let 10 through


SPT_OUTAGE = """
import threading, time
import pytest

pytestmark = pytest.mark.netload_topology("{policed}", ids=["policed"])

@pytest.mark.y1564(services=[{{"name": "data", "cir": "4Mbit/s", "frame_size": 512,
                               "sac": {{"flr": "0.1%", "availability": "99%"}}}}],
                   spt_duration="11s", availability_n=3, checkpoint=False)
def test_outage(y1564, dut):
    def outage():
        time.sleep(3.0)
        dut.run(["sysctl", "-qw", "net.ipv4.ip_forward=0"])
        time.sleep(4.0)
        dut.run(["sysctl", "-qw", "net.ipv4.ip_forward=1"])
    threading.Thread(target=outage, daemon=True).start()
    result = y1564.spt()
    (s,) = result.services
    print("AVAILABILITY", s.availability.as_dict(), list(s.series["flr"]))
    assert 3 <= s.availability.unavailable <= 4, s.availability
    assert s.availability.unavailable + s.availability.available + \\
        s.invalid_intervals == 11
    assert s.passed is False  # availability under 99 %
"""


def test_availability_follows_an_outage(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_spt=SPT_OUTAGE.format(policed=POLICED))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly",
                                           "-s", "--netload-report-dir=out", timeout=300)
    with judged_unless_the_machine_was_busy(result):
        result.assert_outcomes(passed=1)
    (spt,) = _records(_doc(pytester.path / "out" / "results.json"), "y1564_spt")
    flags = spt["services"][0]["series"]["available"]
    assert flags.count(False) in (3, 4) and len(flags) == 11, flags
    first = flags.index(False)
    assert flags[first:first + flags.count(False)] == [False] * flags.count(False)  # one run


SPT_LONG = """
import pytest

pytestmark = pytest.mark.netload_topology("{policed}", ids=["policed"])

@pytest.mark.y1564(services=[{{"name": "data", "cir": "2Mbit/s", "frame_size": 512,
                               "sac": {{"flr": "0.1%"}}}}], spt_duration="8s",
                   checkpoint_every="1s")
def test_long(y1564):
    result = y1564.spt()
    print("RESUMED", result.resumed_intervals, "INTERVALS", result.intervals)
    assert result.intervals == 8
"""


def _intervals(path: Path) -> int:
    """Interval lines on disk (the header and the bucket layout are lines too)."""
    return sum('"interval"' in line for line in path.read_text().splitlines())


def test_a_killed_run_resumes_from_its_checkpoint(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_long=SPT_LONG.format(policed=POLICED))
    args = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly",
            "-s", "--netload-report-dir=out", "test_long.py"]
    checkpoints = pytester.path / "out" / "y1564-checkpoints"
    first = subprocess.Popen(args, cwd=pytester.path, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # kill it once 4 intervals are on disk
            files = list(checkpoints.glob("*.jsonl")) if checkpoints.exists() else []
            if files and _intervals(files[0]) >= 3:
                break
            time.sleep(0.2)
        else:
            pytest.fail("the first run wrote no checkpoint in 120 s")
        os.killpg(first.pid, signal.SIGKILL)  # pytest, its engine host: a crash
    finally:
        first.wait(30)
    done = _intervals(files[0])
    second = subprocess.run(args, cwd=pytester.path, capture_output=True, text=True,
                            timeout=300)
    assert second.returncode == 0, second.stdout[-3000:]
    resumed = int(second.stdout.split("RESUMED ")[1].split()[0])
    assert resumed >= done >= 3, second.stdout[-2000:]
    (spt,) = _records(json.loads((pytester.path / "out" / "results.json").read_text()),
                      "y1564_spt")
    assert spt["resumed"] is True and spt["intervals"] == 8
    assert not list(checkpoints.glob("*.jsonl"))
