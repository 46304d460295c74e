"""Y.1564 §8.2 service performance test: every service at its CIR at once, for a long time.

The run is measured as consecutive intervals of ``interval_s`` (1 s, the Y.1563 availability
interval); the standard's durations are 15 min, 2 h and 24 h (any is allowed). A measurer
with ``measure_intervals(load, interval_s, count, on_interval)`` (the engine's) measures
them all in one run, traffic never pausing between two; one with only ``measure`` is
called once an interval. Per service:

- availability over the intervals (availability.py: Y.1563, SES when FLR > threshold);
- FLR, IR, FTD and FDV over the *available* intervals only, as Y.1563 counts them: the
  latency histograms of those intervals are merged (the rule of `LatencyResult.merge`)
  for the run's FTD (mean) and FDV (percentile minus minimum);
- the SAC verdict per criterion, and the per-interval series (for a plot).

An interval the generator failed (an invalid sample) or in which nothing was offered is
excluded from both the SAC and the availability, and counted; when more than
MAX_INVALID_RATIO of the intervals of a service are invalid the run is not valid (not the
DUT's failure). With ``checkpoint`` every interval is appended to a JSON-lines file
(checkpoint.py); ``resume=True`` goes on from one, and the result is the one an
uninterrupted run gives: live intervals and resumed ones go through the same records.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import NetloadConfigError
from ..measure import stats
from ..measure.histogram import LogHistogram
from ..measure.latency import LatencyResult
from ..units import run_seconds
from .availability import (AVAILABILITY_N, AVAILABILITY_THRESHOLD, AvailabilityResult,
                           AvailabilityTracker, check_n, check_threshold)
from .checkpoint import CheckpointWriter, Layout, Record, header_of, read_checkpoint, record_of
from .checks import Check, check, verdict
from .measurer import (FDV_QUANTILE, ServiceMeasurer, ServiceSample, check_quantile, fdv_of,
                       sample_of)
from .sct import IR_TOLERANCE, check_ir_tolerance
from .services import Service, check_services

__all__ = ["CHECKPOINT_EVERY_S", "INTERVAL_S", "MAX_INVALID_RATIO", "SPT_DURATION_S",
           "SptResult", "SptService", "service_performance_test"]

SPT_DURATION_S = 900.0
INTERVAL_S = 1.0
CHECKPOINT_EVERY_S = 10.0
#: A run with a larger share of invalid intervals (of any service) is not valid.
MAX_INVALID_RATIO = 0.1
NOTE = ("FLR, FTD, FDV and IR are over the available intervals only (ITU-T Y.1563); "
        "intervals the generator failed or with nothing offered are excluded from them and "
        "from the availability")
SERIES_FIELDS = ("flr", "ir_bps", "ftd_s", "fdv_s", "available", "valid")


@dataclass(frozen=True)
class SptService:
    """One service over the whole performance test."""

    service: Service
    tx_frames: int
    """Frames sent in the available intervals (likewise rx_frames)."""
    rx_frames: int
    available_s: float
    latency: LatencyResult | None
    fdv_quantile: float
    availability: AvailabilityResult
    invalid_intervals: int
    idle_intervals: int
    checks: tuple[Check, ...]
    passed: bool | None
    reason: str
    series: Mapping[str, tuple[Any, ...]]
    """Per interval: flr, ir_bps, ftd_s, fdv_s (None where not measured), available (None:
    excluded) and valid."""
    first_invalid: str | None = None
    """The first invalid interval and why the generator failed it ("interval 3: the
    generator ran ... late"); None: every interval was valid."""

    @property
    def lost(self) -> int:
        return max(self.tx_frames - self.rx_frames, 0)

    @property
    def flr(self) -> float | None:
        return self.lost / self.tx_frames if self.tx_frames else None

    @property
    def ir_bps(self) -> float | None:
        if not self.available_s:
            return None
        return self.rx_frames * self.service.frame_size * 8 / self.available_s

    @property
    def ftd_s(self) -> float | None:
        return None if self.latency is None else self.latency.mean_ns / 1e9

    @property
    def fdv_s(self) -> float | None:
        return fdv_of(self.latency, self.fdv_quantile)

    def as_dict(self) -> dict[str, Any]:
        return {
            "service": self.service.as_dict(), "tx_frames": self.tx_frames,
            "rx_frames": self.rx_frames, "lost": self.lost, "flr": self.flr,
            "ir_bps": self.ir_bps, "ftd_s": self.ftd_s, "fdv_s": self.fdv_s,
            "available_s": self.available_s, "availability": self.availability.as_dict(),
            "invalid_intervals": self.invalid_intervals, "idle_intervals": self.idle_intervals,
            "checks": [c.as_dict() for c in self.checks], "passed": self.passed,
            "reason": self.reason,
            "latency": None if self.latency is None else self.latency.as_dict(),
            "series": {k: list(v) for k, v in self.series.items()},
            "first_invalid": self.first_invalid,
        }


@dataclass(frozen=True)
class SptResult:
    """The service performance test of all services."""

    services: tuple[SptService, ...]
    duration_s: float
    interval_s: float
    intervals: int
    parameters: Mapping[str, Any]
    resumed_intervals: int = 0
    """Intervals read back from the checkpoint rather than measured by this call."""

    @property
    def invalid_ratio(self) -> float:
        worst = max(s.invalid_intervals for s in self.services)
        return worst / self.intervals if self.intervals else 0.0

    @property
    def valid(self) -> bool:
        """False when more than MAX_INVALID_RATIO of a service's intervals were invalid."""
        return self.invalid_ratio <= MAX_INVALID_RATIO

    @property
    def passed(self) -> bool:
        return self.valid and all(s.passed is True for s in self.services)

    def service(self, name: str) -> SptService:
        for s in self.services:
            if s.service.name == name:
                return s
        raise KeyError(f"no service {name!r}; the run has "
                       f"{[s.service.name for s in self.services]}")

    def failures(self) -> list[str]:
        out = []
        if not self.valid:
            first = next((f"; the first, of service {s.service.name!r}: {s.first_invalid}"
                          for s in self.services if s.first_invalid), "")
            out.append(f"the run is not valid: {self.invalid_ratio:.1%} of the intervals were "
                       f"invalid (the generator failed), more than {MAX_INVALID_RATIO:.0%}; "
                       f"not the DUT's failure: rerun it{first}")
        out += [f"service {s.service.name!r}: {s.reason}" for s in self.services
                if s.passed is not True]
        return out

    def as_dict(self) -> dict[str, Any]:
        return {"procedure": "y1564_spt", "duration_s": self.duration_s,
                "interval_s": self.interval_s, "intervals": self.intervals,
                "parameters": dict(self.parameters), "valid": self.valid,
                "invalid_ratio": self.invalid_ratio, "max_invalid_ratio": MAX_INVALID_RATIO,
                "passed": self.passed, "resumed_intervals": self.resumed_intervals,
                "note": NOTE, "services": [s.as_dict() for s in self.services]}


class _Layout(Layout):
    """The bucket layout with the arrays interval figures need, as Python lists."""

    def set(self, lower_ns: Any) -> None:
        super().set(lower_ns)
        assert self.lower_ns is not None
        h = LogHistogram(np.zeros_like(self.lower_ns), self.lower_ns)
        self.lower = self.lower_ns.tolist()
        self.upper = h.upper_ns.tolist()
        self.mid = h.mid_ns.tolist()


class _Run:
    """One service's run: the availability state machine, the intervals not decided yet,
    the sums over the available ones, and the series."""

    def __init__(self, service: Service, threshold: float, n: int, quantile: float,
                 layout: _Layout) -> None:
        self.service = service
        self.q = quantile
        self.layout = layout
        self.tracker = AvailabilityTracker(threshold, n, on_decide=self._decided)
        self.pending: dict[int, Record] = {}
        self.tx = self.rx = 0
        self.seconds = 0.0
        self.acc: list[int] | None = None
        self.last_lat: dict[str, Any] | None = None
        self.dup = self.reo = 0
        self.invalid = self.idle = 0
        self.first_invalid: str | None = None
        self.series: dict[str, list[Any]] = {k: [] for k in SERIES_FIELDS if k != "available"}

    def add(self, index: int, rec: Record) -> None:
        s = self.series
        valid = rec["v"]
        s["valid"].append(valid)
        if not valid:
            self.invalid += 1
            if self.first_invalid is None:
                self.first_invalid = f"interval {index + 1}: {rec.get('why') or 'invalid'}"
        elif rec["tx"] == 0:
            self.idle += 1
        if not valid or rec["tx"] == 0:
            for k in ("flr", "ir_bps", "ftd_s", "fdv_s"):
                s[k].append(None)
            self.tracker.add(None)
            return
        flr = max(rec["tx"] - rec["rx"], 0) / rec["tx"]
        s["flr"].append(flr)
        s["ir_bps"].append(rec["rx"] * self.service.frame_size * 8 / rec["d"])
        ftd, fdv = self._figures(rec["lat"])
        s["ftd_s"].append(ftd)
        s["fdv_s"].append(fdv)
        self.pending[index] = rec
        self.tracker.add(flr)

    def _figures(self, lat: dict[str, Any] | None) -> tuple[float | None, float | None]:
        if lat is None:
            return None, None
        b, c, lay = lat["b"], lat["c"], self.layout
        n = sum(c)
        mean = sum(ci * lay.mid[bi] for bi, ci in zip(b, c, strict=True)) / n
        if self.q == 100:
            top = float(lay.upper[b[-1]] - 1)
        else:
            rank, cum, top = stats.quantile_rank(n, self.q / 100), 0, 0.0
            for bi, ci in zip(b, c, strict=True):
                cum += ci
                if cum > rank:
                    top = lay.mid[bi]
                    break
        return mean / 1e9, max(top - lay.lower[b[0]], 0.0) / 1e9

    def _decided(self, index: int, available: bool) -> None:
        rec = self.pending.pop(index)
        if not available:
            return
        self.tx += rec["tx"]
        self.rx += rec["rx"]
        self.seconds += rec["d"]
        lat = rec["lat"]
        if lat is not None:
            if self.acc is None:
                self.acc = [0] * len(self.layout.lower)
            acc = self.acc
            for bi, ci in zip(lat["b"], lat["c"], strict=True):
                acc[bi] += ci
            self.dup += lat["dup"] or 0
            self.reo += lat["reo"] or 0
            self.last_lat = lat

    def result(self, sac_tol: float) -> SptService:
        avail = self.tracker.finish()
        latency = None
        if self.acc is not None and self.last_lat is not None:
            assert self.layout.lower_ns is not None
            hist = LogHistogram(np.array(self.acc, dtype=np.uint64), self.layout.lower_ns)
            last = self.last_lat
            latency = LatencyResult(hist, clock=last["clock"], resolution_ns=last["res"],
                                    samples=hist.total, duplicates=self.dup,
                                    reordered=self.reo, jitter_ns=last["jit"])
        series = {k: tuple(v) for k, v in self.series.items()}
        series["available"] = avail.flags
        out = SptService(self.service, self.tx, self.rx, self.seconds, latency, self.q, avail,
                         self.invalid, self.idle, (), None, "", series, self.first_invalid)
        sac = self.service.sac
        none = "no available interval"
        checks = [check("ir", out.ir_bps, low=self.service.cir_bps * (1 - sac_tol),
                        missing=none)]
        if sac.flr_ratio is not None:
            checks.append(check("flr", out.flr, high=sac.flr_ratio, missing=none))
        if sac.ftd_s is not None:
            checks.append(check("ftd", out.ftd_s, high=sac.ftd_s))
        if sac.fdv_s is not None:
            checks.append(check("fdv", out.fdv_s, high=sac.fdv_s))
        if sac.availability_ratio is not None:
            checks.append(check("availability", avail.ratio, low=sac.availability_ratio,
                                missing="no interval judged"))
        passed, reason = verdict(checks)
        return SptService(self.service, self.tx, self.rx, self.seconds, latency, self.q,
                          avail, self.invalid, self.idle, tuple(checks), passed, reason,
                          series, self.first_invalid)


def _intervals(duration_s: float, interval_s: float) -> int:
    count = duration_s / interval_s
    whole = round(count)
    if whole < 1 or abs(count - whole) > 1e-9 * max(count, 1):
        raise NetloadConfigError(f"duration_s={duration_s!r} is not a whole number of "
                                 f"intervals of interval_s={interval_s!r}; give a multiple, "
                                 "e.g. duration_s=900 with interval_s=1")
    return whole


def service_performance_test(
    measurer: ServiceMeasurer,
    services: Iterable[Service | Mapping[str, Any]],
    *,
    duration_s: float = SPT_DURATION_S,
    interval_s: float = INTERVAL_S,
    availability_threshold: float = AVAILABILITY_THRESHOLD,
    availability_n: int = AVAILABILITY_N,
    checkpoint: str | os.PathLike[str] | None = None,
    resume: bool = False,
    on_interval: Callable[[int, Mapping[str, ServiceSample]], None] | None = None,
    fdv_quantile: float = FDV_QUANTILE,
    ir_tolerance: float = IR_TOLERANCE,
    checkpoint_every_s: float = CHECKPOINT_EVERY_S,
    line_rate_bps: float | None = None,
) -> SptResult:
    """Run the Y.1564 service performance test (see the module text)."""
    chosen = check_services(services, line_rate_bps)
    duration = run_seconds(duration_s, what="duration_s")
    interval = run_seconds(interval_s, what="interval_s")
    total = _intervals(duration, interval)
    threshold = check_threshold(availability_threshold)
    n = check_n(availability_n)
    quantile = check_quantile(fdv_quantile)
    tol = check_ir_tolerance(ir_tolerance)
    every_s = run_seconds(checkpoint_every_s, what="checkpoint_every_s")
    if not isinstance(resume, bool):
        raise NetloadConfigError(f"resume={resume!r}: give True or False")
    parameters = {"duration_s": duration, "interval_s": interval,
                  "availability_threshold": threshold, "availability_n": n,
                  "fdv_quantile": quantile, "ir_tolerance": tol}
    layout = _Layout()
    runs = [_Run(s, threshold, n, quantile, layout) for s in chosen]
    loads = {s.name: s.cir_bps for s in chosen}
    writer: CheckpointWriter | None = None
    done: list[Mapping[str, Record]] = []
    if checkpoint is not None:
        path = Path(checkpoint)
        header = header_of([s.as_dict() for s in chosen], parameters)
        every = max(1, math.ceil(every_s / interval - 1e-9))
        if resume and path.exists():
            done, offset = read_checkpoint(path, header, layout)
            if len(done) > total:
                raise NetloadConfigError(f"checkpoint {str(path)!r} holds {len(done)} "
                                         f"intervals, more than this run's {total}; delete it")
            writer = CheckpointWriter(path, every, offset=offset, header=header)
        else:
            writer = CheckpointWriter(path, every, header=header)
    elif resume:
        raise NetloadConfigError("resume=True needs checkpoint=<path> to resume from")
    index = len(done)

    def take(samples: Mapping[str, ServiceSample]) -> None:
        nonlocal index
        if index >= total:
            raise NetloadConfigError(f"the measurer gave more than the run's {total} "
                                     "intervals; a measure_intervals must give exactly count")
        records = {s.name: record_of(sample_of(samples, s.name), layout) for s in chosen}
        if writer is not None:
            writer.interval(index, records, layout)
        for run in runs:
            run.add(index, records[run.service.name])
        if on_interval is not None:
            on_interval(index, samples)
        index += 1

    try:
        for i, records in enumerate(done):
            for run in runs:
                run.add(i, records[run.service.name])
        continuous = getattr(measurer, "measure_intervals", None)
        if continuous is not None and index < total:
            continuous(loads, interval, total - index, take)
            if index != total:
                raise NetloadConfigError(f"the measurer gave {index - len(done)} of the "
                                         f"{total - len(done)} intervals asked for")
        while index < total:
            take(measurer.measure(loads, interval))
    finally:
        if writer is not None:
            writer.close()
    return SptResult(tuple(r.result(tol) for r in runs), duration, interval, total,
                     parameters, len(done))

