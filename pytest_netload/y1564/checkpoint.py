"""The service performance test's checkpoint: an append-only JSON-lines file.

A 24 h test must survive a crash of the harness: every interval is appended as one line,
and the file is flushed and fsync'ed at least every ``every`` intervals, so a crash loses
at most that many. The file is never rewritten (O(1) work per interval).

Lines, in order (one JSON object each)::

    {"type": "header", "format": "netload-y1564-spt", "version": 1,
     "services": [Service.as_dict(), ...], "parameters": {"duration_s": ..., ...}}
    {"type": "layout", "lower_ns": [0, 1, 2, ...]}         # before the first latency
    {"type": "interval", "i": 0, "s": {"voice": RECORD, ...}}
    ...

A RECORD holds what the run needs of a `ServiceSample`: ``tx``, ``rx`` (frames), ``d``
(duration s), ``off`` (offered L2 bit/s), ``v`` (valid), ``why`` (invalid reason) and
``lat``: None, or the latency histogram as sparse buckets -- ``b`` (bucket indices into
the layout), ``c`` (their counts) -- with ``clock``, ``res`` (resolution ns), ``dup``,
``reo`` and ``jit`` (jitter ns) of the LatencyResult. A last line cut short by a crash is
ignored (and cut off before appending).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

import numpy as np

from ..errors import NetloadConfigError
from .measurer import ServiceSample

__all__ = ["CheckpointWriter", "FORMAT", "read_checkpoint", "record_of"]

FORMAT = "netload-y1564-spt"
VERSION = 1

Record = dict[str, Any]


def record_of(sample: ServiceSample, layout: Layout) -> Record:
    """The checkpoint record of one service's sample."""
    lat: dict[str, Any] | None = None
    latency = sample.latency
    if latency is not None and not latency.empty:
        layout.check(latency.histogram.lower_ns)
        counts = latency.histogram.counts
        nz = np.flatnonzero(counts)
        lat = {"b": nz.tolist(), "c": counts[nz].tolist(), "clock": latency.clock,
               "res": latency.resolution_ns, "dup": latency.duplicates,
               "reo": latency.reordered, "jit": latency.jitter_ns}
    return {"tx": int(sample.tx_frames), "rx": int(sample.rx_frames),
            "d": float(sample.duration_s), "off": float(sample.offered_bps),
            "v": bool(sample.valid), "why": sample.invalid_reason, "lat": lat}


class Layout:
    """The latency bucket layout of a run (the engine's lower bounds, ns); set by the
    first sample with latency samples, the same for every later one."""

    def __init__(self) -> None:
        self.lower_ns: np.ndarray | None = None
        self._seen: object = None
        self.new = False  # set until the writer has written it

    def check(self, lower_ns: np.ndarray) -> None:
        if lower_ns is self._seen:
            return
        if self.lower_ns is None:
            self.set(lower_ns)
            self.new = True
        elif not np.array_equal(lower_ns, self.lower_ns):
            raise NetloadConfigError(
                "latency histograms of the service performance test changed their bucket "
                "layout mid-run; record every interval with the same latency_digits")
        self._seen = lower_ns

    def set(self, lower_ns: Any) -> None:
        self.lower_ns = np.asarray(lower_ns, dtype=np.uint64)
        self._seen = None


def header_of(services: list[dict[str, Any]], parameters: dict[str, Any]) -> dict[str, Any]:
    return {"type": "header", "format": FORMAT, "version": VERSION, "services": services,
            "parameters": parameters}


def _differences(expected: dict[str, Any], found: dict[str, Any]) -> list[str]:
    out = []
    for key in ("format", "version"):
        if found.get(key) != expected[key]:
            out.append(f"{key} {found.get(key)!r} (this run: {expected[key]!r})")
    names = [s.get("name") for s in found.get("services", [])]
    want = [s["name"] for s in expected["services"]]
    if names != want:
        out.append(f"services {names} (this run: {want})")
    else:
        for old, new in zip(found["services"], expected["services"], strict=True):
            keys = [k for k in new if old.get(k) != new[k]]
            if keys:
                out.append(f"service {new['name']!r} " + ", ".join(
                    f"{k}={old.get(k)!r} (this run: {new[k]!r})" for k in keys))
    params_old, params_new = found.get("parameters", {}), expected["parameters"]
    for k in params_new:
        if params_old.get(k) != params_new[k]:
            out.append(f"{k}={params_old.get(k)!r} (this run: {params_new[k]!r})")
    return out


def read_checkpoint(path: Path, header: dict[str, Any],
                    layout: Layout) -> tuple[list[Mapping[str, Record]], int]:
    """The interval records of a checkpoint whose header matches ``header``, and the byte
    offset after the last complete line (where appending goes on). An empty file, or one
    whose only line is cut short, has no intervals (offset 0)."""
    data = path.read_bytes()
    intervals: list[Mapping[str, Record]] = []
    end, pos, first, lineno = 0, 0, True, 0
    expected = json.loads(json.dumps(header))  # as JSON reads it back (tuples -> lists)
    while pos < len(data):
        nl = data.find(b"\n", pos)
        if nl < 0:  # a line without its newline was cut short by a crash: ignored
            break
        lineno += 1
        try:
            obj = json.loads(data[pos:nl])
        except ValueError:
            raise NetloadConfigError(
                f"checkpoint {str(path)!r}: line {lineno} is not JSON; the file "
                "is damaged: delete it (the run starts over) or pass resume=False with "
                "another checkpoint path") from None
        if first:
            if not isinstance(obj, dict) or obj.get("type") != "header":
                raise NetloadConfigError(f"checkpoint {str(path)!r} does not start with a "
                                         f"{FORMAT} header; delete it or give another path")
            diff = _differences(expected, obj)
            if diff:
                raise NetloadConfigError(
                    f"checkpoint {str(path)!r} is of another run: " + "; ".join(diff)
                    + "; delete the file, or pass resume=False with another checkpoint path")
            first = False
        elif obj.get("type") == "layout":
            layout.set(obj["lower_ns"])
        elif obj.get("type") == "interval":
            if obj.get("i") != len(intervals):
                raise NetloadConfigError(
                    f"checkpoint {str(path)!r}: interval {obj.get('i')!r} follows "
                    f"{len(intervals) - 1}; the file is damaged: delete it")
            intervals.append(obj["s"])
        pos = end = nl + 1
    return intervals, end


class CheckpointWriter:
    """Appends lines; flushes and fsyncs every ``every`` intervals and on close."""

    def __init__(self, path: Path, every: int, *, offset: int | None = None,
                 header: dict[str, Any] | None = None) -> None:
        self.path = path
        self.every = every
        self._since = 0
        self._file: IO[str]
        if offset is None:
            try:
                self._file = open(path, "x", encoding="utf-8")  # noqa: SIM115
            except FileExistsError:
                raise NetloadConfigError(
                    f"checkpoint {str(path)!r} exists: it may hold intervals already "
                    "measured; pass resume=True to go on from it, or delete it") from None
            assert header is not None
            self._write(header)
            self.sync()
        else:
            with open(path, "r+b") as f:
                f.truncate(offset)  # drop a last line cut short by a crash
            self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115
            if offset == 0 and header is not None:
                self._write(header)
                self.sync()

    def _write(self, obj: dict[str, Any]) -> None:
        self._file.write(json.dumps(obj, separators=(",", ":"), allow_nan=False) + "\n")

    def interval(self, index: int, records: Mapping[str, Record], layout: Layout) -> None:
        if layout.new:
            assert layout.lower_ns is not None
            self._write({"type": "layout", "lower_ns": layout.lower_ns.tolist()})
            layout.new = False
        self._write({"type": "interval", "i": index, "s": records})
        self._since += 1
        if self._since >= self.every:
            self.sync()

    def sync(self) -> None:
        self._file.flush()
        os.fsync(self._file.fileno())
        self._since = 0

    def close(self) -> None:
        if not self._file.closed:
            self.sync()
            self._file.close()
