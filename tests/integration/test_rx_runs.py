"""Frames of one TX burst, taken together by the RX classifier, count as each frame alone.

netload_rx_burst (native/src/rx.c) classifies a burst into runs: frames of one stream with
consecutive sequence numbers and one TX stamp, as one TX burst's frames arrive. The
accounting (rx_account.c) takes a run's frames in one step. Here a pcap of crafted frames
goes through RX on a net_pcap port: runs cut by every case that ends one (another stream,
a foreign frame, a gap, a repeat, an older number, a new stamp, no stamp, a number that
wraps at 2^32, frames of other lengths, a stamp from the future that makes the latency 0),
and a Python model of the per-frame accounting gives every count exactly: frames, bytes,
duplicates, reordered, loss events, the highest sequence number, latency samples, IPDV
pairs, and the jitter of a stream whose latency is always 0. The same frames in the timed
mode (timing samples: each frame read on its own, never a run) give the same counts.
"""

from __future__ import annotations

import os
import random
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from netutil import write_pcap

from pytest_netload._native_facts import SEQ_WINDOW, SIGNATURE_FORMAT, SIGNATURE_MAGIC
from pytest_netload.engine.client import Engine
from pytest_netload.traffic.packets import UDP, Eth, IPv4
from pytest_netload.traffic.streams import Stream

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="the engine host runs DPDK: needs root"),
]

SIGNATURE = struct.Struct(SIGNATURE_FORMAT)  # magic, stream id, sequence number, TX stamp
T4 = (Eth(dst="02:00:00:00:00:02") / IPv4(src="198.18.0.1", dst="198.19.0.1") / UDP()).build()
OLD = 1                 # a stamp long past: a latency far above 0, the same for a burst's frames
FUTURE = 1 << 63        # a stamp the TSC has not reached: latency 0
WRAP = 1 << 32


def frame(stream_id: int, seq: int, stamp: int, length: int = 64) -> bytes:
    body = (T4.headers + bytes(length))[: length - SIGNATURE.size]
    return body + SIGNATURE.pack(SIGNATURE_MAGIC, stream_id, seq % WRAP, stamp)


@dataclass
class Model:
    """One stream's RX accounting, frame by frame (rx_account.c track, latency)."""

    packets: int = 0
    bytes: int = 0
    duplicates: int = 0
    reordered: int = 0
    gap_events: int = 0
    next: int = 0
    seen: set[int] = field(default_factory=set)
    samples: int = 0
    pairs: int = 0
    prev_seq: int | None = None
    jitter16: int = 0

    def arrive(self, seq32: int, stamp: int, length: int) -> None:
        self.packets += 1
        self.bytes += length
        if stamp:
            self.samples += 1
            if self.prev_seq is not None:
                if stamp == FUTURE:  # latency 0 after a latency 0 (prev_transit holds 1)
                    self.jitter16 += 1 - ((self.jitter16 + 8) >> 4)
                if seq32 == (self.prev_seq + 1) % WRAP:
                    self.pairs += 1
            self.prev_seq = seq32
        self.track(seq32)

    def track(self, seq32: int) -> None:
        seq = (self.next & ~(WRAP - 1)) | seq32  # extended near the expected number
        if seq > self.next + (1 << 31) and seq >= WRAP:
            seq -= WRAP
        elif seq + (1 << 31) < self.next:
            seq += WRAP
        if seq >= self.next:
            if seq > self.next:
                self.gap_events += 1
            self.seen = {s for s in self.seen if s > seq - SEQ_WINDOW}
            self.seen.add(seq)
            self.next = seq + 1
        elif self.next - seq <= SEQ_WINDOW:
            if seq in self.seen:
                self.duplicates += 1
            else:
                self.reordered += 1
                self.seen.add(seq)
        else:
            self.reordered += 1


def runs_of(stream_id: int, start: int, n: int, stamp: int, length: int = 64) -> list[tuple]:
    return [(stream_id, start + i, stamp, length) for i in range(n)]


def script(a: int, b: int, z: int, rng: random.Random) -> list[tuple | bytes]:
    """Frames (stream id, sequence number, stamp, length) and foreign frames (bytes)."""
    out: list[tuple | bytes] = []
    seq = 0
    for burst in range(40):  # whole TX bursts of one stamp, some cut by B or a foreign frame
        n = rng.randint(1, 40)
        part = runs_of(a, seq, n, OLD + burst, rng.choice([64, 64, 64, 200, 1500]))
        if rng.random() < 0.3:
            part.insert(rng.randrange(len(part) + 1),
                        rng.choice([(b, burst, OLD, 128), bytes(rng.randint(0, 80))]))
        out += part
        seq += n
    out += runs_of(a, seq, 10, OLD)                    # a gap after
    out += runs_of(a, seq + 20, 10, OLD)
    out += runs_of(a, seq + 10, 10, OLD)               # the numbers skipped: reordered
    out += runs_of(a, seq + 20, 10, OLD)               # again: duplicates
    out += runs_of(a, seq + 25, 15, OLD)               # half repeats, then new ones
    seq += 40
    out += runs_of(a, seq, 8, 0)                       # no stamp
    out += runs_of(a, seq + 8, 8, OLD + 99)
    out += runs_of(a, seq + 16, 4, 0) + runs_of(a, seq + 20, 4, OLD + 99)
    seq += 24
    out += [(a, seq + i, OLD + 100 + i // 3, 64) for i in range(30)]  # stamps change often
    seq += 30
    out += runs_of(a, seq, 6, OLD + 200) + runs_of(a, seq + 5, 6, OLD + 200)  # one back
    seq += 11
    out += runs_of(a, seq + SEQ_WINDOW + 10, 5, OLD)   # a jump past the window
    out += runs_of(a, seq, 5, OLD)                     # older than it: reordered
    for i in range(8):                                 # B around its own wrap, in runs
        out += runs_of(b, WRAP - 20 + 7 * i, 7, OLD + 300 + i, 96)
    out += runs_of(b, WRAP + 40, 5, OLD) + runs_of(b, WRAP - 3, 5, OLD)  # behind the wrap
    for i in range(30):                                # Z: latency 0 throughout
        out += runs_of(z, 5 * i + (i % 7 == 6), 5, FUTURE)
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_runs_of_frames_count_as_frames_one_by_one(
    engine: Engine, vdev_name: Callable[[str], str], tmp_path: Path, seed: int
) -> None:
    holder = engine.port(vdev_name("net_ring"))
    streams = [engine.load(holder, Stream(T4, name=f"runs-{seed}-{k}")) for k in "abz"]
    ids = [s.stream_id for s in streams]
    items = script(*ids, random.Random(seed))
    frames = [x if isinstance(x, bytes) else frame(*x) for x in items]
    models = {i: Model() for i in ids}
    for x in items:
        if not isinstance(x, bytes):
            models[x[0]].arrive(x[1] % WRAP, x[2], x[3])
    rx_file = tmp_path / "runs.pcap"
    write_pcap(rx_file, frames)
    try:
        for options in ({}, {"timing_samples": 64}):
            port = engine.port(f"{vdev_name('net_pcap')},rx_pcap={rx_file},"
                               f"tx_pcap={tmp_path / 'tx.pcap'}")
            try:
                r = engine.run([], [port], expect=streams, start_delay_s=0, duration_s=1.0,
                               **options)
            finally:
                port.close()
            assert int(r.rx_queues["packets"][0]) == len(frames), options
            assert r.foreign == sum(isinstance(x, bytes) for x in items), options
            for s in r.streams:
                m = models[s.stream_id]
                got = (s.rx_packets, s.rx_bytes, s.duplicates, s.reordered, s.gap_events,
                       s.latency_samples, s.ipdv_pairs)
                want = (m.packets, m.bytes, m.duplicates, m.reordered, m.gap_events,
                        m.samples, m.pairs)
                assert got == want, f"seed {seed}, {options}, stream {s.name}"
                assert s.latency is not None and s.latency.total == m.samples
                assert s.ipdv_increase is not None and s.ipdv_decrease is not None
                assert s.ipdv_increase.total + s.ipdv_decrease.total == m.pairs
            z = next(s for s in r.streams if s.stream_id == ids[2])
            assert (z.latency_min_ns, z.latency_max_ns, z.latency_sum_ns) == (0, 0, 0)
            assert z.jitter_ns == (models[ids[2]].jitter16 + 8) >> 4, options
    finally:
        for s in streams:
            s.free()
        holder.close()
