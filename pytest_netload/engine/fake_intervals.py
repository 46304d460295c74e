"""The fake engine's interval snapshots (a run with ``interval_ns``, see intervals.py).

The fake works a run out whole (fake_model.py); its intervals split that outcome by
time: a stream's frames leave evenly over its TX span and arrive evenly between its
first and last arrival, so each interval's cumulative counts are the frames before its
end, and the latency histogram and the other RX counters are split in the same share.
The last interval ends with the run: the totals, drain included.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .intervals import FIELDS, pack

__all__ = ["count_of", "snapshots"]

#: How the sender kept its schedule (IntervalTx): all 0 here.
_SENDER = ("tx_max_lag_ns", "tx_lagged_bursts", "tx_refused_bursts", "tx_off_cpu_ns",
           "tx_wait_cpu_ns", "tx_preemptions", "tx_sleeps")


def _before(first: float, last: float, n: int, t: float) -> int:
    """How many of n events spread evenly over [first, last] come before t."""
    if n == 0 or t <= first:
        return 0
    if n == 1 or last <= first or t > last:
        return n
    return min(n, int((t - first) / ((last - first) / (n - 1))) + 1)


def _between(first: float, last: float, n: int, lo: float, hi: float) -> tuple[int, int]:
    """The first and last of those events in [lo, hi), in ns (0, 0: none)."""
    a, b = _before(first, last, n, lo), _before(first, last, n, hi)
    if b <= a:
        return 0, 0
    step = (last - first) / (n - 1) if n > 1 else 0.0
    return max(1, round(first + a * step)), max(1, round(first + (b - 1) * step))


def count_of(duration_ns: int, interval_ns: int) -> int:
    """The intervals of a run."""
    return max(1, round(duration_ns / interval_ns))


def snapshots(arrays: dict[str, np.ndarray], duration_ns: int, interval_ns: int,
              start: int = 0, stop: int | None = None) -> list[dict[str, Any]]:
    """The cumulative snapshots of intervals start..stop (default: to the last) of a
    worked-out run, in order."""
    tx, rx, hist = arrays["tx"], arrays["rx"], arrays["rx_latency_hist"]
    n_tx = len(tx)
    count = count_of(duration_ns, interval_ns)
    out = []
    for k in range(start, count if stop is None else min(stop, count)):
        end = (k + 1) * interval_ns if k < count - 1 else float("inf")
        stats = np.zeros((n_tx, len(FIELDS)), dtype=np.uint64)
        h = np.zeros_like(hist, dtype=np.uint64)
        for i in range(n_tx):
            sent = int(tx["packets"][i])
            got = int(rx["packets"][i])
            first, last = float(rx["first_ns"][i]), float(rx["last_ns"][i])
            cum_tx = _before(0.0, float(tx["last_ns"][i]), sent, end)
            cum_rx = _before(first, last, got, end)
            share = cum_rx / got if got else 0.0
            lo, hi = _between(first, last, got, k * interval_ns, end)
            row = {"tx_packets": cum_tx, "rx_packets": cum_rx,
                   "rx_bytes": int(int(rx["bytes"][i]) * share),
                   "duplicates": int(int(rx["duplicates"][i]) * share),
                   "reordered": int(int(rx["reordered"][i]) * share),
                   "latency_sum_ns": int(int(rx["latency_sum_ns"][i]) * share),
                   "latency_samples": int(int(rx["latency_samples"][i]) * share),
                   "hist_unrecorded": 0, "first_rx_ns": lo, "last_rx_ns": hi,
                   # the fake's generator is ideal (fake.py): never late, never off its CPU
                   **dict.fromkeys(_SENDER, 0)}
            stats[i] = [row[name] for name in FIELDS]
            h[i] = np.floor(hist[i].astype(np.float64) * share).astype(np.uint64)
        out.append(pack(k, [False] * n_tx, stats, h,
                        None if k else arrays["rx_latency_lower_ns"]))
    return out
