"""Cross-check the latency meter against the kernel's own timestamps on netns-router.

tcpdump (nanosecond kernel timestamps) listens inside the DUT namespace on
its ingress (dut0) and egress (dut1) interfaces while the engine sends a
CBR stream p0 -> p1 through it. Frames are matched by their trailer (stream
id, sequence number), so for each frame we know:
- the meter's latency (generator TX TSC -> generator RX TSC), and
- the DUT's own transit (kernel RX timestamp on dut0 -> on dut1).
The meter's figure must be the DUT's transit plus the generator-side path
(AF_XDP TX, two veth hops, AF_XDP RX), so it is never below it; the table
gives both distributions and their per-frame difference.
Usage: python benchmarks/latency_crosscheck.py
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import struct
import subprocess
import tempfile
import time

import numpy as np

from pytest_netload import Engine, Rate, flow_stream
from pytest_netload.engine.client import Tx
from pytest_netload.topology.builtin import build
from pytest_netload.traffic.patterns import CBR

PPS = 10_000.0
SECONDS = 2.0


def trailer_times(pcap: str) -> dict[int, float]:
    """seq -> kernel timestamp (ns) of our frames in a nanosecond pcap."""
    out: dict[int, float] = {}
    with open(pcap, "rb") as f:
        head = f.read(24)
        nano = struct.unpack("<I", head[:4])[0] == 0xA1B23C4D
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                break
            sec, frac, incl, _ = struct.unpack("<IIII", rec)
            data = f.read(incl)
            if len(data) >= 16 and data[-16:-14] == b"\x4c\x4e":
                seq = struct.unpack("<I", data[-12:-8])[0]
                out[seq] = sec * 1e9 + (frac if nano else frac * 1e3)
    return out


def main() -> None:
    tmp = tempfile.mkdtemp(prefix="netload-xcheck-")
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)
    with build("netns-router", backend="af_xdp", neighbours="static") as built, Engine() as engine:
        assert built.dut is not None
        ns = built.dut.namespace
        flow = built.topology.flows()[0]
        ports = {p.name: engine.port(str(p.device)) for p in built.topology.ports}
        stream = engine.load(ports[flow.tx.name], flow_stream(flow, size=128))
        dumps = []
        for ifname in built.dut.interfaces:
            path = os.path.join(tmp, f"{ifname}.pcap")
            dumps.append((path, subprocess.Popen(
                ["ip", "netns", "exec", ns, "tcpdump", "-i", ifname, "-n", "-U", "-q",
                 "--time-stamp-precision=nano", "-w", path, "udp"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)))
        time.sleep(1.5)
        phases = tuple(CBR().phases(lambda r: PPS, Rate(PPS, "pps"), seed=1))
        r = engine.run([Tx(stream, 0, phases)], [ports[flow.rx.name]], duration_s=SECONDS,
                       timing_samples=int(PPS * SECONDS) + 10)
        time.sleep(0.5)
        for _, proc in dumps:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=10)
    s = r.streams[0]
    meter = (s.sample_rx_ns.astype(np.int64) - s.sample_tx_ns.astype(np.int64)).astype(float)  # type: ignore[union-attr]
    t_in, t_out = (trailer_times(p) for p, _ in dumps)
    seqs = sorted(set(t_in) & set(t_out))
    transit = np.array([t_out[q] - t_in[q] for q in seqs])
    meter_by_seq = meter[np.array(seqs)[np.array(seqs) < len(meter)]]
    transit = transit[: len(meter_by_seq)]
    diff = meter_by_seq - transit
    rows = [("meter (generator TX -> RX)", meter_by_seq), ("kernel DUT transit (dut0 -> dut1)", transit),
            ("meter - DUT transit, per frame", diff)]
    print(f"netns-router, CBR {PPS / 1e3:.0f} kpps, {len(seqs)} frames matched of "
          f"{s.tx_packets} sent; latencies in us")
    print(f"{'':36}{'min':>9}{'p50':>9}{'p90':>9}{'p99':>9}{'max':>9}")
    for name, v in rows:
        p = np.percentile(v, [50, 90, 99])
        print(f"{name:36}{v.min() / 1e3:9.2f}{p[0] / 1e3:9.2f}{p[1] / 1e3:9.2f}"
              f"{p[2] / 1e3:9.2f}{v.max() / 1e3:9.2f}")
    print(f"frames where the meter read less than the DUT's own transit: {(diff < 0).sum()}")
    print(f"meter_minus_transit_p50_us: {np.median(diff) / 1e3:.3f}")


if __name__ == "__main__":
    main()
