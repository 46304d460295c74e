"""Does the latency meter read a known delay? The reference DUT at d = 100 us.

The reference DUT is a delay line in the engine's worker loop (no netem
needed): each frame leaves 100 us after it was polled. A CBR stream at
10 kpps crosses it for 2 s; 20,000 frames keep their own TX and RX times,
so median and p99 below are exact, and the histogram's view is beside them.
Targets: median in [d, d + 5 us]; p99 - p50 <= 10 us.
Usage: python benchmarks/latency_reference.py
"""

from __future__ import annotations

import numpy as np
from _common import udp_stream

from pytest_netload import Engine, Rate
from pytest_netload.bench.reference import ReferenceDut
from pytest_netload.engine.client import Tx
from pytest_netload.traffic.patterns import CBR

D_NS = 100_000
PPS = 10_000.0


def main() -> None:
    with Engine() as engine, ReferenceDut(engine, "100us") as dut:
        stream = engine.load(dut.ingress, udp_stream(64, fields=0))
        phases = tuple(CBR().phases(lambda r: PPS, Rate(PPS, "pps"), seed=1))
        r = engine.run([Tx(stream, 0, phases)], [dut.egress], duration_s=2.0,
                       forward=[dut.forward], timing_samples=20_000)
    s = r.streams[0]
    exact = (s.sample_rx_ns.astype(np.int64) - s.sample_tx_ns.astype(np.int64)).astype(float)  # type: ignore[union-attr]
    p50, p99, p999 = np.percentile(exact, [50, 99, 99.9])
    lat = s.latency_result()
    print(f"reference DUT d = {D_NS / 1e3:.0f} us, CBR {PPS / 1e3:.0f} kpps, "
          f"{len(exact)} frames, lost {s.lost}")
    print(f"exact:     min {exact.min() / 1e3:.3f} us  p50 {p50 / 1e3:.3f} us  "
          f"p99 {p99 / 1e3:.3f} us  p99.9 {p999 / 1e3:.3f} us  max {exact.max() / 1e3:.3f} us")
    print(f"histogram: {lat}")
    print(f"p99 - p50: {(p99 - p50) / 1e3:.3f} us (target <= 10 us)")
    print(f"median_minus_d_us: {(p50 - D_NS) / 1e3:.3f}")


if __name__ == "__main__":
    main()
