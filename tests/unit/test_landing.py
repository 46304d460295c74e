"""Where frames land: the spread test (chi-square over flows or frames, tolerance, weights),
PortCounts and its merge, and the verdicts assert_spread, assert_delivered_to and
assert_not_delivered with their records. Pure: no engine."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from pytest_netload import PortCounts, assert_delivered_to, assert_not_delivered, assert_spread
from pytest_netload.bench.landing import flows_of
from pytest_netload.errors import NetloadConfigError
from pytest_netload.measure.landing import MIN_EXPECTED, merge_counts, spread_test
from pytest_netload.measure.recording import recording
from pytest_netload.traffic.streams import udp

MEMBERS = ["p1", "p2", "p3"]


def _pc(counts: dict[str, int], flows: int | None = None, name: str = "s") -> PortCounts:
    return PortCounts(name, "p0", counts, sum(counts.values()), flows)


# ---- the statistics -----------------------------------------------------------------


def test_frames_without_flows_are_independent_placements() -> None:
    t = spread_test({"p1": 1000, "p2": 1100, "p3": 900}, MEMBERS)
    want = stats.chisquare([1000, 1100, 900])
    assert (t.unit, t.units) == ("frame", 3000)
    assert t.chi2 == pytest.approx(want.statistic) and t.p == pytest.approx(want.pvalue)
    assert t.expected == (1000.0, 1000.0, 1000.0)
    assert t.deviations == pytest.approx((0.0, 0.1, -0.1))


def test_flows_turn_frames_into_flow_equivalents() -> None:
    # 64 flows of 100 frames: 17, 22, 25 flows per member (a fair hash's outcome)
    t = spread_test({"p1": 1700, "p2": 2200, "p3": 2500}, MEMBERS, flows=64)
    want = stats.chisquare([17, 22, 25])
    assert (t.unit, t.units) == ("flow", 64)
    assert t.chi2 == pytest.approx(want.statistic) and t.p == pytest.approx(want.pvalue)
    assert t.passed
    # the same frames counted as frames would call the fair hash lopsided
    assert not spread_test({"p1": 1700, "p2": 2200, "p3": 2500}, MEMBERS).passed


def test_everything_on_one_member_fails_with_enough_flows() -> None:
    t = spread_test({"p1": 0, "p2": 0, "p3": 6400}, MEMBERS, flows=64)
    assert t.chi2 == pytest.approx(128.0) and t.p < 1e-20 and not t.passed
    assert t.max_deviation == pytest.approx(2.0)


def test_weights_set_the_expected_shares() -> None:
    t = spread_test({"p1": 1000, "p2": 1000, "p3": 2000}, MEMBERS, weights=[1, 1, 2])
    assert t.expected == (1000.0, 1000.0, 2000.0) and t.chi2 == 0.0 and t.p == 1.0
    by_name = spread_test({"p1": 1000, "p2": 1000, "p3": 2000}, MEMBERS,
                          weights={"p3": 2, "p1": 1, "p2": 1})
    assert by_name.expected == t.expected


def test_a_member_of_weight_zero_must_get_nothing() -> None:
    ok = spread_test({"p1": 500, "p2": 500, "p3": 0}, MEMBERS, weights=[1, 1, 0])
    assert ok.passed and ok.deviations[2] == 0.0
    bad = spread_test({"p1": 500, "p2": 500, "p3": 1}, MEMBERS, weights=[1, 1, 0],
                      tolerance=0.5)
    assert math.isinf(bad.deviations[2]) and not bad.passed
    assert bad.as_dict()["max_deviation"] is None


def test_too_few_units_have_no_p_value_and_the_tolerance_judges() -> None:
    t = spread_test({"p1": 100, "p2": 100, "p3": 100}, MEMBERS, flows=3, tolerance=0.1)
    assert t.p is None and t.chi2 is None and t.chi2_passed is None and t.passed
    skewed = spread_test({"p1": 300, "p2": 0, "p3": 0}, MEMBERS, flows=3, tolerance=0.1)
    assert skewed.p is None and not skewed.passed


def test_no_frame_at_all_never_passes() -> None:
    t = spread_test({"p1": 0, "p2": 0, "p3": 0}, MEMBERS, tolerance=0.5)
    assert not t.passed and t.p is None


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"members": ["p1"]}, r"two or more different member ports"),
    ({"members": ["p1", "p1"]}, r"two or more different"),
    ({"members": ["p1", "p9"]}, r"members \['p9'\] were not watched"),
    ({"alpha": 0}, r"alpha = 0: give a significance level in \(0, 1\)"),
    ({"alpha": True}, r"alpha = True"),
    ({"tolerance": -0.1}, r"tolerance = -0.1: give the largest relative deviation"),
    ({"tolerance": math.nan}, r"tolerance = nan"),
    ({"flows": 0}, r"flows = 0: give the stream's flow count"),
    ({"weights": [1, 1]}, r"give 3 weights, one per member"),
    ({"weights": [1, -1, 1]}, r"numbers >= 0 with a positive sum"),
    ({"weights": [0, 0, 0]}, r"numbers >= 0 with a positive sum"),
    ({"weights": [1, 0, 0]}, r"two or more members a positive weight.*assert_delivered_to"),
    ({"weights": {"p1": 1, "p2": 1}}, r"missing \['p3'\]"),
])
def test_bad_input_names_the_argument(kwargs: dict[str, Any], message: str) -> None:
    members = kwargs.pop("members", MEMBERS)
    with pytest.raises(NetloadConfigError, match=message):
        spread_test({"p1": 10, "p2": 10, "p3": 10}, members, **kwargs)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 10**6), min_size=2, max_size=8),
       st.one_of(st.none(), st.integers(1, 10**4)))
def test_the_test_matches_scipy_and_its_own_expectations(counts: list[int],
                                                         flows: int | None) -> None:
    members = [f"p{i}" for i in range(1, len(counts) + 1)]
    t = spread_test(dict(zip(members, counts)), members, flows=flows, tolerance=1.0)
    total = sum(counts)
    assert sum(t.expected) == pytest.approx(total)
    units = flows if flows is not None else total
    if total and units / len(counts) >= MIN_EXPECTED:
        scaled = [c * units / total for c in counts]
        want = stats.chisquare(scaled)
        assert t.chi2 == pytest.approx(want.statistic, rel=1e-9, abs=1e-9)
        assert t.p == pytest.approx(want.pvalue, rel=1e-9, abs=1e-12)
        assert 0 <= t.p <= 1
    else:
        assert t.p is None
    if total:
        assert t.passed == ((t.p is None or t.p >= t.alpha) and t.max_deviation <= 1.0)
    else:
        assert not t.passed


@settings(max_examples=100, deadline=None)
@given(st.integers(2, 8), st.integers(1, 1000), st.integers(1, 500))
def test_an_even_spread_always_passes(n: int, per_member_flows: int, frames: int) -> None:
    members = [f"p{i}" for i in range(n)]
    t = spread_test(dict.fromkeys(members, per_member_flows * frames), members,
                    flows=n * per_member_flows, tolerance=1e-9)
    assert t.passed and t.max_deviation == 0.0


@settings(max_examples=100, deadline=None)
@given(st.integers(2, 8), st.integers(10, 2000))
def test_one_member_taking_everything_is_caught_with_ten_flows_per_member(
        n: int, flows_per_member: int) -> None:
    # chi-square = flows * (n - 1): above the 0.001 critical value from 10 flows a member
    # (2 members: 20 > 10.83); with 5 a member and 2 members a fair hash does it 1 in 512
    members = [f"p{i}" for i in range(n)]
    counts = dict.fromkeys(members, 0) | {members[0]: 1000}
    t = spread_test(counts, members, flows=n * flows_per_member)
    assert t.p is not None and t.p < 0.001 and not t.passed


# ---- PortCounts ---------------------------------------------------------------------


def test_port_counts_and_merge() -> None:
    a = _pc({"p1": 10, "p2": 0}, flows=2, name="a")
    b = _pc({"p1": 5, "p2": 7}, flows=3, name="b")
    m = merge_counts([a, b])
    assert (m.stream, m.counts, m.tx_packets, m.flows, m.streams) == (
        "a + b", {"p1": 15, "p2": 7}, 22, 5, ("a", "b"))
    assert m.rx_packets == 22 and m["p2"] == 7
    assert merge_counts([a, _pc({"p1": 1, "p2": 1})]).flows is None
    with pytest.raises(NetloadConfigError, match=r"port 'p3' was not watched"):
        a["p3"]
    with pytest.raises(NetloadConfigError, match=r"counted on different ports"):
        merge_counts([a, _pc({"p1": 1})])
    with pytest.raises(NetloadConfigError, match=r"frames on port 'p1' = -1"):
        _pc({"p1": -1})


def test_flows_of_a_spec_is_where_its_tuples_repeat() -> None:
    assert flows_of(udp(flows=64)) == 64
    assert flows_of(udp(flows=4, dst_ips=6)) == 12
    assert flows_of(udp()) == 1
    assert flows_of(object()) is None


# ---- the verdicts ---------------------------------------------------------------------


def test_assert_spread_passes_and_records() -> None:
    with recording("t::spread") as record:
        assert_spread(_pc({"p1": 1700, "p2": 2200, "p3": 2500}, flows=64), over=MEMBERS)
    (m,) = record.measurements
    assert (m["kind"], m["unit"], m["units"], m["counts"], m["passed"]) == (
        "spread", "flow", 64, [1700, 2200, 2500], True)
    assert m["p"] == pytest.approx(stats.chisquare([17, 22, 25]).pvalue)
    (v,) = record.verdicts
    assert (v["check"], v["passed"], v["required"], v["alpha"]) == (
        "spread", True, "spread evenly: p >= 0.001", 0.001)
    assert v["measured"] == "p = 0.465 over 64 flows" and v["p"] == m["p"]


def test_assert_spread_on_one_member_says_so() -> None:
    with recording("t::spread") as record, pytest.raises(AssertionError) as info:
        assert_spread(_pc({"p1": 0, "p2": 6400, "p3": 0}, flows=64), over=MEMBERS,
                      tolerance=0.25)
    text = str(info.value)
    assert text.splitlines()[0] == ("frames of stream 's' are not spread evenly over "
                                    "['p1', 'p2', 'p3']: every one landed on p2")
    assert "measured: p1 0 (expected 2,133, -100.0%), p2 6,400 (expected 2,133, +200.0%)" in text
    assert "statistic: chi-square 128, p = 1.6e-28 over 64 flows" in text
    assert "tolerance: 25.00%, largest deviation 200.0%" in text
    assert "required: spread evenly: p >= 0.001 and every member within +-25.00% of its share" \
        in text
    assert record.measurements[0]["passed"] is False and record.verdicts[0]["passed"] is False


def test_assert_spread_takes_a_list_a_mapping_and_port_objects() -> None:
    class P:
        def __init__(self, name: str) -> None:
            self.name = name

    parts = [_pc({"p1": 500, "p2": 500}, flows=10, name="a"),
             _pc({"p1": 500, "p2": 500}, flows=10, name="b")]
    assert_spread(parts, over=[P("p1"), P("p2")])
    assert_spread({"p1": 1000, "p2": 1010}, over=["p1", "p2"])
    with pytest.raises(AssertionError, match=r"outside the members: p3 50"):
        assert_spread({"p1": 1000, "p2": 0, "p3": 50}, over=["p1", "p2"])


def test_assert_spread_refuses_what_it_cannot_judge() -> None:
    with pytest.raises(NetloadConfigError, match=r"3 flows over 3 members is fewer than 5 per "
                                                 r"member.*at least 15.*tolerance="):
        assert_spread(_pc({"p1": 100, "p2": 100, "p3": 100}, flows=3), over=MEMBERS)
    with pytest.raises(NetloadConfigError, match=r"over = 'p1': give the member ports"):
        assert_spread(_pc({"p1": 1}), over="p1")
    with pytest.raises(NetloadConfigError, match=r"int has no per-port frame counts"):
        assert_spread(3, over=MEMBERS)
    with pytest.raises(AssertionError, match=r"no frame of stream 's' landed on any member"):
        assert_spread(_pc({"p1": 0, "p2": 0, "p3": 0}), over=MEMBERS, tolerance=0.5)


def test_delivered_to_and_not_delivered() -> None:
    one = _pc({"p1": 0, "p2": 1000, "p3": 0}, name="pair")
    with recording("t::d") as record:
        assert_delivered_to(one, "p2")
        assert_not_delivered(one, "p1")
        assert_not_delivered(one, "p3")
    assert [m["kind"] for m in record.measurements] == ["delivery"] * 3
    assert [(m["port"], m["expect"], m["frames"], m["passed"]) for m in record.measurements] \
        == [("p2", "delivered_to", 1000, True), ("p1", "not_delivered", 0, True),
            ("p3", "not_delivered", 0, True)]
    assert [(v["check"], v["measured"], v["required"]) for v in record.verdicts] == [
        ("delivered_to", "1,000 frames on p2", "frames on p2"),
        ("not_delivered", "0 frames on p1", "no frame on p1"),
        ("not_delivered", "0 frames on p3", "no frame on p3")]
    with pytest.raises(AssertionError, match=r"^no frame of stream 'pair' reached p1\n"
                                             r"measured: p1 0, p2 1,000, p3 0 of 1,000 sent"):
        assert_delivered_to(one, "p1")
    with pytest.raises(AssertionError, match=r"^1,000 frames of stream 'pair' reached p2\n"):
        assert_not_delivered(one, "p2")
    split = _pc({"p1": 10, "p2": 990, "p3": 0}, name="split")
    with pytest.raises(AssertionError, match=r"reached p2, but also p1 10"):
        assert_delivered_to(split, "p2")
    assert_delivered_to(split, "p2", only=False)
    with pytest.raises(NetloadConfigError, match=r"port 'p9' was not watched"):
        assert_not_delivered(one, "p9")


# ---- flows split over members (from the ports' captured frames) ---------------------------


def _udp_frame(sport: int, *, vlan: bool = False, v6: bool = False) -> bytes:
    from pytest_netload.traffic.packets import UDP, Eth, IPv4, IPv6, Vlan

    stack = Eth(dst="02:00:00:00:00:01", src="02:00:00:00:00:02")
    if vlan:
        stack = stack / Vlan(10)
    ip = IPv6(src="2001:2::2", dst="2001:2:0:2000::1") if v6 else \
        IPv4(src="198.18.0.2", dst="198.19.128.1")
    return (stack / ip / UDP(sport=sport, dport=9)).build().headers + bytes(20)


def test_flow_key_reads_the_5_tuple() -> None:
    from pytest_netload.measure.landing import flow_key

    key = flow_key(_udp_frame(1025))
    assert key == (bytes([198, 18, 0, 2]), bytes([198, 19, 128, 1]), 17, 1025, 9)
    assert flow_key(_udp_frame(1025, vlan=True)) == key
    v6 = flow_key(_udp_frame(2000, v6=True))
    assert v6 is not None and v6[2:] == (17, 2000, 9) and len(v6[0]) == 16
    arp = bytes(12) + b"\x08\x06" + bytes(28)
    assert flow_key(arp) is None and flow_key(b"\x00" * 10) is None


def test_split_flows_counts_flows_seen_on_two_ports() -> None:
    from pytest_netload.measure.landing import split_flows

    frames = {"p1": [_udp_frame(1), _udp_frame(2), _udp_frame(1)],
              "p2": [_udp_frame(3), _udp_frame(2)], "p3": []}
    assert split_flows(frames) == (3, 1)
    assert split_flows({"p1": [_udp_frame(1)], "p2": [_udp_frame(2)]}) == (2, 0)


def test_a_split_flow_fails_the_spread_unless_per_packet() -> None:
    counts = PortCounts("s", "p0", {"p1": 1000, "p2": 1000}, 2000, 20, sampled_flows=20,
                        split_flows=3)
    with recording("t::split") as record, pytest.raises(AssertionError) as info:
        assert_spread(counts, over=["p1", "p2"])
    text = str(info.value)
    assert text.startswith("3 of the 20 flows of stream 's' sampled at the watched ports "
                           "landed on more than one port")
    assert "flows: 3 of 20 sampled on more than one port" in text
    assert "and no flow on two members" in text
    (m,) = record.measurements
    assert (m["split_flows"], m["sampled_flows"], m["passed"]) == (3, 20, False)
    with recording("t::spray") as record:
        assert_spread(counts, over=["p1", "p2"], per_packet=True)
    (m,) = record.measurements
    assert (m["unit"], m["units"], m["split_flows"], m["passed"]) == ("frame", 2000, None, True)
    with pytest.raises(NetloadConfigError, match="per_packet=True counts frames"):
        assert_spread(counts, over=["p1", "p2"], per_packet=True, flows=20)
