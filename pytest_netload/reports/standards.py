"""Key figures of ITU-T Y.1564 and RFC 2889 records for baselines and trends, each with
the band its own measurement gives it (docs/baselines.md has the table):

- Y.1564 service performance test, per service: IR (t-interval of the per-interval
  rates, at least one frame per interval wide), FLR (exact binomial interval of the
  frames lost), FTD (t-interval of the per-interval mean delays), FDV (the delay
  percentile's confidence interval less the minimum) and availability (exact binomial
  interval of the available intervals);
- RFC 2889: fully meshed throughput per port (search bracket) and forwarding rate at
  the maximum offered load (binomial interval of the frames forwarded in that trial);
  congestion control's head-of-line loss and congested-port loss (binomial); broadcast
  throughput (bracket), forwarding rate at the maximum and latency percentiles per
  receiving port (their CIs); address caching capacity and learning rate (brackets).

The service configuration test is left out: its steps are single trials at loads the
test sets, judged pass/fail; the service performance test measures the same figures over
the long run, with a band.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from .bands import (
    HIGHER,
    LOWER,
    At,
    Figure,
    binomial,
    bracket,
    mean_band,
    percentiles,
    unknown,
    z_value,
)

__all__ = ["STANDARD_KINDS", "standard_figures"]

Figures = list[tuple[str, int | str | None, Figure]]

STANDARD_KINDS = ("y1564_spt", "rfc2889_fully_meshed", "rfc2889_congestion_control",
                  "rfc2889_broadcast_forwarding", "rfc2889_address_caching_capacity",
                  "rfc2889_address_learning_rate", "rfc2889_partially_meshed",
                  "rfc2889_maximum_forwarding_rate")


def standard_figures(at: At, m: Mapping[str, Any], confidence: float) -> Figures:
    """The figures of one Y.1564 SPT or RFC 2889 record (kind in STANDARD_KINDS)."""
    kind = m["kind"]
    if kind == "y1564_spt":
        return _spt(at, m, confidence)
    size = at.get(m, "frame_size", (int, str), optional=True)
    return [(metric, size, fig) for metric, fig in _RFC2889[kind](at, m, confidence)]


# ---- ITU-T Y.1564 service performance test --------------------------------------------------


def _series(s: Mapping[str, Any], name: str) -> list[float]:
    """The per-interval values of `name` over the intervals that count (valid and
    available; ITU-T Y.1563), None left out."""
    series = s.get("series") or {}
    values = series.get(name) or []
    valid = series.get("valid") or [True] * len(values)
    available = series.get("available") or [True] * len(values)
    return [float(v) for v, ok, up in zip(values, valid, available, strict=False)
            if v is not None and ok is not False and up is not False
            and isinstance(v, (int, float)) and math.isfinite(v)]


def _interval_mean(value: float, values: Sequence[float], floor: float, direction: str,
                   unit: str, confidence: float, conditions: dict[str, Any]) -> Figure:
    """`value` (the run's figure) with the t-interval of its per-interval values, whose
    scatter is at least a uniform quantum `floor` (one frame per interval)."""
    n = len(values)
    stdev = statistics.stdev(values) if n >= 2 else 0.0
    return mean_band(value, math.hypot(stdev, floor / math.sqrt(12)), n, direction, unit,
                     confidence, conditions, what="interval")


def _spt(at: At, m: Mapping[str, Any], confidence: float) -> Figures:
    out: Figures = []
    interval = at.num(m, "interval_s") or 1.0
    quantile = (m.get("parameters") or {}).get("fdv_quantile")
    for i, s in enumerate(at.get(m, "services", list)):
        s_at = at.inner(f"services[{i}]")
        if not isinstance(s, dict):
            raise at.fail(f"services[{i}]", f"= {s!r}: expected an object")
        service = s_at.get(s, "service", dict)
        name = s_at.inner("service").get(service, "name", str)
        size = service.get("frame_size")
        cond = {"duration_s": m.get("duration_s"), "interval_s": m.get("interval_s"),
                "cir_bps": service.get("cir_bps")}
        prefix = f"y1564[{name}]"
        ir = s_at.num(s, "ir_bps", optional=True)
        if ir is not None:
            quantum = 8 * float(size) / interval if isinstance(size, int) else 0.0
            out.append((f"{prefix}.ir", size, _interval_mean(
                ir, _series(s, "ir_bps"), quantum, HIGHER, "bit/s", confidence, cond)))
        flr = s_at.num(s, "flr", optional=True)
        tx = s.get("tx_frames")
        if flr is not None:
            if isinstance(tx, int) and tx > 0:
                fig = binomial(round(flr * tx), tx, LOWER, cond, confidence=confidence)
            else:
                fig = unknown(flr, LOWER, "ratio", "no frame count", cond)
            out.append((f"{prefix}.flr", size, fig))
        ftd = s_at.num(s, "ftd_s", optional=True)
        if ftd is not None:
            out.append((f"{prefix}.ftd", size, _interval_mean(
                ftd, _series(s, "ftd_s"), 0.0, LOWER, "s", confidence, cond)))
        fdv = s_at.num(s, "fdv_s", optional=True)
        if fdv is not None:
            out.append((f"{prefix}.fdv", size, _fdv(fdv, s.get("latency"), quantile, cond)))
        avail = s_at.get(s, "availability", dict, optional=True) or {}
        up, down = avail.get("available_intervals"), avail.get("unavailable_intervals")
        if avail.get("availability_ratio") is not None and isinstance(up, int) and \
                isinstance(down, int) and up + down > 0:
            out.append((f"{prefix}.availability", size, binomial(
                up, up + down, HIGHER, cond, what="intervals", confidence=confidence)))
    return out


def _fdv(fdv: float, latency: Any, quantile: Any, cond: dict[str, Any]) -> Figure:
    """FDV is the delay's `quantile` percentile less its minimum: the percentile's CI,
    shifted by the same minimum, is FDV's band (the minimum is a sample, not estimated)."""
    pct = None
    if isinstance(latency, dict) and isinstance(quantile, (int, float)):
        for p in (latency.get("percentiles") or {}).values():
            if isinstance(p, dict) and p.get("p") == quantile:
                pct = p
    needed = ("value_ns", "ci_low_ns", "ci_high_ns")
    if pct is None or not all(isinstance(pct.get(k), (int, float)) for k in needed):
        return unknown(fdv, LOWER, "s", f"no CI of the p{quantile} delay", cond)
    low = fdv + (pct["ci_low_ns"] - pct["value_ns"]) / 1e9
    high = fdv + (pct["ci_high_ns"] - pct["value_ns"]) / 1e9
    z = z_value(pct.get("confidence") or 0.95)
    return Figure(fdv, max(min(low, fdv), 0.0), max(high, fdv), LOWER, "s",
                  f"CI of the p{quantile:g} delay", (high - low) / (2 * z) if z > 0 else None,
                  cond)


# ---- RFC 2889 ------------------------------------------------------------------------------


def _open_above(m: Mapping[str, Any], upper: float | None) -> float | None:
    """The failing load above a search's result, or None (open above) when nothing
    failed or the generator, not the DUT, bounded the search."""
    if m.get("lower_bound_by_generator") or m.get("at_maximum"):
        return None
    return upper


def _frmol(at: At, m: Mapping[str, Any], value: float, trials: list[Any], offered_key: str,
           confidence: float, cond: dict[str, Any]) -> Figure:
    """The forwarding rate at the maximum offered load: the frames forwarded in that trial
    are a binomial count of those expected, so its band is their exact interval times the
    expected frames per second."""
    top = [t for t in trials if isinstance(t, dict) and isinstance(t.get(offered_key), (int, float))]
    if not top:
        return unknown(value, HIGHER, "pps", "the trial at the maximum is not recorded", cond)
    trial = max(top, key=lambda t: t[offered_key])
    return _forwarded(value, trial, m, confidence, cond)


def _forwarded(value: float, trial: Mapping[str, Any], m: Mapping[str, Any],
               confidence: float, cond: dict[str, Any]) -> Figure:
    """A forwarding rate measured in `trial`: its band is the exact binomial interval of
    the frames forwarded of those sent, times the frames sent per second."""
    duration = trial.get("duration_s") or m.get("duration_s")
    tx, rx = trial.get("tx"), trial.get("rx") or []
    if "rx_total" in trial:
        sent, got = trial.get("tx_total"), trial.get("rx_total")
    elif isinstance(tx, list):   # partially meshed: counts per port
        ints = all(isinstance(x, int) for x in [*tx, *rx])
        sent, got = (sum(tx), sum(rx)) if ints else (None, None)
    else:   # broadcast: every receiving port is to get every frame
        sent = tx * len(rx) if isinstance(tx, int) else None
        got = sum(rx) if all(isinstance(r, int) for r in rx) else None
    if not isinstance(sent, int) or not isinstance(got, int) or sent <= 0 or not duration:
        return unknown(value, HIGHER, "pps", "no frame counts in the trial", cond)
    fig = binomial(min(got, sent), sent, HIGHER, cond, scale=sent / duration, unit="pps",
                   confidence=confidence)
    return Figure(value, min(fig.noise_low, value), max(fig.noise_high, value), HIGHER, "pps",
                  fig.band, fig.sigma, cond)


def _mesh(at: At, m: Mapping[str, Any], confidence: float) -> list[tuple[str, Figure]]:
    cond = {"duration_s": m.get("duration_s"), "ports": m.get("ports")}
    out = []
    tput = at.num(m, "throughput_pps_per_port", optional=True)
    if tput is not None:
        upper = _open_above(m, at.num(m, "upper_pps_per_port", optional=True))
        out.append(("rfc2889.mesh.throughput_per_port", bracket(tput, upper, cond)))
    frmol = at.num(m, "forwarding_rate_at_max_pps", optional=True)
    if frmol is not None:
        out.append(("rfc2889.mesh.frmol", _frmol(at, m, frmol, m.get("trials") or [],
                                                 "offered_pps_per_port", confidence, cond)))
    return out


def _congestion(at: At, m: Mapping[str, Any], confidence: float) -> list[tuple[str, Figure]]:
    cond = {"load_pps_per_port": m.get("load_pps_per_port"), "duration_s": m.get("duration_s"),
            "observed": list(m.get("observed") or [])}
    out = []
    streams = (m.get("trial") or {}).get("streams") or []
    hol = at.num(m, "hol_loss_ratio", optional=True)
    if hol is not None:   # the uncongested stream a->d, second of a->c, a->d, b->c
        a_d = streams[1] if len(streams) == 3 and isinstance(streams[1], dict) else {}
        if isinstance(a_d.get("tx"), int) and isinstance(a_d.get("lost"), int):
            fig = binomial(a_d["lost"], a_d["tx"], LOWER, cond, confidence=confidence)
        else:
            fig = unknown(hol, LOWER, "ratio", "no frame counts of a->d", cond)
        out.append(("rfc2889.congestion.hol_loss", fig))
    sent, lost = m.get("congested_tx"), m.get("congested_lost")
    if isinstance(sent, int) and isinstance(lost, int) and sent > 0:
        out.append(("rfc2889.congestion.congested_loss",
                    binomial(lost, sent, LOWER, cond, confidence=confidence)))
    return out


def _broadcast(at: At, m: Mapping[str, Any], confidence: float) -> list[tuple[str, Figure]]:
    cond = {"duration_s": m.get("duration_s"), "ports": m.get("ports")}
    out = []
    tput = at.num(m, "throughput_pps", optional=True)
    if tput is not None:
        upper = _open_above(m, at.num(m, "upper_pps", optional=True))
        out.append(("rfc2889.broadcast.throughput", bracket(tput, upper, cond)))
    frmol = at.num(m, "forwarding_rate_at_max_pps", optional=True)
    if frmol is not None:
        out.append(("rfc2889.broadcast.frmol", _frmol(at, m, frmol, m.get("trials") or [],
                                                      "offered_pps", confidence, cond)))
    latency = m.get("latency") or []
    names = _receivers(m, len(latency))
    for j, lat in enumerate(latency):
        if isinstance(lat, dict):
            l_at = at.inner(f"latency[{j}]")
            out.extend(percentiles(l_at, {"percentiles": lat.get("percentiles")},
                                   f"rfc2889.broadcast.latency[{names[j]}]",
                                   {**cond, "clock": lat.get("clock")}))
    return out


def _receivers(m: Mapping[str, Any], n: int) -> list[str]:
    """The receiving ports' names, one per latency entry: the record's port names where
    they match, the throughput trial's, or rx1, rx2 ..."""
    candidates = [m.get("port_names") or []]
    candidates += [t.get("port_names") or [] for t in m.get("trials") or [] if isinstance(t, dict)]
    for names in candidates:
        if len(names) == n and all(isinstance(x, str) for x in names):
            return list(names)
    return [f"rx{j + 1}" for j in range(n)]


def _capacity(at: At, m: Mapping[str, Any], confidence: float) -> list[tuple[str, Figure]]:
    cond = {"learning_rate_fps": m.get("learning_rate_fps"),
            "test_rate_fps": m.get("test_rate_fps"), "age_time_s": m.get("age_time_s")}
    capacity = at.num(m, "capacity", optional=True)
    if capacity is None:
        return []
    upper = _open_above(m, at.num(m, "upper", optional=True))
    return [("rfc2889.address.capacity", bracket(capacity, upper, cond, unit="addresses"))]


def _learning(at: At, m: Mapping[str, Any], confidence: float) -> list[tuple[str, Figure]]:
    cond = {"count": m.get("count"), "test_rate_fps": m.get("test_rate_fps")}
    rate = at.num(m, "learning_rate_fps", optional=True)
    if rate is None:
        return []
    upper = _open_above(m, at.num(m, "upper_fps", optional=True))
    return [("rfc2889.address.learning_rate", bracket(rate, upper, cond))]


def _partial(at: At, m: Mapping[str, Any], confidence: float) -> list[tuple[str, Figure]]:
    way = str(m.get("direction") or "partial")
    cond = {"duration_s": m.get("duration_s"), "ports": m.get("ports"), "direction": way}
    out = []
    tput = at.num(m, "throughput_pps", optional=True)
    if tput is not None:
        upper = _open_above(m, at.num(m, "upper_pps", optional=True))
        out.append((f"rfc2889.partial[{way}].throughput", bracket(tput, upper, cond)))
    frmol = at.num(m, "forwarding_rate_at_max_pps", optional=True)
    if frmol is not None:
        out.append((f"rfc2889.partial[{way}].frmol", _frmol(
            at, m, frmol, m.get("trials") or [], "offered_pps", confidence, cond)))
    return out


def _mfr(at: At, m: Mapping[str, Any], confidence: float) -> list[tuple[str, Figure]]:
    cond = {"duration_s": m.get("duration_s"), "ports": m.get("ports"),
            "loads_pps_per_port": m.get("loads_pps_per_port")}
    value = at.num(m, "mfr_pps", optional=True)
    if value is None:
        return []
    load = m.get("mfr_load_pps_per_port")
    trial = next((t for t in m.get("trials") or [] if isinstance(t, dict) and t.get("valid")
                  and t.get("offered_pps_per_port") == load), None)
    fig = unknown(value, HIGHER, "pps", "the trial of the MFR is not recorded", cond) \
        if trial is None else _forwarded(value, trial, m, confidence, cond)
    return [("rfc2889.mfr", fig)]


_RFC2889 = {"rfc2889_fully_meshed": _mesh, "rfc2889_congestion_control": _congestion,
            "rfc2889_broadcast_forwarding": _broadcast,
            "rfc2889_address_caching_capacity": _capacity,
            "rfc2889_address_learning_rate": _learning,
            "rfc2889_partially_meshed": _partial,
            "rfc2889_maximum_forwarding_rate": _mfr}
