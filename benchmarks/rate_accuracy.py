"""How exactly does the engine offer the load it claims? CBR, Poisson, on two paths.

Paths: `net_ring` (in-process loopback: no kernel between TX and RX) and,
for reference, AF_XDP on a veth pair (the `loopback` topology).
- CBR sweep from 1 kpps to 90 % of the path's maximum (measured first), 2 s
  each: the achieved mean TX rate (packets over the span from first to last
  burst) against the target.
- CBR at 100 kpps: the distribution of |inter-departure - 10 us|, from the
  TX timestamps in 100k frames' trailers, with the share within +/-64 ns
  (MoonGen's 82580 histogram bin) and within +/-1 us.
- Poisson at 50 kpps: a KS test of 100k RX inter-arrival times (each frame's
  own RX TSC) against the exponential with the nominal mean, alpha = 0.01,
  and the mean rate error.
The last line is the worst CBR mean-rate error over the net_ring sweep.
Usage: python benchmarks/rate_accuracy.py
"""

from __future__ import annotations

import numpy as np
from _common import print_table, udp_stream
from scipy import stats

from pytest_netload import Engine, RateController
from pytest_netload.topology.builtin import build

SWEEP_S = 2.0


def path_max_pps(rc: RateController) -> float:
    """The path's maximum: the median of three 1 s runs at maximum rate."""
    return float(np.median([
        rc.run(udp_stream(64, fields=0), pattern="max", duration="1s").run.streams[0].tx_pps
        for _ in range(3)
    ]))


def cbr_sweep(rc: RateController, label: str) -> tuple[list[tuple[str, ...]], float]:
    top = path_max_pps(rc)
    targets = [1e3, 1e4, 1e5, 3e5, 1e6, 3e6, 0.5 * top, 0.9 * top]
    rows, worst = [], 0.0
    for pps in sorted(t for t in set(targets) if t <= 0.9 * top):
        r = rc.run(udp_stream(64, fields=0), f"{pps:.0f}pps", duration=SWEEP_S)
        s = r.streams[0]
        err = 100 * (s.achieved_tx_pps / s.offered_pps - 1)
        worst = max(worst, abs(err))
        rows.append((label, "CBR", f"{s.offered_pps:,.0f}", f"{s.achieved_tx_pps:,.1f}",
                     f"{err:+.4f}", f"{s.result.rx_packets}/{s.result.tx_packets}",
                     f"{s.result.tx_max_lag_ns / 1e3:.1f}"))
    return rows, worst


def cbr_jitter(rc: RateController, label: str) -> tuple[str, ...]:
    r = rc.run(udp_stream(64, fields=0), "100kpps", duration="1.1s", timing_samples=100_000)
    dev = np.abs(r.streams[0].result.inter_departure_ns - 10_000)
    p = np.percentile(dev, [50, 90, 99, 99.9])
    return (label, f"{p[0]:.0f}", f"{p[1]:.0f}", f"{p[2]:.0f}", f"{p[3]:.0f}",
            f"{np.mean(dev <= 64):.1%}", f"{np.mean(dev <= 1000):.2%}")


def poisson(rc: RateController, label: str) -> tuple[str, ...]:
    r = rc.run(udp_stream(64, fields=0), "50kpps", pattern="poisson", duration="2.1s",
               timing_samples=100_000)
    s = r.streams[0]
    gaps = s.result.inter_arrival_ns.astype(float)
    ks = stats.kstest(gaps, "expon", args=(0, 20_000.0))
    err = 100 * (s.achieved_tx_pps / s.offered_pps - 1)
    verdict = "not rejected" if ks.pvalue >= 0.01 else "REJECTED"
    return (label, f"{len(gaps)}", f"{ks.statistic:.4f}", f"{ks.pvalue:.3f}", verdict,
            f"{err:+.3f}")


def main() -> None:
    sweep_rows, jitter_rows, poisson_rows = [], [], []
    with Engine() as engine:
        ring = engine.port("net_ring0")
        rc = RateController(engine, ring, rx=[ring])
        rows, worst_ring = cbr_sweep(rc, "net_ring")
        sweep_rows += rows
        jitter_rows.append(cbr_jitter(rc, "net_ring"))
        poisson_rows.append(poisson(rc, "net_ring"))
        with build("loopback", backend="af_xdp") as built:
            tx = engine.port(str(built.topology.port("p0").device))
            rx = engine.port(str(built.topology.port("p1").device))
            rc = RateController(engine, tx, rx=[rx])
            rows, _ = cbr_sweep(rc, "af_xdp veth")
            sweep_rows += rows
            jitter_rows.append(cbr_jitter(rc, "af_xdp veth"))
            poisson_rows.append(poisson(rc, "af_xdp veth"))
            tx.close()
            rx.close()
    print(f"CBR mean rate over {SWEEP_S:.0f} s (64 B frames; rates in packets/s)")
    print_table(sweep_rows, ("path", "pattern", "target pps", "achieved pps", "error %",
                             "rx/tx", "max lag us"))
    print("\nCBR 100 kpps: |inter-departure - 10 us| over 100k frames, ns")
    print_table(jitter_rows, ("path", "p50", "p90", "p99", "p99.9", "within 64 ns",
                              "within 1 us"))
    print("\nPoisson 50 kpps: KS test of RX inter-arrival times against Exp(mean 20 us)")
    print_table(poisson_rows, ("path", "samples", "KS D", "p-value", "alpha 0.01",
                               "mean rate error %"))
    print(f"cbr_rate_error_pct: {worst_ring:.4f}")


if __name__ == "__main__":
    main()
