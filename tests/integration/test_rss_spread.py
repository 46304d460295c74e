"""One stream spread over two RX queues, for real: DPDK's net_af_packet with qpairs=2
opens two AF_PACKET sockets in one fanout group (PACKET_FANOUT_HASH), so the kernel puts
each flow (the UDP source port varies) on one of them, and the stream lands on both.

Each RX queue tracks sequence numbers on its own: a queue sees every other number or so,
and its own gap count says a loss follows nearly every frame. The merged result must
keep the counts exact (no loss where there is none, a real loss counted to the frame)
and give no loss-event timing for such a stream (None, and procedures that need it
refuse it), while one flow on one queue keeps it (docs/engine.md, "Several RX queues").
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from pytest_netload import RateController
from pytest_netload.bench.lanes import require_loss_timing
from pytest_netload.engine.client import Engine, Port
from pytest_netload.errors import NetloadConfigError
from pytest_netload.topology.builtin import build
from pytest_netload.traffic.streams import flow_stream

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0,
                       reason="veths, namespaces and DPDK's AF_PACKET need root"),
]
FLOWS = 64  # UDP source ports: the fanout hash spreads them over both sockets


@contextmanager
def _ports(engine: Engine, built: Any) -> Iterator[tuple[Port, Port, Any]]:
    """p0 as the topology opens it; p1 with two RX queues (two fanout sockets)."""
    specs = {p.name: p for p in built.topology.ports}
    p1_device = specs["p1"].device.replace("qpairs=1", "qpairs=2")
    assert "qpairs=2" in p1_device, p1_device
    opened: list[Port] = []
    try:
        opened.append(engine.port(specs["p0"].device, name="p0"))
        opened.append(engine.port(p1_device, name="p1", rx_queues=2, tx_queues=2))
        flow = next(f for f in built.topology.flows() if f.tx.name == "p0")
        yield opened[0], opened[1], flow
    finally:
        for port in opened:
            port.close()


def _queue_packets(run: Any) -> list[int]:
    return [int(n) for n in run.rx_queues["packets"]]


def test_a_spread_stream_loses_nothing_and_reports_no_loss_events(engine: Engine) -> None:
    with build("loopback", backend="af_packet") as built, \
            _ports(engine, built) as (p0, p1, flow):
        rc = RateController(engine, p0, rx=[p1])
        spread = rc.run(flow_stream(flow, size=64, flows=FLOWS), "50kpps", count=20_000)
        one = rc.run(flow_stream(flow, size=64, flows=1, name="one"), "50kpps", count=5_000)
    s, run = spread.streams[0].result, spread.run
    assert p1.rx_queues == 2
    assert all(n > 1000 for n in _queue_packets(run)), _queue_packets(run)  # both queues
    assert (s.tx_packets, s.rx_packets, s.lost, s.duplicates, s.reordered) == (
        20_000, 20_000, 0, 0, 0), s
    assert s.rx_queues == 2
    # per queue, nearly every frame followed one the other queue took: not losses
    assert int(run.arrays["rx"]["gap_events"][0]) > 1000
    assert (s.gap_events, s.last_gap_tx_ns) == (None, None)
    assert "arrived on 2 RX queues" in (s.loss_timing_unavailable or "")
    with pytest.raises(NetloadConfigError, match="recovery: stream .* arrived on 2 RX queues"):
        require_loss_timing([s], "recovery")
    assert (run.foreign, run.generator_drops) == (0, 0), run.ports
    # one flow: one queue, and its loss-event timing is there (and says: no loss)
    o = one.streams[0].result
    assert (o.tx_packets, o.rx_packets, o.lost, o.rx_queues) == (5_000, 5_000, 0, 1), o
    assert (o.gap_events, o.last_gap_tx_ns, o.loss_timing_unavailable) == (0, 0, None)
    require_loss_timing([o], "recovery")


def test_a_real_loss_of_a_spread_stream_is_counted_to_the_frame(engine: Engine) -> None:
    """netns-lossy drops a random 1 % in its forward chain, and counts what it drops."""
    with build("netns-lossy", backend="af_packet", neighbours="static") as built, \
            _ports(engine, built) as (p0, p1, flow):
        rule = built.dut.loss_rule
        assert rule is not None
        rc = RateController(engine, p0, rx=[p1])
        hit = rc.run(flow_stream(flow, size=64, flows=FLOWS), "50kpps", count=50_000)
        dropped = rule.dropped()
    s, run = hit.streams[0].result, hit.run
    assert all(n > 1000 for n in _queue_packets(run)), _queue_packets(run)
    assert s.rx_queues == 2
    assert dropped > 100  # 1 % of 50k: about 500
    assert s.lost == dropped, (s.lost, dropped, run.ports)
    assert (s.tx_packets, s.rx_packets + dropped, s.duplicates, s.reordered) == (
        50_000, 50_000, 0, 0), s
    assert s.gap_events is None and s.loss_timing_unavailable is not None
