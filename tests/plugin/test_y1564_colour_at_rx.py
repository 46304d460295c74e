"""Colour at RX in Y.1564 sessions on the fake engine: each frame of a colour-aware
service is counted by the colour it arrives with. A DUT that keeps the marking gives
green for green; one that re-marks every frame yellow (the fake's remark_dscp) is seen:
the SAC is still judged on the frames sent green, and the SCT steps, their reasons
and the SPT record say how many came back re-marked."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_netload.reports.load import load

pytest_plugins = ["pytester"]

FAKE = ("--netload-engine=fake:capacity_bps=10Mbit/s,capacity_layer=l2,loss_ratio=0,"
        "delay_s=100e-6,buffer_frames=20")
COLOURED = ('{"name": "data", "cir": "5Mbit/s", "eir": "3Mbit/s", "frame_size": 512, '
            '"colour": "dscp", "green": 10, "yellow": 12, "sac": {"flr": "0.1%"}}')
BODY = f"""
    import pytest

    @pytest.mark.y1564(services=[{COLOURED}], step_duration="1s", steps=[1.0],
                       spt_duration="3s", checkpoint=False)
    def test_colour(y1564):
        cir, eir, _policing = y1564.sct("data").steps
        assert cir.passed, cir.reason
        y1564.spt()
"""


def _measurements(pytester: pytest.Pytester, *args: str) -> dict[str, Any]:
    pytester.makepyfile(test_colour=BODY)
    result = pytester.runpytest("-p", "no:randomly", FAKE + "".join(args))
    result.assert_outcomes(passed=1)
    path = pytester.path / "netload-results" / "results.json"
    load(path)  # valid against the schema
    (test,) = json.loads(path.read_text())["tests"]
    return {m["kind"]: m for m in test["measurements"]}


def test_a_dut_that_keeps_the_colours_gives_green_for_green(pytester: pytest.Pytester) -> None:
    got = _measurements(pytester)
    cir, eir = got["y1564_sct"]["steps"][:2]
    assert cir["colour_at_rx"] == {"green": cir["rx_frames"], "yellow": 0, "remarked": 0,
                                   "promoted": 0, "other": 0}
    assert eir["colour_at_rx"]["green"] == eir["rx_frames"]
    assert eir["colour_at_rx"]["yellow"] == eir["yellow"]["rx_frames"] > 0
    assert "re-marked" not in cir["reason"]
    spt = got["y1564_spt"]["colour_at_rx"]["data"]
    assert spt["green"] > 0 and spt["remarked"] == spt["other"] == 0


def test_a_dut_that_remarks_yellow_is_seen_at_rx(pytester: pytest.Pytester) -> None:
    got = _measurements(pytester, ",remark_dscp=12")
    cir = got["y1564_sct"]["steps"][0]
    assert cir["passed"]  # the SAC: on the frames sent green, all delivered
    assert cir["colour_at_rx"] == {"green": 0, "yellow": cir["rx_frames"],
                                   "remarked": cir["rx_frames"], "promoted": 0, "other": 0}
    assert f"colour at RX: {cir['rx_frames']:,} sent green came back yellow" in cir["reason"]
    spt = got["y1564_spt"]["colour_at_rx"]["data"]
    assert spt["remarked"] == spt["yellow"] > 0 and spt["green"] == 0
    html = (pytester.path / "netload-results" / "report.html").read_text()
    assert "Colour at RX" in html
    assert f"green 0, yellow {cir['rx_frames']:,}, remarked {cir['rx_frames']:,}" in html
