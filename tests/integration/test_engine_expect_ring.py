"""Expected frames on the real engine (net_ring: TX loops back to RX unchanged): the
native RX path compares each frame of a stream with rules, in the deferred and the
timed accounting modes, counts per rule, keeps the first unmatched frames, and
leaves the streams without rules as they were."""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest

from pytest_netload.engine.client import Engine, Port
from pytest_netload.traffic.expect import expect
from pytest_netload.traffic.packets import UDP, Eth, IPv4, Vlan, field
from pytest_netload.traffic.streams import Stream

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="the engine host runs DPDK: needs root"),
]

T4 = (Eth() / IPv4() / UDP()).build()


@pytest.mark.parametrize("timing_samples", [0, 16])  # deferred, then timed accounting
def test_frames_as_sent_match_and_a_changed_ttl_does_not(
        engine: Engine, ring: Callable[..., Port], timing_samples: int) -> None:
    port = ring()
    varied = Stream(T4, size=[64, 512], name="as-sent",
                    fields=[field(T4, "udp.sport", "inc", min=1, max=1000)])
    other = Stream(T4, size=64, name="wrong-ttl")
    plain = Stream(T4, size=128, name="no-rules")
    a, b, c = (engine.load(port, s) for s in (varied, other, plain))
    r = engine.run([(a, 3000), (b, 2000), (c, 1000)], [port], timing_samples=timing_samples,
                   expect_frames={"as-sent": [expect().rule(varied)],
                                  "wrong-ttl": [expect(ttl="sent-1").rule(other)]})
    assert [s.rx_packets for s in r.streams] == [3000, 2000, 1000]
    ok, bad = r.frames["as-sent"], r.frames["wrong-ttl"]
    assert ok.matched == (3000,) and ok.unmatched == 0 and ok.ok and ok.kept == ()
    assert bad.matched == (0,) and bad.unmatched == 2000 and not bad.ok
    assert [k.seq for k in bad.kept] == list(range(8))
    assert all(k.length == 60 for k in bad.kept)
    assert "ip.ttl: expected 63, got 64" in bad.message()
    assert "no-rules" not in r.frames


def test_the_first_matching_rule_counts(engine: Engine, ring: Callable[..., Port]) -> None:
    port = ring()
    green = Stream((Eth() / IPv4(tos=10 << 2) / UDP()).build(), size=64, name="g")
    tagged = Stream((Eth() / Vlan(7, pcp=5) / IPv4() / UDP()).build(), size=68, name="t")
    g, t = engine.load(port, green), engine.load(port, tagged)
    rules = [expect(dscp=10, label="green").rule(green),
             expect(dscp=12, label="yellow").rule(green)]
    r = engine.run([(g, 500), (t, 300)], [port], expect_frames={
        "g": rules[::-1],  # yellow first: green frames match the second rule
        "t": [expect(pcp=3, label="pcp3").rule(tagged), expect(label="as sent").rule(tagged)]})
    assert r.frames["g"].matched == (0, 500) and r.frames["g"].by_label() == \
        {"yellow": 0, "green": 500}
    assert r.frames["t"].matched == (0, 300) and r.frames["t"].unmatched == 0


def test_a_bad_expectation_is_refused_before_the_run(engine: Engine,
                                                     ring: Callable[..., Port]) -> None:
    port = ring()
    s = Stream(T4, size=64, name="s")
    loaded = engine.load(port, s)
    with pytest.raises(Exception, match="not streams of this run"):
        engine.run([(loaded, 10)], [port], expect_frames={"other": [expect().rule(s)]})
    with pytest.raises(Exception, match="give 1 to 4"):
        engine.run([(loaded, 10)], [port], expect_frames={"s": [expect().rule(s)] * 5})


def test_a_stream_over_two_tx_queues_is_compared_on_both(
        engine: Engine, ring: Callable[..., Port]) -> None:
    port = ring(tx_queues=2, rx_queues=2)
    s = Stream(T4, size=64, name="both")
    loaded = engine.load(port, s, queues=2)
    r = engine.run([(loaded, 4000)], [port], expect_frames={"both": [
        expect(ttl="sent-1").rule(s)]})
    check = r.frames["both"]
    assert r.streams[0].rx_packets == 4000 and check.unmatched == 4000
    # the first kept frames of each TX queue (its own sequence numbers), merged
    assert len(check.kept) == 8 and {k.seq for k in check.kept} <= set(range(8))
