"""TX and RX Mpps with 1 and 2 workers.

Two workers on a 2-CPU machine: `Engine(main_cpu=c)` puts a worker on every CPU
this process may use and the main lcore (which sleeps between polls) beside the
first one; the 1-worker engine is the default plan (main lcore on the lowest CPU,
one worker on the other). Each round starts one engine of each kind in turn (two
at once would share the CPUs they measure), and the order flips every round.

Rows, 64-byte signed UDP frames (two modified fields, as tx_vs_testpmd.py):
- TX to net_null, 2 TX queues, one stream spread over both (`Engine.load` on a
  port with 2 TX queues sends a copy on each, `Tx.per_queue`): one worker sends on
  both, or each worker on one. The same stream paced at 4 Mpps: the load's error
  against the rate asked for (the target: within ±0.1 %, as on one queue).
- In-order RX on net_ring ports that loop TX back to RX (signed frames with
  increasing sequence numbers, every one stamped and tracked), 1 queue: one
  worker does TX and RX, or TX runs on one worker and RX on the other ("RX
  alone": the RX worker only receives; its rate is bounded by the TX worker's,
  which shares its CPU with the main lcore).
- The same on 2 queue pairs, one stream per queue: each worker sends and
  receives its own queue.
Every RX run must be exact (sent = received, no loss, duplicate or reordering).
Figures are the best of 3 runs per engine, the median over rounds, each with the
share of the run its most disturbed worker spent runnable but off its CPU (on this
shared 2-vCPU VM, two busy-polling workers leave other processes no CPU of their own,
so they take one from a worker: read the 2-worker figures with that column). testpmd has
no in-order signed source to read (rx_vs_testpmd.py compares RX on a pcap
replay); the RX-alone figure is ours only.
The last line: `worker_scaling: <TX 2-worker / 1-worker ratio>` and the same
ratio for the RX-alone row.
Usage: python benchmarks/worker_scaling.py [seconds per run] [rounds]
"""

from __future__ import annotations

import os
import statistics
import sys
from collections.abc import Callable

from _common import print_table, udp_stream

from pytest_netload.engine.client import Engine, Tx
from pytest_netload.traffic.patterns import CBR
from pytest_netload.units import Rate

ROWS = ("tx_null_2q", "rx_ring_1q", "rx_ring_2q")
PACED_PPS = 4_000_000


def engine_for(workers: int) -> Engine:
    cpus = sorted(os.sched_getaffinity(0))
    if workers == 1:
        return Engine(lcores=cpus[:2])  # main on the first CPU, one worker on the second
    return Engine(lcores=cpus[:workers], main_cpu=cpus[0])  # main beside worker 0


def exact(run: object) -> None:
    """Every frame received once, in order; else SystemExit."""
    for s in run.streams:  # type: ignore[attr-defined]
        if (s.lost, s.duplicates, s.reordered) != (0, 0, 0) or s.rx_packets != s.tx_packets:
            raise SystemExit(f"in-order run not exact: {s.name}: sent {s.tx_packets}, received "
                             f"{s.rx_packets}, lost {s.lost}, duplicates {s.duplicates}, "
                             f"reordered {s.reordered}")


def off_cpu_ratio(run: object, seconds: float) -> float:
    """The largest share of the run a worker was runnable but off its CPU (another
    process, or the main lcore's thread, had it): what this shared VM took."""
    tx = [s.tx_off_cpu_ns for s in run.streams]  # type: ignore[attr-defined]
    rx = [int(n) for n in run.rx_queues["off_cpu_ns"]]  # type: ignore[attr-defined]
    return max(tx + rx) / 1e9 / seconds


def best(runs: int, measure_one: Callable[[], tuple[float, float]]) -> tuple[float, float]:
    """The fastest of `runs` (Mpps, off-CPU share) measurements, by Mpps."""
    return max((measure_one() for _ in range(runs)), key=lambda m: m[0])


def measure(workers: int, seconds: float) -> dict[str, tuple[float, float]]:
    """(Mpps, off-CPU share) of each row with an engine of `workers` workers."""
    out: dict[str, tuple[float, float]] = {}
    with engine_for(workers) as engine:
        got = engine.hello["workers"]
        if got != workers:
            raise SystemExit(f"asked for {workers} workers, the engine has {got}")
        null = engine.port("net_null0", tx_queues=2)
        spread = engine.load(null, udp_stream(64, fields=2, name="spread"))  # over 2 queues
        entries = [Tx(spread, 0)]
        engine.run(entries, duration_s=0.3)  # warm-up: caches and pools
        paced = engine.run([Tx(spread, 0, tuple(CBR().phases(
            lambda _r: PACED_PPS, Rate(PACED_PPS, "pps"), seed=1)))], duration_s=seconds)
        out["paced_error"] = (paced.streams[0].tx_packets / (PACED_PPS * seconds) - 1, 0.0)

        def tx() -> tuple[float, float]:
            run = engine.run(entries, duration_s=seconds)
            return (sum(s.tx_packets for s in run.streams) / seconds / 1e6,
                    off_cpu_ratio(run, seconds))

        out["tx_null_2q"] = best(3, tx)

        def loop(queues: int) -> Callable[[], tuple[float, float]]:
            ring = engine.port(f"net_ring_scale{queues}", rx_queues=queues, tx_queues=queues)
            loaded = [engine.load(ring, udp_stream(64, fields=2, name=f"r{q}"), queues=1)
                      for q in range(queues)]
            tx_entries = [Tx(s, 0, queue=q) for q, s in enumerate(loaded)]

            def rx() -> tuple[float, float]:
                run = engine.run(tx_entries, [ring], duration_s=seconds, drain_s=0.05)
                exact(run)
                return (sum(s.rx_packets for s in run.streams) / seconds / 1e6,
                        off_cpu_ratio(run, seconds))

            return rx

        out["rx_ring_1q"] = best(3, loop(1))
        out["rx_ring_2q"] = best(3, loop(2))
    return out


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    if len(os.sched_getaffinity(0)) < 2:
        raise SystemExit("worker_scaling needs 2 CPUs")
    both: dict[int, list[dict[str, tuple[float, float]]]] = {1: [], 2: []}
    for r in range(rounds):
        for workers in ((1, 2) if r % 2 == 0 else (2, 1)):
            both[workers].append(measure(workers, seconds))
    runs = {w: [{row: m[row][0] for row in ROWS} for m in both[w]] for w in both}
    off = {w: {row: statistics.median(m[row][1] for m in both[w]) for row in ROWS}
           for w in both}
    med = {w: {row: statistics.median(m[row] for m in runs[w]) for row in ROWS} for w in runs}
    labels = {"tx_null_2q": "TX to net_null, 1 stream over 2 queues",
              "rx_ring_1q": "in-order RX, net_ring loop, 1 queue (2 workers: RX alone)",
              "rx_ring_2q": "in-order RX, net_ring loop, 2 queues, 1 stream each"}
    print(f"CPUs {sorted(os.sched_getaffinity(0))}; {rounds} rounds of best-of-3 "
          f"{seconds:g} s runs; Mpps, median over rounds")
    print_table([(labels[row], f"{med[1][row]:.2f}", f"{med[2][row]:.2f}",
                  f"{med[2][row] / med[1][row]:.2f}",
                  f"{off[1][row]:.0%} / {off[2][row]:.0%}") for row in ROWS],
                ("64 B, signed", "1 worker", "2 workers", "2/1", "off-CPU 1w / 2w"))
    print("off-CPU: the largest share of a run one of its workers was runnable but not "
          "running (median over rounds); with every CPU busy-polled, other processes of "
          "this VM (and the main lcore's thread, beside worker 0) take it from them")
    for row in ROWS:
        print(f"per round {row}:", "  ".join(f"{a[row]:.2f}/{b[row]:.2f}"
                                            for a, b in zip(runs[1], runs[2])))
    for w in (1, 2):
        errors = [m["paced_error"][0] for m in both[w]]
        print(f"paced {PACED_PPS / 1e6:g} Mpps over 2 queues, {w} worker(s): offered load off "
              "by " + ", ".join(f"{e:+.4%}" for e in errors))
    print(f"worker_scaling: {med[2]['tx_null_2q'] / med[1]['tx_null_2q']:.3f} "
          f"rx_alone_2w_vs_1w: {med[2]['rx_ring_1q'] / med[1]['rx_ring_1q']:.3f}")


if __name__ == "__main__":
    main()
