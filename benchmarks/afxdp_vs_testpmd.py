"""TX pps over AF_XDP on a veth pair: pytest-netload against testpmd txonly.

Both send 64-byte UDP frames through the same `net_af_xdp` vdev on one end
of a veth pair (the `loopback` topology); the other end receives in the
kernel. Over veth every tool is kernel-bound (about 1.1 Mpps a core here),
so this checks that the engine adds nothing on top of the kernel path.
The two alternate for five rounds (the VM's noise drifts); the headline is
the median of the per-round ratios.
Usage: python benchmarks/afxdp_vs_testpmd.py [seconds per round]
"""

from __future__ import annotations

import statistics
import sys

from _common import alternate, best_of, print_table, testpmd_pps, udp_stream

from pytest_netload.engine.client import Engine
from pytest_netload.topology.builtin import build, vdev_string


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    with build("loopback", backend="af_xdp") as built:
        iface = built.topology.port("p0").iface
        vdev = vdev_string("af_xdp", "bench", iface)

        def peer() -> float:
            return testpmd_pps([vdev], "txonly", seconds, ("--txonly-multi-flow",))[0]

        def ours() -> float:
            with Engine() as engine:
                port = engine.port(vdev)
                stream = engine.load(port, udp_stream(64, fields=2))
                engine.run([stream], duration_s=0.3)
                return best_of(
                    3, lambda: engine.run([stream], duration_s=seconds / 3).tx_pps)

        peer_pps, our_pps, ratios = alternate(5, peer, ours)
    print_table(
        [("dpdk-testpmd txonly multi-flow", f"{peer_pps / 1e6:.3f}"),
         ("pytest-netload (2 fields + signature)", f"{our_pps / 1e6:.3f}")],
        (f"tool (net_af_xdp on veth {iface}, 64 B)", "Mpps (median of 5 rounds)"),
    )
    print("per-round ratios:", " ".join(f"{r:.2f}" for r in ratios))
    print(f"afxdp_vs_testpmd: {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
