"""Expected frames built from a stream's template (traffic/expect.py): the frame as sent
matches its own rule whatever the engine varies, a changed field fails it and the diff
names that field, and the fake engine's DUT rewrites a frame as the rule expects."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_netload.engine.fake_dut import FakeDut
from pytest_netload.engine.fake_expect import dut_rewrite
from pytest_netload.errors import NetloadConfigError
from pytest_netload.measure.frames import EXPECT_BYTES, FrameCheck, KeptFrame, diff_fields
from pytest_netload.topology.fake import FAKE_DUT_MACS, FAKE_PORT_MACS
from pytest_netload.traffic.expect import ANY, expect, field_refs
from pytest_netload.traffic.packets import TCP, UDP, Eth, IPv4, IPv6, Vlan, field
from pytest_netload.traffic.streams import Stream
from pytest_netload.verdicts.frames_verdict import assert_frames_match

TEMPLATES = {
    "udp4": (Eth() / IPv4(tos=0x28) / UDP()).build(),
    "tcp4": (Eth() / IPv4() / TCP()).build(),
    "udp6": (Eth() / IPv6() / UDP()).build(),
    "vlan": (Eth() / Vlan(100, pcp=3) / IPv4() / UDP()).build(),
    "qinq": (Eth() / Vlan(10) / Vlan(20) / IPv4() / UDP()).build(),
}
VARIED = ("udp.sport", "l4.dport", "ip.id", "ip.src")


def _frames(stream: Stream) -> list[bytes]:
    return list(stream.compile(16)["frames"])


def _vary(stream: Stream, frame: bytes, value: int) -> bytes:
    """`frame` with each field op's bytes set to `value` (as the engine writes them)."""
    buf = bytearray(frame)
    for op in stream.fields:
        buf[op.offset:op.offset + op.width] = (value % (1 << 8 * op.width)).to_bytes(
            op.width, "big")
    return bytes(buf)


@settings(max_examples=60, deadline=None)
@given(kind=st.sampled_from(sorted(TEMPLATES)), sizes=st.lists(
    st.sampled_from([128, 256, 594, 1518]), min_size=1, max_size=3, unique=True),
       varied=st.sampled_from(VARIED), value=st.integers(0, 2**32))
def test_the_frames_as_sent_match_their_own_rule(kind: str, sizes: list[int], varied: str,
                                                 value: int) -> None:
    t = TEMPLATES[kind]
    ops = [field(t, varied, "inc", min=1, max=1000)] if varied in t.fields else []
    stream = Stream(t, size=sizes, fields=ops)
    rule = expect().rule(stream)
    assert 0 < rule.span <= min(len(t.headers), EXPECT_BYTES)
    for frame in _frames(stream):
        assert rule.matches(frame) and rule.matches(_vary(stream, frame, value))
        assert diff_fields(rule, frame) == []


@settings(max_examples=60, deadline=None)
@given(kind=st.sampled_from(sorted(TEMPLATES)), at=st.integers(0, 127),
       flip=st.integers(1, 255))
def test_a_changed_byte_fails_unless_masked(kind: str, at: int, flip: int) -> None:
    stream = Stream(TEMPLATES[kind], size=256)
    rule = expect().rule(stream)
    frame = bytearray(_frames(stream)[0])
    frame[at] ^= flip
    covered = at < rule.span and rule.mask[at] & flip
    assert rule.matches(bytes(frame)) == (not covered)
    if covered:
        assert diff_fields(rule, bytes(frame))


@pytest.mark.parametrize("kind", ["udp4", "udp6"])
def test_a_routed_frame_matches_ttl_mac_and_dscp(kind: str) -> None:
    t = TEMPLATES[kind]
    stream = Stream(t, size=128)
    names = {"dut_mac": FAKE_DUT_MACS[1], "rx_mac": FAKE_PORT_MACS[1]}
    rule = expect(ttl="sent-1", src="dut_mac", dst="rx_mac", dscp=10).rule(stream, names)
    sent = _frames(stream)[0]
    ttl = "ip.hlim" if kind == "udp6" else "ip.ttl"
    dscp = field_refs(t)["ip.dscp"].value(sent)
    routed = dut_rewrite(FakeDut(routed=1, remark_dscp=10), sent)
    assert rule.matches(routed)
    kept = dut_rewrite(FakeDut(routed=1, keep_ttl=1, remark_dscp=10), sent)
    assert diff_fields(rule, kept) == [f"{ttl}: expected 63, got 64"]
    remarked = dut_rewrite(FakeDut(routed=1, remark_dscp=0), sent)
    assert diff_fields(rule, remarked) == ["ip.dscp: expected 10, got 0"]
    assert dscp == (10 if kind == "udp4" else 0)
    # the frame as sent (not routed): its source MAC and TTL (and an IPv6 one's DSCP)
    named = [d.split(":")[0] for d in diff_fields(rule, sent)]
    assert named == (["eth.src", "ip.dscp", ttl] if kind == "udp6" else ["eth.src", ttl])


def test_the_vlan_popped_shifts_the_layout() -> None:
    t = TEMPLATES["vlan"]
    stream = Stream(t, size=128)
    sent = _frames(stream)[0]
    popped = sent[:12] + sent[16:]
    rule = expect(vlan=None).rule(stream)
    assert rule.matches(popped) and not rule.matches(sent)
    assert "eth.type: expected 0x0800, got 0x8100" in diff_fields(rule, sent)
    assert expect(pcp=3).rule(stream).matches(sent)
    assert diff_fields(expect(vlan=7).rule(stream), sent) == ["vlan.id: expected 7, got 100"]
    with pytest.raises(NetloadConfigError, match="no VLAN tag to pop"):
        expect(vlan=None).rule(Stream(TEMPLATES["udp4"], size=64))


def test_dont_cares_and_checksums() -> None:
    t = TEMPLATES["udp4"]
    stream = Stream(t, size=64)
    sent = bytearray(_frames(stream)[0])
    sent[22] = 7  # the TTL, checksum left stale
    assert expect(ttl=ANY).rule(stream).matches(bytes(sent))
    assert expect(ignore=["ip.ttl"]).rule(stream).matches(bytes(sent))
    strict = expect(ttl=7, checksums=True).rule(stream)
    (only,) = diff_fields(strict, bytes(sent))
    assert only.startswith("ip.chksum: expected 0x") and expect(ttl=7).rule(stream).matches(
        bytes(sent))
    with pytest.raises(NetloadConfigError, match="checksums differ frame to frame"):
        expect(checksums=True).rule(Stream(t, size=[64, 128]))


@pytest.mark.parametrize(("kwargs", "says"), [
    ({"ttl": 300}, "outside 0..255"),
    ({"ttl": "sent-65"}, "outside 0..255"),
    ({"src": "dut_mac"}, "knows no dut_mac"),
    ({"src": "not-a-mac"}, "not a value for eth.src"),
    ({"fields": {"ip.nope": 1}}, "has no ip.nope"),
    ({"ignore": ["udp.nope"]}, "no such field"),
    ({"pcp": 1}, "has no vlan.pcp"),
])
def test_bad_expectations_name_the_fix(kwargs: dict, says: str) -> None:
    with pytest.raises(NetloadConfigError, match=says):
        expect(**kwargs).rule(Stream(TEMPLATES["udp4"], size=64))


def test_the_assertion_message_shows_the_diff() -> None:
    stream = Stream(TEMPLATES["udp4"], size=64)
    rule = expect(ttl="sent-1").rule(stream)
    sent = _frames(stream)[0]
    check = FrameCheck("s", (rule,), (5,), 2, (KeptFrame(7, 60, sent), KeptFrame(9, 60, sent)))
    with pytest.raises(AssertionError) as info:
        assert_frames_match(check)
    text = str(info.value)
    assert "stream 's': 2 of 7 frames did not match the expected frame" in text
    assert "frame seq 7 (60 bytes): ip.ttl: expected 63, got 64" in text
    assert_frames_match(FrameCheck("s", (rule,), (5,), 0))
    with pytest.raises(AssertionError, match="fewer than 1 to compare"):
        assert_frames_match(FrameCheck("s", (rule,), (0,), 0))
    record = {"kind": "expected_frames", "streams": [check.as_record()]}
    with pytest.raises(AssertionError, match="ip.ttl: expected 63, got 64"):
        assert_frames_match(record)
    with pytest.raises(NetloadConfigError, match="no stream was run with expected frames"):
        assert_frames_match([])


def test_bytes_no_named_field_covers_are_named_by_scapy_or_by_offset(
        monkeypatch: pytest.MonkeyPatch) -> None:
    stream = Stream(TEMPLATES["tcp4"], size=128)
    rule = expect().rule(stream)
    sent = bytearray(_frames(stream)[0])
    urgptr = 34 + 18  # the TCP urgent pointer: no named field of the template
    sent[urgptr + 1] = 5
    from pytest_netload.measure import frames

    with monkeypatch.context() as m:
        m.setattr(frames, "scapy_fields", lambda _a, _b: None)  # as without scapy
        assert diff_fields(rule, bytes(sent)) == [f"byte {urgptr + 1}: expected 0x00, got 0x05"]
    pytest.importorskip("scapy.layers.inet", reason="the scapy-named diff needs scapy")
    assert diff_fields(rule, bytes(sent)) == ["TCP.urgptr: expected 0, got 5"]


def test_a_whole_expected_frame_given_as_bytes() -> None:
    stream = Stream(TEMPLATES["udp4"], size=64)
    sent = _frames(stream)[0]
    headers = sent[:42]  # Ethernet, IPv4, UDP
    assert expect(headers).rule(stream).matches(sent)
    pytest.importorskip("scapy.layers.inet", reason="named IP fields of raw bytes need scapy")
    rule = expect(headers, ttl="sent-1").rule(stream)
    assert diff_fields(rule, sent) == ["ip.ttl: expected 63, got 64"]


def test_the_fake_engine_counts_each_frame_size_by_its_rule() -> None:
    """An IMIX stream (7 x 64 B, 4 x 594 B, 1 x 1518 B a period) whose rule expects the
    64-B frames' IP length: the fake counts the other sizes unmatched and keeps the first
    8 of them by sequence number."""
    from pytest_netload.engine.client import Engine

    stream = Stream(TEMPLATES["udp4"], size="imix", name="imix")
    short = field_refs(TEMPLATES["udp4"])["ip.len"].value(_frames(stream)[0])
    rule = expect(fields={"ip.len": short}, ignore=[]).rule(Stream(TEMPLATES["udp4"], size=64))
    with Engine(fake=FakeDut(capacity_pps=1e9, buffer_frames=10_000)) as engine:  # no loss
        p0, p1 = engine.port("net_fake0"), engine.port("net_fake1")
        loaded = engine.load(p0, stream)
        r = engine.run([(loaded, 1200)], [p1], expect_frames={"imix": [rule]})
    check = r.frames["imix"]
    order = list(stream.sequence)
    assert r.streams[0].rx_packets == check.received == 1200
    assert check.matched == (700,) and check.unmatched == 500
    want = [k for k in range(1200) if stream.frame_sizes[order[k % len(order)]] != 64][:8]
    assert [k.seq for k in check.kept] == want
    assert [k.length for k in check.kept] == [
        stream.frame_sizes[order[k % len(order)]] - 4 for k in want]
