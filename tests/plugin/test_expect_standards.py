"""Expected frames in Y.1564 and RFC 2889 sessions on the fake engine, as RFC 2544 has
them (test_expect_sessions.py): the marker's or a procedure's ``expect=`` compares
every run's frames, `y1564.frames` and `rfc2889.frames` keep the checks for
assert_frames_match, and each procedure's are recorded as ``expected_frames``. A
colour-aware service compares the expected frame in each colour, so colour counting at
RX still works; RFC 2889's procedures that build frames of their own refuse
``expect=``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_netload.reports.load import load

from labfiles import fake_lab

pytest_plugins = ["pytester"]

# a 10 Mbit/s (L2) shaper, as the Y.1564 sessions use, whose DUT routes
SHAPER = ("--netload-engine=fake:capacity_bps=10Mbit/s,capacity_layer=l2,loss_ratio=0,"
          "delay_s=100e-6,buffer_frames=20,routed=1")
SWITCH = "--netload-engine=fake:capacity_pps=50000,delay_s=50e-6,buffer_frames=1000"
SERVICE = ('{"name": "data", "cir": "5Mbit/s", "frame_size": 512, "dscp": 10, '
           '"sac": {"flr": "0.1%"}}')
COLOURED = ('{"name": "data", "cir": "5Mbit/s", "eir": "3Mbit/s", "frame_size": 512, '
            '"colour": "dscp", "green": 10, "yellow": 12, "sac": {"flr": "0.1%"}}')

Y1564 = f"""
    import pytest
    from pytest_netload import assert_frames_match, assert_sac, expect

    ROUTED = expect(ttl="sent-1", src="dut_mac", dst="rx_mac")

    @pytest.mark.y1564(services=[{SERVICE}], step_duration="1s", steps=[0.5, 1.0],
                       eir_step=False, policing=False, spt_duration="2s", checkpoint=False,
                       expect=ROUTED)
    def test_sct(y1564):
        assert_sac(y1564.sct("data"))
        assert [c.stream for c in y1564.frames] == ["data p0->p1"]
        assert_frames_match(y1564.frames)

    @pytest.mark.y1564(services=[{SERVICE}], spt_duration="2s", checkpoint=False)
    def test_spt_call(y1564):
        y1564.spt(expect=ROUTED)
        (check,) = y1564.frames
        assert check.received > 0
        assert_frames_match(y1564.frames)
"""


def _records(pytester: pytest.Pytester) -> dict[str, list[dict[str, Any]]]:
    path = pytester.path / "netload-results" / "results.json"
    load(path)  # valid against the schema
    data = json.loads(Path(path).read_text())
    return {t["nodeid"].split("::")[-1]: t["measurements"] for t in data["tests"]}


def _frames(measurements: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in measurements if m["kind"] == "expected_frames"]


def test_y1564_on_a_router_that_routes_passes(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_y1564_expect=Y1564)
    result = pytester.runpytest("-p", "no:randomly", "-p", "no:cacheprovider", SHAPER, "-rA")
    result.assert_outcomes(passed=2)
    records = _records(pytester)
    (sct,) = _frames(records["test_sct"])
    assert sct["procedure"] == "y1564_sct" and sct["trials"] >= 2
    assert sct["mismatch_trials"] == 0 and sct["expected"] == {"data p0->p1": ["expected"]}
    (spt,) = _frames(records["test_spt_call"])
    assert spt["procedure"] == "y1564_spt" and spt["trials"] == 1


def test_y1564_on_a_router_that_keeps_the_ttl_fails_with_the_diff(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_y1564_expect=Y1564)
    result = pytester.runpytest("-p", "no:randomly", "-p", "no:cacheprovider",
                                SHAPER + ",keep_ttl=1", "-rA")
    # the SAC passes (the frames arrived): the frames are judged apart
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines([
        "*received frames differ from the expected frame*",
        "*stream 'data p0->p1': * frames did not match the expected frame*",
        "*ip.ttl: expected 63, got 64*"])
    (sct,) = _frames(_records(pytester)["test_sct"])
    assert sct["mismatch_trials"] == sct["trials"] >= 2
    (stream,) = sct["streams"]
    assert stream["matched"] == 0 and stream["mismatched"] == stream["received"] > 0


COLOUR_BODY = f"""
    import pytest
    from pytest_netload import assert_frames_match, expect

    @pytest.mark.y1564(services=[{COLOURED}], step_duration="1s", steps=[1.0],
                       policing=False, checkpoint=False,
                       expect=expect(ttl="sent-1", src="dut_mac", dst="rx_mac"))
    def test_colour(y1564):
        cir, eir = y1564.sct("data").steps
        assert cir.passed and eir.passed, (cir.reason, eir.reason)
        assert_frames_match(y1564.frames)

    @pytest.mark.y1564(services=[{COLOURED}], expect=expect(dscp=10))
    def test_colour_field_named(y1564):
        y1564.sct("data")

    @pytest.mark.y1564(services=[{COLOURED}], expect=[expect(), expect(), expect()])
    def test_three_frames(y1564):
        y1564.sct("data")
"""


def test_a_colour_aware_service_compares_the_expected_frame_in_each_colour(
        pytester: pytest.Pytester) -> None:
    """Each stream's rules are the expected frame in green, then in yellow: the user's
    check passes on a router, and colour_at_rx still counts the colours."""
    pytester.makepyfile(test_colour=COLOUR_BODY)
    result = pytester.runpytest("-p", "no:randomly", "-p", "no:cacheprovider", SHAPER, "-rA")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines([
        "*expect(dscp=...): service 'data' is colour-aware by its dscp, which its colours "
        "set*leave dscp out of expect=*"])
    result.stdout.fnmatch_lines(["*expect: 3 expected frames for colour-aware service "
                                 "'data'; give 1 or 2*"])
    records = _records(pytester)["test_colour"]
    (frames,) = _frames(records)
    both = ["expected (green)", "expected (yellow)"]
    assert frames["expected"] == {"data p0->p1": both, "data/yellow p0->p1": both}
    by_stream = {s["stream"]: s for s in frames["streams"]}
    assert by_stream["data p0->p1"]["by_rule"]["expected (yellow)"] == 0
    assert by_stream["data/yellow p0->p1"]["by_rule"]["expected (green)"] == 0
    assert by_stream["data/yellow p0->p1"]["matched"] > 0
    (sct,) = [m for m in records if m["kind"] == "y1564_sct"]
    colours = sct["steps"][1]["colour_at_rx"]
    assert colours["green"] > 0 and colours["yellow"] > 0 and colours["other"] == 0, colours


RFC2889 = """
    import pytest
    from pytest_netload import assert_frames_match, expect, udp

    @pytest.mark.rfc2889(trial_duration="1s", max_rate="2kpps", resolution=0.5,
                         max_trials=3, stream=udp(dscp=10), expect=expect(src="sent",
                                                                         dst="sent", only=True))
    def test_unchanged(rfc2889):
        assert rfc2889.fully_meshed().throughput_pps_per_port > 0
        assert sorted(c.stream for c in rfc2889.frames) == ["udp p0->p1", "udp p1->p0"]
        assert_frames_match(rfc2889.frames)

    @pytest.mark.rfc2889(trial_duration="1s", max_rate="2kpps", resolution=0.5,
                         max_trials=3, stream=udp(dscp=10))
    def test_dscp(rfc2889):
        rfc2889.fully_meshed(expect=expect(dscp=10))
        assert_frames_match(rfc2889.frames)
"""


def _lab(pytester: pytest.Pytester) -> str:
    """A topology of two ports wired both ways (the fake one has p0->p1 alone)."""
    path = pytester.path / "lab.toml"
    path.write_text(fake_lab(both_ways=True, peer_ips=False))
    return f"--netload-topology={path}"


@pytest.mark.parametrize(("engine", "passed"), [("", 2), (",remark_dscp=0", 1)])
def test_rfc2889_fully_meshed_compares_each_pairs_frames(pytester: pytest.Pytester,
                                                         engine: str, passed: int) -> None:
    """On a switch the frames come back as sent; one that re-marks DSCP fails the
    dscp expectation with the diff."""
    pytester.makepyfile(test_mesh=RFC2889)
    result = pytester.runpytest("-p", "no:randomly", "-p", "no:cacheprovider",
                                SWITCH + engine, _lab(pytester), "-rA")
    result.assert_outcomes(passed=passed, failed=2 - passed)
    records = _records(pytester)
    (frames,) = _frames(records["test_dscp"])
    assert frames["procedure"] == "rfc2889_fully_meshed" and frames["frame_size"] == "64B"
    assert frames["trials"] >= 1
    if passed == 1:
        result.stdout.fnmatch_lines(["*ip.dscp: expected 10, got 0*"])
        assert frames["mismatch_trials"] == frames["trials"]
    else:
        assert frames["mismatch_trials"] == 0


REFUSED = """
    import pytest
    from pytest_netload import expect

    @pytest.mark.rfc2889(trial_duration="1s")
    def test_broadcast(rfc2889):
        rfc2889.broadcast_forwarding(expect=expect())

    @pytest.mark.rfc2889(trial_duration="1s", expect=expect())
    def test_errored(rfc2889):
        rfc2889.errored_frame_filtering()

    @pytest.mark.rfc2889(expect=expect())
    def test_addresses(rfc2889):
        rfc2889.address_caching_capacity()
"""


def test_rfc2889_procedures_with_frames_of_their_own_refuse_expect(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_refused=REFUSED)
    result = pytester.runpytest("-p", "no:randomly", "-p", "no:cacheprovider", SWITCH,
                                _lab(pytester), "-rA")
    result.assert_outcomes(failed=3)
    for procedure, frames, where in (
            ("broadcast forwarding", "broadcast frames", "its expect="),
            ("errored frame filtering", "errored frames", "the marker's expect="),
            ("address caching capacity", "frames from stepped source MACs, then frames to "
             "them", "the marker's expect=")):
        result.stdout.fnmatch_lines([
            f"*NetloadConfigError: rfc2889 {procedure} sends frames of its own ({frames}), "
            f"not the marker's stream=, so {where} has no stream to describe; give expect= "
            "to rfc2889.fully_meshed(expect=...), partially_meshed, *"])
