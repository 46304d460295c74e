"""A capture replayed on the real engine (net_ring: TX loops back to RX in-process).

At the capture's timing: a generated capture of four UDP flows with irregular gaps
(exponential, mean 100 us, and a few 2-ms pauses) is replayed once; every frame of every
flow arrives, accounted to its flow, and the received gaps are compared with the
capture's, in capture order: the median and p99 of the gap error are printed (pytest -s)
and bounded. At a fixed rate: the flows as weighted streams, the rate exact to 0.1 %.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pytest_netload import Engine, Port, from_pcap
from pytest_netload.engine.client import Tx
from pytest_netload.traffic.patterns import Phase

from calm import CalmController, calm_run

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="the engine host runs DPDK: needs root"),
]

FLOWS = 4
FRAMES = 4000


def write_capture(path: Path, frames: int = FRAMES, seed: int = 7,
                  sizes: tuple[int, ...] = ()) -> np.ndarray:
    """A nanosecond pcap of `frames` UDP frames over FLOWS flows (sizes 64-1400 B),
    irregular gaps; returns each frame's time in ns from the first."""
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether
    from scapy.packet import Raw
    from scapy.utils import PcapWriter

    rng = np.random.default_rng(seed)
    gaps = rng.exponential(100_000, frames - 1).astype(np.int64) + 1_000
    gaps[rng.choice(frames - 1, 5, replace=False)] = 2_000_000
    times = np.concatenate(([0], np.cumsum(gaps)))
    with PcapWriter(str(path), nano=True, sync=False) as w:
        for i, t in enumerate(times.tolist()):
            f = int(rng.integers(FLOWS))
            p = (Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
                 / IP(src="198.18.0.2", dst="198.19.0.2") / UDP(sport=1000 + f, dport=9)
                 / Raw(bytes(int(rng.choice(sizes)) if sizes else int(rng.integers(18, 1350)))))
            p.time = 1_700_000_000 + t / 1e9
            w.write(p)
    return times


class CalmReplay(CalmController):
    def replay(self, *args: Any, **kwargs: Any) -> Any:
        return calm_run(lambda: super(CalmReplay, self).replay(*args, **kwargs))


def gap_errors(replay: Any, result: Any) -> np.ndarray:
    """Received gap minus the capture's gap, ns, for every consecutive pair of frames in
    capture order (each flow's arrivals are its frames in order: none lost or reordered)."""
    due, rx = [], []
    for part, s in zip(replay.parts, result.run.streams):
        assert s.sample_rx_ns is not None and len(s.sample_rx_ns) == part.packets
        due.append(part.times_ns)
        rx.append(s.sample_rx_ns.astype(np.int64))
    due_all, rx_all = np.concatenate(due), np.concatenate(rx)
    order = np.argsort(due_all, kind="stable")
    return np.diff(rx_all[order]) - np.diff(due_all[order])


def test_replay_at_the_captures_timing(ring: Callable[..., Port], tmp_path: Path) -> None:
    times = write_capture(tmp_path / "cap.pcap")
    replay = from_pcap(tmp_path / "cap.pcap")
    assert replay.packets == FRAMES and len(replay.flows) == FLOWS
    assert replay.capture.resolution_ns == 1
    port = ring()
    rc = CalmReplay(port.engine, port, rx=[port])
    r = rc.replay(replay, timing_samples=FRAMES)
    assert len(replay.parts) > FLOWS  # each flow's distinct frames fill several streams
    for part, s in zip(replay.parts, r.run.streams):
        assert (s.tx_packets, s.rx_packets, s.lost, s.duplicates, s.reordered) == (
            part.packets, part.packets, 0, 0, 0), s
    err = gap_errors(replay, r)
    median, p99 = float(np.median(np.abs(err))), float(np.percentile(np.abs(err), 99))
    span = max(int(s.rx_last_ns) for s in r.run.streams) - \
        min(int(s.rx_first_ns) for s in r.run.streams)
    late = np.concatenate([s.sample_tx_ns.astype(np.int64) - part.times_ns
                           for part, s in zip(replay.parts, r.run.streams)])
    print(f"\nreplay of {FRAMES} frames in {FLOWS} flows ({len(replay.parts)} streams) over "
          f"{times[-1] / 1e6:.1f} ms: received |gap error| median {median:.0f} ns, p99 "
          f"{p99:.0f} ns, max {np.abs(err).max():.0f} ns; departure after the capture's time "
          f"median {np.median(late):.0f} ns, p99 {np.percentile(late, 99):.0f} ns, max "
          f"{late.max()} ns; received span {span / 1e6:.3f} ms (capture "
          f"{times[-1] / 1e6:.3f} ms)")
    assert late.min() >= -10  # never before its time
    assert median < 2_000, err
    assert p99 < 50_000, err
    assert span == pytest.approx(int(times[-1]), rel=0.001)


def test_a_faster_replay_loops_with_the_captures_period(ring: Callable[..., Port],
                                                        tmp_path: Path) -> None:
    times = write_capture(tmp_path / "cap.pcap", frames=300, sizes=(18, 500))
    replay = from_pcap(tmp_path / "cap.pcap", loop_gap=50_000)
    port = ring()
    rc = CalmReplay(port.engine, port, rx=[port])
    r = rc.replay(replay, speed=4, loops=2, timing_samples=600)
    assert r.pattern == "capture x4"
    for part, s in zip(replay.parts, r.run.streams):
        assert (s.tx_packets, s.rx_packets, s.lost) == (2 * part.packets, 2 * part.packets, 0)
    first = min(int(s.sample_tx_ns[0]) for s in r.run.streams)
    last = max(int(s.sample_tx_ns[-1]) for s in r.run.streams)
    # the second pass starts one period (span + loop gap) after the first, all / 4; no
    # frame leaves before its time and any may leave up to the run's worst TX lag late (a
    # calm run lags up to 1 ms: one once sent its first frame 107 us late)
    want = (int(times[-1]) + 50_000 + int(times[-1])) / 4
    lag = max(int(s.tx_max_lag_ns) for s in r.run.streams)
    assert abs(last - first - want) <= 100_000 + lag, (last - first, want, lag)


def test_a_late_start_leaves_at_its_offset(engine: Engine, ring: Callable[..., Port],
                                           tmp_path: Path) -> None:
    write_capture(tmp_path / "cap.pcap", frames=50)
    replay = from_pcap(tmp_path / "cap.pcap")
    port = ring()
    stream = engine.load(port, replay.stream(0), queues=1)
    try:
        run = calm_run(lambda: engine.run(
            [Tx(stream, 3, (Phase(np.array([1_000_000_000], dtype=np.uint64)),),
                start_ns=5_000_000)], [port], timing_samples=3))
    finally:
        stream.free()
    (s,) = run.streams
    tx = s.sample_tx_ns.astype(np.int64)
    assert tx[0] >= 5_000_000 and tx[0] < 5_000_000 + 1_000_000, tx
    assert np.diff(tx) == pytest.approx([1_000_000, 1_000_000], abs=200_000)


def test_replay_at_a_fixed_rate_is_exact(ring: Callable[..., Port], tmp_path: Path) -> None:
    write_capture(tmp_path / "cap.pcap", frames=400)
    replay = from_pcap(tmp_path / "cap.pcap")
    port = ring()
    rc = CalmController(port.engine, port, rx=[port])
    r = rc.run(replay.streams(), "20kpps", duration="1s")
    sent = sum(s.result.tx_packets for s in r.streams)
    got = sum(s.result.rx_packets for s in r.streams)
    assert got == sent
    assert abs(sent - 20_000) <= 0.001 * 20_000, sent
    for o, part in zip(r.streams, replay.parts):
        assert o.result.tx_packets == pytest.approx(20_000 * part.packets / replay.packets,
                                                    abs=2)


def test_without_a_signature_each_flow_is_counted_by_its_ip_flow(
        ring: Callable[..., Port], tmp_path: Path) -> None:
    """Frames leave exactly as captured; RX counts each flow's frames by its 5-tuple
    (packets and bytes), none foreign. 400 frames, each flow's distinct sizes kept in
    one stream (eight payload sizes, templates='by_size')."""
    write_capture(tmp_path / "cap.pcap", frames=400, sizes=(18, 100, 200, 300, 500, 800,
                                                              1000, 1300))
    replay = from_pcap(tmp_path / "cap.pcap", signature=False, templates="by_size")
    assert len(replay.parts) == FLOWS
    port = ring()
    rc = CalmController(port.engine, port, rx=[port])
    r = rc.run(replay.streams(), "20kpps", count=150)
    for part, o in zip(replay.parts, r.streams):
        s = o.result
        assert (s.tx_packets, s.rx_packets, s.lost) == (150, 150, 0), s
        assert s.rx_bytes == s.tx_bytes > 0
        assert s.latency_samples == 0  # no signature: no stamp
        assert 0 < s.rx_first_ns < s.rx_last_ns and s.rx_pps > 0
    assert r.run.foreign == 0


def test_full_size_frames_carry_the_signature_in_place(ring: Callable[..., Port],
                                                      tmp_path: Path) -> None:
    """1514-byte frames (1500-byte IP packets) have no room under the ports' 1500 MTU:
    the signature takes their payload's last 16 bytes, and they are accounted as any."""
    write_capture(tmp_path / "cap.pcap", frames=200, sizes=(1472, 100))
    replay = from_pcap(tmp_path / "cap.pcap")
    assert 0 < replay.signed_in_place < 200
    port = ring()
    rc = CalmController(port.engine, port, rx=[port])
    r = rc.run(replay.streams(), "10kpps", count=50)
    for o in r.streams:
        s = o.result
        assert (s.tx_packets, s.rx_packets, s.lost, s.duplicates) == (50, 50, 0, 0), s
        assert s.latency_samples == 50
