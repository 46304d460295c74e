"""How long a 10,000-stream run takes to hand back its results, and what they cost in memory.

Before results were sent sparse, with 10,000 streams every run built, and shipped to the client,
four dense histograms per stream (2,560 buckets of 8 bytes: 800 MB), although a stream's
values sit in a few octaves. Now the host writes only the buckets that hold values and the
channel carries only those (engine/wire.py), so the zeros are pages nobody touched.

The run: 10,000 streams of 64 B, 32 frames each, through a net_ring loop on one engine
(every frame classified, sequence-checked and its latency taken). Reported: the run's wall
time from start to results (the traffic itself takes milliseconds), the host's and this
client's peak resident memory growth, and whether every stream came back exact.
Headline: the best run's wall time in seconds at that stream count (lower is better).
Usage: python benchmarks/result_size.py [streams] [runs]
"""

from __future__ import annotations

import resource
import sys
import time

from _common import proc_status_kib, udp_stream

from pytest_netload.engine.client import Engine

MIB = 1 << 20


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    count = 32
    with Engine() as engine:
        pid = int(engine.hello["pid"])
        port = engine.port("net_ring_results0")
        streams = [engine.load(port, udp_stream(64, fields=2, name=f"s{i}")) for i in range(n)]
        host_before = proc_status_kib(pid, "VmHWM")
        client_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            r = engine.run([(s, count) for s in streams], [port], drain_s=0.05)
            times.append(time.perf_counter() - t0)
            exact = all((s.tx_packets, s.rx_packets, s.lost, s.latency_samples)
                        == (count, count, 0, count) for s in r.streams)
            print(f"run: {times[-1]:.2f} s, {len(r.streams):,} streams, "
                  f"every stream exact: {exact}", flush=True)
            del r
        host_growth = (proc_status_kib(pid, "VmHWM") - host_before) * 1024
        client_growth = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - client_before) * 1024
    print(f"streams {n:,}: best run {min(times):.2f} s (runs {', '.join(f'{t:.2f}' for t in times)});"
          f" peak RSS growth: host {host_growth / MIB:,.0f} MiB, client {client_growth / MIB:,.0f} MiB")
    print(f"result_run_s: {min(times):.3f}")


if __name__ == "__main__":
    main()
