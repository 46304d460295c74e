"""A fake engine host: the engine host's wire protocol over a modelled DUT, without DPDK.

`serve(channel, dut)` answers the same requests as `host.py`'s host (hello, port
open/info/stats/close, stream load/free, run start/poll/stop/results, close, crash),
through the same serve loop, with the same reply and error format, and returns
results as the same arrays (`wire.py`) that `measure/results.py::build_run_result`
reads. The unchanged `client.Engine` drives it: `Engine(fake=FakeDut(...))` boots this
module in its popen gateway instead of the host, and nothing else differs.

What it models instead of sending frames is a DUT (`FakeDut`, in the spirit of
hyperfine's mock executor): a forwarding capacity (pps, or bit/s at a layer), random
loss, a fixed delay with optional jitter, and a FIFO buffer of `buffer_frames` in
front of the capacity. Per run it works out, in closed form and never per packet,
what the pacing phases offered (exactly as many frames as the native TX loop's
schedule sends), what the buffer took, dropped and still held when TX ended (and
drained after, like a real shaper's backlog), and what arrived when. A 60 s trial
takes milliseconds: the fake never waits; its polls walk the run's states
(sending, draining, done) at once.

The generator side is ideal: no lag, no time off the CPU, no frame refused, no
drop on its own RX ports, links always up. Deterministic: the same DUT (its seed)
and the same sequence of runs give the same results.

It never imports the cffi extension or the facade. The C facts it needs (constants,
result struct fields, the TX end reasons) come from `_native_facts`, generated from
native/include/netload_api.h; the histogram layout models native/src/hist.c, and
tests/unit/test_fake_engine.py checks it against the built extension where there is one.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

import numpy as np

from .. import _native_facts as facts
from .. import errors
from ..units import FCS_BYTES, as_duration, as_rate, check_layer, frame_bits
from .wire import pack_array

__all__ = ["FAKE_ABI_VERSION", "FakeDut", "FakeHost", "as_fake_dut", "hist_lower_bounds_ns",
           "parse_fake_engine", "serve"]

#: NETLOAD_ABI_VERSION of the netload_api.h this fake answers as (its hello).
FAKE_ABI_VERSION = facts.ABI_VERSION
#: The C constants the client reads from hello, as the facade gives them.
CONSTANTS = {"abi_version": facts.ABI_VERSION, "signature_bytes": facts.SIGNATURE_BYTES,
             "min_frame_bytes": facts.MIN_FRAME_BYTES, "max_frame_bytes": facts.MAX_FRAME_BYTES,
             "max_fields": facts.MAX_FIELDS, "max_frames": facts.MAX_FRAMES,
             "max_run_s": facts.MAX_RUN_S}
HIST_SUB_BITS = facts.HIST_SUB_BITS        # gap and IPDV histograms
LATENCY_SUB_BITS = facts.LATENCY_SUB_BITS  # latency histograms by default
HIST_MIN_SUB_BITS, HIST_MAX_SUB_BITS = facts.HIST_MIN_SUB_BITS, facts.HIST_MAX_SUB_BITS
MAX_BURST = facts.MAX_BURST
MAX_STREAMS = facts.MAX_STREAMS
FAKE_TSC_HZ = 1_000_000_000  # the fake's clock: whole ns, one tick per ns
FAKE_DRIVER = "net_fake"
FAKE_MTU = 1500
RX_BURST = 32                # frames per RX burst, for the queue's burst counter

# The result structs' fields in declaration order, as the facade reads them.
TX_STATS = facts.TX_STATS_FIELDS
RX_STREAM_STATS = facts.RX_STREAM_STATS_FIELDS
RX_QUEUE_STATS = facts.RX_QUEUE_STATS_FIELDS
PORT_STATS = ("ipackets", "opackets", "ibytes", "obytes", "imissed", "ierrors", "oerrors",
              "rx_nombuf")
TX_END = {"none": facts.TX_END_NONE, "count": facts.TX_END_COUNT,
          "duration": facts.TX_END_DURATION, "phases": facts.TX_END_PHASES,
          "stopped": facts.TX_END_STOPPED}

DEFAULT_CAPACITY_PPS = 100_000.0
DEFAULT_PORT_RATE_BPS = 10e9


# ---- the DUT model ---------------------------------------------------------------------


def _number(value: Any, key: str, example: str, *, integer: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not math.isfinite(value) or (integer and value != int(value)):
        kind = "a whole number" if integer else "a finite number"
        raise errors.NetloadConfigError(f"fake DUT {key}={value!r}: give {kind}, e.g. {example}")
    return float(value)


@dataclass(frozen=True)
class FakeDut:
    """The DUT the fake engine models; every trial of a fake session goes through it.

    - ``capacity_pps``: frames per second it forwards (default 100 kpps), or
      ``capacity_bps``: bits per second counted at ``capacity_layer`` ("l1", "l2",
      "l2-nofcs"; default "l2"), so that its frame rate depends on the frame size as a
      shaper's does. Give at most one of the two.
    - ``loss_ratio``: share of the frames it drops at random on ingress (seeded binomial).
    - ``delay_s``: its fixed one-way delay; ``jitter_s``: each frame's delay is drawn
      uniformly from [delay_s, delay_s + jitter_s] (the fake counts no reordering).
    - ``buffer_frames``: its FIFO in front of the capacity. Load above the capacity
      fills it, then the excess is dropped (tail drop); what it holds when TX ends
      leaves at the capacity afterwards (backlog) and arrives in the drain.
    - ``port_rate_bps``: the L1 line rate of the fake generator's ports (maximum-rate
      runs send at it; the fake topology declares it as its line rate).
    - ``seed``: the random loss and jitter draws (same seed, same runs: same results).
    """

    capacity_pps: float | None = None
    capacity_bps: float | None = None
    capacity_layer: str = "l2"
    loss_ratio: float = 0.0
    delay_s: float = 10e-6
    jitter_s: float = 0.0
    buffer_frames: int = 1000
    port_rate_bps: float = DEFAULT_PORT_RATE_BPS
    seed: int = 1

    def __post_init__(self) -> None:
        if self.capacity_pps is not None and self.capacity_bps is not None:
            raise errors.NetloadConfigError(
                f"fake DUT: capacity_pps={self.capacity_pps!r} and capacity_bps="
                f"{self.capacity_bps!r} both given; give one of them (a frame rate, or a bit "
                "rate at capacity_layer)")
        if self.capacity_pps is None and self.capacity_bps is None:
            object.__setattr__(self, "capacity_pps", DEFAULT_CAPACITY_PPS)
        for key in ("capacity_pps", "capacity_bps", "port_rate_bps"):
            value = getattr(self, key)
            if value is not None:
                example = "50000" if key == "capacity_pps" else "'20Mbit/s'"
                if _number(value, key, example) <= 0:
                    raise errors.NetloadConfigError(
                        f"fake DUT {key}={value!r}: give a rate > 0, e.g. {example}")
                object.__setattr__(self, key, float(value))
        check_layer(self.capacity_layer, what="fake DUT capacity_layer")
        loss = _number(self.loss_ratio, "loss_ratio", "0.01")
        if not 0 <= loss < 1:
            raise errors.NetloadConfigError(
                f"fake DUT loss_ratio={self.loss_ratio!r}: give a share in [0, 1), e.g. 0.01")
        object.__setattr__(self, "loss_ratio", loss)
        for key in ("delay_s", "jitter_s"):
            value = _number(getattr(self, key), key, "100e-6 or '100us'")
            if not 0 <= value <= 60:
                raise errors.NetloadConfigError(
                    f"fake DUT {key}={getattr(self, key)!r}: give seconds from 0 to 60, "
                    "e.g. 100e-6 or '100us'")
            object.__setattr__(self, key, value)
        for key, example in (("buffer_frames", "1000"), ("seed", "1")):
            value = _number(getattr(self, key), key, example, integer=True)
            if value < 0 or value >= 1 << 63:
                raise errors.NetloadConfigError(
                    f"fake DUT {key}={getattr(self, key)!r}: give a whole number >= 0, "
                    f"e.g. {example}")
            object.__setattr__(self, key, int(value))

    def capacity_at(self, frame_size: float) -> float:
        """The frames per second it forwards of frames of `frame_size` bytes (FCS included)."""
        if self.capacity_pps is not None:
            return self.capacity_pps
        assert self.capacity_bps is not None
        return self.capacity_bps / frame_bits(frame_size, self.capacity_layer)

    def params(self) -> dict[str, Any]:
        """The fields that differ from the defaults (plain types: what boots the fake host)."""
        default = FakeDut()
        return {f.name: getattr(self, f.name) for f in fields(self)
                if getattr(self, f.name) is not None
                and (f.name == "capacity_pps" or getattr(self, f.name) != getattr(default, f.name))}

    def spec(self) -> str:
        """The engine setting that makes this DUT: 'fake:capacity_pps=50000,...'."""
        parts = []
        for key, value in self.params().items():
            if key == "capacity_bps":
                value = f"{value:g}bit/s@{self.capacity_layer}"
            elif key == "capacity_layer":
                continue
            parts.append(f"{key}={value:g}" if isinstance(value, float) else f"{key}={value}")
        return "fake:" + ",".join(parts)

    def describe(self) -> str:
        cap = (f"{self.capacity_pps:,.0f} pps" if self.capacity_pps is not None else
               f"{self.capacity_bps:,.0f} bit/s ({self.capacity_layer})")
        return (f"capacity {cap}, loss {self.loss_ratio:g}, delay {self.delay_s * 1e6:g} us"
                + (f" + up to {self.jitter_s * 1e6:g} us jitter" if self.jitter_s else "")
                + f", buffer {self.buffer_frames} frames, ports {self.port_rate_bps:g} bit/s, "
                f"seed {self.seed}")


FAKE_KEYS = tuple(f.name for f in fields(FakeDut))
_FAKE_FIX = ("write fake or fake:key=value,... with keys " + ", ".join(FAKE_KEYS)
             + ", e.g. fake:capacity_pps=50000,loss_ratio=0,delay_s=100us,buffer_frames=1000")


def _parse_value(key: str, text: str) -> Any:
    try:
        if key in ("capacity_bps", "port_rate_bps"):
            rate = as_rate(text, what=f"fake DUT {key}")
            if rate.kind != "bps":
                raise errors.NetloadConfigError(
                    f"fake DUT {key}={text!r}: give a bit rate such as '20Mbit/s'"
                    + (" (capacity_pps takes a frame rate)" if key == "capacity_bps" else ""))
            return (rate.value, rate.layer) if key == "capacity_bps" else rate.value
        if key in ("delay_s", "jitter_s"):
            return as_duration(text, what=f"fake DUT {key}").seconds
        if key == "capacity_layer":
            return text
        if key == "capacity_pps" and text[-1:].isalpha():
            rate = as_rate(text, what="fake DUT capacity_pps")
            if rate.kind != "pps":
                raise errors.NetloadConfigError(
                    f"fake DUT capacity_pps={text!r}: give a frame rate such as 50000 or "
                    "'50kpps' (capacity_bps takes a bit rate)")
            return rate.value
        number = float(text)
    except errors.NetloadConfigError:
        raise
    except ValueError:
        raise errors.NetloadConfigError(
            f"fake DUT {key}={text!r} is not a number; {_FAKE_FIX}") from None
    if key in ("buffer_frames", "seed") and number.is_integer():
        return int(number)
    return number


def parse_fake_engine(value: str) -> FakeDut | None:
    """The DUT of an engine setting 'fake' or 'fake:key=value,...'; None for any other
    setting (an execnet gateway). NetloadConfigError names the key and the fix."""
    name, colon, rest = value.strip().partition(":")
    if name.strip() != "fake":
        return None
    params: dict[str, Any] = {}
    if colon and not rest.strip():
        raise errors.NetloadConfigError(f"{value!r} has no DUT parameters after ':'; "
                                        f"{_FAKE_FIX}")
    for item in rest.split(",") if rest.strip() else ():
        key, eq, text = (s.strip() for s in item.partition("="))
        if not eq or not key or not text:
            raise errors.NetloadConfigError(f"{value!r}: {item.strip()!r} is not key=value; "
                                            f"{_FAKE_FIX}")
        if key not in FAKE_KEYS:
            raise errors.NetloadConfigError(f"{value!r}: the fake DUT has no parameter "
                                            f"{key!r}; {_FAKE_FIX}")
        if key in params:
            raise errors.NetloadConfigError(f"{value!r}: {key} is given twice; give it once")
        parsed = _parse_value(key, text)
        if key == "capacity_bps":
            params[key], layer = parsed
            if "@" in text:
                params["capacity_layer"] = layer
        else:
            params[key] = parsed
    return FakeDut(**params)


def as_fake_dut(value: FakeDut | Mapping[str, Any] | str) -> FakeDut:
    """A FakeDut from itself, its parameters (a mapping) or a spec ('fake:...' or the
    part after the colon)."""
    if isinstance(value, FakeDut):
        return value
    if isinstance(value, Mapping):
        unknown = sorted(set(value) - set(FAKE_KEYS))
        if unknown:
            raise errors.NetloadConfigError(f"fake DUT: no parameter {unknown[0]!r}; "
                                            f"{_FAKE_FIX}")
        return FakeDut(**value)
    if isinstance(value, str):
        text = value.strip()
        dut = parse_fake_engine(text if text.startswith("fake") else f"fake:{text}")
        if dut is None:  # pragma: no cover - the prefix makes it a fake setting
            raise errors.NetloadConfigError(f"fake={value!r}: {_FAKE_FIX}")
        return dut
    raise errors.NetloadConfigError(
        f"fake={value!r}: give a FakeDut, a mapping of its parameters or a spec; {_FAKE_FIX}")


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


def _schedule(entry: dict[str, Any], port_gap_ps: int, duration_ns: int,
              stop_ns: int | None) -> _Sent:
    phases = entry.get("phases") or [{"gaps_ps": b"", "n_gaps": 0, "duration_ns": 0}]
    count = int(entry.get("count", 0))
    limits = [x * 1000 for x in (duration_ns or None, stop_ns) if x is not None]
    limit = min(limits) if limits else None
    t, sent, last_ps = 0, 0, 0
    segments: list[tuple[float, float, float]] = []
    walked: list[_Phase] = []
    reason, end_ps = "phases", 0
    for ph in phases:
        n_gaps = int(ph["n_gaps"])
        gaps = np.frombuffer(ph["gaps_ps"], dtype="<u8")[:n_gaps].astype(np.int64) \
            if n_gaps else np.array([port_gap_ps], dtype=np.int64)
        starts = np.concatenate(([0], np.cumsum(gaps)[:-1])).astype(np.int64)
        period = int(gaps.sum())
        end = t + int(ph["duration_ns"]) * 1000 if int(ph["duration_ns"]) else None
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

    def outcome(self, entries: list[dict[str, Any]], streams: list[FakeStream],
                rx: list[tuple[int, int]], duration_ns: int, drain_ns: int,
                stop_ns: int | None, sub_bits: int, timing_samples: int,
                capture_frames: int, capture_snaplen: int) -> _Outcome:
        dut, n = self.dut, len(entries)
        sends = [
            _Sent() if e.get("expect_only") else
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
        rx_bytes = sum(row["bytes"] for row in rows_rx)
        queues = [{"packets": total_rx if q == 0 else 0, "bytes": rx_bytes if q == 0 else 0,
                   "bursts": -(-total_rx // RX_BURST) if q == 0 else 0} for q in range(len(rx))]
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


# ---- the host --------------------------------------------------------------------------


@dataclass
class _FakeRun:
    args: dict[str, Any]
    outcome: _Outcome
    run_no: int
    polls: int = 0
    elapsed_ns: int = 0
    stopped: bool = False


class FakeHost:
    """The fake's answers to the engine host's requests (host.py's `Host`, op for op)."""

    def __init__(self, dut: FakeDut) -> None:
        self.dut = dut
        self.ports: dict[int, dict[str, Any]] = {}
        self.counters: dict[int, dict[str, int]] = {}
        self.streams: dict[int, FakeStream] = {}
        self.runs: dict[int, _FakeRun] = {}
        self._ids = 0
        self._port_ids = 0
        self._stream_ids = 0
        self._run_no = 0
        self.eal_args: list[str] = []  # none: serve's cleanup has no runtime dir to remove
        self._log: Any = None

    def _next(self) -> int:
        self._ids += 1
        return self._ids

    def log(self, line: str) -> None:
        if self._log is not None:
            self._log.write(f"fake engine host: {line}\n")
            self._log.flush()

    # ---- lifecycle --------------------------------------------------------------------

    def op_hello(self, eal_args: list[str] | None = None, log_path: str | None = None,
                 cpu_wait_s: float = 0.0, client: dict[str, Any] | None = None,
                 **eal_options: Any) -> dict[str, Any]:
        if log_path:
            # lives as long as the process, as the host's fault log does
            self._log = open(log_path, "a", encoding="utf-8")  # noqa: SIM115
        self.log(f"pid {os.getpid()}, no DPDK; DUT {self.dut.describe()}")
        return {"constants": dict(CONSTANTS), "workers": 1, "eal_args": [],
                "main_cpu": None, "worker_cpus": [], "tsc_hz": FAKE_TSC_HZ,
                "hist_lower_ns": hist_lower_bounds_ns(HIST_SUB_BITS).tolist(),
                "pid": os.getpid(),
                "dpdk_version": f"none: fake engine ({self.dut.spec()})",
                "cpu_note": None, "busy_cpus": [], "fake_dut": asdict(self.dut)}

    def op_close(self) -> None:
        self.log("closed")
        self.runs.clear()
        self.streams.clear()
        self.ports.clear()

    def op_mem_stats(self) -> dict[str, int]:
        """The real engine's memory report, modelled: no heap, and no pools (the fake
        builds no frames), but the same keys."""
        return {"heap_bytes": 0, "heap_used_bytes": 0, "heap_largest_free_bytes": 0,
                "shared_pools": 0, "private_pools": 0, "shared_pool_mbufs": 0,
                "shared_pool_bytes": 0, "template_serials": 0}

    def op_hist_bench(self, n: int) -> int:
        raise errors.NetloadEnvironmentError(
            "the fake engine has no native histogram to benchmark; run the benchmark on "
            "the real engine")

    def op_crash(self) -> None:
        """Test hook: end the host as a native crash would (SIGABRT)."""
        self.log("crash requested: aborting")
        os.abort()

    # ---- ports ------------------------------------------------------------------------

    def _port(self, port_id: int) -> dict[str, Any]:
        if port_id not in self.ports:
            raise errors.NetloadEnvironmentError(f"port {port_id} info: no such port open in "
                                                 "the fake engine")
        return self.ports[port_id]

    def op_port_open(self, device: str, rx_queues: int = 1, tx_queues: int = 1,
                     mtu: int = 0, hw_timestamps: bool | str = "auto",
                     **options: Any) -> dict[str, Any]:
        if hw_timestamps is True:
            raise errors.NetloadEnvironmentError(
                f"port '{device}': the fake engine's ports have no hardware timestamps; "
                "open it with hw_timestamps=False or 'auto'")
        if any(p["name"] == device for p in self.ports.values()):
            raise errors.NetloadEnvironmentError(f"port '{device}': it is open already")
        port_id = self._port_ids
        self._port_ids += 1
        speed = round(self.dut.port_rate_bps / 1e6)
        self.ports[port_id] = {
            "port_id": port_id, "name": device, "driver": FAKE_DRIVER, "socket_id": 0,
            "mac": f"02:00:00:00:00:{port_id + 1:02x}", "mtu": int(mtu) or FAKE_MTU,
            "min_mtu": 68, "max_mtu": CONSTANTS["max_frame_bytes"] - 14,
            "max_rx_pktlen": CONSTANTS["max_frame_bytes"], "max_rx_queues": 64,
            "max_tx_queues": 64, "rx_offload_capa": 0, "tx_offload_capa": 0,
            "tx_offloads_enabled": 0,
            "tx_csum_offload": {"ipv4": False, "udp": False, "tcp": False},
            "has_timesync": False, "has_rx_timestamp": False, "has_read_clock": False,
            "hw_timestamps": False, "nic_clock_hz": 0, "has_queue_rate_limit": False,
            "link_up": True, "link_speed_mbps": speed, "link_full_duplex": True,
            "rx_queues": int(rx_queues), "tx_queues": int(tx_queues)}
        self.counters[port_id] = dict.fromkeys(PORT_STATS, 0)
        self.log(f"port {port_id} open: {device}")
        return dict(self.ports[port_id])

    def op_port_info(self, port_id: int) -> dict[str, Any]:
        return dict(self._port(port_id))

    def op_port_link(self, port_id: int) -> dict[str, Any]:
        """Always up, at the modelled ports' rate (as engine/link.py answers a real port)."""
        port = self._port(port_id)
        return {"up": True, "speed_mbps": int(port["link_speed_mbps"]) or None,
                "operstate": "up", "carrier": None, "source": "fake engine port",
                "carrier_down_count": 0, "speed_note": None}

    def op_port_stats(self, port_id: int) -> dict[str, int]:
        self._port(port_id)
        return dict(self.counters[port_id])

    def op_port_set_queue_rate(self, port_id: int, queue: int, mbps: int) -> None:
        raise errors.NetloadEnvironmentError(
            f"port {port_id} queue {queue} rate limit {mbps} Mbit/s: the fake engine's "
            "ports have no hardware rate limiting; use software pacing")

    # the modelled DUT answers ARP/ND at once: its MAC is made from the address asked for
    def op_port_set_addr(self, port_id: int, mac: str, ip: str, vlan: int = 0,
                         reply_pps: int = 0) -> None:
        self._port(port_id)["address"] = {"mac": mac, "ip": ip, "vlan": vlan}

    def op_port_announce(self, port_id: int) -> None:
        if "address" not in self._port(port_id):
            raise errors.NetloadEnvironmentError(
                f"announce: port {port_id} has no address; set one first")

    def op_port_resolve(self, port_id: int, peer_ip: str, timeout_ms: int,
                        retry_ms: int) -> str:
        import ipaddress

        self.op_port_announce(port_id)
        return "02:00:00:00:01:" + f"{ipaddress.ip_address(peer_ip).packed[-1]:02x}"

    def op_port_nd_stats(self, port_id: int) -> dict[str, int]:
        self._port(port_id)
        return {"arp_requests": 0, "arp_replies": 0, "ns_received": 0, "na_sent": 0,
                "rate_limited": 0, "tx_refused": 0, "other": 0, "peer_seen": 0}

    def op_port_close(self, port_id: int) -> None:
        self._port(port_id)
        for handle in [h for h, s in self.streams.items() if s.port_id == port_id]:
            self.streams.pop(handle)
        self.ports.pop(port_id)

    # ---- streams ----------------------------------------------------------------------

    def op_stream_load(self, port_id: int, spec: dict[str, Any],
                       pool_mbufs: int = 0) -> dict[str, Any]:
        if port_id not in self.ports:
            raise errors.NetloadEnvironmentError(f"stream: port {port_id} is not open")
        name = spec.get("name")
        frames = [bytes(f) for f in spec.get("frames", ())]
        sequence = [int(i) for i in spec.get("sequence") or [0]]
        where = f"stream {name!r}"
        if not 1 <= len(frames) <= CONSTANTS["max_frames"]:
            raise errors.NetloadConfigError(f"{where}: stream: {len(frames)} frame templates; "
                                            f"give 1 to {CONSTANTS['max_frames']}")
        bad = [i for i in sequence if not 0 <= i < len(frames)]
        if bad:
            raise errors.NetloadConfigError(f"{where}: stream: sequence entry names frame "
                                            f"{bad[0]} of {len(frames)}")
        if len(spec.get("fields", ())) > CONSTANTS["max_fields"]:
            raise errors.NetloadConfigError(f"{where}: stream: {len(spec['fields'])} fields; "
                                            f"at most {CONSTANTS['max_fields']}")
        for i, f in enumerate(frames):
            if not CONSTANTS["min_frame_bytes"] <= len(f) <= CONSTANTS["max_frame_bytes"]:
                raise errors.NetloadConfigError(
                    f"{where}: stream: frame {i} is {len(f)} bytes without FCS; give "
                    f"{CONSTANTS['min_frame_bytes']} to {CONSTANTS['max_frame_bytes']}")
        if len(self.streams) >= MAX_STREAMS:
            raise errors.NetloadConfigError(
                f"{where}: stream: {MAX_STREAMS} streams are loaded, the most one engine "
                "holds; free the streams no run sends any more, or spread them over "
                "several engines")
        self._stream_ids += 1
        handle = self._next()
        self.streams[handle] = FakeStream(self._stream_ids, port_id, str(name or ""), frames,
                                          sequence, int(spec.get("stamp_every", 1) or 1))
        return {"handle": handle, "stream_id": self._stream_ids, "csum_offloaded": False}

    def op_stream_free(self, handle: int) -> None:
        self.streams.pop(handle, None)

    # ---- runs -------------------------------------------------------------------------

    def _check_run(self, tx: list[dict[str, Any]], rx: list[tuple[int, int]],
                   timing: dict[str, Any]) -> list[FakeStream]:
        if timing.get("forwarders"):
            raise errors.NetloadEnvironmentError(
                "run start: the fake engine models its DUT itself and runs no delay lines "
                "(forward=...); use the real engine for the reference DUT")
        if not tx and not rx:
            raise errors.NetloadConfigError("run start: run: no TX stream, RX queue or "
                                            "forwarder")
        limit = CONSTANTS["max_run_s"] * 10**9
        for key in ("duration_ns", "drain_ns", "start_delay_ns"):
            if not 0 <= int(timing.get(key, 0)) <= limit:
                raise errors.NetloadConfigError(
                    f"run start: run: {key} {timing.get(key)}; at most "
                    f"{CONSTANTS['max_run_s']} s (24 h)")
        if int(timing.get("burst", 0)) > MAX_BURST:
            raise errors.NetloadConfigError(f"run start: run: burst {timing['burst']}; at "
                                            f"most {MAX_BURST}")
        bits = int(timing.get("latency_sub_bits") or LATENCY_SUB_BITS)
        if not HIST_MIN_SUB_BITS <= bits <= HIST_MAX_SUB_BITS:
            raise errors.NetloadConfigError(f"run start: latency histogram: {bits} sub-bucket "
                                            f"bits; give {HIST_MIN_SUB_BITS} to "
                                            f"{HIST_MAX_SUB_BITS}")
        if len(tx) > MAX_STREAMS:
            raise errors.NetloadConfigError(f"run start: run: {len(tx)} TX entries; at most "
                                            f"{MAX_STREAMS}")
        try:
            streams = [self.streams[e["handle"]] for e in tx]
        except KeyError as exc:
            raise errors.NetloadConfigError(
                f"stream handle {exc} is not loaded in this engine; load it again") from None
        for p in {s.port_id for s in streams} | {int(p) for p, _ in rx}:
            if p not in self.ports:
                raise errors.NetloadConfigError(
                    f"port {p} was closed; open it again before using it in a run")
        handles = [e["handle"] for e in tx]
        if len(set(handles)) != len(handles):
            raise errors.NetloadConfigError("run start: run: a stream is listed twice")
        for i, e in enumerate(tx):
            phases = e.get("phases") or []
            if len(phases) > 1024:
                raise errors.NetloadConfigError(f"run start: run: TX entry {i} has "
                                                f"{len(phases)} phases; give 1 to 1024")
            for k, ph in enumerate(phases):
                if int(ph["duration_ns"]) == 0 and k + 1 < len(phases):
                    raise errors.NetloadConfigError(
                        f"run start: run: TX entry {i} phase {k} has no duration, but "
                        "phases follow it")
                gaps = np.frombuffer(ph["gaps_ps"], dtype="<u8")[:int(ph["n_gaps"])]
                if len(gaps) and int(gaps.min()) == 0:
                    raise errors.NetloadConfigError(
                        f"run start: run: TX entry {i} phase {k} has a gap of 0 ps; give "
                        "1 ps or more")
            bounded = bool(phases) and int(phases[-1]["duration_ns"]) > 0
            if not e.get("expect_only") and not int(e.get("count", 0)) and \
                    not int(timing.get("duration_ns", 0)) and not bounded:
                raise errors.NetloadConfigError(
                    f"run start: run: TX entry {i} has no count and the run no duration; "
                    "give one of them")
        return streams

    def _work_out(self, args: dict[str, Any], run_no: int, stop_ns: int | None) -> _Outcome:
        rng = np.random.default_rng([self.dut.seed, run_no])
        t = args["timing"]
        return _Model(self.dut, rng).outcome(
            args["tx"], args["streams"], args["rx"], int(t.get("duration_ns", 0)),
            int(t.get("drain_ns", 0)), stop_ns,
            int(t.get("latency_sub_bits") or LATENCY_SUB_BITS),
            int(t.get("timing_samples", 0)), int(t.get("capture_frames", 0)),
            int(t.get("capture_snaplen", 0)))

    def op_run_start(self, tx: list[dict[str, Any]], rx: list[tuple[int, int]],
                     **timing: Any) -> int:
        rx = [(int(p), int(q)) for p, q in rx]
        streams = self._check_run(tx, rx, timing)
        self._run_no += 1
        args = {"tx": tx, "rx": rx, "streams": streams, "timing": timing}
        run_id = self._next()
        self.runs[run_id] = _FakeRun(args, self._work_out(args, self._run_no, None),
                                     self._run_no)
        return run_id

    def _run(self, run_id: int) -> _FakeRun:
        if run_id not in self.runs:
            raise errors.NetloadConfigError(f"run {run_id} is not running in this engine")
        return self.runs[run_id]

    def op_run_poll(self, run_id: int, wait_ms: int = 100) -> dict[str, Any]:
        """Sending, then draining, then done: a run's states, one per poll, at once."""
        run = self._run(run_id)
        o = run.outcome
        run.polls += 1
        if run.stopped or run.polls >= 3 or o.tx_end_ns == 0:
            state, elapsed, tx, rx = "done", o.end_ns, o.tx_packets, o.rx_packets
        elif run.polls == 1:
            state, elapsed = "sending", o.tx_end_ns // 2
            tx, rx = o.tx_packets // 2, o.rx_packets // 2
        else:
            state, elapsed, tx, rx = "draining", o.tx_end_ns, o.tx_packets, o.rx_packets
        run.elapsed_ns = elapsed
        return {"state": state, "elapsed_ns": int(elapsed), "tx_packets": int(tx),
                "rx_packets": int(rx), "end_ns": int(run.args["timing"].get("duration_ns", 0))}

    def op_run_stop(self, run_id: int) -> None:
        """TX stops where the last poll found it: the run is worked out again, to then."""
        run = self._run(run_id)
        if not run.stopped and run.polls and run.elapsed_ns < run.outcome.tx_end_ns:
            run.outcome = self._work_out(run.args, run.run_no, run.elapsed_ns)
        run.stopped = True

    def op_run_results(self, run_id: int) -> dict[str, Any]:
        self._run(run_id)
        run = self.runs.pop(run_id)
        o = run.outcome
        ports = sorted({s.port_id for s in run.args["streams"]} |
                       {p for p, _ in run.args["rx"]})
        deltas = {}
        for p in ports:
            got = o.port_counts.get(p, dict.fromkeys(PORT_STATS, 0))
            if p in self.counters:
                for k, v in got.items():
                    self.counters[p][k] += v
            deltas[p] = {**got, "iface_rx_dropped": 0, "iface_tx_dropped": 0,
                         "iface_ring_drops": 0, "iface_carrier_down": 0, "link_up_before": 1,
                         "link_up_after": 1}
        return {"arrays": {k: pack_array(v) for k, v in o.arrays.items()}, "ports": deltas}


def serve(channel: Any, dut: Mapping[str, Any] | None = None) -> None:
    """Answer an engine client's requests with the fake host, through the engine host's
    own serve loop (same replies, same errors, same ending)."""
    from .host import serve as host_serve

    model = FakeDut(**(dut or {}))
    host_serve(channel, make_host=lambda: FakeHost(model))


if __name__ == "__channelexec__":
    serve(channel)  # type: ignore[name-defined]  # noqa: F821
