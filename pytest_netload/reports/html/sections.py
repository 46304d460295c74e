"""The results document as the report reads it: the cover, one table per RFC 2544
procedure and MLRsearch, the other measurements, the test conditions and the verdicts."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from typing import Any

from ... import format as fmt
from ...rfc2544.trial import steady_note, steady_summary
from .. import verdict
from ..signoff import FIELDS as SIGN_OFF_FIELDS
from ..signoff import LABELS as SIGN_OFF_LABELS
from ..signoff import sign_off
from .text import (
    DASH,
    PERCENTILE_KEYS,
    _real,
    _size_key,
    _spread,
    _spread_mean,
    _spread_range,
    _trial_counts,
    fmt_bps,
    fmt_count,
    fmt_given_loss,
    fmt_given_s,
    fmt_loss,
    fmt_ns,
    fmt_percent,
    fmt_percentile,
    fmt_pps,
    fmt_s,
    fmt_share,
    size_label,
)


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


def short_name(nodeid: str) -> str:
    return nodeid.split("::", 1)[-1]


def base_name(nodeid: str) -> str:
    return re.sub(r"\[[^\]]*\]$", "", short_name(nodeid))


def measurements_of(doc: Mapping[str, Any], *kinds: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """(nodeid, measurement) of the given kinds, in document order."""
    for test in doc.get("tests", ()):
        for m in test.get("measurements", ()):
            if m.get("kind") in kinds:
                yield test["nodeid"], m


def by_frame_size(rows: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, dict[str, Any]]]:
    return sorted(rows, key=lambda r: (_size_key(r[1].get("frame_size")), r[0]))


def overall_verdict(doc: Mapping[str, Any]) -> str:
    """FAIL when a test failed; INCOMPLETE when the session was interrupted or tests
    did not run; ERROR when a test errored; PASS when at least one passed; else NO
    VERDICT (reports/verdict.py)."""
    return verdict.overall_verdict(doc)


def line_rate_of(doc: Mapping[str, Any]) -> float | None:
    rate: Any = (doc.get("topology") or {}).get("line_rate_bps")
    return float(rate) if _real(rate) and rate > 0 else None


RFC2544_KINDS = frozenset({"throughput", "latency_rfc2544", "frame_loss", "back_to_back",
                           "recovery", "reset", "mlrsearch"})


def report_title(doc: Mapping[str, Any]) -> str:
    """"RFC 2544, Y.1564 and RFC 2889 acceptance report": the standards whose procedures
    the document holds, in that order; "Acceptance report" when it holds none."""
    kinds = {m.get("kind", "") for t in doc.get("tests", ()) for m in t.get("measurements", ())}
    names = [name for name, held in (
        ("RFC 2544", bool(kinds & RFC2544_KINDS)),
        ("Y.1564", any(k.startswith("y1564_") for k in kinds)),
        ("RFC 2889", any(k.startswith("rfc2889_") for k in kinds))) if held]
    if not names:
        return "Acceptance report"
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return f"{listed} acceptance report"


def _cover(doc: Mapping[str, Any]) -> dict[str, Any]:
    topo = doc.get("topology") or {}
    dut = dict(topo.get("dut") or {})
    outcomes = [t.get("outcome") for t in doc.get("tests", ())]
    return {
        "title": report_title(doc),
        "verdict": overall_verdict(doc),
        "dut_name": dut.pop("name", None) or topo.get("name") or "unnamed DUT",
        "dut_model": dut.pop("model", None) or DASH,
        "dut_firmware": dut.pop("firmware", None) or dut.get("kernel") or DASH,
        "dut_serial": dut.pop("serial", None),
        "dut_other": sorted(dut.items()),
        "topology": topo.get("name", DASH),
        "topology_source": topo.get("source"),
        # a CI job on the default built-in topology: "built-in DUT, not your device"
        "topology_note": (doc.get("settings") or {}).get("topology_note"),
        "line_rate": fmt_bps(line_rate_of(doc)) + " (L1)" if line_rate_of(doc) else
        "none (rates are relative to the generator's calibrated maximum)",
        "created": doc.get("created", DASH),
        "package": f"{(doc.get('package') or {}).get('name', 'pytest-netload')} "
                   f"{(doc.get('package') or {}).get('version', '?')}",
        "schema_version": doc.get("schema_version", DASH),
        "counts": {o: outcomes.count(o) for o in ("passed", "failed", "error", "skipped")},
        "tests": len(outcomes),
        "session": verdict.session_counts(doc),
        "verdict_line": verdict.verdict_line(doc).partition(": ")[2],
        # customer, operator, site, test plan: those the settings give
        "sign_off": [(SIGN_OFF_LABELS[k], v) for k, v in sign_off(doc).items()],
        "given": {k: sign_off(doc).get(k) for k in SIGN_OFF_FIELDS},  # None: not given
    }


def traffic_note(record: Mapping[str, Any]) -> str | None:
    """What a procedure's trials sent, when it was not the default one UDP stream on one
    wire: "both directions (p0->p1, p1->p0), per direction" and the streams' shares."""
    traffic = record.get("traffic") or {}
    if not traffic:
        return None
    parts = []
    if traffic.get("direction") == "both":
        parts.append(f"both directions ({', '.join(traffic['wires'])}), pps per direction")
    first = [s for s in traffic["streams"] if s["wire"] == traffic["wires"][0]]
    if len(first) > 1 or first[0]["kind"] != "udp":
        parts.append("streams " + ", ".join(
            f"{s['kind']} {fmt.share(s['share'], fmt.HTML)}" for s in first))
    return "; ".join(parts) or None


def lower_bound_note(max_source: Any, generator_max_pps: Any, what: str = "throughput") -> str:
    """The report's note beside a figure that is only a lower bound the generator set."""
    ceiling = (f" (calibrated {fmt_pps(generator_max_pps)})"
               if max_source == "generator" and _real(generator_max_pps) else "")
    return (f"a lower bound: the generator's ceiling{ceiling}; the DUT was not saturated, "
            f"its {what} is at least this")


def _throughput(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for nodeid, m in by_frame_size(list(measurements_of(doc, "throughput"))):
        notes = []
        bounded = bool(m.get("lower_bound_by_generator"))
        if bounded:
            notes.append(lower_bound_note(m.get("max_source"), m.get("generator_max_pps")))
        if (sent := traffic_note(m)) is not None:
            notes.append(sent)
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
            "pps": _at_least(fmt_pps(m["throughput_pps"]), bounded),
            "bps_l1": _at_least(fmt_bps(m["throughput_bps_l1"]), bounded),
            "bps_l2": _at_least(fmt_bps(m["throughput_bps_l2"]), bounded),
            "line_share": fmt_share(m.get("line_rate_ratio")),
            "upper": fmt_pps(m.get("upper_pps")), "max": fmt_pps(m["max_pps"]),
            "tolerance": fmt_given_loss(m["loss_tolerance"]),
            "duration": fmt_given_s(m["duration_s"]),
            "trials": _trial_counts(m["trials"]), "method": m["method"],
            "notes": "; ".join(notes),
        })
    return rows


def _at_least(figure: str, bounded: bool) -> str:
    return fmt.at_least(figure, fmt.HTML) if bounded else figure


_MAX_BASIS = {"line_rate": None, "max_rate": "the marker's max_rate",
              "generator": "the generator's calibrated maximum"}


def _latency(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for nodeid, m in by_frame_size(list(measurements_of(doc, "latency_rfc2544"))):
        lat = m["latency"]
        pcts = lat.get("percentiles") or {}
        rows.append({
            "size": size_label(m["frame_size"]), "test": short_name(nodeid),
            "load": fmt_pps(m["load_pps"]) + (
                " (the throughput is the generator's ceiling: the DUT was not saturated)"
                if m.get("throughput_lower_bound_by_generator") else ""),
            "duration": fmt_given_s(m["duration_s"]),
            "trials": _trial_counts(m["trials"]),
            "rfc": _spread_mean(m.get("rfc2544_ns"), fmt_ns),
            "rfc_range": _spread_range(m.get("rfc2544_ns"), fmt_ns),
            "percentiles": [fmt_percentile(pcts.get(k)) for k in PERCENTILE_KEYS],
            "max": fmt_ns(lat.get("max_ns")),
            "samples": fmt_count(lat.get("count")),
            "loss": f"{fmt_count(m['lost'])} / {fmt_count(m['tx_packets'])}",
        })
    return rows


def _latency_at(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per load of every throughput record's latency at loads (`latency_at`)."""
    rows = []
    for nodeid, m in by_frame_size(list(measurements_of(doc, "throughput"))):
        at = m.get("latency_at")
        if not at:
            continue
        of = at["of"]
        base = f"{fmt_pps(at['base_pps'])} ({of})"
        if not at["loads"]:
            rows.append({"size": size_label(m["frame_size"]), "test": short_name(nodeid),
                         "base": base, "share": DASH, "load": DASH,
                         "percentiles": [DASH] * len(PERCENTILE_KEYS), "min": DASH,
                         "mean": DASH, "max": DASH, "samples": DASH, "loss": DASH,
                         "notes": f"the {of} is 0: no load to measure latency at"})
        for x in at["loads"]:
            lat = x.get("latency") or {}
            pcts = lat.get("percentiles") or {}
            rows.append({
                "size": size_label(m["frame_size"]), "test": short_name(nodeid),
                "base": base,
                "share": "no load" if x["fraction"] == 0 else
                fmt.percent(x["fraction"], fmt.HTML),
                "load": fmt_pps(x["load_pps"]),
                "percentiles": [fmt_percentile(pcts.get(k)) for k in PERCENTILE_KEYS],
                "min": fmt_ns(lat.get("min_ns")), "mean": fmt_ns(lat.get("mean_ns")),
                "max": fmt_ns(lat.get("max_ns")), "samples": fmt_count(lat.get("count")),
                "loss": f"{fmt_count(x['lost'])} / {fmt_count(x['tx_packets'])}",
                "notes": "; ".join(n for n in (
                    f"the generator could not offer {fmt_pps(x['asked_pps'])} (its own "
                    "ceiling): stepped down 5 % at a time to the load shown"
                    if x["load_pps"] < x.get("asked_pps", x["load_pps"]) else "",
                    "" if x.get("invalid_reason") is None else
                    f"every try invalid: {x['invalid_reason']}") if n),
            })
    return rows


def _frame_loss(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    tables = []
    for nodeid, m in by_frame_size(list(measurements_of(doc, "frame_loss"))):
        basis = _MAX_BASIS.get(m.get("max_source") or "")
        if basis is None:   # the line rate, or a record that does not say
            basis = f"line rate {fmt_bps(m['line_rate_bps'])}" if m.get("line_rate_bps") else \
                "the generator's calibrated maximum"
        elif m.get("max_source") == "generator" and _real(m.get("generator_max_pps")):
            basis = (f"{fmt_percent(m['max_pps'] / m['generator_max_pps'])} of {basis}, "
                     f"{fmt_pps(m['generator_max_pps'])}")
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
    for nodeid, m in by_frame_size(list(measurements_of(doc, "back_to_back"))):
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
    for nodeid, m in by_frame_size(list(measurements_of(doc, "recovery"))):
        first = next((t for t in m["trials"] if t["valid"]), m["trials"][0] if m["trials"]
                     else {})
        rows.append({
            "size": size_label(m["frame_size"]), "test": short_name(nodeid),
            "throughput": _at_least(fmt_pps(m["throughput_pps"]),
                                    bool(m.get("throughput_lower_bound_by_generator"))),
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
    for nodeid, m in by_frame_size(list(measurements_of(doc, "reset"))):
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
    for nodeid, m in by_frame_size(list(measurements_of(doc, "mlrsearch"))):
        goals = []
        for g in m["goals"]:
            goal = g["goal"]
            goals.append({
                "name": g["name"], "loss": fmt_given_loss(g["loss_ratio"]),
                "exceed": fmt_percent(g["exceed_ratio"]),
                "durations": f"{fmt_given_s(goal['final_trial_duration_s'])} / "
                             f"{fmt_given_s(goal['duration_sum_s'])}",
                "lower": _at_least(fmt_pps(g["lower_bound_pps"]),
                                   bool(g.get("lower_bound_by_generator"))),
                "conditional": fmt_pps(g["conditional_throughput_pps"]),
                "bps": fmt_bps(g.get("throughput_bps_l1")),
                "upper": fmt_pps(g["upper_bound_pps"]) + (
                    " (generator)" if g["upper_bound_by_generator"] else ""),
                "width": fmt_share(g["relative_width"]),
                "target": fmt_percent(goal["relative_width"]),
            })
        stop = m.get("stop_reason") or "every goal reached"
        bounded = [g["name"] for g in m["goals"] if g.get("lower_bound_by_generator")]
        if bounded:
            stop += (f"; {', '.join(bounded)}: "
                     + lower_bound_note(m.get("max_source"), m.get("generator_max_pps")))
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
    for nodeid, m in measurements_of(doc, "traffic"):
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
    for nodeid, m in measurements_of(doc, "latency"):
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
    return {"traffic": traffic, "meters": meters, "frames": _expected_frames(doc)}


def _expected_frames(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per stream of each ``expected_frames`` record: its counts by expected
    frame and the first mismatch's diff."""
    rows = []
    for nodeid, m in measurements_of(doc, "expected_frames"):
        where = m["procedure"] + (f" {m['frame_size']}" if m.get("frame_size") else "")
        if m.get("trials") is not None:
            where += f" ({fmt_count(m['trials'])} trials)"
        for s in m["streams"]:
            first = s["mismatches"][0] if s["mismatches"] else None
            rows.append({
                "test": short_name(nodeid), "where": where, "stream": s["stream"],
                "received": fmt_count(s["received"]), "matched": fmt_count(s["matched"]),
                "mismatched": fmt_count(s["mismatched"]),
                "by_rule": ", ".join(f"{k} {fmt_count(v)}" for k, v in s["by_rule"].items()),
                "first": DASH if first is None else
                f"seq {first['seq']}: " + ("; ".join(first["diff"]) or "differs"),
                "ok": s["mismatched"] == 0 and s["received"] > 0,
            })
    return rows


def _trials_of(m: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list(m.get("trials", ()))


def _conditions(doc: Mapping[str, Any]) -> dict[str, Any]:
    settings = dict(doc.get("settings") or {})
    override = settings.get("trial_duration_s")
    procedures: list[dict[str, Any]] = []
    invalid: list[dict[str, Any]] = []
    unsteady: list[dict[str, Any]] = []
    attributed: list[dict[str, Any]] = []
    clocks: dict[str, Any] = {}
    kinds = ("throughput", "latency_rfc2544", "frame_loss", "back_to_back", "recovery",
             "reset", "mlrsearch")
    for nodeid, m in measurements_of(doc, *kinds):
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
            table = t.get("loss_attribution")
            if table and table.get("lost"):
                attributed.append({
                    "test": short_name(nodeid), "procedure": PROCEDURE_NAMES[m["kind"]],
                    "size": size_label(m["frame_size"]), "offered": fmt_pps(t["offered_pps"]),
                    "valid": "yes" if t.get("valid", True) else "no (retried)",
                    "lost": fmt_count(table["lost"]),
                    "rows": [f"{fmt_count(r['frames'])} {r['what']} ({r['where'] or r['counter']})"
                             for r in table.get("rows", ())],
                    "unaccounted": fmt_count(table["unaccounted"]),
                    "exact": table["unaccounted"] == 0})
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
    for _, m in measurements_of(doc, "latency_rfc2544", "latency"):
        lat = m["latency"]
        if lat.get("clock"):
            clocks.setdefault(lat["clock"], lat.get("resolution_ns"))
    for _, m in measurements_of(doc, *kinds):
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
    } for nodeid, m in measurements_of(doc, "calibration")]
    confidences = sorted({p["confidence"] for _, m in measurements_of(doc, "latency_rfc2544",
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
           if k != "trial_duration_s" and k not in SIGN_OFF_FIELDS],
        "host": sorted((doc.get("host") or {}).items()),
        "procedures": procedures, "invalid": invalid, "unsteady": unsteady,
        "attributed": attributed,
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
        if key == "measured" and v.get("lower_bound_by_generator"):
            text = fmt.at_least(text, fmt.HTML)
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
                "check": v["check"],
                "verdict": "PASS" if v["passed"] else
                "ERROR" if v.get("outcome") == "error" else "FAIL",
                "measured": _verdict_value(v, "measured"),
                "required": _verdict_value(v, "required"),
                "statement": v.get("message") or v.get("reason") or "",
            } for v in test.get("verdicts", ())],
        })
    return tests
