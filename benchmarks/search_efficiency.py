"""Throughput searches against a DUT of known capacity: netns-shaped.

For each shaper rate and frame size, the shaper's capacity in pps is known
from what it counts (`shaper_capacity_pps`: the frame without FCS). We run:
- RFC 2544 §26.1 binary search, resolution 0.5 % of the capacity;
- MLRsearch (RFC 9971) for the zero-loss NDR at the same relative width,
  0.1 s initial trials and one final trial as long as binary's trials.
and print, per case, what each found, its error against the capacity, the
total trial time it spent, and the wall time beyond its trials (procedure
overhead: start, drain, counter reads). Run as root:

    python3 benchmarks/search_efficiency.py [--trial 5] [--rates 20e6,50e6] [--sizes 64,512]

Last line: `capacity_error_pct: <worst |found - capacity| / capacity, %>
mlr_time_ratio: <MLRsearch total trial time / binary search's>`.
"""

from __future__ import annotations

import argparse
import time

from _common import shaped_measurer

from pytest_netload.engine.client import Engine
from pytest_netload.rfc2544 import binary_search
from pytest_netload.rfc2544.mlr import LossGoal, mlr_search
from pytest_netload.search import TrialSettings

DRAIN_S = 0.1
HEADROOM = 1.5        # searches start from 1.5x the capacity
WIDTH = 0.005         # final relative width of both searches
QUEUE_S = 0.010       # the shaper's queue, as time at its rate


def one_case(engine: Engine, rate_bps: int, size: int, trial_s: float, initial_s: float,
             preceding: int) -> dict[str, float]:
    with shaped_measurer(engine, rate_bps, size, QUEUE_S, DRAIN_S) as (measurer, capacity):
        max_pps = capacity * HEADROOM
        t0 = time.monotonic()
        binary = binary_search(measurer, max_pps,
                               settings=TrialSettings(duration_s=trial_s, frame_size=size,
                                                      mean_frame_size=size),
                               resolution_pps=capacity * WIDTH, max_trials=40)
        binary_wall = time.monotonic() - t0
        binary_time = sum(t.duration_s for t in binary.trials)

        goal = LossGoal("NDR", 0.0, 0.0, relative_width=WIDTH,
                        initial_trial_duration_s=initial_s,
                        final_trial_duration_s=trial_s, duration_sum_s=trial_s,
                        preceding_targets=preceding)
        t0 = time.monotonic()
        mlr = mlr_search(measurer, settings=TrialSettings(frame_size=size, mean_frame_size=size),
                         min_pps=capacity / 100, max_pps=max_pps, goals=(goal,))
        mlr_wall = time.monotonic() - t0
        mlr_time = mlr.total_trial_time_s
    found_mlr = mlr.ndr.lower_bound_pps or 0.0
    out = {
        "rate_bps": rate_bps, "size": size, "capacity": capacity,
        "binary": binary.throughput_pps, "binary_trials": len(binary.trials),
        "binary_time": binary_time,
        "binary_overhead": (binary_wall - binary_time) / binary_time,
        "binary_err": abs(binary.throughput_pps - capacity) / capacity,
        "mlr": found_mlr, "mlr_trials": len(mlr.trials), "mlr_time": mlr_time,
        "mlr_overhead": (mlr_wall - mlr_time) / mlr_time,
        "mlr_err": abs(found_mlr - capacity) / capacity,
    }
    print(f"{rate_bps / 1e6:>5.0f} Mbit/s {size:>5}B capacity {capacity:>9,.0f} pps | "
          f"binary {binary.throughput_pps:>9,.0f} ({binary.throughput_pps / capacity - 1:+.2%}) "
          f"{len(binary.trials):>2} trials {binary_time:5.1f}s (+{out['binary_overhead']:.1%} wall) | "
          f"mlr {found_mlr:>9,.0f} ({found_mlr / capacity - 1:+.2%}) {len(mlr.trials):>2} trials "
          f"{mlr_time:5.1f}s (+{out['mlr_overhead']:.1%} wall)", flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trial", type=float, default=5.0, help="final trial duration, s")
    parser.add_argument("--rates", default="20e6,50e6", help="shaper rates, bit/s")
    parser.add_argument("--sizes", default="64,512", help="frame sizes with FCS")
    parser.add_argument("--initial", type=float, default=0.1,
                        help="MLRsearch initial trial duration, s")
    parser.add_argument("--preceding", type=int, default=2,
                        help="MLRsearch preceding targets (phases before the final one)")
    args = parser.parse_args()
    rates = [int(float(r)) for r in args.rates.split(",")]
    sizes = [int(s) for s in args.sizes.split(",")]
    cases = []
    with Engine() as engine:
        for rate in rates:
            for size in sizes:
                cases.append(one_case(engine, rate, size, args.trial, args.initial,
                                      args.preceding))
    worst = max(max(c["binary_err"], c["mlr_err"]) for c in cases)
    ratio = sum(c["mlr_time"] for c in cases) / sum(c["binary_time"] for c in cases)
    overhead = max(c["binary_overhead"] for c in cases)
    print(f"binary search wall overhead beyond its trials: at most {overhead:.1%}")
    print(f"capacity_error_pct: {100 * worst:.2f} mlr_time_ratio: {ratio:.2f}")


if __name__ == "__main__":
    main()
