"""TX pps on net_null: pytest-netload against dpdk-testpmd txonly, same cores.

Frames: 64 bytes (FCS included) UDP/IPv4. pytest-netload modifies two fields
per packet (IPv4 source inc, UDP source port random) and writes its 16-byte
signature trailer with sequence number and TX timestamp, keeping IPv4 and UDP
checksums right; testpmd runs `--forward-mode=txonly --txonly-multi-flow`
(it varies the IPv4 source address per packet and updates the IPv4 header
checksum; its UDP checksum is 0, its frames 64 bytes without FCS).
The two alternate for three rounds on this noisy 2-core VM; the headline is
the median of the per-round ratios.
Usage: python benchmarks/tx_vs_testpmd.py [seconds per round]
"""

from __future__ import annotations

import statistics
import sys

from _common import alternate, best_of, print_table, testpmd_pps, udp_stream

from pytest_netload.engine.client import Engine


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    hz = 0

    def peer() -> float:
        return testpmd_pps(["net_null0"], "txonly", seconds, ("--txonly-multi-flow",))[0]

    def ours() -> float:
        nonlocal hz
        with Engine() as engine:
            port = engine.port("net_null0")
            stream = engine.load(port, udp_stream(64, fields=2))
            # A short warm-up run fills caches and pools, as testpmd's first second does.
            engine.run([stream], duration_s=0.5)
            hz = engine.hello["tsc_hz"]
            return best_of(3, lambda: engine.run([stream], duration_s=seconds / 3).tx_pps)

    peer_pps, our_pps, ratios = alternate(3, peer, ours)
    rows = [
        ("dpdk-testpmd txonly multi-flow", f"{peer_pps / 1e6:.2f}", f"{hz / peer_pps:.1f}"),
        ("pytest-netload (2 fields + signature)", f"{our_pps / 1e6:.2f}", f"{hz / our_pps:.1f}"),
    ]
    print_table(rows, ("tool (net_null, 64 B, 1 worker lcore)", "Mpps", "cycles/pkt"))
    print("per-round ratios:", " ".join(f"{r:.2f}" for r in ratios))
    print(f"tx_vs_testpmd: {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
