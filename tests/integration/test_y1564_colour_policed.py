"""Colour-aware Y.1564 on the real engine and the built-in netns-policed DUT (a
colour-blind policer: 10 Mbit/s, CBS 12,500 B).

- the CIR+EIR step of a colour-aware service (CIR 5 Mbit/s green as DSCP 10, EIR
  3 Mbit/s yellow as DSCP 12; 8 Mbit/s in all, under the policer) counts the green and
  yellow frames apart, each as the generator marked it: every frame of both colours
  sent comes back, in the shares of CIR and EIR, and the SAC, judged on green, passes;
- the policing step (160 % of CIR+EIR, 12.8 Mbit/s) shows the policer is colour-blind:
  it drops green frames too, so the green FLR fails the SAC, and the yellow IR exceeds
  the EIR. Both are the DUT's answer, recorded in results.json.
"""

from __future__ import annotations

import json
import os

import pytest

from calm import judged_unless_the_machine_was_busy

pytest_plugins = ["pytester"]

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="built-in DUTs need root (CI runs as root)"),
]

POLICED = "netns-policed:cir_bps=10000000,cbs_bytes=12500"

COLOUR_TESTS = """
import pytest

pytestmark = pytest.mark.netload_topology("{policed}", ids=["policed"])

@pytest.mark.y1564(services=[{{"name": "data", "cir": "5Mbit/s", "eir": "3Mbit/s",
                               "frame_size": 512, "colour": "dscp", "green": 10,
                               "yellow": 12, "sac": {{"flr": "0.1%", "ftd": "10ms"}}}}],
                   step_duration="1s", steps=[1.0], policing_overshoot=1.6)
def test_colour(y1564):
    result = y1564.sct("data")
    cir, eir, policing = result.steps
    print("COLOUR", json.dumps([s.as_dict() for s in result.steps]))
    assert cir.sample.yellow_tx_frames is None and cir.passed, cir.reason
    g, y = eir.sample, eir.sample
    assert eir.passed, eir.reason
    assert g.rx_frames == g.tx_frames and y.yellow_rx_frames == y.yellow_tx_frames
    assert policing.passed is False
    # the colour-blind policer drops about 1 - 10/12.8 of either colour: green too
    assert policing.sample.flr > 0.1 and not policing.checks[1].passed, policing.reason
    assert any(c.name == "yellow_ir" and c.passed is False for c in policing.checks)
"""


def test_colours_are_counted_apart_on_the_policer(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_colour="import json\n" + COLOUR_TESTS.format(policed=POLICED))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly",
                                           "-s", "--netload-report-dir=out", timeout=300)
    with judged_unless_the_machine_was_busy(result):
        result.assert_outcomes(passed=1)
    from pytest_netload.reports.load import load

    doc = load(pytester.path / "out" / "results.json")  # valid against the schema
    (sct,) = [m for t in doc["tests"] for m in t["measurements"] if m["kind"] == "y1564_sct"]
    assert sct["service"]["colour"] == "dscp" and sct["service"]["green"] == 10
    eir = sct["steps"][1]
    # 1 s at 5 Mbit/s green and 3 Mbit/s yellow of 512-B frames: 1,220 and 732 frames
    assert abs(eir["tx_frames"] - 5e6 / 4096) <= 0.02 * 5e6 / 4096, eir
    assert abs(eir["yellow"]["tx_frames"] - 3e6 / 4096) <= 0.02 * 3e6 / 4096, eir
    assert eir["rx_frames"] == eir["tx_frames"], eir
    assert eir["yellow"]["rx_frames"] == eir["yellow"]["tx_frames"], eir
    print("COLOUR_RECORD", json.dumps(sct["steps"]))
