"""Y.1564 colour at RX on the real engine and the built-in netns-router: a colour-aware
service (green DSCP 10, yellow DSCP 12) through a router that keeps DSCP comes back in
the colours it was sent; through one that re-marks every frame to DSCP 12
(netns-router:remark_dscp=12, nftables in its forward chain) every green frame comes
back yellow, which the records count as re-marked while the SAC, judged on the frames
sent green, still passes."""

from __future__ import annotations

import os

import pytest

pytest_plugins = ["pytester"]

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="built-in DUTs need root (CI runs as root)"),
]

SESSION = """
import pytest

@pytest.mark.y1564(services=[{"name": "data", "cir": "2Mbit/s", "eir": "1Mbit/s",
                              "frame_size": 512, "colour": "dscp", "green": 10,
                              "yellow": 12, "sac": {"flr": "1%"}}],
                   step_duration="1s", steps=[1.0], policing=False)
def test_colour(y1564):
    y1564.sct("data")
"""


def _eir_step(pytester: pytest.Pytester, topology: str) -> dict:
    pytester.makepyfile(test_colour=SESSION)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly",
                                           f"--netload-topology={topology}",
                                           "--netload-report-dir=out", timeout=300)
    result.assert_outcomes(passed=1)
    from pytest_netload.reports.load import load

    doc = load(pytester.path / "out" / "results.json")  # valid against the schema
    (sct,) = [m for t in doc["tests"] for m in t["measurements"] if m["kind"] == "y1564_sct"]
    (cir, eir) = sct["steps"]
    assert cir["colour_at_rx"]["green"] + cir["colour_at_rx"]["yellow"] == cir["rx_frames"]
    return eir


def test_a_router_that_keeps_dscp(pytester: pytest.Pytester) -> None:
    eir = _eir_step(pytester, "netns-router")
    seen = eir["colour_at_rx"]
    assert seen["green"] == eir["rx_frames"] > 0, eir
    assert seen["yellow"] == eir["yellow"]["rx_frames"] > 0, eir
    assert seen["remarked"] == seen["promoted"] == seen["other"] == 0, eir


def test_a_router_that_remarks_every_frame_yellow(pytester: pytest.Pytester) -> None:
    eir = _eir_step(pytester, "netns-router:remark_dscp=12")
    seen = eir["colour_at_rx"]
    assert eir["passed"], eir["reason"]  # the SAC: on the frames sent green
    assert seen["green"] == 0 and seen["remarked"] == eir["rx_frames"] > 0, eir
    assert seen["yellow"] == eir["rx_frames"] + eir["yellow"]["rx_frames"], eir
    assert "sent green came back yellow" in eir["reason"]
