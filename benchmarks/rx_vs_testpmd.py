"""RX pps with signature checks: pytest-netload against dpdk-testpmd rxonly.

Both read the same frames from `net_pcap` with `infinite_rx=1` (the PMD
replays a pcap from memory, so RX is bounded by the receiver, not by a
sender sharing the core): 4096 signed 64-byte UDP frames written by our own
TX. testpmd rxonly frees each burst; pytest-netload classifies every frame
on its trailer, counts it per stream, tracks its sequence number (replays
land in the duplicate window) and takes its latency.
The two alternate for three rounds; the headline is the median of the
per-round ratios.

The replayed pcap makes every frame after the first 4096 a duplicate, so that
figure is the duplicate path's. The in-order path is measured on a `net_ring`
port that loops our own TX back to our RX: signed frames with increasing
sequence numbers that never repeat, every one stamped, TX and RX on the same
worker. That rate bounds RX alone from below (the worker also sends every
frame); its ratio to testpmd rxonly is the second figure of the last line, and the
same loop with latency on every 16th frame (stamp_every=16) the third.

The fourth figure puts that loop beside testpmd on the same device and core:
testpmd flowgen on a looped `net_ring` port builds and sends each burst (its own
64-byte UDP frames, flows varied per packet, IPv4 checksum) and receives and
frees what comes back, one worker doing both, as ours does. Ours classifies
every frame it receives, checks its sequence number and takes its latency.
Usage: python benchmarks/rx_vs_testpmd.py [seconds per round]
"""

from __future__ import annotations

import atexit
import os
import shutil
import statistics
import sys
import tempfile

from _common import alternate, print_table, testpmd_pps, udp_stream

from pytest_netload.engine.client import Engine

FRAMES = 4096


def write_pcap(path: str, empty: str) -> None:
    from scapy.all import wrpcap  # type: ignore[import-untyped]

    wrpcap(empty, [])
    with Engine() as engine:
        port = engine.port(f"net_pcap_w0,tx_pcap={path},rx_pcap={empty}")
        stream = engine.load(port, udp_stream(64, fields=2))
        assert stream.stream_id == 0, "the first stream of a fresh engine has id 0"
        engine.run([stream], count=FRAMES)


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    tmp = tempfile.mkdtemp(prefix="netload-rxbench-")
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)
    pcap, empty = os.path.join(tmp, "signed.pcap"), os.path.join(tmp, "empty.pcap")
    write_pcap(pcap, empty)
    vdev = f"net_pcap0,rx_pcap={pcap},infinite_rx=1"

    def peer() -> float:
        return testpmd_pps([vdev], "rxonly", seconds)[0]

    def ours() -> float:
        with Engine() as engine:
            sink = engine.port("net_null0")
            # Same stream id (0) as the frames in the pcap: RX knows what to expect.
            stream = engine.load(sink, udp_stream(64, fields=2))
            rx = engine.port(vdev)
            rates = []
            for _ in range(3):
                q = engine.run([], [rx], expect=[stream], duration_s=seconds / 3,
                               drain_s=0.0).rx_queues
                if int(q["foreign"].sum()):
                    raise SystemExit(f"{int(q['foreign'].sum())} frames were not classified "
                                     "as the expected stream")
                rates.append(int(q["packets"].sum()) / (seconds / 3))
            return max(rates)

    def in_order(stamp_every: int = 1) -> float:
        with Engine() as engine:
            port = engine.port("net_ring_inorder0")  # TX loops back to RX
            stream = engine.load(port, udp_stream(64, fields=2, stamp_every=stamp_every))
            rates = []
            for _ in range(3):
                (s,) = engine.run([stream], [port], duration_s=seconds / 3,
                                  drain_s=0.05).streams
                if (s.lost, s.duplicates, s.reordered) != (0, 0, 0) or \
                        s.rx_packets != s.tx_packets:
                    raise SystemExit(f"in-order run not exact: sent {s.tx_packets}, received "
                                     f"{s.rx_packets}, lost {s.lost}, duplicates "
                                     f"{s.duplicates}, reordered {s.reordered}")
                rates.append(s.rx_packets / (seconds / 3))
            return max(rates)

    def loop_peer() -> float:
        return testpmd_pps(["net_ring_flowgen0"], "flowgen", seconds)[0]

    peer_pps, our_pps, ratios = alternate(3, peer, ours)
    _, inorder_pps, inorder_ratios = alternate(3, peer, in_order)
    _, sparse_pps, sparse_ratios = alternate(3, peer, lambda: in_order(16))
    loop_peer_pps, loop_pps, loop_ratios = alternate(3, loop_peer, in_order)
    print_table(
        [("dpdk-testpmd rxonly (pcap replay)", f"{peer_pps / 1e6:.2f}"),
         ("pytest-netload, duplicate path (pcap replay: classify + seq window + latency "
          "+ gap histogram)", f"{our_pps / 1e6:.2f}"),
         ("pytest-netload, in-order path (net_ring loop, TX + RX on one worker: a lower "
          "bound)", f"{inorder_pps / 1e6:.2f}"),
         ("pytest-netload, in-order path, latency on every 16th frame (stamp_every=16)",
          f"{sparse_pps / 1e6:.2f}"),
         ("dpdk-testpmd flowgen (net_ring loop: TX + RX and free on one worker)",
          f"{loop_peer_pps / 1e6:.2f}"),
         ("pytest-netload, in-order path beside it (the same loop, measured again)",
          f"{loop_pps / 1e6:.2f}")],
        ("tool (64 B, 1 worker)", "Mpps"),
    )
    print("per-round ratios, duplicate path:", " ".join(f"{r:.2f}" for r in ratios))
    print("per-round ratios, in-order loop:", " ".join(f"{r:.2f}" for r in inorder_ratios))
    print("per-round ratios, in-order loop, stamp_every=16:",
          " ".join(f"{r:.2f}" for r in sparse_ratios))
    print("per-round ratios, in-order loop against testpmd's flowgen loop:",
          " ".join(f"{r:.2f}" for r in loop_ratios))
    print(f"rx_vs_testpmd: {statistics.median(ratios):.3f} "
          f"rx_inorder_loop_vs_testpmd: {statistics.median(inorder_ratios):.3f} "
          f"rx_inorder_loop_stamp16_vs_testpmd: {statistics.median(sparse_ratios):.3f} "
          f"rx_inorder_loop_vs_testpmd_flowgen_loop: {statistics.median(loop_ratios):.3f}")


if __name__ == "__main__":
    main()
