"""The fake engine's model of one run, in closed form and never per packet: what each
TX entry's pacing schedule sends (walked as run.c's `due` walks it), what the DUT
(`fake_dut.FakeDut`) takes, drops, holds and delivers when (one fluid FIFO for every
stream of the run), and the result arrays and port counters the real core would give,
in its layouts (histograms as native/src/hist.c lays them out, the result structs'
fields from `_native_facts`). `fake.FakeHost` runs it; tests/unit/test_fake_engine.py
checks the layouts against the header and, where it is built, the core."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields

import numpy as np

from .. import _native_facts as facts
from .. import errors
from ..units import FCS_BYTES, frame_bits
from .fake_dut import FakeDut, ecmp_member
from .protocol import PhaseSpec, PortStats, TxEntry

HIST_SUB_BITS = facts.HIST_SUB_BITS        # gap and IPDV histograms
LATENCY_SUB_BITS = facts.LATENCY_SUB_BITS  # latency histograms by default
HIST_MIN_SUB_BITS, HIST_MAX_SUB_BITS = facts.HIST_MIN_SUB_BITS, facts.HIST_MAX_SUB_BITS
RX_BURST = 32                # frames per RX burst, for the queue's burst counter

# The result structs' fields in declaration order, as the facade reads them.
TX_STATS = facts.TX_STATS_FIELDS
RX_STREAM_STATS = facts.RX_STREAM_STATS_FIELDS
RX_QUEUE_STATS = facts.RX_QUEUE_STATS_FIELDS
PORT_STATS = tuple(f.name for f in fields(PortStats))  # struct netload_port_stats
TX_END = {"none": facts.TX_END_NONE, "count": facts.TX_END_COUNT,
          "duration": facts.TX_END_DURATION, "phases": facts.TX_END_PHASES,
          "stopped": facts.TX_END_STOPPED}


# ---- the native layouts the fake models ------------------------------------------------


def hist_buckets(bits: int) -> int:
    """netload_hist_buckets: values up to 2^45 ns, 2^bits sub-buckets (hist.c)."""
    return (1 << bits) + (45 - bits) * (1 << (bits - 1))


def hist_lower_bounds_ns(bits: int = HIST_SUB_BITS) -> np.ndarray:
    """netload_hist_lower_bounds_bits (hist.c): each bucket's lower bound in ns."""
    if not HIST_MIN_SUB_BITS <= bits <= HIST_MAX_SUB_BITS:
        raise errors.NetloadConfigError(f"histogram sub-bucket bits {bits}: give "
                                        f"{HIST_MIN_SUB_BITS} to {HIST_MAX_SUB_BITS}")
    sub, half = 1 << bits, 1 << (bits - 1)
    i = np.arange(hist_buckets(bits), dtype=np.uint64)
    j = np.maximum(i.astype(np.int64) - sub, 0).astype(np.uint64)
    above = (j % half + half) << (j // half + 1)
    return np.where(i < sub, i, above).astype(np.uint64)


def _records(spec: tuple[tuple[str, str], ...], rows: list[dict[str, int]]) -> np.ndarray:
    out = np.zeros(len(rows), dtype=[(name, fmt) for name, fmt in spec])
    for i, row in enumerate(rows):
        for name, _ in spec:
            out[name][i] = row.get(name, 0)
    return out


def _spread(total: int, weights: np.ndarray) -> np.ndarray:
    """`total` split into whole counts in proportion to `weights` (largest remainder)."""
    weights = np.clip(np.asarray(weights, dtype=np.float64), 0, None)
    out = np.zeros(weights.shape, dtype=np.uint64)
    s = float(weights.sum())
    if total <= 0 or s <= 0:
        return out
    exact = weights * (total / s)
    base = np.floor(exact)
    out[:] = base.astype(np.uint64)
    rest = total - int(base.sum())
    if rest > 0:
        order = np.argsort(-(exact - base), kind="stable")[:rest]
        out[order] += np.uint64(1)
    return out


def _ramp(t: np.ndarray | float, j: float) -> np.ndarray:
    """The integral of clip(s / j, 0, 1) from -inf to t (j > 0)."""
    t = np.asarray(t, dtype=np.float64)
    return np.where(t <= 0, 0.0, np.where(t <= j, t * t / (2 * j), t - j / 2))


def _cdf(x: np.ndarray, w0: float, w1: float, j: float) -> np.ndarray:
    """P(W + U < x) for W uniform on [w0, w1] and U uniform on [0, j] (degenerate
    cases: a point, or one uniform)."""
    if j <= 0 and w1 <= w0:
        return (x > w0).astype(np.float64)
    if j <= 0:
        return np.clip((x - w0) / (w1 - w0), 0.0, 1.0)
    if w1 <= w0:
        return np.clip((x - w0) / j, 0.0, 1.0)
    return np.clip((_ramp(x - w0, j) - _ramp(x - w1, j)) / (w1 - w0), 0.0, 1.0)


def _histogram(lower: np.ndarray, parts: list[tuple[float, float, float]], j: float,
               total: int) -> np.ndarray:
    """`total` values spread over the buckets `lower` as a mix of W + U: per part
    (n, w0, w1), W uniform on [w0, w1] with weight n; U uniform on [0, j] (ns)."""
    mass = np.zeros(len(lower), dtype=np.float64)
    weight = sum(n for n, _, _ in parts if n > 0)
    if total <= 0 or weight <= 0:
        return np.zeros(len(lower), dtype=np.uint64)
    edges = lower.astype(np.float64)
    for n, w0, w1 in parts:
        if n > 0:
            below = _cdf(edges, w0, w1, j)  # P(value < lower[k])
            mass += n / weight * (np.append(below[1:], 1.0) - below)
    return _spread(total, mass)
def _abs_ipdv_histogram(lower: np.ndarray, j: float, total: int) -> np.ndarray:
    """`total` values of |X - Y|, X and Y uniform on [0, j], into the buckets `lower`."""
    if total <= 0:
        return np.zeros(len(lower), dtype=np.uint64)
    d = np.clip(lower.astype(np.float64) / j, 0.0, 1.0)
    below = 1.0 - (1.0 - d) ** 2
    return _spread(total, np.append(below[1:], 1.0) - below)


def _bucket(lower: np.ndarray, value: float) -> int:
    return max(int(np.searchsorted(lower, max(value, 0.0), side="right")) - 1, 0)


# ---- one run: what the schedule sends, what the DUT does with it -----------------------


@dataclass
class _Phase:
    start_ps: int
    starts: np.ndarray  # each gap-table entry's offset in one period (ps; the first is 0)
    period_ps: int
    packets: int


@dataclass
class _Sent:
    """What one TX entry sent: its pacing schedule, walked exactly as run.c's `due` does."""

    packets: int = 0
    last_ns: int = 0
    end_ns: int = 0
    reason: str = "none"
    segments: tuple[tuple[float, float, float], ...] = ()  # (t0_ns, t1_ns, packets)
    phases: tuple[_Phase, ...] = ()


def _below(starts: np.ndarray, period: int, length: int) -> int:
    """How many departures k >= 0 (at m * period + starts[j]) come before `length` ps."""
    inside = starts[starts < length]
    return sum((length - int(c) + period - 1) // period for c in inside.tolist()) \
        if len(inside) < 64 else int(((length - inside + period - 1) // period).sum())


def _schedule(entry: TxEntry, port_gap_ps: int, duration_ns: int,
              stop_ns: int | None) -> _Sent:
    phases = entry.phases or (PhaseSpec(),)
    count = entry.count
    limits = [x * 1000 for x in (duration_ns or None, stop_ns) if x is not None]
    limit = min(limits) if limits else None
    t, sent, last_ps = entry.start_ns * 1000, 0, 0  # a late start (run.c's first deadline)
    bound = 0  # where the phase ends are counted from: the common start, as run.c's
    segments: list[tuple[float, float, float]] = []
    walked: list[_Phase] = []
    reason, end_ps = "phases", 0
    for ph in phases:
        gaps = ph.gaps().astype(np.int64) if ph.n_gaps else \
            np.array([port_gap_ps], dtype=np.int64)
        starts = np.concatenate(([0], np.cumsum(gaps)[:-1])).astype(np.int64)
        period = int(gaps.sum())
        end = bound + ph.duration_ns * 1000 if ph.duration_ns else None
        bound = end or bound
        if end is not None and t >= end:
            t = end_ps = end  # the phase ended before its first deadline
            continue
        stop = min(x for x in (end, limit) if x is not None) if (end or limit) else None
        n = _below(starts, period, stop - t) if stop is not None else None
        if count and (n is None or sent + n >= count):
            n = count - sent
            m, j = divmod(n - 1, len(starts))
            last = t + m * period + int(starts[j])
            segments.append((t / 1e3, (last + period / len(starts)) / 1e3, float(n)))
            walked.append(_Phase(t, starts, period, n))
            sent, last_ps, reason, end_ps = count, last, "count", last
            break
        assert n is not None and stop is not None
        if n:
            m, j = divmod(n - 1, len(starts))
            last_ps = t + m * period + int(starts[j])
            segments.append((t / 1e3, stop / 1e3, float(n)))
            walked.append(_Phase(t, starts, period, n))
            sent += n
        if limit is not None and stop == limit and (end is None or limit <= end):
            reason = "stopped" if stop_ns is not None and limit == stop_ns * 1000 else \
                "duration"
            end_ps = limit
            break
        t = end_ps = stop
    return _Sent(sent, round(last_ps / 1e3), round(end_ps / 1e3), reason, tuple(segments),
                 tuple(walked))


@dataclass
class _Piece:
    """A stretch of time with constant arrivals, over which the DUT's queue moves
    linearly from q0 to q1 frames. `accepted` and `dropped` are per stream."""

    t0: float
    t1: float
    accepted: np.ndarray
    dropped: np.ndarray
    q0: float
    q1: float

    def left_by(self, until: float, mu: float) -> float:
        """The share of the frames it accepted that left the DUT by `until` (FIFO: a
        frame taken in at s, with q(s) frames ahead of it, leaves at s + q(s) / mu)."""
        first = self.t0 + self.q0 / mu
        slope = (self.t1 - self.t0) + (self.q1 - self.q0) / mu
        if slope <= 0:
            return 1.0 if first <= until else 0.0
        return min(max((until - first) / slope, 0.0), 1.0)

    def leaves_at(self, x: float, mu: float) -> float:
        """When the frame it took in at share `x` of its span left the DUT."""
        return self.t0 + x * (self.t1 - self.t0) + self.wait(x, mu)

    def wait(self, x: float, mu: float) -> float:
        return (self.q0 + x * (self.q1 - self.q0)) / mu


def _fluid_fifo(mu: float, buffer: int, edges: list[float],
                rates: list[np.ndarray]) -> list[_Piece]:
    """The DUT as a fluid FIFO: between consecutive `edges` (ns) the streams arrive at
    `rates` (frames per ns each); it serves `mu` frames per ns and holds at most
    `buffer` frames, dropping the excess of a full queue. What it holds after the last
    edge leaves at `mu` (its pieces' `left_by` says when)."""
    pieces: list[_Piece] = []
    q = 0.0
    for (t0, t1), r in zip(zip(edges[:-1], edges[1:]), rates):
        span, a = t1 - t0, float(r.sum())
        if span <= 0:
            continue
        share = r / a if a > 0 else np.zeros_like(r)

        def piece(start: float, stop: float, q0: float, q1: float, full: bool,
                  share: np.ndarray = share, a: float = a) -> None:
            d = stop - start
            if d > 0:
                pieces.append(_Piece(start, stop, share * (mu if full else a) * d,
                                     share * (a - mu) * d if full else share * 0.0, q0, q1))

        if a > mu and q < buffer:
            fill = (buffer - q) / (a - mu)
            if fill >= span:
                piece(t0, t1, q, q + (a - mu) * span, False)
                q = min(q + (a - mu) * span, float(buffer))
            else:
                piece(t0, t0 + fill, q, float(buffer), False)
                piece(t0 + fill, t1, float(buffer), float(buffer), True)
                q = float(buffer)
        elif a > mu:
            piece(t0, t1, q, q, True)
        elif a < mu and q > 0:
            empty = q / (mu - a)
            if empty >= span:
                piece(t0, t1, q, q - (mu - a) * span, False)
                q = max(q - (mu - a) * span, 0.0)
            else:
                piece(t0, t0 + empty, q, 0.0, False)
                piece(t0 + empty, t1, 0.0, 0.0, False)
                q = 0.0
        else:
            piece(t0, t1, q, q, False)
    return pieces


@dataclass
class FakeStream:
    """A loaded stream: its frames (without FCS) and the order they are sent in."""

    stream_id: int
    port_id: int
    name: str
    frames: list[bytes]
    sequence: list[int]
    stamp_every: int = 1
    flows: tuple[int, int] = (1, 1)  # (L3, L4) flows a hash sees: fake_dut.hashed_flows
    signature: bool = True  # False: counted by flow on RX, packets and bytes only

    @property
    def sizes(self) -> list[int]:
        return [len(self.frames[i]) for i in self.sequence]

    @property
    def mean_frame_size(self) -> float:
        """Bytes with FCS, over the packet sequence."""
        return sum(self.sizes) / len(self.sequence) + FCS_BYTES

    def bytes_of(self, packets: int) -> int:
        """Bytes without FCS of its first `packets` packets."""
        sizes = self.sizes
        full, rest = divmod(packets, len(sizes))
        return full * sum(sizes) + sum(sizes[:rest])


@dataclass
class _Outcome:
    """One run worked out: the result arrays, the port counters, what polls report."""

    arrays: dict[str, np.ndarray]
    port_counts: dict[int, dict[str, int]]
    tx_packets: int
    rx_packets: int
    tx_end_ns: int
    end_ns: int


def _phase_times(sent: _Sent, k: np.ndarray) -> np.ndarray:
    """TX times (ns) of packets `k` of a schedule."""
    out = np.zeros(len(k), dtype=np.float64)
    before = 0
    for ph in sent.phases:
        inside = (k >= before) & (k < before + ph.packets)
        m, j = np.divmod(k[inside] - before, len(ph.starts))
        out[inside] = (ph.start_ps + m.astype(np.float64) * ph.period_ps
                       + ph.starts[j].astype(np.float64)) / 1e3
        before += ph.packets
    return out


class _Model:
    """The DUT applied to one run's schedules (see FakeDut)."""

    def __init__(self, dut: FakeDut, rng: np.random.Generator) -> None:
        self.dut = dut
        self.rng = rng

    def outcome(self, entries: Sequence[TxEntry], streams: list[FakeStream],
                rx: Sequence[tuple[int, int]], duration_ns: int, drain_ns: int,
                stop_ns: int | None, sub_bits: int, timing_samples: int,
                capture_frames: int, capture_snaplen: int) -> _Outcome:
        dut, n = self.dut, len(entries)
        sends = [
            _Sent() if e.expect_only else
            _schedule(e, max(1, round(frame_bits(s.mean_frame_size, "l1") / dut.port_rate_bps
                                      * 1e12)), duration_ns, stop_ns)
            for e, s in zip(entries, streams)]
        tx = np.array([s.packets for s in sends], dtype=np.int64)
        lost_random = np.array([self.rng.binomial(int(k), dut.loss_ratio)
                                if dut.loss_ratio and k else 0 for k in tx], dtype=np.int64)
        tx_end = max((s.end_ns for s in sends), default=0)
        sizes = np.array([s.mean_frame_size for s in streams], dtype=np.float64)
        mix = float((tx * sizes).sum() / tx.sum()) if tx.sum() else \
            float(sizes.mean()) if len(sizes) else 64.0
        mu = dut.capacity_at(mix) / 1e9  # frames per ns
        delay = dut.delay_s * 1e9
        jitter = dut.jitter_s * 1e9
        pass_share = np.where(tx > 0, 1.0 - lost_random / np.maximum(tx, 1), 0.0)
        edges = sorted({t for s in sends for seg in s.segments for t in seg[:2]})
        rates = []
        for t0, t1 in zip(edges[:-1], edges[1:]):
            mid = (t0 + t1) / 2
            r = np.zeros(n)
            for i, s in enumerate(sends):
                for a, b, k in s.segments:
                    if a <= mid < b:
                        r[i] = k / (b - a) * pass_share[i]
            rates.append(r)
        pieces = _fluid_fifo(mu, dut.buffer_frames, edges, rates)
        lat_lower = hist_lower_bounds_ns(sub_bits)
        gap_lower = hist_lower_bounds_ns(HIST_SUB_BITS)
        rows_tx, rows_rx = [], []
        lat_hist = np.zeros((n, len(lat_lower)), dtype=np.uint64)
        gap_hist = np.zeros((n, len(gap_lower)), dtype=np.uint64)
        ipdv_pos = np.zeros((n, len(gap_lower)), dtype=np.uint64)
        ipdv_neg = np.zeros((n, len(gap_lower)), dtype=np.uint64)
        samples_tx = np.zeros((n, timing_samples), dtype=np.uint64)
        samples_rx = np.zeros((n, timing_samples), dtype=np.uint64)
        samples_n = np.zeros(n, dtype=np.uint64)
        received = np.zeros(n, dtype=np.int64)
        rx_last = np.zeros(n, dtype=np.int64)
        arrive_by = tx_end + drain_ns - delay  # RX polls until drain_ns after TX ended
        left_rx = [p.left_by(arrive_by, mu) for p in pieces] if rx else [0.0] * len(pieces)
        left_end = [p.left_by(tx_end - delay, mu) for p in pieces] if rx else [0.0] * len(pieces)
        for i, (s, stream) in enumerate(zip(sends, streams)):
            acc = np.array([p.accepted[i] for p in pieces])
            got = acc * np.array(left_rx) if pieces else acc
            dropped = min(round(sum(float(p.dropped[i]) for p in pieces)),
                          int(tx[i] - lost_random[i]))
            unfinished = round(float((acc - got).sum())) if pieces else 0
            r_i = max(int(tx[i] - lost_random[i]) - dropped - unfinished, 0) if rx else 0
            received[i] = r_i
            by_end = min(round(float((acc * np.array(left_end)).sum())) if pieces else 0, r_i)
            row_rx: dict[str, int] = {"packets": r_i, "bytes": round(
                r_i * (stream.mean_frame_size - FCS_BYTES)), "by_tx_end": by_end,
                "rx_queues": 1 if r_i else 0}  # the fake DUT keeps a stream on one queue
            if r_i:
                row_rx.update(self._arrivals(i, s, pieces, got, left_rx, mu, delay, jitter,
                                             r_i, int(tx[i]), int(lost_random[i]), dropped,
                                             unfinished, stream, lat_lower, gap_lower,
                                             lat_hist, gap_hist, ipdv_pos, ipdv_neg))
                rx_last[i] = row_rx["last_ns"]
                if timing_samples:
                    samples_n[i] = self._samples(i, s, pieces, mu, delay, jitter,
                                                 float(pass_share[i]), min(timing_samples, r_i),
                                                 samples_tx, samples_rx)
            rows_rx.append(row_rx)
            rows_tx.append({"packets": int(tx[i]), "bytes": stream.bytes_of(int(tx[i])),
                            "first_ns": 0, "last_ns": s.last_ns, "end_ns": s.end_ns,
                            "end_reason": TX_END[s.reason]})
        total_rx = int(received.sum())
        landed = self._landed(streams, received, rows_rx, rx)
        queues = [{"packets": p, "bytes": b, "bursts": -(-p // RX_BURST)} for p, b in landed]
        arrays: dict[str, np.ndarray] = {
            "tx": _records(TX_STATS, rows_tx),
            "rx": _records(RX_STREAM_STATS, rows_rx),
            "rx_queues": _records(RX_QUEUE_STATS, queues),
            "tx_end_reason": np.array([s.reason for s in sends], dtype="U8"),
            "rx_gap_hist": gap_hist,
            "rx_latency_hist": lat_hist,
            "rx_latency_lower_ns": lat_lower,
            "rx_ipdv_pos_hist": ipdv_pos,
            "rx_ipdv_neg_hist": ipdv_neg,
        }
        if capture_frames:
            arrays.update(self._capture(streams, sends, received, rx_last, len(rx),
                                        capture_frames, capture_snaplen or 128))
        if timing_samples:
            arrays.update(sample_tx_ns=samples_tx, sample_rx_ns=samples_rx,
                          sample_count=samples_n)
        counts: dict[int, dict[str, int]] = {}
        for i, stream in enumerate(streams):
            c = counts.setdefault(stream.port_id, dict.fromkeys(PORT_STATS, 0))
            c["opackets"] += int(tx[i])
            c["obytes"] += rows_tx[i]["bytes"]
        for q, (port, _) in enumerate(rx):
            c = counts.setdefault(int(port), dict.fromkeys(PORT_STATS, 0))
            c["ipackets"] += queues[q]["packets"]
            c["ibytes"] += queues[q]["bytes"]
        return _Outcome(arrays, counts, int(tx.sum()), total_rx, tx_end,
                        tx_end + drain_ns if rx else tx_end)

    def _landed(self, streams: list[FakeStream], received: np.ndarray,
                rows_rx: list[dict[str, int]], rx: Sequence[tuple[int, int]]
                ) -> list[tuple[int, int]]:
        """(packets, bytes) per RX entry: all on the first, or with ECMP each stream's flows
        on the first queue of the run's RX ports by fake_dut.ecmp_member (bytes pro rata)."""
        out = [[0, 0] for _ in rx]
        ports = list(dict.fromkeys(p for p, _ in rx))
        first = {p: next(q for q, (pp, _) in enumerate(rx) if pp == p) for p in ports}
        for i, s in enumerate(streams):
            got, size = int(received[i]), rows_rx[i]["bytes"]
            if not got:
                continue
            if not self.dut.ecmp or len(ports) < 2:
                out[0][0] += got
                out[0][1] += size
                continue
            flows = s.flows[0] if self.dut.ecmp_hash == "l3" else s.flows[1]
            per = np.full(flows, got // flows) + (np.arange(flows) < got % flows)
            for k, n in enumerate(per):
                q = first[ports[ecmp_member(k, len(ports), self.dut.seed)]]
                out[q][0] += int(n)
                out[q][1] += round(size * int(n) / got)
        return [(p, b) for p, b in out]

    def _arrivals(self, i: int, s: _Sent, pieces: list[_Piece], got: np.ndarray,
                  left: list[float], mu: float, delay: float, jitter: float, r_i: int,
                  sent: int, lost_random: int, dropped: int, unfinished: int,
                  stream: FakeStream, lat_lower: np.ndarray, gap_lower: np.ndarray,
                  lat_hist: np.ndarray, gap_hist: np.ndarray, ipdv_pos: np.ndarray,
                  ipdv_neg: np.ndarray) -> dict[str, int]:
        """Latency, arrival times, gaps and loss events of stream i's received frames."""
        # each piece's received frames waited from p.wait(0) to p.wait(x), linearly
        ramps = [(float(g), p.wait(0.0, mu) + delay, p.wait(x, mu) + delay)
                 for p, g, x in zip(pieces, got, left) if g > 0]
        parts = [(g, min(a, b), max(a, b)) for g, a, b in ramps]
        stamped = -(-r_i // max(stream.stamp_every, 1))
        lat_hist[i] = _histogram(lat_lower, parts, jitter, stamped)
        weight = sum(g for g, _, _ in parts)
        mean = sum(g * (a + b) / 2 for g, a, b in parts) / weight + jitter / 2
        first = next(p for p, g in zip(pieces, got) if g > 0)
        last_i = max(k for k, g in enumerate(got) if g > 0)
        last = pieces[last_i]
        out = {"first_ns": math.floor(first.leaves_at(0.0, mu) + delay),
               "last_ns": math.floor(last.leaves_at(left[last_i], mu) + delay + jitter),
               "max_seq": sent - unfinished,
               "latency_min_ns": math.floor(min(a for _, a, _ in parts)),
               "latency_max_ns": math.floor(max(b for _, _, b in parts) + jitter),
               "latency_sum_ns": round(stamped * mean), "latency_samples": stamped}
        # inter-arrival gaps: the DUT's output spacing per piece; with random loss and an
        # empty queue, a gap spans k sending gaps with probability (1 - p) p^(k - 1)
        p_loss = lost_random / sent if sent else 0.0
        weights = np.zeros(len(gap_lower), dtype=np.float64)
        for p, g, x in zip(pieces, got, left):
            if g <= 0:
                continue
            span = x * ((p.t1 - p.t0) + (p.q1 - p.q0) / mu)
            if p.q0 == 0 and p.q1 == 0 and p_loss > 0:
                base = span / (g / (1 - p_loss))
                for k in range(1, 65):
                    share = (1 - p_loss) * p_loss ** (k - 1)
                    weights[_bucket(gap_lower, k * base)] += g * share
                    if share < 1e-12:
                        break
            else:
                weights[_bucket(gap_lower, span / g)] += g
        gap_hist[i] = _spread(r_i - 1, weights)
        # loss events: a random loss run ends at the next arrival; a full queue drops
        # between the frames it takes
        full_taken = sum(float(p.accepted[i]) for p in pieces if p.dropped[i] > 0)
        events = min(round(lost_random * (1 - p_loss)) + min(dropped, round(full_taken)), r_i)
        last_gap = 0.0
        if dropped:
            last_gap = max(p.t1 for p in pieces if p.dropped[i] > 0)
        if lost_random and s.last_ns:  # the last of that many uniform losses, expected
            last_gap = max(last_gap, s.last_ns * lost_random / (lost_random + 1))
        pairs = max(r_i - 1 - events, 0)
        if jitter > 0:
            half = _abs_ipdv_histogram(gap_lower, jitter, pairs)
            pos = _spread(-(-pairs // 2), half.astype(np.float64))
            ipdv_pos[i], ipdv_neg[i] = pos, _spread(pairs - int(pos.sum()),
                                                   half.astype(np.float64))
            spread = jitter / 3
        else:
            up = np.zeros(len(gap_lower))
            down = np.zeros(len(gap_lower))
            for g, a, b in ramps:
                step = abs(b - a) / g
                (up if b >= a else down)[_bucket(gap_lower, step)] += g
            total = up.sum() + down.sum()
            n_up = round(pairs * up.sum() / total) if total else pairs
            ipdv_pos[i], ipdv_neg[i] = _spread(n_up, up), _spread(pairs - n_up, down)
            g, a, b = ramps[-1]
            spread = abs(b - a) / g
        out.update(jitter_ns=round(spread), ipdv_pairs=pairs, gap_events=events,
                   last_gap_tx_ns=round(last_gap))
        if not stream.signature:  # flow.c counts packets, bytes and arrival times only
            for a in (lat_hist, gap_hist, ipdv_pos, ipdv_neg):
                a[i] = 0
            out.update({key: 0 for key in (
                "max_seq", "latency_min_ns", "latency_max_ns", "latency_sum_ns",
                "latency_samples", "jitter_ns", "ipdv_pairs", "gap_events",
                "last_gap_tx_ns")})
        return out

    def _samples(self, i: int, s: _Sent, pieces: list[_Piece], mu: float, delay: float,
                 jitter: float, pass_share: float, want: int, tx_ns: np.ndarray,
                 rx_ns: np.ndarray) -> int:
        """TX and RX times of the first `want` arrivals of stream i (sequence order)."""
        tries = min(s.packets, int(want / max(pass_share, 1e-3) * 1.2) + 64)
        k = np.arange(tries)
        kept = k[self.rng.random(tries) < pass_share] if pass_share < 1 else k
        kept = kept[:want]
        t = _phase_times(s, kept)
        starts = np.array([p.t0 for p in pieces])
        at = np.clip(np.searchsorted(starts, t, side="right") - 1, 0, len(pieces) - 1)
        wait = np.array([pieces[j].wait(min(max((x - pieces[j].t0) / max(
            pieces[j].t1 - pieces[j].t0, 1e-9), 0.0), 1.0), mu) for j, x in zip(at, t)])
        extra = self.rng.random(len(t)) * jitter if jitter else 0.0
        tx_ns[i, :len(t)] = np.round(t).astype(np.uint64)
        rx_ns[i, :len(t)] = np.round(t + wait + delay + extra).astype(np.uint64)
        return len(t)

    @staticmethod
    def _capture(streams: list[FakeStream], sends: list[_Sent], received: np.ndarray,
                 rx_last: np.ndarray, n_rx: int, frames: int,
                 snaplen: int) -> dict[str, np.ndarray]:
        """The last frames RX entry 0 saw: the templates of the stream that arrived last."""
        data = np.zeros((n_rx, frames, snaplen), dtype=np.uint8)
        lens = np.zeros((n_rx, frames), dtype=np.uint32)
        ns = np.zeros((n_rx, frames), dtype=np.uint64)
        count = np.zeros(n_rx, dtype=np.uint32)
        if n_rx and received.sum():
            i = int(np.argmax(np.where(received > 0, rx_last, -1)))
            stream, got = streams[i], int(received[i])
            m = min(frames, got)
            gap = int(rx_last[i]) / got  # the mean spacing of its arrivals
            last_seq = sends[i].packets - 1
            for slot in range(m):
                seq = last_seq - (m - 1 - slot)
                frame = stream.frames[stream.sequence[seq % len(stream.sequence)]]
                data[0, slot, :min(len(frame), snaplen)] = np.frombuffer(
                    frame[:snaplen], dtype=np.uint8)
                lens[0, slot] = len(frame)
                ns[0, slot] = max(int(rx_last[i] - (m - 1 - slot) * gap), 0)
            count[0] = m
        return {"capture_data": data, "capture_len": lens, "capture_ns": ns,
                "capture_count": count}
