"""What the engine measures of its own worker, against a cause made on purpose.

A lag is blamed on the machine only where the worker waited, runnable, for its CPU
(`tx_wait_cpu_ns`, the kernel's run_delay); a port that refuses part of a burst is
counted (`tx_refused_bursts`); time the worker slept in a call is told apart from
both. Each figure is checked here against a known cause: a CPU hog pinned to the
worker's CPU, and a net_ring whose RX side nobody polls, so its ring fills.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from pytest_netload import RateController, RateShortfallWarning
from pytest_netload.engine.client import Engine
from pytest_netload.measure.causes import lag_cause, shortfall_cause
from pytest_netload.traffic.packets import UDP, Eth, IPv4
from pytest_netload.traffic.streams import Stream

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="the engine runs DPDK: needs root"),
]

RATE_PPS = 1_000_000


def _stream(name: str) -> Stream:
    return Stream((Eth() / IPv4(src="198.18.0.1", dst="198.19.0.1") / UDP(dport=9)).build(),
                  size=64, name=name)


@pytest.fixture
def hog() -> Iterator[Callable[[int], None]]:
    """Starts a busy loop pinned to a CPU; killed after the test, pass or fail."""
    procs: list[subprocess.Popen[bytes]] = []

    def start(cpu: int) -> None:
        code = f"import os; os.sched_setaffinity(0, {{{cpu}}})\nwhile True: pass"
        procs.append(subprocess.Popen([sys.executable, "-c", code]))
        time.sleep(0.2)  # pinned and spinning before the run starts

    yield start
    for p in procs:
        p.kill()
        p.wait()


def test_a_hog_on_the_worker_cpu_is_measured_as_waiting(
        engine: Engine, ring: Callable[..., Any], hog: Callable[[int], None]) -> None:
    worker_cpu = engine.environment()["worker_cpus"][0]
    port = ring()
    rc = RateController(engine, port, rx=[port])
    hog(worker_cpu)
    r = rc.run(_stream("hogged"), f"{RATE_PPS}pps", duration="1s")
    s = r.streams[0].result
    note = (f"off CPU {s.tx_off_cpu_ns / 1e6:.1f} ms, waited {s.tx_wait_cpu_ns / 1e6:.1f} ms, "
            f"{s.tx_preemptions} preemptions, {s.tx_sleeps} sleeps, lag "
            f"{s.tx_max_lag_ns / 1e6:.1f} ms")
    # CFS shares the CPU between two busy tasks: the worker waits about half the second
    assert s.tx_wait_cpu_ns > 200_000_000 and s.tx_preemptions > 10, note
    assert s.tx_wait_cpu_ns <= s.tx_off_cpu_ns, note
    # a busy-polling worker on net_ring never blocks: nearly all its time off is waiting
    assert s.tx_off_cpu_ns - s.tx_wait_cpu_ns < 0.1 * s.tx_off_cpu_ns + 5_000_000, note
    assert s.tx_refused_bursts == 0, note  # RX was polled: the ring never filled
    assert "for its CPU in" in lag_cause(s) and "(another task took the core" in lag_cause(s)


def test_a_quiet_worker_waits_little(engine: Engine, ring: Callable[..., Any]) -> None:
    port = ring()
    rc = RateController(engine, port, rx=[port])
    r = rc.run(_stream("quiet"), f"{RATE_PPS}pps", duration="0.5s")
    s = r.streams[0].result
    assert 0 <= s.tx_wait_cpu_ns <= s.tx_off_cpu_ns
    assert s.tx_refused_bursts == 0
    assert s.tx_sleeps <= s.tx_preemptions + 10, s  # it busy-polls: it blocks in no call


def test_a_full_tx_ring_is_counted_as_refused_bursts(
        engine: Engine, ring: Callable[..., Any]) -> None:
    """Paced TX into a net_ring whose RX nobody polls: the ring fills, then every call is
    refused, the pacer falls behind, and the shortfall names the port, not the CPU."""
    port = ring()
    rc = RateController(engine, port, rx=[])
    with pytest.warns(RateShortfallWarning, match="the port took only part of"):
        r = rc.run(_stream("refused"), f"{RATE_PPS}pps", duration="0.3s")
    s = r.streams[0].result
    assert 0 < s.tx_packets < 0.5 * RATE_PPS * 0.3, s
    assert s.tx_refused_bursts > 100, s  # every call after the ring filled
    assert s.tx_unsent > 0, s  # what it still held when the run ended
    text = shortfall_cause(s, RATE_PPS, 0.3)
    assert f"the port took only part of {s.tx_refused_bursts:,} TX calls" in text
    assert "quieter CPU" not in text or s.tx_wait_cpu_ns >= s.tx_max_lag_ns


def test_a_polled_ring_refuses_nothing(engine: Engine, ring: Callable[..., Any]) -> None:
    port = ring()
    stream = engine.load(port, _stream("taken"))
    r = engine.run([stream], [port], count=100_000)
    (s,) = r.streams
    assert (s.tx_packets, s.rx_packets, s.tx_refused_bursts) == (100_000, 100_000, 0), s
