"""A run counted in intervals on the real engine (net_ring: TX loops back to RX): every
frame is in exactly one interval, the intervals come in order while the run goes on,
and a stream that stops early still gives every interval (its last counts)."""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest

from pytest_netload.engine.client import Engine, Port, Tx
from pytest_netload.engine.intervals import Interval
from pytest_netload.traffic.packets import UDP, Eth, IPv4
from pytest_netload.traffic.patterns import CBR
from pytest_netload.traffic.streams import Stream
from pytest_netload.units import Rate

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="the engine host runs DPDK: needs root"),
]

T4 = (Eth() / IPv4() / UDP()).build()


def _paced(stream: object, pps: float) -> Tx:
    return Tx(stream, 0, tuple(CBR().phases(lambda _r: pps, Rate(pps, "pps"), seed=1)))


def test_every_frame_is_in_exactly_one_interval(engine: Engine,
                                                ring: Callable[..., Port]) -> None:
    port = ring()
    a = engine.load(port, Stream(T4, size=64, name="a"))
    b = engine.load(port, Stream(T4, size=128, name="b"))
    got: list[Interval] = []
    polls: list[int] = []
    r = engine.run([_paced(a, 50_000), _paced(b, 20_000)], [port], duration_s=0.6,
                   interval_s=0.05, on_interval=got.append,
                   progress=lambda _s: polls.append(len(got)))
    assert [iv.index for iv in got] == list(range(12))
    assert polls[-1] == 12 and any(0 < n < 12 for n in polls)  # they came as the run went
    for i, s in enumerate(r.streams):
        assert all(iv.valid[i] for iv in got)
        assert sum(int(iv.tx_packets[i]) for iv in got) == s.tx_packets
        assert sum(int(iv.rx_packets[i]) for iv in got) == s.rx_packets
        assert sum(int(iv.rx_bytes[i]) for iv in got) == s.rx_bytes
        assert sum(int(iv.latency_hist[i].sum()) for iv in got) == s.latency_samples
        assert sum(int(iv.latency_samples[i]) for iv in got) == s.latency_samples
        # each interval holds traffic (how much moves with the machine: a paced
        # generator that lost its CPU catches up in the next one)
        assert all(int(iv.tx_packets[i]) > 0 and int(iv.rx_packets[i]) > 0 for iv in got)
        firsts = [int(iv.first_rx_ns[i]) for iv in got]
        lasts = [int(iv.last_rx_ns[i]) for iv in got]
        for k in range(11):  # arrivals before and after each end, in order
            assert firsts[k] <= lasts[k] < (k + 1) * 50_000_000 <= firsts[k + 1]


def test_a_stream_that_ends_early_still_gives_every_interval(
        engine: Engine, ring: Callable[..., Port]) -> None:
    port = ring()
    a = engine.load(port, Stream(T4, size=64, name="short"))
    got: list[Interval] = []
    pps = 10_000
    tx = Tx(a, 1_000, tuple(CBR().phases(lambda _r: pps, Rate(pps, "pps"), seed=1)))
    r = engine.run([tx], [port], duration_s=0.5, interval_s=0.1, on_interval=got.append)
    assert [iv.index for iv in got] == [0, 1, 2, 3, 4]
    assert r.streams[0].tx_packets == 1_000
    assert [int(iv.tx_packets[0]) for iv in got][1:] == [0, 0, 0, 0]  # all in the first
    assert sum(int(iv.rx_packets[0]) for iv in got) == r.streams[0].rx_packets == 1_000
