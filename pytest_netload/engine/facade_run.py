"""A run's native calls (native/src/run.c, results.c): the other half of the facade.

`Run` starts a `protocol.RunStart` (`struct netload_run_conf`, field for field), polls it
in short slices (`protocol.RunStatus`), stops it and reads its results once, as numpy
arrays laid out as the C structs are. Like facade.py, whose `lib` it uses, it runs only
in the engine host process; the two are the only users of the extension.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .facade import (
    RUN_STATES,
    TX_END_REASONS,
    NativeStream,
    _check,
    _records,
    ffi,
    hist_lower_bounds_ns,
    lib,
)
from .intervals import FIELDS, pack
from .protocol import RunStart, RunStatus

__all__ = ["Run"]


def _rule_bytes(data: bytes) -> bytes:
    """A rule's value or mask, at most NETLOAD_EXPECT_BYTES (the rest of the array is 0)."""
    top = int(lib.NETLOAD_EXPECT_BYTES)
    if len(data) > top:
        raise ValueError(f"expected-frame rule of {len(data)} bytes; at most {top}")
    return bytes(data)


class Run:
    """One native run (`protocol.RunStart`, the loaded `streams` of its TX entries in
    order); poll it in short slices, then read its results once."""

    def __init__(self, spec: RunStart, streams: Sequence[NativeStream]) -> None:
        self.spec = spec
        self.capture_frames = spec.capture_frames
        self.capture_snaplen = spec.capture_snaplen or 128
        self.latency_sub_bits = spec.latency_sub_bits or int(lib.NETLOAD_LATENCY_SUB_BITS)
        self.timing_samples = spec.timing_samples
        keep: list[Any] = []  # the structs only point at these: they must outlive the call
        entries = []
        for e, stream in zip(spec.tx, streams):
            cphases = ffi.new("struct netload_phase_conf[]", max(len(e.phases), 1))
            for i, ph in enumerate(e.phases):
                gaps = ffi.new("uint64_t[]", max(ph.n_gaps, 1))
                ffi.memmove(gaps, ph.gaps_ps, 8 * ph.n_gaps)
                keep.append(gaps)
                cphases[i].gaps_ps = gaps
                cphases[i].n_gaps = ph.n_gaps
                cphases[i].duration_ns = ph.duration_ns
            keep.append(cphases)
            cexpect = ffi.NULL
            if e.expect:
                cexpect = ffi.new("struct netload_expect_conf *")
                cexpect.n_rules = len(e.expect)
                for i, rule in enumerate(e.expect):
                    value, mask = _rule_bytes(rule.value), _rule_bytes(rule.mask)
                    ffi.memmove(cexpect.rules[i].value, value, len(value))
                    ffi.memmove(cexpect.rules[i].mask, mask, len(mask))
                keep.append(cexpect)
            entries.append({
                "stream": stream.ptr,
                "queue": e.queue,
                "count": e.count,
                "expect_only": int(e.expect_only),
                "n_phases": len(e.phases),
                "phases": cphases,
                "hw_clock": int(e.hw_clock),
                "start_ns": e.start_ns,
                "expect": cexpect,
            })
        ctx = ffi.new("struct netload_tx_conf[]", entries or 1)
        flows = [_flow_conf(i, s.flow_key) for i, s in enumerate(streams) if s.flow_key]
        self.flow_entries = [i for i, s in enumerate(streams) if s.flow_key]
        cflows = ffi.new("struct netload_flow_conf[]", flows or 1)
        cfwd = ffi.new("struct netload_fwd_conf[]", max(len(spec.forwarders), 1))
        for i, fw in enumerate(spec.forwarders):
            jitter = ffi.new("uint64_t[]", max(fw.n_jitter, 1))
            if fw.n_jitter:
                ffi.memmove(jitter, fw.jitter_ps, 8 * fw.n_jitter)
            keep.append(jitter)
            cfwd[i].rx_port = fw.rx_port
            cfwd[i].rx_queue = fw.rx_queue
            cfwd[i].tx_port = fw.tx_port
            cfwd[i].tx_queue = fw.tx_queue
            cfwd[i].delay_ns = fw.delay_ns
            cfwd[i].jitter_ps = jitter
            cfwd[i].n_jitter = fw.n_jitter
            cfwd[i].loss_ppm = fw.loss_ppm
            cfwd[i].seed = fw.seed
        crx = ffi.new(
            "struct netload_rx_conf[]", [{"port_id": p, "queue": q} for p, q in spec.rx] or 1
        )
        conf = ffi.new(
            "struct netload_run_conf *",
            {
                "n_tx": len(spec.tx),
                "tx": ctx,
                "n_rx": len(spec.rx),
                "rx": crx,
                "duration_ns": spec.duration_ns,
                "start_delay_ns": spec.start_delay_ns,
                "drain_ns": spec.drain_ns,
                "burst": spec.burst,
                "timing_samples": spec.timing_samples,
                "n_fwd": len(spec.forwarders),
                "fwd": cfwd,
                "latency_sub_bits": self.latency_sub_bits,
                "capture_frames": self.capture_frames,
                "capture_snaplen": self.capture_snaplen,
                "hist_pages": spec.hist_pages,
                "interval_ns": spec.interval_ns,
                "n_flows": len(flows),
                "flows": cflows,
            },
        )
        out = ffi.new("struct netload_run **")
        _check(lib.netload_run_start(conf, out), "run start")
        self.ptr = out[0]
        self.intervals_read = 0

    def poll(self, wait_ms: int) -> RunStatus:
        st = ffi.new("struct netload_run_status *")
        _check(lib.netload_run_poll(self.ptr, wait_ms, st), "run poll")
        return RunStatus(RUN_STATES[st.state], int(st.elapsed_ns), int(st.tx_packets),
                         int(st.rx_packets), int(st.end_ns))

    def intervals(self) -> list[dict[str, Any]]:
        """The interval snapshots taken since the last call (`intervals.pack`), in
        order; their ring slots are free again once read."""
        if not self.spec.interval_ns:
            return []
        ready = _check(lib.netload_run_intervals(self.ptr, self.intervals_read),
                       "run intervals")
        n_tx = len(self.spec.tx)
        buckets = int(lib.netload_hist_buckets(self.latency_sub_bits))
        out = []
        st = ffi.new("struct netload_interval_stats *")
        for k in range(self.intervals_read, ready):
            stats = np.zeros((n_tx, len(FIELDS)), dtype=np.uint64)
            hist = np.zeros((n_tx, buckets), dtype=np.uint64)
            lost = []
            for i in range(n_tx):
                got = _check(lib.netload_run_interval(
                    self.ptr, k, i, st, ffi.from_buffer("uint64_t[]", hist[i]), buckets),
                    "run interval")
                lost.append(got == 1)
                stats[i] = [getattr(st, name) for name in FIELDS]
            out.append(pack(k, lost, stats, hist, None if k else
                            hist_lower_bounds_ns(self.latency_sub_bits)))
        if ready > self.intervals_read:
            self.intervals_read = ready
            _check(lib.netload_run_intervals(self.ptr, ready), "run intervals")
        return out

    def stop(self) -> None:
        _check(lib.netload_run_stop(self.ptr), "run stop")

    def results(self) -> dict[str, np.ndarray]:
        n_tx, n_rx = len(self.spec.tx), len(self.spec.rx)
        txs = ffi.new("struct netload_tx_stats[]", max(n_tx, 1))
        rxs = ffi.new("struct netload_rx_stream_stats[]", max(n_tx, 1))
        rxq = ffi.new("struct netload_rx_queue_stats[]", max(n_rx, 1))
        for i in range(n_tx):
            _check(lib.netload_run_tx_stats(self.ptr, i, txs + i), "tx stats")
            _check(lib.netload_run_rx_stream_stats(self.ptr, i, rxs + i), "rx stats")
        flow = ffi.new("struct netload_rx_flow_stats *")
        for i in self.flow_entries:  # unsigned streams: counted by flow, no sequence or stamp
            _check(lib.netload_run_rx_flow_stats(self.ptr, i, flow), "rx flow stats")
            rxs[i].packets += flow.packets
            rxs[i].bytes += flow.bytes
            rxs[i].by_tx_end += flow.by_tx_end
            if flow.packets:
                rxs[i].first_ns, rxs[i].last_ns = flow.first_ns, flow.last_ns
        for i in range(n_rx):
            _check(lib.netload_run_rx_queue_stats(self.ptr, i, rxq + i), "rx queue stats")
        buckets = int(lib.NETLOAD_HIST_BUCKETS)
        gap_hist = np.zeros((n_tx, buckets), dtype=np.uint64)
        lat_buckets = int(lib.netload_hist_buckets(self.latency_sub_bits))
        lat_hist = np.zeros((n_tx, lat_buckets), dtype=np.uint64)
        ipdv_pos = np.zeros((n_tx, buckets), dtype=np.uint64)
        ipdv_neg = np.zeros((n_tx, buckets), dtype=np.uint64)
        def row(a: np.ndarray, i: int) -> Any:
            return ffi.from_buffer("uint64_t[]", a[i])

        for i in range(n_tx):
            _check(lib.netload_run_rx_gap_hist(self.ptr, i, row(gap_hist, i), buckets),
                   "rx gap histogram")
            _check(lib.netload_run_rx_latency_hist(self.ptr, i, row(lat_hist, i), lat_buckets),
                   "rx latency histogram")
            _check(lib.netload_run_rx_ipdv_hist(self.ptr, i, row(ipdv_pos, i), row(ipdv_neg, i),
                                                buckets), "rx IPDV histograms")
        out = {
            "tx": _records("struct netload_tx_stats", txs, n_tx),
            "rx": _records("struct netload_rx_stream_stats", rxs, n_tx),
            "rx_queues": _records("struct netload_rx_queue_stats", rxq, n_rx),
            "tx_end_reason": np.array([TX_END_REASONS.get(int(txs[i].end_reason), "none")
                                       for i in range(n_tx)], dtype="U8"),
            "rx_gap_hist": gap_hist,
            "rx_latency_hist": lat_hist,
            "rx_latency_lower_ns": hist_lower_bounds_ns(self.latency_sub_bits),
            "rx_ipdv_pos_hist": ipdv_pos,
            "rx_ipdv_neg_hist": ipdv_neg,
        }
        if self.capture_frames:
            n, snap = self.capture_frames, self.capture_snaplen
            data = np.zeros((n_rx, n, snap), dtype=np.uint8)
            lens = np.zeros((n_rx, n), dtype=np.uint32)
            ns = np.zeros((n_rx, n), dtype=np.uint64)
            count = np.zeros(n_rx, dtype=np.uint32)
            for i in range(n_rx):
                count[i] = _check(lib.netload_run_capture(
                    self.ptr, i, ffi.from_buffer("uint8_t[]", data[i]), snap,
                    ffi.from_buffer("uint32_t[]", lens[i]), ffi.from_buffer("uint64_t[]", ns[i]),
                    n), "capture")
            out.update(capture_data=data, capture_len=lens, capture_ns=ns,
                       capture_count=count)
        if any(e.expect for e in self.spec.tx):
            out.update(self._expect_results(n_tx, n_rx))
        n_fwd = len(self.spec.forwarders)
        if n_fwd:
            fws = ffi.new("struct netload_fwd_stats[]", n_fwd)
            for i in range(n_fwd):
                _check(lib.netload_run_fwd_stats(self.ptr, i, fws + i), "forwarder stats")
            out["forwarders"] = _records("struct netload_fwd_stats", fws, n_fwd)
        if self.timing_samples:
            n = self.timing_samples
            tx_ns = np.zeros((n_tx, n), dtype=np.uint64)
            rx_ns = np.zeros((n_tx, n), dtype=np.uint64)
            got = np.zeros(n_tx, dtype=np.uint64)
            for i in range(n_tx):
                got[i] = _check(
                    lib.netload_run_timing_samples(
                        self.ptr, i, ffi.from_buffer("uint64_t[]", tx_ns[i]),
                        ffi.from_buffer("uint64_t[]", rx_ns[i]), n),
                    "timing samples",
                )
            out.update(sample_tx_ns=tx_ns, sample_rx_ns=rx_ns, sample_count=got)
        return out

    def _expect_results(self, n_tx: int, n_rx: int) -> dict[str, np.ndarray]:
        """The expected-frame counts per TX entry and RX entry (measure/frames.py merges)."""
        rules, keep, nbytes = (int(lib.NETLOAD_EXPECT_RULES), int(lib.NETLOAD_EXPECT_KEEP),
                               int(lib.NETLOAD_EXPECT_BYTES))
        matched = np.zeros((n_tx, n_rx, rules), dtype=np.uint64)
        unmatched = np.zeros((n_tx, n_rx), dtype=np.uint64)
        n_kept = np.zeros((n_tx, n_rx), dtype=np.uint32)
        kept_len = np.zeros((n_tx, n_rx, keep), dtype=np.uint32)
        kept_seq = np.zeros((n_tx, n_rx, keep), dtype=np.uint64)
        kept = np.zeros((n_tx, n_rx, keep, nbytes), dtype=np.uint8)
        st = ffi.new("struct netload_expect_stats *")
        for i in range(n_tx):
            for q in range(n_rx):
                _check(lib.netload_run_rx_expect(self.ptr, i, q, st), "rx expect")
                matched[i, q] = list(st.matched)
                unmatched[i, q] = st.unmatched
                n_kept[i, q] = st.n_kept
                kept_len[i, q] = list(st.kept_len)
                kept_seq[i, q] = list(st.kept_seq)
                kept[i, q] = np.frombuffer(ffi.buffer(st.kept), dtype=np.uint8).reshape(
                    keep, nbytes)
        return {"expect_matched": matched, "expect_unmatched": unmatched,
                "expect_n_kept": n_kept, "expect_kept_len": kept_len,
                "expect_kept_seq": kept_seq, "expect_kept": kept}

    def free(self) -> None:
        if self.ptr is not None:
            lib.netload_run_free(self.ptr)
            self.ptr = None


def _flow_conf(index: int, key: bytes) -> dict[str, Any]:
    """`struct netload_flow_conf` of TX entry `index` from its stream's flow key."""
    return {"tx_index": index, "family": key[0], "proto": key[1], "has_ports": key[2],
            "src": list(key[3:19]), "dst": list(key[19:35]),
            "sport": int.from_bytes(key[35:37], "big"),
            "dport": int.from_bytes(key[37:39], "big")}
