"""Throughput against a DUT whose answer is known: netns-shaped with a deep queue.

A TBF shaper of `rate` with a queue of `--queue-ms` (default 60 ms, at least 50) at
its rate: its capacity in pps is known from what it counts (`shaper_capacity_pps`,
the frame without FCS). A deep queue is the hard case for RFC 2544: in a 2 s trial
it absorbs an overload of up to queue / trial (3 % here) without losing a frame,
so a search that looks only at loss passes loads above the capacity. Per case we
run, with 2 s trials and with the RFC's 60 s trials:

- RFC 2544 §26.1 binary search (relative resolution 0.5 % of the lower bound),
  steady_state="fail": a trial whose backlog at the end of traffic is more than
  0.5 % of its frames fails, as its loss would with a longer trial;
- MLRsearch (RFC 9971) for the zero-loss NDR, relative width 0.5 %, 1 s initial
  trials and a final trial as long as binary's, steady_state="fail" too;
- the forwarding rate of the non-steady trials (frames received by the end of
  traffic / duration): a direct capacity estimate from overloaded trials.

and prints each one's error against the capacity and the trial time it spent.
Run as root (the 60 s cases take about 12 minutes each):

    python3 benchmarks/truth_shaper.py [--trials 2,60] [--rates 20e6,50e6] [--sizes 64,512]

Last line: `capacity_error_pct: <worst |found - capacity| / capacity over binary and
MLRsearch, %> mlr_time_ratio: <MLRsearch total trial time / binary search's>`.
"""

from __future__ import annotations

import argparse
import statistics
import time

from _common import shaped_measurer

from pytest_netload.bench.runner import EngineMeasurer
from pytest_netload.engine.client import Engine
from pytest_netload.rfc2544 import binary_search
from pytest_netload.rfc2544.mlr import LossGoal, mlr_search
from pytest_netload.search import TrialSettings

DRAIN_S = 0.5         # longer than the queue: its backlog arrives within the drain
HEADROOM = 1.5        # searches start from 1.5x the capacity
WIDTH = 0.005         # final relative width of both searches
TARGET = 0.01         # within +-1 % of the capacity


def search_case(measurer: EngineMeasurer, capacity: float, size: int,
                trial_s: float) -> dict[str, float]:
    """Binary search and MLRsearch at one trial duration; errors against `capacity`."""
    max_pps = capacity * HEADROOM
    t0 = time.monotonic()
    binary = binary_search(measurer, max_pps,
                           settings=TrialSettings(duration_s=trial_s, frame_size=size,
                                                  mean_frame_size=size),
                           resolution_ratio=WIDTH, max_trials=30)
    binary_wall = time.monotonic() - t0
    goal = LossGoal("NDR", 0.0, 0.0, relative_width=WIDTH,
                    initial_trial_duration_s=min(1.0, trial_s),
                    final_trial_duration_s=trial_s, duration_sum_s=trial_s,
                    preceding_targets=2)
    mlr = mlr_search(measurer, settings=TrialSettings(frame_size=size, mean_frame_size=size),
                     min_pps=capacity / 100, max_pps=max_pps, goals=(goal,))
    found_mlr = mlr.ndr.lower_bound_pps or 0.0
    trials = [t for t in (*binary.trials, *mlr.trials) if t.valid]
    overloaded = [t.forwarding_pps for t in trials
                  if t.steady is False and t.forwarding_pps and t.offered_pps > capacity]
    forwarding = statistics.median(overloaded) if overloaded else float("nan")
    return {
        "trial_s": trial_s,
        "binary": binary.throughput_pps, "binary_err": binary.throughput_pps / capacity - 1,
        "binary_trials": len(binary.trials),
        "binary_time": sum(t.duration_s for t in binary.trials), "binary_wall": binary_wall,
        "mlr": found_mlr, "mlr_err": found_mlr / capacity - 1, "mlr_trials": len(mlr.trials),
        "mlr_time": mlr.total_trial_time_s,
        "not_steady": sum(t.steady is False for t in trials),
        "forwarding": forwarding, "forwarding_err": forwarding / capacity - 1,
    }


def one_rate(engine: Engine, rate_bps: int, size: int, queue_s: float,
             trials: list[float]) -> list[dict[str, float]]:
    out = []
    with shaped_measurer(engine, rate_bps, size, queue_s, DRAIN_S,
                         steady_state="fail") as (measurer, capacity):
        for trial_s in trials:
            case = {"rate_bps": rate_bps, "size": size, "capacity": capacity,
                    **search_case(measurer, capacity, size, trial_s)}
            print(f"{rate_bps / 1e6:>4.0f} Mbit/s {size:>4}B {trial_s:>3g}s trials "
                  f"capacity {capacity:>8,.0f} pps | binary {case['binary']:>8,.0f} "
                  f"({case['binary_err']:+.2%}, {case['binary_trials']:>2} trials, "
                  f"{case['binary_time']:5.0f}s) | mlr {case['mlr']:>8,.0f} "
                  f"({case['mlr_err']:+.2%}, {case['mlr_trials']:>2} trials, "
                  f"{case['mlr_time']:5.0f}s) | forwarding rate {case['forwarding']:>8,.0f} "
                  f"({case['forwarding_err']:+.2%}) of {case['not_steady']} non-steady",
                  flush=True)
            out.append(case)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", default="2,60", help="trial durations, s")
    parser.add_argument("--rates", default="20e6,50e6", help="shaper rates, bit/s")
    parser.add_argument("--sizes", default="64,512", help="frame sizes with FCS")
    parser.add_argument("--queue-ms", type=float, default=60.0,
                        help="the shaper's queue as time at its rate (at least 50)")
    args = parser.parse_args()
    if args.queue_ms < 50:
        parser.error(f"--queue-ms {args.queue_ms:g}: the truth check needs a deep queue, >= 50")
    trials = [float(t) for t in args.trials.split(",")]
    rates = [int(float(r)) for r in args.rates.split(",")]
    sizes = [int(s) for s in args.sizes.split(",")]
    cases = []
    with Engine() as engine:
        for rate, size in zip(rates, sizes, strict=False) if len(rates) == len(sizes) \
                else ((r, s) for r in rates for s in sizes):
            cases += one_rate(engine, rate, size, args.queue_ms / 1e3, trials)
    worst = max(max(abs(c["binary_err"]), abs(c["mlr_err"])) for c in cases)
    ratio = sum(c["mlr_time"] for c in cases) / sum(c["binary_time"] for c in cases)
    within = all(max(abs(c["binary_err"]), abs(c["mlr_err"])) <= TARGET for c in cases)
    print(f"every case within +-{TARGET:.0%} of the shaper's capacity: {within}")
    print(f"capacity_error_pct: {100 * worst:.2f} mlr_time_ratio: {ratio:.2f}")


if __name__ == "__main__":
    main()
