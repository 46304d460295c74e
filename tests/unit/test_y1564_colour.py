"""Colour-aware Y.1564: a service's colour fields are checked naming the field; its
green and yellow values both classify it; the configuration test judges the SAC on the
green frames and the yellow ones on their rate only, against fake colour-aware and
colour-blind policers; the records, the report table and the summary line carry the
yellow counts apart."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pytest_netload.errors import NetloadConfigError
from pytest_netload.plugin.terminal import _colours
from pytest_netload.reports.html.text import DASH
from pytest_netload.reports.html.y1564 import y1564_sct
from pytest_netload.y1564 import Service, ServiceSample, check_services, service_configuration_test
from pytest_netload.search import TrialSettings

FRAME = 512
BITS = FRAME * 8


def _service(**kw: Any) -> Service:
    args: dict[str, Any] = {"name": "data", "cir": "5Mbit/s", "eir": "3Mbit/s",
                            "frame_size": FRAME, "colour": "dscp", "green": 10, "yellow": 12,
                            "sac": {"flr": "0.1%"}}
    args.update(kw)
    return Service(**args)


BAD = {
    "unknown mode": ({"colour": "tos"}, "colour='tos': give 'dscp' or 'pcp'"),
    "no yellow": ({"yellow": None}, "colour='dscp' needs yellow=: the DSCP of its yellow"),
    "no green": ({"green": None}, "colour='dscp' needs green="),
    "same values": ({"yellow": 10}, "green and yellow are both 10"),
    "dscp out of range": ({"green": 64}, "green=64 is not a DSCP"),
    "pcp out of range": ({"colour": "pcp", "vlan": 100, "green": 8, "yellow": 1},
                         "green=8 is not a PCP"),
    "pcp without vlan": ({"colour": "pcp", "green": 2, "yellow": 1},
                         "colour='pcp' needs a VLAN tag"),
    "field given twice": ({"dscp": 46}, "dscp=46 and colour='dscp'"),
    "values without mode": ({"colour": None}, "green=10/yellow=12 without colour"),
    "a bool value": ({"green": True}, "green=True is not a DSCP"),
    "a list mode": ({"colour": ["dscp"]}, "colour=['dscp']: give 'dscp' or 'pcp'"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_colour_input_names_the_service_and_the_field(case: str) -> None:
    kw, words = BAD[case]
    with pytest.raises(NetloadConfigError) as e:
        _service(**kw)
    assert "service 'data'" in str(e.value) and words in str(e.value), str(e.value)


def test_a_dict_service_takes_the_colour_keys_and_records_them() -> None:
    s = Service.of({"name": "v", "cir": "1Mbit/s", "colour": "pcp", "vlan": 7, "green": 3,
                    "yellow": 1})
    assert s.colour_aware and (s.coloured("green").pcp, s.coloured("yellow").pcp) == (3, 1)
    assert s.classifier == s.coloured("green")
    d = s.as_dict()
    assert (d["colour"], d["green"], d["yellow"], d["pcp"]) == ("pcp", 3, 1, 3)
    blind = Service("b", cir="1Mbit/s", dscp=46).as_dict()
    assert (blind["colour"], blind["green"], blind["yellow"]) == (None, None, None)
    with pytest.raises(NetloadConfigError, match="colour='red': give 'green' or 'yellow'"):
        s.coloured("red")


@given(st.integers(0, 63), st.integers(0, 63), st.integers(0, 63))
def test_a_colour_aware_service_overlaps_a_service_on_either_colour(
        green: int, yellow: int, other: int) -> None:
    assume(green != yellow)
    a = _service(green=green, yellow=yellow)
    b = Service("other", cir="1Mbit/s", dscp=other)
    if other in (green, yellow):
        with pytest.raises(NetloadConfigError, match="services 'data' and 'other' overlap"):
            check_services([a, b], None)
    else:
        assert check_services([a, b], None) == (a, b)


def test_a_sample_counts_yellow_both_ways_or_not_at_all() -> None:
    with pytest.raises(NetloadConfigError, match="give both or neither"):
        ServiceSample("data", 8e6, 1.0, FRAME, 10, 10, yellow_tx_frames=5)
    with pytest.raises(NetloadConfigError, match="yellow_rx_frames=-1"):
        ServiceSample("data", 8e6, 1.0, FRAME, 10, 10, yellow_tx_frames=5, yellow_rx_frames=-1)
    s = ServiceSample("data", 8e6, 2.0, FRAME, 10, 10, yellow_tx_frames=6, yellow_rx_frames=4)
    assert (s.coloured, s.yellow_lost, s.yellow_ir_bps) == (True, 2, 4 * BITS / 2.0)
    assert s.as_dict()["yellow"] == {"tx_frames": 6, "rx_frames": 4, "lost": 2,
                                     "ir_bps": 4 * BITS / 2.0}
    blind = ServiceSample("data", 8e6, 2.0, FRAME, 10, 10)
    assert not blind.coloured and blind.as_dict()["yellow"] is None


class ColourPolicer:
    """A DUT model fed as the engine feeds it: the load up to the CIR green, the rest
    yellow. Colour-aware, it passes green up to `green_bps` and yellow up to `yellow_bps`
    apart; colour-blind (`yellow_bps` None), the two together up to `green_bps`, each
    losing the same share."""

    def __init__(self, cir_bps: float, green_bps: float, yellow_bps: float | None) -> None:
        self.cir, self.green_cap, self.yellow_cap = cir_bps, green_bps, yellow_bps

    def measure(self, loads: Mapping[str, float], duration_s: float
                ) -> Mapping[str, ServiceSample]:
        out = {}
        for name, load in loads.items():
            g_bps, y_bps = min(load, self.cir), max(load - self.cir, 0.0)
            g_tx, y_tx = round(g_bps * duration_s / BITS), round(y_bps * duration_s / BITS)
            if self.yellow_cap is None:
                share = min(1.0, self.green_cap / load)
                g_rx, y_rx = round(g_tx * share), round(y_tx * share)
            else:
                g_rx = min(g_tx, round(self.green_cap * duration_s / BITS))
                y_rx = min(y_tx, round(self.yellow_cap * duration_s / BITS))
            out[name] = ServiceSample(
                name, load, duration_s, FRAME, g_tx, g_rx,
                yellow_tx_frames=y_tx if y_tx else None,
                yellow_rx_frames=y_rx if y_tx else None)
        return out


ONE_S = TrialSettings(duration_s=1.0, retries=0)


def test_a_colour_aware_dut_passes_every_step_with_the_sac_on_green() -> None:
    s = _service()
    r = service_configuration_test(ColourPolicer(s.cir_bps, s.cir_bps, s.eir_bps), s,
                                   settings=ONE_S)
    assert r.passed, r.failures()
    cir, eir, policing = r.steps[-3:]
    assert cir.sample.yellow_tx_frames is None  # every CIR step is all green
    assert [c.name for c in eir.checks] == ["ir", "flr", "yellow_ir"]
    assert policing.sample.yellow_tx_frames > policing.sample.yellow_rx_frames  # policed
    assert "colour-aware: the SAC judged on the green frames" in policing.reason
    step = policing.as_dict()
    assert step["yellow"]["rx_frames"] == policing.sample.yellow_rx_frames
    assert step["tx_frames"] == policing.sample.tx_frames == round(5e6 / BITS)


def test_a_colour_blind_policer_fails_the_green_sac_above_cir_plus_eir() -> None:
    s = _service()
    r = service_configuration_test(ColourPolicer(s.cir_bps, s.max_bps, None), s,
                                   settings=ONE_S)
    by = {st_.name: st_ for st_ in r.steps}
    assert by["CIR+EIR"].passed, by["CIR+EIR"].reason
    policing = by["policing"]
    assert policing.passed is False
    failed = {c.name for c in policing.checks if c.passed is False}
    assert failed == {"ir", "flr", "yellow_ir"}, policing.reason


def test_yellow_above_the_eir_fails_only_its_rate_criterion() -> None:
    s = _service()
    # a DUT that polices green to the CIR but lets all yellow through
    r = service_configuration_test(ColourPolicer(s.cir_bps, s.cir_bps, 1e12), s,
                                   settings=ONE_S)
    policing = r.steps[-1]
    assert [c.name for c in policing.checks if c.passed is False] == ["yellow_ir"]
    assert "yellow IR" in policing.reason and "fails <= 3.060 Mbit/s" in policing.reason


@settings(max_examples=40, deadline=None)
@given(st.floats(1e6, 50e6), st.floats(0.1e6, 50e6), st.floats(0.0, 1.0))
def test_green_is_judged_alone_whatever_the_yellow_loss(cir: float, eir: float,
                                                        yellow_share: float) -> None:
    s = Service("data", cir=f"{cir}bit/s", eir=f"{eir}bit/s", frame_size=FRAME,
                colour="dscp", green=10, yellow=12, sac={"flr": "0.1%"})
    r = service_configuration_test(ColourPolicer(s.cir_bps, s.cir_bps, eir * yellow_share),
                                   s, settings=ONE_S, policing=False)
    eir_step = r.steps[-1]
    assert {c.name: c.passed for c in eir_step.checks if c.name != "yellow_ir"} == \
        {"ir": True, "flr": True}
    assert eir_step.sample.yellow_rx_frames <= eir_step.sample.yellow_tx_frames


def test_the_report_and_the_summary_show_the_colours() -> None:
    s = _service()
    r = service_configuration_test(ColourPolicer(s.cir_bps, s.max_bps, None), s,
                                   settings=ONE_S)
    record = {**r.as_dict(), "kind": "y1564_sct"}
    doc = {"tests": [{"nodeid": "t.py::test_c", "measurements": [record]}]}
    (table,) = y1564_sct(doc)
    assert table["coloured"] and "colour-aware by DSCP: green 10, yellow 12" in table["line"]
    assert "(on green frames)" in table["line"]
    eir = table["rows"][-2]
    assert eir["yellow"] == "732 / 732" and eir["green"] == "1,221 / 1,221", eir
    line = _colours(record["steps"])
    assert line == " (CIR+EIR: green 1,221/1,221, yellow 732/732)", line
    blind = [{**step, "yellow": None} for step in record["steps"]]
    assert _colours(blind) == ""
    (plain,) = y1564_sct({"tests": [{"nodeid": "t.py::test_c", "measurements": [
        {**record, "steps": blind, "service": {**record["service"], "colour": None}}]}]})
    assert not plain["coloured"] and plain["rows"][-1]["yellow"] == DASH
