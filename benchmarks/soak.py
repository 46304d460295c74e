"""Soak: the maximum rate through netns-router for 10 minutes, every frame accounted.

One stream p0 -> p1 at the generator's full speed through the Linux kernel router
(a network namespace between two veth pairs). Every second the script reads the
engine's live counters, the DUT's interface counters (packets and drops) and the
engine host's resident memory. At the end, every frame sent is either received or
counted as dropped by a counter that says where:

    tx = rx (unique) + DUT drops (d0/d1 rx_dropped + tx_dropped)
         + generator-side drops (p0 tx_dropped: the veth refused it;
           p1 rx_dropped / DPDK imissed, rx_nombuf: our own receive path)
         + unaccounted

and the engine's memory stays flat (RSS after the first 10 s against the last).
Run as root:

    python3 benchmarks/soak.py [--minutes 10] [--size 64] [--backend af_packet]

Last line: `soak_unaccounted_frames: N`.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from _common import proc_status_kib

from pytest_netload.engine.client import Engine
from pytest_netload.topology.builtin import build
from pytest_netload.traffic.streams import flow_stream

WARMUP_S = 10.0   # memory is compared from here on: pools and rings are allocated by then


def iface_counter(iface: str, name: str) -> int:
    with open(f"/sys/class/net/{iface}/statistics/{name}", encoding="ascii") as f:
        return int(f.read())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--size", type=int, default=64, help="frame size with FCS")
    parser.add_argument("--backend", default="af_packet", choices=("af_packet", "af_xdp"))
    args = parser.parse_args()
    seconds = args.minutes * 60
    with Engine() as engine, build("netns-router", backend=args.backend, neighbours="static") as built:
        dut = built.dut
        assert dut is not None
        flow = built.topology.flows()[0]
        tx = engine.port(flow.tx.device)
        rx = engine.port(flow.rx.device)
        gen_tx, gen_rx = flow.tx.iface, flow.rx.iface
        pid = int(engine.hello["pid"])
        stream = engine.load(tx, flow_stream(flow, size=args.size, name="soak"))
        engine.run([(stream, 1000)], [rx], drain_s=0.2)  # neighbours learned, not counted
        dut_before = dut.counters()
        gen_before = {n: iface_counter(i, n) for i, n in ((gen_tx, "tx_dropped"),
                                                          (gen_rx, "rx_dropped"))}
        samples: list[dict[str, Any]] = []
        started = time.monotonic()
        next_at = [1.0]

        def every_second(status: dict[str, Any]) -> None:
            elapsed = time.monotonic() - started
            if elapsed < next_at[0]:
                return
            next_at[0] += 1.0
            c = dut.counters()
            drops = sum(c[i][k] - dut_before[i][k] for i in c
                        for k in ("rx_dropped", "tx_dropped"))
            samples.append({"t": elapsed, "tx": status["tx_packets"], "rx": status["rx_packets"],
                            "dut_drops": drops, "rss_kib": proc_status_kib(pid)})
            s = samples[-1]
            if len(samples) % 10 == 0:
                print(f"t={s['t']:6.0f}s tx {s['tx']:>13,} rx {s['rx']:>13,} "
                      f"in flight or dropped {s['tx'] - s['rx']:>9,} (DUT drops {drops:,}) "
                      f"engine RSS {s['rss_kib'] / 1024:,.1f} MiB", flush=True)

        run = engine.run([stream], [rx], duration_s=seconds, drain_s=1.0, progress=every_second)
        dut_after = dut.counters()
        gen_drops = {n: iface_counter(i, n) - gen_before[n]
                     for i, n in ((gen_tx, "tx_dropped"), (gen_rx, "rx_dropped"))}
        s = run.streams[0]
        dut_drops = {f"{i}.{k}": dut_after[i][k] - dut_before[i][k]
                     for i in dut_after for k in ("rx_dropped", "tx_dropped")}
        rx_port = run.ports.get(rx.device, {})
        own_rx = sum(int(rx_port.get(k, 0)) for k in ("imissed", "rx_nombuf", "ierrors"))
        accounted = sum(dut_drops.values()) + gen_drops["tx_dropped"] + \
            gen_drops["rx_dropped"] + own_rx
        unaccounted = s.tx_packets - s.rx_unique - accounted
        steady = [x["rss_kib"] for x in samples if x["t"] >= WARMUP_S]
        stream.free()
        tx.close()
        rx.close()
    print(f"sent {s.tx_packets:,} in {seconds:g} s ({s.tx_pps:,.0f} pps at {args.size} B), "
          f"received {s.rx_unique:,}, lost {s.lost:,}; duplicates {s.duplicates}, "
          f"reordered {s.reordered}; TX ended by {s.tx_end_reason} at {s.tx_end_ns / 1e9:.3f} s")
    print(f"drops counted: DUT {dut_drops}, generator p0 tx_dropped {gen_drops['tx_dropped']:,}, "
          f"p1 rx_dropped {gen_drops['rx_dropped']:,}, DPDK imissed/nombuf/ierrors {own_rx:,}")
    if steady:
        print(f"engine RSS: {steady[0] / 1024:,.1f} MiB at {WARMUP_S:g} s, "
              f"{steady[-1] / 1024:,.1f} MiB at the end, largest {max(steady) / 1024:,.1f} MiB "
              f"({(steady[-1] - steady[0]) / 1024:+,.1f} MiB)")
    print(f"soak_unaccounted_frames: {unaccounted}")


if __name__ == "__main__":
    main()
