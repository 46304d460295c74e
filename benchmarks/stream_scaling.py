"""TX and RX Mpps at 1, 64, 1,000 and 10,000 streams, and the engine's memory at each.

Per-stream accounting is the point of the tool, so the rate must hold as
streams multiply. Streams share the engine's TX pools (one per socket and size class); each
stream costs its template and its state. Frames: 64 bytes (FCS included) UDP/IPv4, two
modified fields and the signature trailer, every frame stamped.

TX: the streams to net_null, round-robin on one worker (each sends bursts in turn).
RX: the in-order path of rx_vs_testpmd.py: a net_ring port looping our TX back to our RX
(TX and RX on one worker), every frame classified to its stream, its sequence number
tracked, its latency recorded; a run counts only when every frame came back exactly once.
Memory: the engine's DPDK heap in use after loading the streams, and during the RX run
(when the per-stream RX state is allocated), from `Engine.memory()`.
Each figure is the best of 3 runs; one engine per stream count (a fresh heap each).
Headline: RX Mpps at 10,000 streams over RX Mpps at 1 (target: at least 0.8); 0 when a
count could not run (the reason is printed).
Usage: python benchmarks/stream_scaling.py [seconds per point] [stream counts, e.g. 1,64]
"""

from __future__ import annotations

import sys
from typing import Any

from _common import best_of, print_table, udp_stream

from pytest_netload.engine.client import Engine
from pytest_netload.errors import NetloadError

MIB = 1 << 20


def tx_point(n: int, seconds: float) -> tuple[float, int]:
    """TX pps of n streams on net_null, and the heap in use once they are loaded."""
    with Engine() as engine:
        port = engine.port("net_null0")
        streams = [engine.load(port, udp_stream(64, fields=2, name=f"s{i}")) for i in range(n)]
        heap = engine.memory()["heap_used_bytes"]
        engine.run(streams, duration_s=0.5)  # warm-up: caches and pools
        return best_of(3, lambda: engine.run(streams, duration_s=seconds / 3).tx_pps), heap


def rx_point(n: int, seconds: float) -> tuple[float, int]:
    """RX pps of n streams looped through net_ring (exact runs only), and the heap in use
    during the run."""
    with Engine() as engine:
        port = engine.port("net_ring_scaling0")  # TX loops back to RX
        streams = [engine.load(port, udp_stream(64, fields=2, name=f"s{i}")) for i in range(n)]
        peak = [engine.memory()["heap_used_bytes"]]

        def sample(status: dict[str, Any]) -> None:
            peak[0] = max(peak[0], engine.memory()["heap_used_bytes"])

        def once() -> float:
            r = engine.run(streams, [port], duration_s=seconds / 3, drain_s=0.05,
                           progress=sample)
            bad = [s for s in r.streams if (s.lost, s.duplicates, s.reordered) != (0, 0, 0)
                   or s.rx_packets != s.tx_packets]
            if bad:
                s = bad[0]
                raise SystemExit(f"{n} streams: RX not exact on {len(bad)} streams, e.g. "
                                 f"{s.name}: sent {s.tx_packets}, received {s.rx_packets}, "
                                 f"lost {s.lost}, duplicates {s.duplicates}, reordered "
                                 f"{s.reordered}")
            return sum(s.rx_packets for s in r.streams) / (seconds / 3)

        return best_of(3, once), peak[0]


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    counts = [int(c) for c in sys.argv[2].split(",")] if len(sys.argv) > 2 else \
        [1, 64, 1000, 10000]
    rows, rx_rate = [], {}
    for n in counts:
        cells = [f"{n:,}"]
        for point in (tx_point, rx_point):
            try:
                pps, heap = point(n, seconds)
            except NetloadError as exc:  # e.g. RX state of 10,000 streams past the heap
                print(f"{n} streams, {point.__name__}: {exc}")
                cells += ["failed", "-"]
                continue
            if point is rx_point:
                rx_rate[n] = pps
            cells += [f"{pps / 1e6:.2f}", f"{heap / MIB:.0f}"]
        rows.append(tuple(cells))
    print_table(rows, ("streams", "TX Mpps", "heap MiB (loaded)", "RX Mpps",
                       "heap MiB (RX run)"))
    first, last = counts[0], counts[-1]
    ratio = rx_rate.get(last, 0.0) / rx_rate[first] if rx_rate.get(first) else 0.0
    print(f"RX at {last:,} streams over RX at {first:,}: {ratio:.3f} (target: >= 0.8)")
    print(f"stream_scaling: {ratio:.3f}")


if __name__ == "__main__":
    main()
