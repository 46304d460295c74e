"""Two engine hosts on one veth pair: one sends a stream, the other only expects it.

A stream's signature carries its engine-local stream id, so a receiver that loads the same
stream in a fresh engine host (id 0 in both) counts the sender's frames as its own.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

from pytest_netload.engine.client import Engine
from pytest_netload.measure.results import RunResult
from pytest_netload.topology.builtin import build
from pytest_netload.traffic.packets import UDP, Eth, IPv4
from pytest_netload.traffic.streams import Stream

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        os.geteuid() != 0,
        reason="the topology creates veths and the engine runs DPDK: needs root",
    ),
]

COUNT = 10_000
TRIES = 3  # runs whose receiver lost its CPU are repeated


@pytest.mark.parametrize("backend", ["af_packet", "af_xdp"])
def test_expect_only_counts_another_hosts_stream(tmp_path: Path, backend: str) -> None:
    for _ in range(TRIES):
        tx, rx = _two_hosts(tmp_path, backend)
        if rx.streams[0].rx_packets == COUNT:
            break
    assert (tx.streams[0].tx_packets, tx.streams[0].rx_packets) == (COUNT, 0)
    (s,) = rx.streams
    if s.rx_packets < COUNT:
        # the receiving host's worker lost its CPU while the frames came in (a busy
        # machine): its kernel ring overflowed, which the engine measured; without that
        # proof the shortfall is the engine's and fails the test
        q = rx.rx_queues
        if int(q["preemptions"].sum()) and int(q["off_cpu_ns"].sum()):
            pytest.skip(f"busy machine: the receiver got {s.rx_packets:,} of {COUNT:,} in "
                        f"{TRIES} runs; its worker was off its CPU "
                        f"{int(q['off_cpu_ns'].sum()) / 1e6:,.1f} ms in "
                        f"{int(q['preemptions'].sum()):,} preemptions")
    assert (s.tx_packets, s.rx_packets, s.duplicates, s.reordered) == (0, COUNT, 0, 0)
    assert s.rx_bytes == 60 * COUNT
    assert int(rx.arrays["rx"]["max_seq"][0]) == COUNT
    assert rx.foreign == 0
    # The sender's count against the receiver's: nothing lost in between.
    assert tx.streams[0].tx_packets - s.rx_unique == 0


def _two_hosts(tmp_path: Path, backend: str) -> tuple[RunResult, RunResult]:
    """A sender host sends COUNT frames of a stream the receiver host only expects."""
    cpus = sorted(os.sched_getaffinity(0))
    # Each host on its own CPU: two busy-polling workers sharing one CPU lose frames.
    sender_cpu, receiver_cpu = cpus[0], cpus[-1]
    with (
        build("loopback", backend=backend) as built,
        Engine(lcores=[sender_cpu], log_dir=str(tmp_path)) as sender,
        Engine(lcores=[receiver_cpu], log_dir=str(tmp_path)) as receiver,
    ):
        flow = built.topology.flows()[0]
        stream = Stream((Eth(dst=flow.dst_mac, src=flow.src_mac) / IPv4() / UDP()).build(),
                        size=64, name="shared")
        assert flow.tx.device is not None and flow.rx.device is not None
        tx_port, rx_port = sender.port(flow.tx.device), receiver.port(flow.rx.device)
        sent = sender.load(tx_port, stream)
        expected = receiver.load(rx_port, stream)
        assert sent.stream_id == expected.stream_id == 0

        listening = threading.Event()
        box: dict[str, Any] = {}

        def receive() -> None:
            try:
                box["result"] = receiver.run([], [rx_port], expect=[expected], duration_s=2.0,
                                             progress=lambda status: listening.set())
            except BaseException as exc:  # noqa: BLE001 - re-raised in the test's thread
                box["error"] = exc
                listening.set()

        thread = threading.Thread(target=receive)
        thread.start()
        try:
            assert listening.wait(10.0)
            tx = sender.run([sent], [], count=COUNT)
        finally:
            thread.join(30.0)
        if "error" in box:
            raise box["error"]
        rx: RunResult = box["result"]
        tx_port.close()
        rx_port.close()
    return tx, rx
