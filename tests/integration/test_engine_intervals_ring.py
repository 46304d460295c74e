"""A run counted in intervals on the real engine (net_ring: TX loops back to RX): every
frame is in exactly one interval, the intervals come in order while the run goes on,
and a stream that stops early still gives every interval (its last counts)."""

from __future__ import annotations

import os
import signal
import time
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


def test_the_senders_lag_and_cpu_add_up_to_the_runs(engine: Engine,
                                                     ring: Callable[..., Port]) -> None:
    """Each interval's worst TX lag is that interval's own, the worst of them the run's;
    the late bursts, the worker's time off its CPU, its wait for it and its preemptions
    and sleeps add up, interval by interval, to the run's."""
    port = ring()
    a = engine.load(port, Stream(T4, size=64, name="a"))
    got: list[Interval] = []
    r = engine.run([_paced(a, 200_000)], [port], duration_s=0.5, interval_s=0.05,
                   on_interval=got.append)
    s = r.streams[0]
    assert len(got) == 10 and all(len(iv.tx) == 1 for iv in got)
    assert max(iv.tx[0].tx_max_lag_ns for iv in got) == s.tx_max_lag_ns
    assert sum(iv.tx[0].tx_lagged_bursts for iv in got) == s.tx_lagged_bursts
    # time off the CPU is wall time less CPU time, two clocks read one after the other,
    # and the wait is at most that: each mark's reading moves by the time between the
    # reads (ns), and a negative step is 0
    slack = 2_000 * len(got)
    assert sum(iv.tx[0].tx_off_cpu_ns for iv in got) == pytest.approx(s.tx_off_cpu_ns,
                                                                        abs=slack)
    assert sum(iv.tx[0].tx_wait_cpu_ns for iv in got) == pytest.approx(s.tx_wait_cpu_ns,
                                                                         abs=slack)
    assert sum(iv.tx[0].tx_preemptions for iv in got) == s.tx_preemptions
    assert sum(iv.tx[0].tx_sleeps for iv in got) == s.tx_sleeps


def test_a_stall_shows_as_the_lag_of_the_interval_it_fell_in(
        engine: Engine, ring: Callable[..., Port]) -> None:
    """The engine host stopped (SIGSTOP) for 60 ms in the middle of a run of 0.1-s
    intervals: the interval the late frames left in has a lag of at least the stall, the
    interval before it less, and the worker's time off its CPU over the two covers it (a
    stall across an interval's end is off the CPU before the end, late after it)."""
    port = ring()
    a = engine.load(port, Stream(T4, size=64, name="a"))
    pid = engine._hello().pid
    assert pid > 0
    got: list[Interval] = []
    stalled: list[int] = []

    def on_interval(iv: Interval) -> None:
        got.append(iv)
        if iv.index == 2 and not stalled:  # read ~0.3 s in: stall the host in interval 3+
            os.kill(pid, signal.SIGSTOP)
            time.sleep(0.06)
            os.kill(pid, signal.SIGCONT)
            stalled.append(len(got))

    r = engine.run([_paced(a, 100_000)], [port], duration_s=1.0, interval_s=0.1,
                   on_interval=on_interval)
    assert stalled and len(got) == 10
    lags = [iv.tx[0].tx_max_lag_ns for iv in got]
    worst = max(range(10), key=lags.__getitem__)
    assert worst >= 3, lags  # after interval 2 was read, never before
    assert lags[worst] >= 50_000_000 and lags[worst] == r.streams[0].tx_max_lag_ns, lags
    window = got[worst].tx[0].after(got[worst - 1].tx[0])
    assert window.tx_off_cpu_ns >= 50_000_000, (got[worst - 1].tx, got[worst].tx)
    assert lags[worst - 1] < lags[worst]
