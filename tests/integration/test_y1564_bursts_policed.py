"""Y.1564 (2016) burst tests on the real engine and the built-in netns-policed DUT, whose
bucket is known (CIR 10 Mbit/s, CBS 12,500 B, frames counted with their FCS):

- a burst of 0.8 CBS (19 frames of 512 B) passes whole; one of the CBS (24 frames) too;
- a burst of 2 CBS (48 frames) gets the bucket's 24 through (its refill during the
  burst, at some hundreds of Mbit/s, is under one frame) and loses the other 24, about
  the CBS beyond the bucket; the record and the report carry both;
- a service that claims a CBS of 25 kB on that policer fails its CBS burst: 48 frames
  expected whole, about 24 received.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from calm import judged_unless_the_machine_was_busy

pytest_plugins = ["pytester"]

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="built-in DUTs need root (CI runs as root)"),
]

POLICED = "netns-policed:cir_bps=10000000,cbs_bytes=12500"

BURSTS = """
import pytest
from pytest_netload import assert_sac

pytestmark = pytest.mark.netload_topology("{policed}", ids=["policed"])

@pytest.mark.y1564(services=[{{"name": "data", "cir": "10Mbit/s", "cbs": "12500B",
                               "frame_size": 512}}], burst_sizes=[0.8, 1.0, 2.0])
def test_the_policers_cbs(y1564):
    result = y1564.bursts("data")
    small, whole, big = result.steps
    for s in result.steps:
        print("BURST", s.name, s.frames, s.expected, s.expected_rx, s.sample.rx_frames,
              round(s.sample.rate_bps))
    assert (small.frames, small.sample.rx_frames) == (19, 19), small.reason
    assert (whole.frames, whole.sample.rx_frames) == (24, 24), whole.reason
    assert big.frames == 48 and big.expected == "drop", big.reason
    assert 23 <= big.sample.rx_frames <= 26, big.reason
    assert_sac(result)

@pytest.mark.y1564(services=[{{"name": "claims", "cir": "10Mbit/s", "cbs": "25kB",
                               "frame_size": 512}}])
def test_a_claimed_cbs_above_the_policers_fails(y1564):
    (step,) = y1564.bursts("claims").steps
    assert step.frames == 48 and step.expected == "pass", step.reason
    assert step.passed is False and 23 <= step.sample.rx_frames <= 26, step.reason
"""


def _records(path: Path, kind: str) -> list[dict[str, Any]]:
    from pytest_netload.reports.load import load

    doc = load(path)  # valid against the shipped schema
    return [m for t in doc["tests"] for m in t["measurements"] if m["kind"] == kind]


def test_bursts_follow_the_policers_bucket(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_bursts=BURSTS.format(policed=POLICED))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly",
                                           "-s", "--netload-report-dir=out", timeout=300)
    with judged_unless_the_machine_was_busy(result):
        result.assert_outcomes(passed=2)
    data, claims = _records(pytester.path / "out" / "results.json", "y1564_bursts")
    assert data["passed"] and not claims["passed"] and claims["dut_failed"]
    big = data["steps"][2]
    assert big["tx_frames"] == 48 and 22 <= big["lost"] <= 25  # about the CBS beyond
    assert big["rate_bps"] > 100e6  # back to back, far above the 10 Mbit/s CIR
    html = (pytester.path / "out" / "report.html").read_text()
    assert '<table class="y1564-bursts">' in html
