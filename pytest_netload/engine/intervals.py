"""A run counted in intervals (``RunSpec.interval_s``): what travels and what a caller gets.

The native core snapshots every stream's cumulative counters and latency histogram at
each interval's end while traffic flows (native/src/interval.c); a frame is in the
interval its RX poll falls in, a TX packet in the one it was sent in. Each poll's
`RunStatus` carries the snapshots taken since the last poll (`pack`), the last one when
the run is done (its end state, drain included). `Intervals` turns the cumulative
snapshots into per-interval differences, one `Interval` each, summing a stream's TX
queue parts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .wire import pack_array, unpack_array

__all__ = ["FIELDS", "Interval", "IntervalTx", "Intervals", "pack"]

#: `struct netload_interval_stats`, field for field: the columns of ``stats``.
FIELDS = ("tx_packets", "rx_packets", "rx_bytes", "duplicates", "reordered",
          "latency_sum_ns", "latency_samples", "hist_unrecorded", "first_rx_ns",
          "last_rx_ns", "tx_max_lag_ns", "tx_lagged_bursts", "tx_refused_bursts",
          "tx_off_cpu_ns", "tx_wait_cpu_ns", "tx_preemptions", "tx_sleeps")
_COL = {name: i for i, name in enumerate(FIELDS)}
#: Columns that are the interval's own, not cumulative: never differenced.
_OWN = ("first_rx_ns", "last_rx_ns", "tx_max_lag_ns")
#: The sender's worker: a stream on several TX queues takes the worst of its workers'
#: (as `measure.results` merges a run's), not their sum.
_WORST = ("tx_max_lag_ns", "tx_off_cpu_ns", "tx_wait_cpu_ns", "tx_preemptions", "tx_sleeps")


def pack(index: int, lost: Sequence[bool], stats: np.ndarray, hist: np.ndarray,
         lower_ns: np.ndarray | None = None) -> dict[str, Any]:
    """One snapshot as it travels: interval `index`, per native entry whether it was
    lost (the host read the ring too late), ``stats`` (entries x FIELDS, cumulative;
    first/last_rx_ns of the interval itself) and the latency histograms (entries x
    buckets, cumulative); the first one also the buckets' lower bounds (ns)."""
    out = {"index": int(index), "lost": [bool(x) for x in lost],
           "stats": pack_array(np.asarray(stats, dtype=np.uint64)),
           "hist": pack_array(np.asarray(hist, dtype=np.uint64))}
    if lower_ns is not None:
        out["lower_ns"] = pack_array(np.asarray(lower_ns, dtype=np.uint64))
    return out


@dataclass(frozen=True)
class IntervalTx:
    """How a stream's sender kept its schedule in one interval, with the attribute
    names of `StreamResult`'s TX counters (so `measure.causes.lag_cause` reads it): its
    worst lag behind the schedule, its bursts more than 1 us late, the TX calls its port
    took part of, and its worker's time off its CPU, of that waiting runnable while
    another task ran there, its preemptions and its sleeps."""

    tx_max_lag_ns: int = 0
    tx_lagged_bursts: int = 0
    tx_refused_bursts: int = 0
    tx_off_cpu_ns: int = 0
    tx_wait_cpu_ns: int = 0
    tx_preemptions: int = 0
    tx_sleeps: int = 0

    def after(self, before: IntervalTx) -> IntervalTx:
        """This interval's lag with its worker's CPU over `before` (the interval before it)
        and this one: a stall that crossed the end between them has its time off the CPU
        before the end and its late frames, the lag, after it."""
        return IntervalTx(self.tx_max_lag_ns, self.tx_lagged_bursts, self.tx_refused_bursts,
                          before.tx_off_cpu_ns + self.tx_off_cpu_ns,
                          before.tx_wait_cpu_ns + self.tx_wait_cpu_ns,
                          before.tx_preemptions + self.tx_preemptions,
                          before.tx_sleeps + self.tx_sleeps)


@dataclass(frozen=True)
class Interval:
    """One interval of a run, per stream (the run's TX entries in order): what was sent
    and received in it, and the latency histogram of its frames. ``valid[i]`` is False
    when a snapshot at either end of it was lost (the counts then span more)."""

    index: int
    tx_packets: np.ndarray
    rx_packets: np.ndarray
    rx_bytes: np.ndarray
    duplicates: np.ndarray
    reordered: np.ndarray
    latency_samples: np.ndarray
    latency_sum_ns: np.ndarray
    hist_unrecorded: np.ndarray
    first_rx_ns: np.ndarray
    """First arrival in it, ns after the run's start deadline; 0: none."""
    last_rx_ns: np.ndarray
    valid: tuple[bool, ...]
    latency_hist: np.ndarray = field(repr=False)
    latency_lower_ns: np.ndarray = field(repr=False)
    """The histogram buckets' lower bounds, ns (the run's latency layout)."""
    tx: tuple[IntervalTx, ...] = ()
    """Per stream, how its sender kept its schedule in this interval."""

    @property
    def rx_unique(self) -> np.ndarray:
        return self.rx_packets - np.minimum(self.duplicates, self.rx_packets)


class Intervals:
    """Decodes the snapshots of one run, in order, into `Interval` differences.
    ``parts[i]``: the native entries (TX queues) of stream i, consecutive."""

    def __init__(self, parts: Sequence[int]) -> None:
        self.parts = list(parts)
        self.prev_stats: np.ndarray | None = None
        self.prev_hist: np.ndarray | None = None
        self.prev_lost: np.ndarray | None = None
        self.next_index = 0
        self.lower_ns: np.ndarray | None = None

    def _merge(self, a: np.ndarray) -> np.ndarray:
        if len(self.parts) == a.shape[0]:
            return a
        bounds = np.cumsum([0, *self.parts])
        return np.stack([a[lo:hi].sum(axis=0) for lo, hi in zip(bounds[:-1], bounds[1:])])

    def add(self, payload: Mapping[str, Any]) -> Interval:
        index = int(payload["index"])
        if index != self.next_index:
            raise ValueError(f"interval {index} came after {self.next_index - 1}: the "
                             "snapshots must be read in order")
        self.next_index += 1
        if "lower_ns" in payload:
            self.lower_ns = unpack_array(payload["lower_ns"]).astype(np.uint64)
        if self.lower_ns is None:
            raise ValueError("the first interval snapshot carries no bucket bounds")
        stats = unpack_array(payload["stats"]).astype(np.uint64)
        hist = unpack_array(payload["hist"]).astype(np.uint64)
        lost = np.asarray(payload["lost"], dtype=bool)
        prev_s = np.zeros_like(stats) if self.prev_stats is None else self.prev_stats
        prev_h = np.zeros_like(hist) if self.prev_hist is None else self.prev_hist
        prev_l = np.zeros_like(lost) if self.prev_lost is None else self.prev_lost
        bad = lost | prev_l
        d = stats.astype(np.int64) - prev_s.astype(np.int64)
        dh = hist.astype(np.int64) - prev_h.astype(np.int64)
        if not lost.all():
            keep = ~lost  # a lost snapshot's counts stay the last good ones
            self.prev_stats = np.where(keep[:, None], stats, prev_s)
            self.prev_hist = np.where(keep[:, None], hist, prev_h)
        self.prev_lost = lost
        d = np.where(bad[:, None], 0, np.maximum(d, 0)).astype(np.uint64)
        dh = np.where(bad[:, None], 0, np.maximum(dh, 0)).astype(np.uint64)
        for name in _OWN:
            d[:, _COL[name]] = np.where(bad, 0, stats[:, _COL[name]])
        first = d[:, _COL["first_rx_ns"]]
        last = d[:, _COL["last_rx_ns"]]
        m = self._merge
        col = {name: self._worst(d[:, i]) if name in _WORST else m(d[:, i])
               for name, i in _COL.items()}
        tx = tuple(IntervalTx(**{name: int(col[name][k]) for name in IntervalTx.__annotations__})
                   for k in range(len(self.parts)))
        firsts = [min((int(x) for x in first[lo:hi] if x), default=0)
                  for lo, hi in self._bounds()]
        lasts = [int(last[lo:hi].max()) if hi > lo else 0 for lo, hi in self._bounds()]
        valid = tuple(not bool(bad[lo:hi].any()) for lo, hi in self._bounds())
        return Interval(index, col["tx_packets"], col["rx_packets"], col["rx_bytes"],
                        col["duplicates"], col["reordered"], col["latency_samples"],
                        col["latency_sum_ns"], col["hist_unrecorded"],
                        np.array(firsts, dtype=np.uint64), np.array(lasts, dtype=np.uint64),
                        valid, m(dh), self.lower_ns, tx)

    def _worst(self, a: np.ndarray) -> np.ndarray:
        return np.array([int(a[lo:hi].max()) if hi > lo else 0 for lo, hi in self._bounds()],
                        dtype=np.uint64)

    def _bounds(self) -> list[tuple[int, int]]:
        bounds = np.cumsum([0, *self.parts]).tolist()
        return list(zip(bounds[:-1], bounds[1:]))
