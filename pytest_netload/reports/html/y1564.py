"""The report's ITU-T Y.1564 sections: the service configuration test as a
service-by-step table with coloured verdicts (and, for a colour-aware service, the green
and yellow frames received of those sent, and the yellow IR), the burst tests (CBS/EBS) as a
burst-by-burst table of frames expected and received, the service performance test's
per-service summary, and its per-interval plot (FLR, IR and availability)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from markupsafe import Markup

from .figures import COLOURS, figure, svg
from .sections import measurements_of, short_name
from .text import DASH, fmt_bps, fmt_count, fmt_loss, fmt_s, fmt_share

__all__ = ["MAX_PLOT_POINTS", "y1564_bursts", "y1564_plot", "y1564_sct", "y1564_spt"]

MAX_PLOT_POINTS = 2000  # a 24 h run has 86,400 intervals: the plot shows bins of them


def _verdict(passed: Any) -> tuple[str, str]:
    """(badge text, css class) of a step or service verdict."""
    if passed is True:
        return "PASS", "PASS"
    if passed is False:
        return "FAIL", "FAIL"
    return "NOT MEASURED", "other"


def _opt(value: Any, show: Any) -> str:
    return DASH if value is None else show(value)


def _sac(sac: Mapping[str, Any]) -> str:
    parts = []
    if sac.get("flr_ratio") is not None:
        parts.append(f"FLR ≤ {fmt_loss(sac['flr_ratio'])}")
    if sac.get("ftd_s") is not None:
        parts.append(f"FTD ≤ {fmt_s(sac['ftd_s'])}")
    if sac.get("fdv_s") is not None:
        parts.append(f"FDV ≤ {fmt_s(sac['fdv_s'])}")
    if sac.get("availability_ratio") is not None:
        parts.append(f"AVAIL ≥ {fmt_share(sac['availability_ratio'])}")
    return ", ".join(parts) or "none"


def _service_line(s: Mapping[str, Any]) -> str:
    colour = ", ".join(f"{k.upper()} {s[k]}" for k in ("vlan", "pcp", "dscp", "dport")
                       if s.get(k) is not None)
    eir = f", EIR {fmt_bps(s['eir_bps'])}" if s.get("eir_bps") else ""
    aware = (f", colour-aware by {s['colour'].upper()}: green {s.get('green')}, yellow "
             f"{s.get('yellow')}" if s.get("colour") else "")
    sac = _sac(s.get("sac") or {}) + (" (on green frames)" if s.get("colour") else "")
    return (f"CIR {fmt_bps(s['cir_bps'])}{eir}, {s['frame_size']} B frames"
            + (f", {colour}" if colour else "") + aware + f"; SAC: {sac}")


def _frames(sent: Any, received: Any) -> str:
    return DASH if sent is None else f"{fmt_count(received)} / {fmt_count(sent)}"


def _at_rx(seen: Mapping[str, int] | None) -> str:
    """A step's frames by the colour they arrived with: "green 1,221, yellow 733" and
    what the DUT re-marked; a dash when not counted."""
    if not seen:
        return DASH
    parts = [f"green {fmt_count(seen['green'])}", f"yellow {fmt_count(seen['yellow'])}"]
    parts += [f"{key} {fmt_count(seen[key])}" for key in ("remarked", "promoted", "other")
              if seen.get(key)]
    return ", ".join(parts)


def y1564_sct(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One table per service configuration test (a test and a service)."""
    tables = []
    for nodeid, m in measurements_of(doc, "y1564_sct"):
        service = m["service"]
        rows = []
        for step in m["steps"]:
            text, css = _verdict(step["passed"])
            rows.append({
                "step": step["name"], "offered": fmt_bps(step["offered_bps"]),
                "ir": _opt(step["ir_bps"], fmt_bps), "flr": _opt(step["flr"], fmt_loss),
                "ftd": _opt(step["ftd_s"], fmt_s), "fdv": _opt(step["fdv_s"], fmt_s),
                "verdict": text, "css": css, "reason": step["reason"],
                "green": _frames(step.get("tx_frames"), step.get("rx_frames")),
                "yellow": _frames(yellow.get("tx_frames"), yellow.get("rx_frames"))
                if (yellow := step.get("yellow")) else DASH,
                "yellow_ir": _opt(yellow.get("ir_bps"), fmt_bps) if yellow else DASH,
                "at_rx": _at_rx(step.get("colour_at_rx")),
            })
        text, css = _verdict(m["passed"] if m["passed"] or m.get("dut_failed") else None)
        tables.append({"test": short_name(nodeid), "service": service["name"],
                       "line": _service_line(service), "rows": rows,
                       "coloured": bool(service.get("colour")),
                       "verdict": text, "css": css})
    return tables


def y1564_bursts(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One table per burst test (a test and a service): a row per burst, with the
    bucket, the frames the bucket lets through at the burst's rate and those received."""
    tables = []
    for nodeid, m in measurements_of(doc, "y1564_bursts"):
        service = m["service"]
        rows = []
        for step in m["steps"]:
            text, css = _verdict(step["passed"])
            expected = step["expected_rx"]
            rows.append({
                "burst": step["name"],
                "bucket": f"{fmt_count(step['bucket_bytes'])} B at {fmt_bps(step['fill_bps'])}",
                "size": f"{fmt_count(step['frames'])} × {service['frame_size']} B "
                        f"({fmt_count(step['burst_bytes'])} B)",
                "idle": fmt_s(step["idle_s"]), "rate": _opt(step["rate_bps"], fmt_bps),
                "expected": DASH if expected is None else
                f"{'all' if step['expected'] == 'pass' else 'drop'}: {fmt_count(expected)}",
                "sent": _opt(step["tx_frames"], fmt_count),
                "received": _opt(step["rx_frames"], fmt_count),
                "verdict": text, "css": css, "reason": step["reason"],
            })
        text, css = _verdict(m["passed"] if m["passed"] or m.get("dut_failed") else None)
        tables.append({"test": short_name(nodeid), "service": service["name"],
                       "line": _service_line(service), "rows": rows,
                       "tolerance": m["tolerance_frames"], "verdict": text, "css": css})
    return tables


def y1564_spt(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One table per service performance test: a row per service over the run."""
    tables = []
    for nodeid, m in measurements_of(doc, "y1564_spt"):
        rows = []
        for s in m["services"]:
            text, css = _verdict(s["passed"])
            avail = s["availability"]
            rows.append({
                "service": s["service"]["name"], "ir": _opt(s["ir_bps"], fmt_bps),
                "flr": _opt(s["flr"], fmt_loss), "ftd": _opt(s["ftd_s"], fmt_s),
                "fdv": _opt(s["fdv_s"], fmt_s),
                "availability": _opt(avail.get("availability_ratio"), fmt_share),
                "unavailable": avail.get("unavailable_intervals", 0),
                "ses": avail.get("ses_intervals", 0),
                "invalid": s["invalid_intervals"], "verdict": text, "css": css,
                "reason": s["reason"], "sac": _sac(s["service"].get("sac") or {}),
            })
        tables.append({"test": short_name(nodeid), "duration": fmt_s(m["duration_s"]),
                       "interval": fmt_s(m["interval_s"]), "intervals": m["intervals"],
                       "resumed": m.get("resumed_intervals", 0), "valid": m["valid"],
                       "note": m.get("note", ""), "rows": rows})
    return tables


def _binned(values: list[Any], width: int, worst: Any) -> list[Any]:
    """`values` in bins of `width` intervals, each the `worst` of its known values."""
    out = []
    for i in range(0, len(values), width):
        known = [v for v in values[i:i + width] if v is not None]
        out.append(worst(known) if known else None)
    return out


def y1564_plot(doc: Mapping[str, Any], index: int) -> Markup | None:
    """Per-interval FLR, IR and availability of each service of the first SPT (the
    worst value of each bin when the run has more than MAX_PLOT_POINTS intervals)."""
    runs = list(measurements_of(doc, "y1564_spt"))
    if not runs:
        return None
    _nodeid, m = runs[0]
    fig = figure(9.0, 5.4)
    ax_flr, ax_ir, ax_av = fig.subplots(3, 1, sharex=True)
    for i, s in enumerate(m["services"]):
        series = s["series"]
        n = len(series.get("flr", ()))
        if n == 0:
            continue
        width = max(1, -(-n // MAX_PLOT_POINTS))
        x = [k * width * m["interval_s"] for k in range(-(-n // width))]
        colour = COLOURS[i % len(COLOURS)]
        name = s["service"]["name"]
        flr = _binned(series["flr"], width, max)
        ax_flr.plot(x, [float("nan") if v is None else v * 100 for v in flr], color=colour,
                    label=name, linewidth=1)
        ir = _binned(series["ir_bps"], width, min)
        ax_ir.plot(x, [float("nan") if v is None else v / 1e6 for v in ir], color=colour,
                   linewidth=1)
        avail = _binned([None if a is None else (1 if a else 0)
                         for a in series.get("available", [])], width, min)
        ax_av.step(x[:len(avail)], [float("nan") if v is None else v for v in avail],
                   where="post", color=colour, linewidth=1)
    ax_flr.set_ylabel("FLR (%)")
    ax_ir.set_ylabel("IR (Mbit/s, L2)")
    ax_av.set_ylabel("available")
    ax_av.set_yticks([0, 1])
    ax_av.set_xlabel("time into the run (s)")
    ax_flr.legend(loc="upper right", fontsize="small")
    return svg(fig, index, "Y.1564 service performance test per interval")
