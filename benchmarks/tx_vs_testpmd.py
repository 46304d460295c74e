"""TX pps on net_null: pytest-netload against dpdk-testpmd txonly, same cores.

Frames: 64 bytes (FCS included) UDP/IPv4. pytest-netload modifies two fields
per packet (IPv4 source inc, UDP source port random) and writes its 16-byte
signature trailer with sequence number and TX timestamp, keeping IPv4 and UDP
checksums right; testpmd runs `--forward-mode=txonly --txonly-multi-flow`
(it varies the IP source address per packet, UDP checksum left 0).
Usage: python benchmarks/tx_vs_testpmd.py [seconds]
"""

from __future__ import annotations

import sys

from _common import print_table, testpmd_pps, udp_stream

from pytest_netload.engine.client import Engine


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 5.0
    peer, _ = testpmd_pps(["net_null0"], "txonly", seconds + 2, ("--txonly-multi-flow",))
    with Engine() as engine:
        port = engine.port("net_null0")
        stream = engine.load(port, udp_stream(64, fields=2))
        # A short warm-up run fills caches and pools, as testpmd's first seconds do.
        engine.run([stream], duration_s=0.5)
        ours = engine.run([stream], duration_s=seconds).tx_pps
        hz = engine.hello["tsc_hz"]
    rows = [
        ("dpdk-testpmd txonly multi-flow", f"{peer / 1e6:.2f}", f"{hz / peer:.1f}"),
        ("pytest-netload (2 fields + signature)", f"{ours / 1e6:.2f}", f"{hz / ours:.1f}"),
    ]
    print_table(rows, ("tool (net_null, 64 B, 1 worker lcore)", "Mpps", "cycles/pkt"))
    print(f"tx_vs_testpmd: {ours / peer:.3f}")


if __name__ == "__main__":
    main()
