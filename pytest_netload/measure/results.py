"""Run results: integer counts from the engine, rates derived with their layer.

Counts are ints; times are ns; rates say which bytes they count:
- "l1": on the wire: frame + FCS + preamble/SFD + inter-frame gap (+24 B a frame
  over the bytes written)
- "l2": the Ethernet frame including its 4-byte FCS
- "l2-nofcs": the bytes the generator wrote (what veth, AF_XDP and pcap carry)
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from .. import format as fmt
from ..atomic import write_atomic
from ..errors import NetloadConfigError
from ..units import LAYER_TEXT, layer_overhead_bytes
from .histogram import LogHistogram
from .latency import LatencyResult

PCAP_NS_MAGIC = 0xA1B23C4D  # pcap with nanosecond timestamps, Ethernet link type


def _rate(count: int, span_ns: int) -> float:
    """Events per second between the first and the last of `count` events.

    `count` events span `count - 1` intervals: counting all of them over the
    span would overstate a paced rate by 1/count (0.05 % for 2000 frames).
    """
    return (count - 1) * 1e9 / span_ns if span_ns > 0 and count > 1 else 0.0


def _bit_rate(pps: float, frames: int, frame_bytes: int, overhead: int) -> float:
    return pps * 8 * (frame_bytes / frames + overhead) if frames else 0.0


@dataclass(frozen=True)
class StreamResult:
    """One stream of a run: what was sent, what came back, what was lost."""

    name: str
    stream_id: int
    tx_packets: int
    tx_bytes: int
    tx_unsent: int
    tx_alloc_failures: int
    tx_first_ns: int
    tx_last_ns: int
    rx_packets: int
    rx_bytes: int
    duplicates: int
    reordered: int
    rx_first_ns: int
    rx_last_ns: int
    latency_min_ns: int
    latency_max_ns: int
    latency_sum_ns: int
    latency_samples: int = 0
    jitter_ns: int = 0
    ipdv_pairs: int = 0
    tx_max_lag_ns: int = 0
    tx_lagged_bursts: int = 0
    expected_only: bool = False
    tsc_resolution_ns: float | None = None
    clock: str = "tsc-software"   # latency timestamps: "tsc-software" or "nic-hardware"
    clock_resolution_ns: float | None = None  # one tick of that clock
    hw_stamp_missing: int = 0     # nic-hardware: stamped frames that came without an RX timestamp
    # Loss events, from the sequence numbers of one RX queue; None when the stream arrived on
    # more than one (`rx_queues` > 1): see `loss_timing_unavailable`.
    gap_events: int | None = 0    # arrivals after missing sequence numbers (loss events)
    last_gap_tx_ns: int | None = 0  # TX time of the latest frame that arrived after a gap; 0: none
    tx_end_ns: int = 0            # when the stream stopped sending, after the start deadline
    tx_end_reason: str = "none"   # why: "count", "duration", "phases", "stopped" (or "none")
    tx_off_cpu_ns: int = 0        # its worker was off its CPU this long in the run (wall - CPU)
    tx_preemptions: int = 0       # times the kernel took the worker's CPU during the run
    tx_wait_cpu_ns: int = 0       # of tx_off_cpu_ns: runnable, waiting while another task ran
    tx_sleeps: int = 0            # times the worker blocked inside a call (a PMD that waits)
    tx_refused_bursts: int = 0    # TX calls the port took only part of (its TX ring was full)
    rx_by_tx_end: int = 0         # arrivals (duplicates included) before TX ended
    hist_unrecorded: int = 0      # histogram additions the run's page arena had no room for
    rx_queues: int = 1            # RX queues it arrived on (0: none); sequence tracking is per queue
    rx_gaps: LogHistogram | None = field(default=None, compare=False, repr=False)
    latency: LogHistogram | None = field(default=None, compare=False, repr=False)
    ipdv_increase: LogHistogram | None = field(default=None, compare=False, repr=False)
    ipdv_decrease: LogHistogram | None = field(default=None, compare=False, repr=False)
    sample_tx_ns: np.ndarray | None = field(default=None, compare=False, repr=False)
    sample_rx_ns: np.ndarray | None = field(default=None, compare=False, repr=False)

    @property
    def loss_timing_unavailable(self) -> str | None:
        """Why `gap_events` and `last_gap_tx_ns` (and the gap histogram `rx_gaps`) do not
        date this stream's losses, or None when they do.

        Each RX queue tracks sequence numbers on its own. When RSS (or AF_PACKET fanout)
        spreads one stream over queues, each queue sees only some of its numbers: a gap
        on one queue is, most of the time, frames another queue received, and its
        inter-arrival times are those of its share. Counts stay exact (`lost` is sent
        minus received, whatever the queue); timing of loss events does not."""
        if self.rx_queues <= 1:
            return None
        return (f"stream {self.name!r} arrived on {self.rx_queues} RX queues (RSS or fanout "
                "spread it): sequence gaps and inter-arrival gaps are tracked per queue, "
                "where a gap is mostly frames another queue received, so loss-event timing "
                "is not available; keep the stream on one queue (an RX port with one queue, "
                "or a stream whose addresses and ports do not vary, which RSS hashes to one "
                "queue) to time losses, recovery or resets")

    @property
    def rx_unique(self) -> int:
        return self.rx_packets - self.duplicates

    @property
    def rx_after_tx_end(self) -> int:
        """Arrivals in the drain, after TX ended: frames in flight, and the DUT's backlog."""
        return max(self.rx_packets - self.rx_by_tx_end, 0)

    @property
    def lost(self) -> int:
        """Sent and never received (duplicates do not hide losses)."""
        if self.expected_only:
            raise NetloadConfigError(
                f"stream {self.name!r} was only expected in this run: its TX count is "
                "on the engine that sent it; lost = that count - rx_unique"
            )
        return self.tx_packets - self.rx_unique

    @property
    def loss_ratio(self) -> float:
        return self.lost / self.tx_packets if self.tx_packets else 0.0

    @property
    def tx_span_ns(self) -> int:
        return max(self.tx_last_ns - self.tx_first_ns, 0)

    @property
    def tx_pps(self) -> float:
        return _rate(self.tx_packets, self.tx_span_ns)

    def tx_bps(self, layer: str = "l2") -> float:
        return _bit_rate(self.tx_pps, self.tx_packets, self.tx_bytes,
                         layer_overhead_bytes(layer))

    @property
    def rx_span_ns(self) -> int:
        return max(self.rx_last_ns - self.rx_first_ns, 0)

    @property
    def rx_pps(self) -> float:
        return _rate(self.rx_packets, self.rx_span_ns)

    def rx_bps(self, layer: str = "l2") -> float:
        return _bit_rate(self.rx_pps, self.rx_packets, self.rx_bytes,
                         layer_overhead_bytes(layer))

    def latency_result(self) -> LatencyResult:
        """This stream's latency as a `LatencyResult`: histogram, percentiles with CIs,
        RFC 3550 jitter, and raw delays for RFC 5481 IPDV when timing samples were kept.

        With the "tsc-software" clock, TX reads the TSC just before its burst
        is written, RX just after the receive burst returns (per frame with
        timing samples); its resolution is one TSC tick. With "nic-hardware",
        RX is the NIC's own arrival timestamp and TX the TX port's NIC clock
        read as the burst is built; the resolution is one NIC clock tick.
        """
        if self.latency is None:
            raise NetloadConfigError(f"stream {self.name!r} has no latency histogram")
        if self.hist_unrecorded:
            raise NetloadConfigError(
                f"stream {self.name!r}: {self.hist_unrecorded} values missed its histograms "
                "(the run's histogram pages ran out), so percentiles would be biased; "
                "latency_min_ns/max/mean are still exact. Give the engine more memory "
                "(Engine(memory_mb=...), ini netload_engine_memory) or run fewer streams at once")
        delays = None
        if self.sample_tx_ns is not None and self.sample_rx_ns is not None:
            delays = (self.sample_rx_ns.astype(np.int64)
                      - self.sample_tx_ns.astype(np.int64)).astype(np.float64)
        return LatencyResult(self.latency, clock=self.clock,
                             resolution_ns=self.clock_resolution_ns or self.tsc_resolution_ns,
                             samples=self.latency_samples, duplicates=self.duplicates,
                             reordered=self.reordered, jitter_ns=float(self.jitter_ns),
                             delays_ns=delays)

    @property
    def inter_departure_ns(self) -> np.ndarray:
        """TX time gaps of the sampled frames, from their trailers (needs timing_samples)."""
        if self.sample_tx_ns is None:
            raise NetloadConfigError("no timing samples: run with timing_samples=N")
        return np.diff(self.sample_tx_ns.astype(np.int64))

    @property
    def inter_arrival_ns(self) -> np.ndarray:
        """RX time gaps of the sampled frames (needs timing_samples)."""
        if self.sample_rx_ns is None:
            raise NetloadConfigError("no timing samples: run with timing_samples=N")
        return np.diff(self.sample_rx_ns.astype(np.int64))

    @property
    def latency_mean_ns(self) -> float | None:
        return self.latency_sum_ns / self.latency_samples if self.latency_samples else None


@dataclass(frozen=True)
class RunResult:
    """A finished run: per-stream results, RX queue counts and port counters."""

    streams: tuple[StreamResult, ...]
    arrays: dict[str, np.ndarray] = field(repr=False)
    rx_queues: np.ndarray = field(repr=False)
    ports: dict[str, dict[str, int]] = field(default_factory=dict)
    interrupted: bool = False
    started_at: float = 0.0  # wall-clock time (s since the epoch) of the start deadline
    link_events: tuple[dict[str, Any], ...] = ()
    """The run's ports' link changes, in order: `{"event": "link_down" | "link_up",
    "port": "p1", "device", "t_s", "since_s"}`, the change placed after `since_s` and by
    `t_s` (seconds from the first frame's due time; sampled at each ~100 ms poll); a port
    down when the run started has `"at_start": True` (engine/link.py)."""
    frames: dict[str, Any] = field(default_factory=dict, repr=False)  # name -> FrameCheck

    def __getitem__(self, name: str) -> StreamResult:
        for s in self.streams:
            if s.name == name:
                return s
        raise KeyError(f"no stream named {name!r}; streams: {[s.name for s in self.streams]}")

    @property
    def tx_packets(self) -> int:
        return sum(s.tx_packets for s in self.streams)

    @property
    def forwarders(self) -> list[dict[str, int]]:
        """Per delay line (reference DUT): received, forwarded, dropped, overflow, max_held."""
        fw = self.arrays.get("forwarders")
        if fw is None:
            return []
        return [{name: int(fw[name][i]) for name in fw.dtype.names or ()} for i in range(len(fw))]

    @property
    def captured(self) -> list[tuple[int, int, bytes]]:
        """The frames the RX ports saw last (run with capture=N), oldest first, all
        ports merged: (ns after the start, original length, the bytes kept)."""
        if "capture_data" not in self.arrays:
            return []
        data, lens = self.arrays["capture_data"], self.arrays["capture_len"]
        ns, count = self.arrays["capture_ns"], self.arrays["capture_count"]
        frames = [(int(ns[q][k]), int(lens[q][k]),
                   bytes(data[q][k][: min(int(lens[q][k]), data.shape[2])]))
                  for q in range(len(count)) for k in range(int(count[q]))]
        return sorted(frames, key=lambda f: f[0])

    def write_pcap(self, path: str | Path) -> int:
        """Write the captured frames as a pcap file (ns timestamps); returns how many."""
        frames = self.captured
        out = [struct.pack("<IHHiIII", PCAP_NS_MAGIC, 2, 4, 0, 0, 65535, 1)]
        for rx_ns, length, data in frames:
            at = int(self.started_at * 1e9) + rx_ns
            out.append(struct.pack("<IIII", at // 10**9, at % 10**9, len(data), length))
            out.append(data)
        write_atomic(path, b"".join(out))
        return len(frames)

    @property
    def sent_streams(self) -> tuple[StreamResult, ...]:
        return tuple(s for s in self.streams if not s.expected_only)

    @property
    def rx_packets(self) -> int:
        return sum(s.rx_packets for s in self.streams)

    @property
    def lost(self) -> int:
        """Frames lost over the streams this run sent (expected-only ones excluded)."""
        return sum(s.lost for s in self.streams if not s.expected_only)

    @property
    def duplicates(self) -> int:
        return sum(s.duplicates for s in self.streams)

    @property
    def reordered(self) -> int:
        return sum(s.reordered for s in self.streams)

    @property
    def generator_drops(self) -> int:
        """Frames the generator's own ports dropped on receive (DPDK and kernel counters).

        On a path with no DUT, tx == rx + generator_drops; a trial with
        generator drops measured the generator, not the DUT.
        """
        keys = ("imissed", "ierrors", "rx_nombuf", "iface_rx_dropped", "iface_ring_drops")
        return sum(int(c.get(k, 0)) for c in self.ports.values() for k in keys)

    @property
    def foreign(self) -> int:
        return int(self.rx_queues["foreign"].sum()) if len(self.rx_queues) else 0

    @property
    def tx_span_ns(self) -> int:
        if not self.streams:
            return 0
        return max(s.tx_last_ns for s in self.streams) - min(s.tx_first_ns for s in self.streams)

    @property
    def tx_pps(self) -> float:
        return _rate(self.tx_packets, self.tx_span_ns)

    def tx_bps(self, layer: str = "l2") -> float:
        return _bit_rate(self.tx_pps, self.tx_packets, sum(s.tx_bytes for s in self.streams),
                         layer_overhead_bytes(layer))

    def summary_line(self, layer: str = "l2") -> str:
        """One line in the manner of Linux pktgen's result."""
        sent = sum(s.tx_packets for s in self.sent_streams)
        loss = self.lost / sent if sent else 0.0
        return (
            f"tx {fmt.count(self.tx_packets)} pkts {fmt.rate_pps_exact(self.tx_pps)} "
            f"{fmt.bitrate(self.tx_bps(layer))} ({LAYER_TEXT[layer]}) | "
            f"rx {fmt.count(self.rx_packets)} pkts | lost {fmt.count(self.lost)} "
            f"({fmt.loss_ratio(loss)}) dup {fmt.count(self.duplicates)} "
            f"reordered {fmt.count(self.reordered)} foreign {fmt.count(self.foreign)}"
            + (f" | generator dropped {fmt.count(self.generator_drops)}"
               if self.generator_drops else "")
            + (" | INTERRUPTED" if self.interrupted else "")
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "streams": [
                {
                    **{k: v for k, v in s.__dict__.items() if isinstance(v, (int, str))},
                    "lost": None if s.expected_only else s.lost,
                    "tx_pps": s.tx_pps,
                    "rx_pps": s.rx_pps,
                }
                for s in self.streams
            ],
            "ports": self.ports,
            "foreign": self.foreign,
            "interrupted": self.interrupted,
        }


def clock_fields(clock: tuple[str, float] | None, tsc_hz: int | None) -> dict[str, Any]:
    if clock is None:
        return {"clock": "tsc-software", "clock_resolution_ns": 1e9 / tsc_hz if tsc_hz else None}
    return {"clock": clock[0], "clock_resolution_ns": float(clock[1])}


def names_of(records: np.ndarray) -> tuple[str, ...]:
    """The field names of a record array (engines before ABI 9 lack some)."""
    return records.dtype.names or ()


def rx_queues_of(rx: np.ndarray, i: int) -> int:
    """The RX queues stream i arrived on (engines before ABI 13 did not say: 1 if any)."""
    if "rx_queues" in names_of(rx):
        return int(rx["rx_queues"][i])
    return 1 if int(rx["packets"][i]) else 0


def loss_events(rx: np.ndarray, i: int) -> dict[str, int | None]:
    """`gap_events` and `last_gap_tx_ns` of stream i: the engine's, from the one queue the
    stream arrived on; None for both when it arrived on several, where the engine's
    figures are the queues' sum and latest and count the other queues' frames as gaps
    (see `StreamResult.loss_timing_unavailable`)."""
    if rx_queues_of(rx, i) > 1:
        return {"gap_events": None, "last_gap_tx_ns": None}
    return {"gap_events": int(rx["gap_events"][i]),
            "last_gap_tx_ns": int(rx["last_gap_tx_ns"][i])}


def build_run_result(
    names: list[str],
    stream_ids: list[int],
    arrays: dict[str, np.ndarray],
    ports: dict[str, dict[str, int]],
    interrupted: bool = False,
    hist_lower_ns: list[int] | None = None,
    expected_only: int = 0,
    tsc_hz: int | None = None,
    clocks: list[tuple[str, float] | None] | None = None,
    started_at: float = 0.0,
    link_events: tuple[dict[str, Any], ...] = (),
) -> RunResult:
    """Per-stream results from the engine's arrays. `clocks` gives, per stream,
    (name, resolution in ns) of a latency clock other than the TSC, or None."""
    tx, rx = arrays["tx"], arrays["rx"]
    lower = np.asarray(hist_lower_ns, dtype=np.uint64) if hist_lower_ns else None
    counts = arrays.get("sample_count")

    def hist(key: str, i: int) -> LogHistogram | None:
        own = arrays.get(key.replace("_hist", "_lower_ns"))
        bounds = np.asarray(own, dtype=np.uint64) if own is not None else lower
        if key not in arrays or bounds is None:
            return None
        return LogHistogram(arrays[key][i], bounds)

    def samples(key: str, i: int) -> np.ndarray | None:
        if counts is None:
            return None
        return np.asarray(arrays[key][i][: int(counts[i])])

    streams = tuple(
        StreamResult(
            name=names[i],
            stream_id=stream_ids[i],
            tx_packets=int(tx["packets"][i]),
            tx_bytes=int(tx["bytes"][i]),
            tx_unsent=int(tx["unsent"][i]),
            tx_alloc_failures=int(tx["alloc_failures"][i]),
            tx_first_ns=int(tx["first_ns"][i]),
            tx_last_ns=int(tx["last_ns"][i]),
            rx_packets=int(rx["packets"][i]),
            rx_bytes=int(rx["bytes"][i]),
            duplicates=int(rx["duplicates"][i]),
            reordered=int(rx["reordered"][i]),
            rx_first_ns=int(rx["first_ns"][i]),
            rx_last_ns=int(rx["last_ns"][i]),
            latency_min_ns=int(rx["latency_min_ns"][i]),
            latency_max_ns=int(rx["latency_max_ns"][i]),
            latency_sum_ns=int(rx["latency_sum_ns"][i]),
            latency_samples=int(rx["latency_samples"][i]),
            jitter_ns=int(rx["jitter_ns"][i]),
            ipdv_pairs=int(rx["ipdv_pairs"][i]),
            expected_only=i >= len(names) - expected_only,
            tsc_resolution_ns=1e9 / tsc_hz if tsc_hz else None,
            **clock_fields(clocks[i] if clocks and i < len(clocks) else None, tsc_hz),
            hw_stamp_missing=int(rx["hw_stamp_missing"][i]),
            **loss_events(rx, i),
            tx_max_lag_ns=int(tx["max_lag_ns"][i]),
            tx_lagged_bursts=int(tx["lagged_bursts"][i]),
            tx_end_ns=int(tx["end_ns"][i]) if "end_ns" in names_of(tx) else 0,
            tx_end_reason=str(arrays["tx_end_reason"][i]) if "tx_end_reason" in arrays
            else "none",
            tx_off_cpu_ns=int(tx["off_cpu_ns"][i]) if "off_cpu_ns" in names_of(tx) else 0,
            tx_preemptions=int(tx["preemptions"][i]) if "preemptions" in names_of(tx) else 0,
            tx_wait_cpu_ns=int(tx["wait_cpu_ns"][i]) if "wait_cpu_ns" in names_of(tx) else 0,
            tx_sleeps=int(tx["sleeps"][i]) if "sleeps" in names_of(tx) else 0,
            tx_refused_bursts=int(tx["refused_bursts"][i])
            if "refused_bursts" in names_of(tx) else 0,
            rx_by_tx_end=int(rx["by_tx_end"][i]) if "by_tx_end" in names_of(rx) else 0,
            hist_unrecorded=int(rx["hist_unrecorded"][i])
            if "hist_unrecorded" in names_of(rx) else 0,
            rx_queues=rx_queues_of(rx, i),
            rx_gaps=hist("rx_gap_hist", i),
            latency=hist("rx_latency_hist", i),
            ipdv_increase=hist("rx_ipdv_pos_hist", i),
            ipdv_decrease=hist("rx_ipdv_neg_hist", i),
            sample_tx_ns=samples("sample_tx_ns", i),
            sample_rx_ns=samples("sample_rx_ns", i),
        )
        for i in range(len(names))
    )
    return RunResult(streams, arrays, arrays["rx_queues"], ports, interrupted, started_at,
                     link_events)


def _merged_hist(parts: list[LogHistogram | None]) -> LogHistogram | None:
    present = [h for h in parts if h is not None]
    if not present:
        return None
    out = present[0]
    for h in present[1:]:
        out = out.merge(h)
    return out


def merge_queue_streams(parts: list[StreamResult]) -> StreamResult:
    """One stream sent over several TX queues (a copy a queue, each with its own
    sequence numbers) as the one stream it is: counts and bytes summed, first times the
    earliest and last times the latest, latency and IPDV histograms merged, the
    generator's lag the worst queue's, the time its workers lost to the CPU the most any
    one lost (the queues' workers ran side by side). RFC 3550 jitter is each queue's
    stream's own (a smoothed mean of consecutive frames of that queue), weighted by its
    samples. No inter-arrival histogram (`rx_gaps`): a queue's frames arrive between
    the other queues', so their gaps are not the stream's."""
    if len(parts) == 1:
        return parts[0]
    first = parts[0]
    received = [p for p in parts if p.rx_packets]
    stamped = [p for p in parts if p.latency_samples]
    samples = sum(p.latency_samples for p in parts)
    ended = max(parts, key=lambda p: p.tx_end_ns)
    reasons = {p.tx_end_reason for p in parts}
    tx_ns = [p.sample_tx_ns for p in parts if p.sample_tx_ns is not None]
    rx_ns = [p.sample_rx_ns for p in parts if p.sample_rx_ns is not None]
    order = np.argsort(np.concatenate(tx_ns), kind="stable") if tx_ns else None
    return StreamResult(
        name=first.name, stream_id=first.stream_id,
        tx_packets=sum(p.tx_packets for p in parts), tx_bytes=sum(p.tx_bytes for p in parts),
        tx_unsent=sum(p.tx_unsent for p in parts),
        tx_alloc_failures=sum(p.tx_alloc_failures for p in parts),
        tx_first_ns=min(p.tx_first_ns for p in parts),
        tx_last_ns=max(p.tx_last_ns for p in parts),
        rx_packets=sum(p.rx_packets for p in parts), rx_bytes=sum(p.rx_bytes for p in parts),
        duplicates=sum(p.duplicates for p in parts), reordered=sum(p.reordered for p in parts),
        rx_first_ns=min((p.rx_first_ns for p in received), default=0),
        rx_last_ns=max((p.rx_last_ns for p in received), default=0),
        latency_min_ns=min((p.latency_min_ns for p in stamped), default=0),
        latency_max_ns=max((p.latency_max_ns for p in stamped), default=0),
        latency_sum_ns=sum(p.latency_sum_ns for p in parts), latency_samples=samples,
        jitter_ns=round(sum(p.jitter_ns * p.latency_samples for p in parts) / samples)
        if samples else 0,
        ipdv_pairs=sum(p.ipdv_pairs for p in parts),
        tx_max_lag_ns=max(p.tx_max_lag_ns for p in parts),
        tx_lagged_bursts=sum(p.tx_lagged_bursts for p in parts),
        expected_only=first.expected_only, tsc_resolution_ns=first.tsc_resolution_ns,
        clock=first.clock, clock_resolution_ns=first.clock_resolution_ns,
        hw_stamp_missing=sum(p.hw_stamp_missing for p in parts),
        gap_events=None if any(p.gap_events is None for p in parts)
        else sum(p.gap_events or 0 for p in parts),
        last_gap_tx_ns=None if any(p.last_gap_tx_ns is None for p in parts)
        else max(p.last_gap_tx_ns or 0 for p in parts),
        tx_end_ns=ended.tx_end_ns,
        tx_end_reason=reasons.pop() if len(reasons) == 1 else ended.tx_end_reason,
        tx_off_cpu_ns=max(p.tx_off_cpu_ns for p in parts),
        tx_preemptions=max(p.tx_preemptions for p in parts),
        tx_wait_cpu_ns=max(p.tx_wait_cpu_ns for p in parts),
        tx_sleeps=max(p.tx_sleeps for p in parts),
        tx_refused_bursts=sum(p.tx_refused_bursts for p in parts),
        rx_by_tx_end=sum(p.rx_by_tx_end for p in parts),
        hist_unrecorded=sum(p.hist_unrecorded for p in parts),
        rx_queues=max(p.rx_queues for p in parts),
        rx_gaps=None,
        latency=_merged_hist([p.latency for p in parts]),
        ipdv_increase=_merged_hist([p.ipdv_increase for p in parts]),
        ipdv_decrease=_merged_hist([p.ipdv_decrease for p in parts]),
        sample_tx_ns=None if order is None else np.concatenate(tx_ns)[order],
        sample_rx_ns=None if order is None or len(rx_ns) != len(tx_ns)
        else np.concatenate(rx_ns)[order],
    )


def merge_queue_results(run: RunResult, queues: list[int]) -> RunResult:
    """`run` with the native streams of each stream sent over several TX queues (in
    order, `queues[i]` of them for the i-th stream) merged into one
    (`merge_queue_streams`)."""
    out: list[StreamResult] = []
    at = 0
    for n in queues:
        out.append(merge_queue_streams(list(run.streams[at:at + n])))
        at += n
    if at != len(run.streams):
        raise NetloadConfigError(f"merge_queue_results: {len(run.streams)} native streams, "
                                 f"{at} in the queues given")
    return replace(run, streams=tuple(out))
