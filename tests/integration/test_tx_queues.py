"""One stream over several TX queues and workers: the load exact to the same ±0.1 % as
on one queue, every frame counted once in order (each queue sends its own copy of the
stream, with its own sequence numbers), counts split exactly, and the result one stream."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from calm import calm_run
from netutil import paced

from pytest_netload import errors
from pytest_netload.engine.client import Engine, Tx
from pytest_netload.traffic.packets import UDP, Eth, IPv4
from pytest_netload.traffic.patterns import Poisson
from pytest_netload.traffic.streams import Stream

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="the engine host runs DPDK: needs root"),
]

T4 = (Eth() / IPv4() / UDP()).build()


@pytest.fixture(scope="module")
def two_workers() -> Iterator[Engine]:
    """An engine with a worker on each of two CPUs (the main lcore beside the first)."""
    cpus = sorted(os.sched_getaffinity(0))[:2]
    with Engine(lcores=cpus, main_cpu=cpus[0], memory_mb=512) as engine:
        yield engine



@pytest.mark.parametrize("queues", [1, 2])
@pytest.mark.parametrize("rate_pps", [1_000_000, 4_000_000])
def test_the_load_over_queues_is_exact(two_workers: Engine, queues: int,
                                       rate_pps: int) -> None:
    port = two_workers.port(f"net_null_q{queues}_{rate_pps}", tx_queues=queues)
    stream = two_workers.load(port, Stream(T4, size=64, name="paced"))
    try:
        assert stream.queues == queues
        run = calm_run(lambda: two_workers.run([Tx(stream, 0, paced(rate_pps))], [],
                                               duration_s=2.0, drain_s=0.05))
    finally:
        stream.free()
        port.close()
    (s,) = run.streams
    assert s.name == "paced"
    assert abs(s.tx_packets / (2.0 * rate_pps) - 1) <= 0.001, s


def test_every_frame_once_and_in_order_over_two_queue_pairs(two_workers: Engine) -> None:
    """net_ring loops each TX queue back to its RX queue: each queue's copy of the stream
    is tracked on its own, and the merged stream has no loss, duplicate or reordering."""
    port = two_workers.port("net_ring_txq", tx_queues=2, rx_queues=2)
    stream = two_workers.load(port, Stream(T4, size=64, name="looped"))
    try:
        run = two_workers.run([Tx(stream, 200_001, paced(1_000_000, Poisson()))], [port],
                              drain_s=0.2)
    finally:
        stream.free()
        port.close()
    (s,) = run.streams
    assert (s.tx_packets, s.rx_packets) == (200_001, 200_001), s
    assert (s.lost, s.duplicates, s.reordered) == (0, 0, 0), s
    assert s.latency_samples == 200_001 and s.latency is not None
    assert int(s.latency.counts.sum()) == 200_001
    assert s.rx_gaps is None  # a queue's gaps are not the stream's


def test_a_count_is_split_exactly(two_workers: Engine) -> None:
    port = two_workers.port("net_null_count", tx_queues=2)
    stream = two_workers.load(port, Stream(T4, size=64, name="counted"))
    try:
        for count in (1, 2, 3, 1001):
            run = two_workers.run([Tx(stream, count)], [], drain_s=0.01)
            assert run.streams[0].tx_packets == count
    finally:
        stream.free()
        port.close()


def test_bad_queue_requests_name_the_fix(two_workers: Engine) -> None:
    port = two_workers.port("net_null_bad", tx_queues=2)
    try:
        with pytest.raises(errors.NetloadConfigError, match="opened with 2 TX queue"):
            two_workers.load(port, Stream(T4, size=64), queues=3)
        stream = two_workers.load(port, Stream(T4, size=64, name="spread"))
        try:
            with pytest.raises(errors.NetloadConfigError, match="load it with queues=1"):
                two_workers.run([Tx(stream, 10, queue=1)], [], drain_s=0.01)
        finally:
            stream.free()
        one = two_workers.load(port, Stream(T4, size=64, name="one"), queues=1)
        try:  # a stream on one queue still goes to the queue asked for
            assert two_workers.run([Tx(one, 10, queue=1)], [], drain_s=0.01).streams[0] \
                .tx_packets == 10
        finally:
            one.free()
    finally:
        port.close()
