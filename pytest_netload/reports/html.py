"""The acceptance report: one self-contained HTML file built from a results document.

`render(document)` returns the page: a cover with the DUT and the overall verdict, the
RFC 2544 procedures (§26.1-§26.6) and MLRsearch with tables per frame size, plots as inline
SVG (matplotlib, Agg), the test conditions and every assertion verdict. The page loads
nothing: no scripts, no fonts, no images from elsewhere, no URL at all. `write(document,
path)` saves it. The document is taken as it is: check a file with reports.load.load()
first (the `netload report` command does).
"""

from __future__ import annotations

import io
import math
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import jinja2
import matplotlib

matplotlib.use("Agg")

from markupsafe import Markup
from matplotlib.figure import Figure
from matplotlib.ticker import EngFormatter, NullFormatter

from .. import format as fmt
from ..atomic import write_atomic
from ..rfc2544.trial import steady_note, steady_summary
from . import verdict

__all__ = ["overall_verdict", "render", "write"]

DASH = fmt.dash(fmt.HTML)
PERCENTILE_KEYS = ("p50", "p99", "p99.9")
RFC_SECTIONS = {
    "throughput": "§26.1", "latency_rfc2544": "§26.2", "frame_loss": "§26.3",
    "back_to_back": "§26.4", "recovery": "§26.5", "reset": "§26.6",
}
PROCEDURE_NAMES = {
    "throughput": "throughput", "latency_rfc2544": "latency", "frame_loss": "frame loss",
    "back_to_back": "back-to-back", "recovery": "system recovery", "reset": "reset",
    "mlrsearch": "MLRsearch", "calibration": "calibration", "traffic": "traffic",
    "latency": "latency meter",
}
_COLOURS = ("#1f5fa8", "#c0392b", "#2e8b57", "#8e44ad", "#d35400", "#16a085", "#7f8c8d",
            "#b8860b")


# ---- formatting ---------------------------------------------------------------------------


def _real(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


# Every number through format.py, in its HTML medium (µs, a space before each unit, the
# en dash for no figure): measured figures to fixed digits, given ones (durations,
# shares, tolerances) exactly.
fmt_pps = partial(fmt.rate_pps, medium=fmt.HTML)
fmt_bps = partial(fmt.bitrate, medium=fmt.HTML)
fmt_ns = partial(fmt.time_ns, medium=fmt.HTML)
fmt_s = partial(fmt.time_s, medium=fmt.HTML)
fmt_given_s = partial(fmt.time_s_exact, medium=fmt.HTML)
fmt_count = partial(fmt.count, medium=fmt.HTML)
fmt_share = partial(fmt.share, medium=fmt.HTML)
fmt_percent = partial(fmt.percent, medium=fmt.HTML)
fmt_loss = partial(fmt.loss_ratio, medium=fmt.HTML)
fmt_given_loss = partial(fmt.loss_ratio_exact, medium=fmt.HTML)
size_label = partial(fmt.frame_size, medium=fmt.HTML)


def _size_key(size: Any) -> tuple[int, float, str]:
    if isinstance(size, int) and not isinstance(size, bool):
        return (0, float(size), "")
    return (1, 0.0, str(size))


def _spread(spread: Mapping[str, Any] | None, show: Callable[[Any], str]) -> str:
    """ "2.37 µs ± 44.3 ns (2.32 µs – 2.41 µs, n = 3)"; one value alone for n = 1."""
    if not spread:
        return DASH
    if spread["n"] == 1:
        return f"{show(spread['mean'])} (n = 1)"
    return (f"{show(spread['mean'])} ± {show(spread['stdev'])} "
            f"({show(spread['min'])} – {show(spread['max'])}, n = {spread['n']})")


def _spread_mean(spread: Mapping[str, Any] | None, show: Callable[[Any], str]) -> str:
    if not spread:
        return DASH
    return show(spread["mean"]) + (f" ± {show(spread['stdev'])}" if spread["n"] > 1 else "")


def _spread_range(spread: Mapping[str, Any] | None, show: Callable[[Any], str]) -> str:
    if not spread:
        return DASH
    if spread["n"] == 1:
        return "n = 1"
    return f"{show(spread['min'])} – {show(spread['max'])}, n = {spread['n']}"


def has_ci(p: Mapping[str, Any]) -> bool:
    """The interval is a confidence interval at its stated confidence (enough samples)."""
    coverage = p.get("coverage")
    return coverage is not None and coverage >= p.get("confidence", 0.95) - 1e-12


def fmt_percentile(p: Mapping[str, Any] | None) -> str:
    """ "75.0 µs [74.8, 75.3]" (the interval in the value's unit and decimals), or the value
    with "no CI" when the sample was too small for one."""
    if not p:
        return DASH
    if not has_ci(p):
        return (f"{fmt_ns(p['value_ns'])} (no {fmt_percent(p.get('confidence', 0.95))} CI: "
                "too few samples)")
    return fmt.band(p["value_ns"], p["ci_low_ns"], p["ci_high_ns"], "ns", fmt.HTML)


def _trial_counts(trials: Sequence[Mapping[str, Any]]) -> str:
    valid = sum(1 for t in trials if t.get("valid", True))
    return f"{valid} / {len(trials)}"


# ---- the document as the report reads it ------------------------------------------------


def short_name(nodeid: str) -> str:
    return nodeid.split("::", 1)[-1]


def _base_name(nodeid: str) -> str:
    return re.sub(r"\[[^\]]*\]$", "", short_name(nodeid))


def _measurements(doc: Mapping[str, Any], *kinds: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """(nodeid, measurement) of the given kinds, in document order."""
    for test in doc.get("tests", ()):
        for m in test.get("measurements", ()):
            if m.get("kind") in kinds:
                yield test["nodeid"], m


def _sorted(rows: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, dict[str, Any]]]:
    return sorted(rows, key=lambda r: (_size_key(r[1].get("frame_size")), r[0]))


def overall_verdict(doc: Mapping[str, Any]) -> str:
    """FAIL when a test failed; INCOMPLETE when the session was interrupted or tests
    did not run; ERROR when a test errored; PASS when at least one passed; else NO
    VERDICT (reports/verdict.py)."""
    return verdict.overall_verdict(doc)


def _line_rate(doc: Mapping[str, Any]) -> float | None:
    rate: Any = (doc.get("topology") or {}).get("line_rate_bps")
    return float(rate) if _real(rate) and rate > 0 else None


def _cover(doc: Mapping[str, Any]) -> dict[str, Any]:
    topo = doc.get("topology") or {}
    dut = dict(topo.get("dut") or {})
    outcomes = [t.get("outcome") for t in doc.get("tests", ())]
    return {
        "verdict": overall_verdict(doc),
        "dut_name": dut.pop("name", None) or topo.get("name") or "unnamed DUT",
        "dut_model": dut.pop("model", None) or DASH,
        "dut_firmware": dut.pop("firmware", None) or dut.get("kernel") or DASH,
        "dut_other": sorted(dut.items()),
        "topology": topo.get("name", DASH),
        "topology_source": topo.get("source"),
        "line_rate": fmt_bps(_line_rate(doc)) + " (L1)" if _line_rate(doc) else
        "none (rates are relative to the generator's calibrated maximum)",
        "created": doc.get("created", DASH),
        "package": f"{(doc.get('package') or {}).get('name', 'pytest-netload')} "
                   f"{(doc.get('package') or {}).get('version', '?')}",
        "schema_version": doc.get("schema_version", DASH),
        "counts": {o: outcomes.count(o) for o in ("passed", "failed", "error", "skipped")},
        "tests": len(outcomes),
        "session": verdict.session_counts(doc),
        "verdict_line": verdict.verdict_line(doc).partition(": ")[2],
    }


def _throughput(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for nodeid, m in _sorted(list(_measurements(doc, "throughput"))):
        notes = []
        if m.get("generator_ceiling_pps"):
            notes.append(f"generator ceiling {fmt_pps(m['generator_ceiling_pps'])}")
        if m.get("upper_pps") is None and not m.get("generator_ceiling_pps"):
            notes.append("the maximum load passed")
        if m.get("resolution_reached") is False:
            notes.append("resolution not reached within max_trials: the bracket is wider")
        if (steady := steady_summary(m["trials"], fmt.HTML)) is not None:
            notes.append(steady)
        rows.append({
            "size": size_label(m["frame_size"]), "test": short_name(nodeid),
            "pps": fmt_pps(m["throughput_pps"]), "bps_l1": fmt_bps(m["throughput_bps_l1"]),
            "bps_l2": fmt_bps(m["throughput_bps_l2"]),
            "line_share": fmt_share(m.get("line_rate_ratio")),
            "upper": fmt_pps(m.get("upper_pps")), "max": fmt_pps(m["max_pps"]),
            "tolerance": fmt_given_loss(m["loss_tolerance"]),
            "duration": fmt_given_s(m["duration_s"]),
            "trials": _trial_counts(m["trials"]), "method": m["method"],
            "notes": "; ".join(notes),
        })
    return rows


def _latency(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for nodeid, m in _sorted(list(_measurements(doc, "latency_rfc2544"))):
        lat = m["latency"]
        pcts = lat.get("percentiles") or {}
        rows.append({
            "size": size_label(m["frame_size"]), "test": short_name(nodeid),
            "load": fmt_pps(m["load_pps"]), "duration": fmt_given_s(m["duration_s"]),
            "trials": _trial_counts(m["trials"]),
            "rfc": _spread_mean(m.get("rfc2544_ns"), fmt_ns),
            "rfc_range": _spread_range(m.get("rfc2544_ns"), fmt_ns),
            "percentiles": [fmt_percentile(pcts.get(k)) for k in PERCENTILE_KEYS],
            "max": fmt_ns(lat.get("max_ns")),
            "samples": fmt_count(lat.get("count")),
            "loss": f"{fmt_count(m['lost'])} / {fmt_count(m['tx_packets'])}",
        })
    return rows


def _frame_loss(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    tables = []
    for nodeid, m in _sorted(list(_measurements(doc, "frame_loss"))):
        basis = f"line rate {fmt_bps(m['line_rate_bps'])}" if m.get("line_rate_bps") else \
            "the generator's calibrated maximum"
        tables.append({
            "size": size_label(m["frame_size"]), "test": short_name(nodeid),
            "max": fmt_pps(m["max_pps"]), "basis": basis, "step": fmt_percent(m["step"]),
            "duration": fmt_given_s(m["duration_s"]),
            "skipped": ", ".join(fmt_pps(x) for x in m.get("skipped_pps", ())),
            "points": [{
                "load": fmt_percent(p["load_ratio"]), "offered": fmt_pps(p["offered_pps"]),
                "sent": fmt_count(p["tx_packets"]), "lost": fmt_count(p["lost"]),
                "ratio": fmt_loss(p["loss_ratio"]), "bound": fmt_loss(p["loss_upper_bound"]),
            } for p in m["points"]],
        })
    return tables


def _back_to_back(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for nodeid, m in _sorted(list(_measurements(doc, "back_to_back"))):
        s = m["spread"]
        rows.append({
            "size": size_label(m["frame_size"]), "test": short_name(nodeid),
            "rate": fmt_pps(m["rate_pps"]), "n": s["n"], "mean": fmt_count(s["mean"]),
            "stdev": fmt_count(s["stdev"]), "min": fmt_count(s["min"]),
            "max": fmt_count(s["max"]), "burst": fmt_s(m["burst_s_mean"]),
            "longest": fmt_count(m["max_frames"]), "trials": _trial_counts(m["trials"]),
            "note": "held the longest burst tried: the DUT's buffer is at least this"
            if m["at_maximum"] else "",
        })
    return rows


def _recovery(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for nodeid, m in _sorted(list(_measurements(doc, "recovery"))):
        first = next((t for t in m["trials"] if t["valid"]), m["trials"][0] if m["trials"]
                     else {})
        rows.append({
            "size": size_label(m["frame_size"]), "test": short_name(nodeid),
            "throughput": fmt_pps(m["throughput_pps"]),
            "overload": fmt_pps(first.get("overload_pps")),
            "relief": fmt_pps(first.get("recovery_pps")),
            "time": _spread(m.get("recovery_s"), fmt_s) if m["overloaded"] else
            "no loss during the overload: nothing to recover from",
            "lost": fmt_count(sum(t["lost"] for t in m["trials"] if t["valid"])),
            "trials": _trial_counts(m["trials"]),
        })
    return rows


def _reset(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for nodeid, m in _sorted(list(_measurements(doc, "reset"))):
        valid = [t for t in m["trials"] if t["valid"]]
        rows.append({
            "size": size_label(m["frame_size"]), "test": short_name(nodeid),
            "load": fmt_pps(valid[0]["load_pps"] if valid else None),
            "time": _spread(m.get("reset_s"), fmt_s),
            "recovered": "yes" if m["recovered"] else "NO: the DUT did not forward again",
            "lost": fmt_count(sum(t["lost"] for t in valid)),
            "trials": _trial_counts(m["trials"]),
        })
    return rows


def _mlrsearch(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    tables = []
    for nodeid, m in _sorted(list(_measurements(doc, "mlrsearch"))):
        goals = []
        for g in m["goals"]:
            goal = g["goal"]
            goals.append({
                "name": g["name"], "loss": fmt_given_loss(g["loss_ratio"]),
                "exceed": fmt_percent(g["exceed_ratio"]),
                "durations": f"{fmt_given_s(goal['final_trial_duration_s'])} / "
                             f"{fmt_given_s(goal['duration_sum_s'])}",
                "lower": fmt_pps(g["lower_bound_pps"]),
                "conditional": fmt_pps(g["conditional_throughput_pps"]),
                "bps": fmt_bps(g.get("throughput_bps_l1")),
                "upper": fmt_pps(g["upper_bound_pps"]) + (
                    " (generator)" if g["upper_bound_by_generator"] else ""),
                "width": fmt_share(g["relative_width"]),
                "target": fmt_percent(goal["relative_width"]),
            })
        stop = m.get("stop_reason") or "every goal reached"
        if (steady := steady_summary(m["trials"], fmt.HTML)) is not None:
            stop += f"; {steady}"
        tables.append({
            "size": size_label(m["frame_size"]), "test": short_name(nodeid), "goals": goals,
            "range": f"{fmt_pps(m['min_pps'])} – {fmt_pps(m['max_pps'])}",
            "trials": _trial_counts(m["trials"]), "time": fmt_s(m["total_trial_time_s"]),
            "budget": fmt_given_s(m.get("time_budget_s")), "stop": stop,
            "ceiling": fmt_pps(m.get("generator_ceiling_pps")),
        })
    return tables


def _other(doc: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    traffic = []
    for nodeid, m in _measurements(doc, "traffic"):
        for s in m["streams"]:
            traffic.append({
                "test": short_name(nodeid), "pattern": m["pattern"], "stream": s["name"],
                "offered": fmt_pps(s["offered_pps"]) if s["offered_pps"] else "maximum",
                "tx": fmt_pps(s["achieved_tx_pps"]), "rx": fmt_pps(s["achieved_rx_pps"]),
                "sent": fmt_count(s["tx_packets"]), "lost": fmt_count(s["lost"]),
                "size": f"{s['mean_frame_size']:.5g} B",
                "duration": fmt_given_s(m["duration_s"]),
            })
    meters = []
    for nodeid, m in _measurements(doc, "latency"):
        pcts = m["latency"].get("percentiles") or {}
        meters.append({
            "test": short_name(nodeid), "stream": m["stream"],
            "percentiles": [fmt_percentile(pcts.get(k)) for k in PERCENTILE_KEYS],
            "max": fmt_ns(m["latency"].get("max_ns")),
            "jitter": fmt_ns(m["latency"].get("jitter_ns")),
            "samples": fmt_count(m["latency"].get("count")),
            "loss": f"{fmt_count(m['lost'])} / {fmt_count(m['tx_packets'])}",
            "clock": m["latency"].get("clock") or DASH,
        })
    return {"traffic": traffic, "meters": meters}


def _trials_of(m: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list(m.get("trials", ()))


def _conditions(doc: Mapping[str, Any]) -> dict[str, Any]:
    settings = dict(doc.get("settings") or {})
    override = settings.get("trial_duration_s")
    procedures: list[dict[str, Any]] = []
    invalid: list[dict[str, Any]] = []
    unsteady: list[dict[str, Any]] = []
    clocks: dict[str, Any] = {}
    kinds = ("throughput", "latency_rfc2544", "frame_loss", "back_to_back", "recovery",
             "reset", "mlrsearch")
    for nodeid, m in _measurements(doc, *kinds):
        trials = _trials_of(m)
        durations = sorted({t["duration_s"] for t in trials if _real(t.get("duration_s"))})
        duration = m.get("duration_s")
        if m["kind"] == "back_to_back":
            duration_text = f"bursts of up to {fmt_count(m['max_frames'])} frames"
        elif m["kind"] in ("recovery", "reset"):
            duration_text = DASH
        elif _real(duration):
            duration_text = fmt_given_s(duration)
        else:
            duration_text = ", ".join(fmt_given_s(d) for d in durations) or DASH
        procedures.append({
            "procedure": f"{RFC_SECTIONS.get(m['kind'], 'RFC 9971')} "
                         f"{PROCEDURE_NAMES[m['kind']]}",
            "test": short_name(nodeid), "size": size_label(m["frame_size"]),
            "duration": duration_text, "trials": len(trials),
            "valid": sum(1 for t in trials if t.get("valid", True)),
        })
        for t in trials:
            if not t.get("valid", True):
                offered = t.get("offered_pps") or t.get("overload_pps") or t.get("load_pps")
                invalid.append({"test": short_name(nodeid), "procedure":
                                PROCEDURE_NAMES[m["kind"]], "size": size_label(m["frame_size"]),
                                "offered": fmt_pps(offered),
                                "reason": t.get("invalid_reason") or "not given"})
            elif t.get("steady") is False:
                unsteady.append({"test": short_name(nodeid), "procedure":
                                 PROCEDURE_NAMES[m["kind"]], "size": size_label(m["frame_size"]),
                                 "offered": fmt_pps(t["offered_pps"]),
                                 "forwarding": fmt_pps(t.get("forwarding_pps")),
                                 "backlog": fmt_count(t["backlog_frames"]),
                                 "verdict": "failed" if t.get("steady_state") == "fail"
                                 else "flagged", "note": steady_note(t, fmt.HTML)})
    for _, m in _measurements(doc, "latency_rfc2544", "latency"):
        lat = m["latency"]
        if lat.get("clock"):
            clocks.setdefault(lat["clock"], lat.get("resolution_ns"))
    for _, m in _measurements(doc, *kinds):
        for t in _trials_of(m):
            if t.get("clock"):
                clocks.setdefault(t["clock"], None)
    env = dict(doc.get("environment") or {})
    clock_source = env.get("clock_source") or env.get("clock")
    calibrations = [{
        "test": short_name(nodeid), "port": m["port"], "size": size_label(m["frame_size"]),
        "max": fmt_pps(m["generator_max_pps"]), "seconds": fmt_given_s(m["seconds"]),
        "search": fmt_pps(m["search_max_pps"]),
        "bias": fmt_ns(m.get("latency_bias_ns")) if m.get("latency_bias_ns") is not None
        else "not measured", "note": m.get("latency_bias_note") or "",
    } for nodeid, m in _measurements(doc, "calibration")]
    confidences = sorted({p["confidence"] for _, m in _measurements(doc, "latency_rfc2544",
                                                                    "latency")
                          for p in (m["latency"].get("percentiles") or {}).values() if p})
    ports = [{"name": p.get("name", DASH), "device": p.get("device", DASH),
              "driver": p.get("driver", DASH)} for p in env.pop("ports", ()) or ()]
    return {
        "settings": [("topology", settings.pop("topology", DASH)),
                     ("backend", settings.pop("backend", DASH)),
                     ("engine", settings.pop("engine", DASH)),
                     ("trial duration override",
                      fmt_given_s(override) if _real(override) else "none (procedures' own)")]
        + [(k.replace("_", " "), str(v)) for k, v in sorted(settings.items())
           if k != "trial_duration_s"],
        "host": sorted((doc.get("host") or {}).items()),
        "procedures": procedures, "invalid": invalid, "unsteady": unsteady,
        "calibrations": calibrations,
        "clocks": [f"{name}" + (f" (resolution {fmt_ns(res)})" if _real(res) else "")
                   for name, res in clocks.items()],
        "clock_source": clock_source,
        "confidence": ", ".join(fmt_percent(c) for c in confidences) or fmt_percent(0.95),
        "dpdk": env.pop("dpdk_version", None), "ports": ports,
        "environment": sorted((k, str(v)) for k, v in env.items()
                              if k not in ("clock_source", "clock")),
    }


def _verdict_value(v: Mapping[str, Any], key: str) -> str:
    value = v.get(key)
    if value is None:
        return DASH if key == "measured" else "none"
    if isinstance(value, str):
        return value
    unit = v.get("unit")
    if unit == "pps":
        text = fmt_pps(value)
        if key == "measured" and _real(v.get("measured_bps")):
            text += f" ({fmt_bps(v['measured_bps'])} at {str(v.get('layer', 'l1')).upper()})"
        return text
    if unit == "ns":
        return fmt_ns(value)
    if v.get("criterion") == "at_most":
        if key == "measured":
            return f"loss ratio {fmt_loss(value)}"
        return "no frame lost" if value == 0 else f"loss ratio ≤ {fmt_given_loss(value)}"
    if v.get("criterion") == "max_lost":
        return f"{fmt_count(value)} frames lost" if key == "measured" else \
            f"≤ {fmt_count(value)} frames lost"
    return fmt_count(value)


def _verdicts(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    tests = []
    for test in doc.get("tests", ()):
        outcome = test.get("outcome", "?")
        tests.append({
            "test": short_name(test["nodeid"]), "nodeid": test["nodeid"],
            "outcome": {"passed": "PASS", "failed": "FAIL"}.get(outcome, outcome.upper()),
            "duration": fmt_s(test.get("duration_s")),
            # why a test errored (an engine crash with its log tail): its first lines
            "error": "\n".join(str(test.get("error") or "").splitlines()[:12]),
            # pcaps sit in captures/ beside the report the session writes: link them there
            "captures": [{"path": c, "href": "captures/" + os.path.basename(c)}
                         for c in test.get("captures", ())],
            "checks": [{
                "check": v["check"], "verdict": "PASS" if v["passed"] else "FAIL",
                "measured": _verdict_value(v, "measured"),
                "required": _verdict_value(v, "required"),
                "statement": v.get("message") or v.get("reason") or "",
            } for v in test.get("verdicts", ())],
        })
    return tests


# ---- plots --------------------------------------------------------------------------------


def _svg(fig: Figure, index: int, label: str) -> Markup:
    """The figure as inline SVG: no XML prolog, no namespace URLs, no metadata, ids unique
    within the page."""
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": f"netload-{index}"}):
        fig.savefig(buf, format="svg",
                    metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    text = buf.getvalue()
    text = text[text.index("<svg"):]
    text = re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.DOTALL)
    text = re.sub(r"<!--.*?-->", "", text, flags=re.DOTALL)
    text = re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", text)
    prefix = f"fig{index}-"
    text = re.sub(r'\bid="([^"]+)"', rf'id="{prefix}\1"', text)
    text = re.sub(r'href="#([^"]+)"', rf'href="#{prefix}\1"', text)
    text = re.sub(r"url\(#([^)]+)\)", rf"url(#{prefix}\1)", text)
    text = text.replace("<svg", f'<svg role="img" aria-label="{label}"', 1)
    return Markup(text)


def _figure(width: float = 9.0, height: float = 3.6) -> Figure:
    fig = Figure(figsize=(width, height), layout="constrained")
    return fig


def _throughput_plot(doc: Mapping[str, Any], index: int) -> Markup | None:
    series: dict[str, list[dict[str, Any]]] = {}
    for nodeid, m in _measurements(doc, "throughput"):
        series.setdefault(_base_name(nodeid), []).append(m)
    if not series:
        return None
    line = _line_rate(doc)
    fig = _figure()
    ax_pps, ax_bps = fig.subplots(1, 2)
    sizes = [m["mean_frame_size"] for ms in series.values() for m in ms]
    for n, (name, ms) in enumerate(series.items()):
        ms = sorted(ms, key=lambda m: m["mean_frame_size"])
        x = [m["mean_frame_size"] for m in ms]
        colour = _COLOURS[n % len(_COLOURS)]
        ax_pps.plot(x, [m["throughput_pps"] for m in ms], "o-", color=colour, label=name)
        ax_bps.plot(x, [m["throughput_bps_l1"] for m in ms], "o-", color=colour,
                    label=f"{name} (L1)")
        ax_bps.plot(x, [m["throughput_bps_l2"] for m in ms], "s--", color=colour,
                    label=f"{name} (L2)", alpha=0.7)
        for m in ms:
            if not isinstance(m["frame_size"], int):
                ax_pps.annotate(str(m["frame_size"]), (m["mean_frame_size"], m["throughput_pps"]),
                                textcoords="offset points", xytext=(4, 4), fontsize=8)
    if line:
        grid = [64 + (max(max(sizes), 1518) - 64) * i / 200 for i in range(201)]
        ax_pps.plot(grid, [line / ((s + 20) * 8) for s in grid], ":", color="#555555",
                    label="line rate")
        ax_bps.axhline(line, linestyle=":", color="#555555", label="line rate (L1)")
        ax_bps.plot(grid, [line * s / (s + 20) for s in grid], "-.", color="#999999",
                    label="line rate at L2")
    for ax, unit in ((ax_pps, "pps"), (ax_bps, "bit/s")):
        ax.yaxis.set_major_formatter(EngFormatter(unit=unit, places=1))
        ax.set_xscale("log", base=2)
        ticks = sorted({round(s) for s in sizes} | ({64, 1518} if line else set()))
        ax.set_xticks(ticks, [str(t) for t in ticks])
        ax.minorticks_off()
        ax.set_xlabel("frame size (bytes with FCS; IMIX at its mean)")
        ax.set_ylabel("frames/s" if unit == "pps" else unit)
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    ax_pps.set_title("Throughput (frames/s)", fontsize=10)
    ax_bps.set_title("Throughput (bit/s at L1 and L2)", fontsize=10)
    return _svg(fig, index, "throughput versus frame size")


def _hdr_x(p_percent: float) -> float:
    return 1.0 / (1.0 - p_percent / 100.0)


def _latency_plot(rows: list[tuple[str, dict[str, Any]]], index: int,
                  title: str, label_of: Callable[[str, dict[str, Any]], str]) -> Markup | None:
    curves = []
    for nodeid, m in rows:
        lat = m["latency"]
        pcts = [p for p in (lat.get("percentiles") or {}).values() if p and p["p"] < 100]
        if pcts:
            curves.append((label_of(nodeid, m), lat, sorted(pcts, key=lambda p: p["p"])))
    if not curves:
        return None
    fig = _figure(9.0, 4.2)
    ax = fig.subplots()
    values = []
    for n, (label, lat, pcts) in enumerate(curves):
        colour = _COLOURS[n % len(_COLOURS)]
        hist = lat.get("histogram")
        if hist and hist.get("counts"):
            total = sum(hist["counts"])
            cum, xs, ys = 0, [], []
            for upper, count in zip(hist["upper_ns"], hist["counts"], strict=False):
                cum += count
                q = min(cum / total, 1 - 1 / (2 * total))
                xs.append(1 / (1 - q))
                ys.append(upper / 1e9)
            ax.step(xs, ys, where="post", color=colour, alpha=0.45, linewidth=1)
        x = [_hdr_x(p["p"]) for p in pcts]
        y = [p["value_ns"] / 1e9 for p in pcts]
        ax.plot(x, y, "-", color=colour, label=label)
        with_ci = [p for p in pcts if has_ci(p)]
        if with_ci:
            ax.errorbar([_hdr_x(p["p"]) for p in with_ci], [p["value_ns"] / 1e9 for p in with_ci],
                        yerr=[[max(p["value_ns"] - p["ci_low_ns"], 0) / 1e9 for p in with_ci],
                              [max(p["ci_high_ns"] - p["value_ns"], 0) / 1e9 for p in with_ci]],
                        fmt="o", color=colour, capsize=3)
        without = [p for p in pcts if not has_ci(p)]
        if without:
            ax.plot([_hdr_x(p["p"]) for p in without], [p["value_ns"] / 1e9 for p in without],
                    "o", markerfacecolor="white", color=colour)
        values += [v for v in y if v > 0]
    ticks = [p for p in (50, 90, 99, 99.9, 99.99, 99.999)
             if _hdr_x(p) <= max(_hdr_x(q["p"]) for _, _, ps in curves for q in ps) * 1.01]
    ax.set_xscale("log")
    ax.set_xticks([_hdr_x(p) for p in ticks], [f"{p:g}%" for p in ticks])
    ax.minorticks_off()
    ax.set_xlim(left=1.5)
    if values and max(values) / max(min(values), 1e-15) > 50:
        ax.set_yscale("log")
    ax.yaxis.set_major_formatter(EngFormatter(unit="s"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("percentile (log scale of 1/(1-p)); hollow: too few samples for a CI")
    ax.set_ylabel("latency")
    ax.set_title(title, fontsize=10)
    ax.grid(True, alpha=0.3, which="both")
    ax.legend(fontsize=8)
    return _svg(fig, index, title)


def _loss_plot(doc: Mapping[str, Any], index: int) -> Markup | None:
    rows = _sorted(list(_measurements(doc, "frame_loss")))
    if not rows:
        return None
    fig = _figure(9.0, 3.6)
    ax = fig.subplots()
    for n, (_, m) in enumerate(rows):
        pts = sorted(m["points"], key=lambda p: p["load_ratio"])
        colour = _COLOURS[n % len(_COLOURS)]
        x = [p["load_ratio"] * 100 for p in pts]
        ax.plot(x, [p["loss_ratio"] * 100 for p in pts], "o-", color=colour,
                label=size_label(m["frame_size"]))
        ax.plot(x, [p["loss_upper_bound"] * 100 for p in pts], ":", color=colour, alpha=0.7)
    ax.set_xlabel("offered load (% of the maximum load)")
    ax.set_ylabel("frame loss (%)")
    ax.set_title("Frame loss rate versus offered load (RFC 2544 §26.3); dotted: 95 % upper "
                 "bound", fontsize=10)
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, title="frame size", title_fontsize=8)
    return _svg(fig, index, "frame loss versus offered load")


def _back_to_back_plot(doc: Mapping[str, Any], index: int) -> Markup | None:
    rows = _sorted(list(_measurements(doc, "back_to_back")))
    if not rows:
        return None
    fig = _figure(9.0, 3.2)
    ax = fig.subplots()
    labels = [f"{size_label(m['frame_size'])}\n{_base_name(nodeid)}" for nodeid, m in rows]
    means = [m["spread"]["mean"] for _, m in rows]
    errors = [m["spread"]["stdev"] for _, m in rows]
    ax.bar(range(len(rows)), means, yerr=errors, capsize=4, color=_COLOURS[0], alpha=0.8)
    ax.set_xticks(range(len(rows)), labels, fontsize=8)
    ax.set_ylabel("longest loss-free burst (frames)")
    ax.set_title("Back-to-back frames: mean ± standard deviation (RFC 2544 §26.4)",
                 fontsize=10)
    ax.grid(True, axis="y", alpha=0.3)
    return _svg(fig, index, "back-to-back bursts per frame size")


# Free text (test ids, stream names, IMIX names) is drawn as it is written: matplotlib's
# mathtext would read "$...$" in it as TeX, and an unbalanced formula raises at draw time.
PLAIN_TEXT = {"text.parse_math": False}


def _plots(doc: Mapping[str, Any]) -> dict[str, Markup | None]:
    with matplotlib.rc_context(PLAIN_TEXT):  # texts take it when made, ticks when drawn
        return _draw_plots(doc)


def _draw_plots(doc: Mapping[str, Any]) -> dict[str, Markup | None]:
    rfc = _sorted(list(_measurements(doc, "latency_rfc2544")))
    meters = list(_measurements(doc, "latency"))
    return {
        "throughput": _throughput_plot(doc, 1),
        "latency": _latency_plot(rfc, 2, "Latency percentiles per frame size, with 95 % CIs",
                                 lambda _n, m: size_label(m["frame_size"])),
        "loss": _loss_plot(doc, 3),
        "back_to_back": _back_to_back_plot(doc, 4),
        "meters": _latency_plot(meters, 5, "Latency percentiles per stream (latency meters)",
                                lambda n, m: f"{m['stream']} ({short_name(n)})"),
    }


# ---- the page -----------------------------------------------------------------------------


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("pytest_netload.reports", "templates"),
                             autoescape=jinja2.select_autoescape(("html", "j2")),
                             undefined=jinja2.StrictUndefined, trim_blocks=True,
                             lstrip_blocks=True)
    return env


def render(document: Mapping[str, Any]) -> str:
    """The report of `document` (a results document, schema 1.0) as one HTML page."""
    context = {
        "cover": _cover(document),
        "throughput": _throughput(document),
        "latency": _latency(document),
        "frame_loss": _frame_loss(document),
        "back_to_back": _back_to_back(document),
        "recovery": _recovery(document),
        "reset": _reset(document),
        "mlrsearch": _mlrsearch(document),
        "other": _other(document),
        "conditions": _conditions(document),
        "verdicts": _verdicts(document),
        "plots": _plots(document),
        "percentile_keys": PERCENTILE_KEYS,
    }
    return _environment().get_template("report.html.j2").render(context)


def write(document: Mapping[str, Any], path: str | os.PathLike[str]) -> Path:
    """Render `document` and write the page to `path` (atomically); returns the path."""
    return write_atomic(path, render(document))
