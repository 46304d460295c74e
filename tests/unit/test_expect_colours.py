"""A colour-aware Y.1564 stream's expected frames (bench/expected.colour_checked): each of
the user's, once in green and once in yellow, so a frame as expected counts for the
colour it came with and one that is not stays mismatched, with its diff; what such a
service cannot take is refused naming the fix. And `FrameTally`, which keeps one
procedure's checks."""

from __future__ import annotations

import pytest

from pytest_netload.bench.expected import FrameTally, check_colour_expect, colour_checked
from pytest_netload.engine.fake_dut import FakeDut
from pytest_netload.engine.fake_expect import dut_rewrite
from pytest_netload.errors import NetloadConfigError
from pytest_netload.measure.frames import FrameCheck, diff_fields
from pytest_netload.topology.fake import FAKE_DUT_MACS, FAKE_PORT_MACS
from pytest_netload.traffic.expect import expect
from pytest_netload.traffic.packets import UDP, Eth, IPv4, IPv6, Vlan
from pytest_netload.traffic.streams import Stream

NAMES = {"dut_mac": FAKE_DUT_MACS[1], "rx_mac": FAKE_PORT_MACS[1]}
ROUTED = expect(ttl="sent-1", src="dut_mac", dst="rx_mac")


def _sent(stream: Stream) -> bytes:
    return bytes(stream.compile(16)["frames"][0])


def _first(rules: list, frame: bytes) -> int:
    return next((i for i, r in enumerate(rules) if r.matches(frame)), -1)


@pytest.mark.parametrize("ipv6", [False, True])
def test_a_dscp_coloured_stream_counts_each_colour_as_expected(ipv6: bool) -> None:
    ip = IPv6(tc=10 << 2) if ipv6 else IPv4(tos=10 << 2)
    stream = Stream((Eth() / ip / UDP()).build(), size=256)
    rules = colour_checked([ROUTED.rule(stream, NAMES)], "dscp", 10, 12)
    assert [r.label for r in rules] == ["expected (green)", "expected (yellow)"]
    sent = _sent(stream)
    assert _first(rules, dut_rewrite(FakeDut(routed=1), sent)) == 0  # green, as expected
    assert _first(rules, dut_rewrite(FakeDut(routed=1, remark_dscp=12), sent)) == 1
    assert _first(rules, dut_rewrite(FakeDut(routed=1, remark_dscp=0), sent)) == -1
    kept = dut_rewrite(FakeDut(routed=1, keep_ttl=1), sent)
    assert _first(rules, kept) == -1
    ttl = "ip.hlim" if ipv6 else "ip.ttl"
    assert diff_fields(rules[0], kept) == [f"{ttl}: expected 63, got 64"]


def test_a_pcp_coloured_stream_compares_the_tags_priority() -> None:
    stream = Stream((Eth() / Vlan(100, pcp=2) / IPv4() / UDP()).build(), size=256)
    green, yellow = colour_checked([expect().rule(stream)], "pcp", 2, 1)
    sent = bytearray(_sent(stream))
    assert green.matches(bytes(sent)) and not yellow.matches(bytes(sent))
    sent[14] = (sent[14] & 0x1F) | (1 << 5)  # PCP 1: yellow, VLAN id kept
    assert yellow.matches(bytes(sent)) and not green.matches(bytes(sent))
    with pytest.raises(NetloadConfigError, match="has no vlan.pcp to hold the service's "
                                                 "colour"):
        colour_checked([expect(vlan=None).rule(stream)], "pcp", 2, 1)


@pytest.mark.parametrize(("given", "says"), [
    ([ROUTED, ROUTED, ROUTED], "3 expected frames for colour-aware service 'data'; give 1 "
                               "or 2"),
    (expect(dscp=10), r"expect\(dscp=...\): service 'data' is colour-aware by its dscp"),
    (expect(fields={"ip.dscp": 12}), r"expect\(dscp=...\)"),
])
def test_what_a_colour_aware_service_cannot_take_is_refused(given: object, says: str) -> None:
    with pytest.raises(NetloadConfigError, match=says):
        check_colour_expect(given, "data", "dscp")
    check_colour_expect([ROUTED, expect(dscp=10)], "data", "pcp")  # another field: fine


def test_a_tally_keeps_its_own_streams_checks_merged() -> None:
    rule = ROUTED.rule(Stream((Eth() / IPv4() / UDP()).build(), size=128), NAMES)
    tally = FrameTally(rules={"a": [rule]})
    tally.keep({"a": FrameCheck("a", (rule,), (5,), 0), "colours": FrameCheck("colours",
                                                                              (rule,), (1,), 1)})
    tally.keep({"a": FrameCheck("a", (rule,), (3,), 2)})
    tally.keep({"colours": FrameCheck("colours", (rule,), (1,), 1)})  # not its stream
    assert (tally.runs, tally.mismatch_runs) == (2, 1)
    assert list(tally.frames) == ["a"]
    assert (tally.frames["a"].matched, tally.frames["a"].unmatched) == ((8,), 2)
    into: list[FrameCheck] = []
    FrameTally().done(into, procedure="nothing")  # no checks: nothing recorded
    assert into == []
