"""The report's RFC 2889 section: one row per switch benchmark, its headline figures
and what it observed (fully meshed, congestion control, address caching capacity and
learning rate, broadcast forwarding, partially meshed, maximum forwarding rate and
forward pressure, errored frames filtering). A sub-case the generator could not run
(forward pressure, an errored-frame kind) says so with its reason."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ... import format as fmt
from .sections import lower_bound_note, measurements_of, short_name
from .text import DASH, fmt_count, fmt_loss, fmt_ns, fmt_pps

__all__ = ["RFC2889_KINDS", "rfc2889_rows"]

RFC2889_KINDS = {
    "rfc2889_fully_meshed": "§5.1 fully meshed",
    "rfc2889_congestion_control": "§5.5 congestion control",
    "rfc2889_address_caching_capacity": "§5.7 address caching capacity",
    "rfc2889_address_learning_rate": "§5.8 address learning rate",
    "rfc2889_broadcast_forwarding": "§5.10 broadcast forwarding",
    "rfc2889_partially_meshed": "§5.2 partially meshed",
    "rfc2889_maximum_forwarding_rate": "§5.6 maximum forwarding rate",
    "rfc2889_errored_frame_filtering": "§5.9 errored frames filtering",
}


def _opt(value: Any, show: Any) -> str:
    return DASH if value is None else show(value)


def _figures(kind: str, m: Mapping[str, Any]) -> tuple[str, str]:
    """(result, details) of one record; a figure the generator bounded reads "≥ ..." and
    its details say so."""
    result, details = _plain_figures(kind, m)
    if not m.get("lower_bound_by_generator"):
        return result, details
    for key in ("throughput_pps_per_port", "throughput_pps", "learning_rate_fps"):
        if key in m and m[key] is not None:
            shown = fmt_pps(m[key])
            result = result.replace(shown, fmt.at_least(shown, fmt.HTML), 1)
            break
    per_port = kind == "rfc2889_fully_meshed"
    note = lower_bound_note(m.get("max_source"),
                            m.get("generator_max_pps_per_port" if per_port else
                                  "generator_max_pps"),
                            "learning rate" if kind == "rfc2889_address_learning_rate"
                            else "throughput")
    return result, f"{details}; {note}"


def _pressure(fp: Mapping[str, Any]) -> str:
    if fp.get("skipped"):
        return f"forward pressure ({fp.get('gap_bits', 88)}-bit gap) not run: " \
            f"{fp.get('skipped_reason')}"
    seen = "seen" if fp.get("detected") else "not seen"
    return (f"forward pressure {seen}: busiest port received "
            f"{_opt(fp.get('max_rx_pps_per_port'), fmt_pps)} against a line rate of "
            f"{_opt(fp.get('line_pps_per_port'), fmt_pps)}")


def _errored(m: Mapping[str, Any]) -> tuple[str, str]:
    shown, notes = [], []
    for o in m.get("outcomes") or ():
        name = str(o["kind"]).replace("_", " ")
        if o["verdict"] == "skipped":
            shown.append(f"{name}: not sent")
            notes.append(f"{name}: {o.get('skipped_reason')}")
        else:
            shown.append(f"{name}: {o['verdict']}")
            notes.append(f"{name} ({o['frame_size']} B): {fmt_count(o['forwarded'])} of "
                         f"{fmt_count(o['tx'])} forwarded")
    return ", ".join(shown) or DASH, "; ".join(notes)


def _plain_figures(kind: str, m: Mapping[str, Any]) -> tuple[str, str]:
    if kind == "rfc2889_partially_meshed":
        way = str(m.get("direction", "")).replace("_", "-")
        return (f"throughput {_opt(m.get('throughput_pps'), fmt_pps)} ({way})",
                f"{m['ports']} ports, p0 the one port; forwarding rate at the maximum "
                f"offered load ({fmt_pps(m['max_pps'])}): "
                f"{_opt(m.get('forwarding_rate_at_max_pps'), fmt_pps)}, loss "
                f"{_opt(m.get('loss_ratio_at_max'), fmt_loss)}")
    if kind == "rfc2889_maximum_forwarding_rate":
        return (f"MFR {fmt_pps(m['mfr_pps'])}",
                f"{m['ports']} ports, fully meshed; reached at "
                f"{fmt_pps(m['mfr_load_pps_per_port'])} per port over "
                f"{len(m.get('loads_pps_per_port') or ())} loads; "
                + _pressure(m.get("forward_pressure") or {}))
    if kind == "rfc2889_errored_frame_filtering":
        return _errored(m)
    if kind == "rfc2889_fully_meshed":
        return (f"throughput {_opt(m.get('throughput_pps_per_port'), fmt_pps)} per port",
                f"{m['ports']} ports; forwarding rate at the maximum offered load "
                f"({fmt_pps(m['max_pps_per_port'])} per port): "
                f"{_opt(m.get('forwarding_rate_at_max_pps'), fmt_pps)}, loss "
                f"{_opt(m.get('loss_ratio_at_max'), fmt_loss)}")
    if kind == "rfc2889_congestion_control":
        return (", ".join(m.get("observed") or ()) or DASH, str(m.get("summary", "")))
    if kind == "rfc2889_address_caching_capacity":
        return (f"{fmt_count(m['capacity'])} addresses",
                f"searched {fmt_count(m['low'])} to {fmt_count(m['high'])}, learning at "
                f"{fmt_pps(m['learning_rate_fps'])}, "
                f"{len(m.get('trials') or ())} trials"
                + ("; every address up to the highest count learned" if m.get("at_maximum")
                   else ""))
    if kind == "rfc2889_address_learning_rate":
        return (f"{_opt(m.get('learning_rate_fps'), fmt_pps)} for "
                f"{fmt_count(m['count'])} addresses",
                f"searched up to {fmt_pps(m['max_rate_fps'])}, "
                f"{len(m.get('trials') or ())} trials")
    latency = m.get("latency") or []
    means = [fmt_ns(lat["mean_ns"]) for lat in latency if lat and lat.get("mean_ns")]
    return (f"throughput {_opt(m.get('throughput_pps'), fmt_pps)}",
            f"{m['ports']} ports; forwarding rate at {fmt_pps(m['max_pps'])}: "
            f"{_opt(m.get('forwarding_rate_at_max_pps'), fmt_pps)}"
            + (f"; mean latency per port {', '.join(means)}" if means else ""))


def rfc2889_rows(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per RFC 2889 record, in document order."""
    rows = []
    for nodeid, m in measurements_of(doc, *RFC2889_KINDS):
        result, details = _figures(m["kind"], m)
        rows.append({"test": short_name(nodeid), "procedure": RFC2889_KINDS[m["kind"]],
                     "size": DASH if m["kind"] == "rfc2889_errored_frame_filtering"
                     else f"{m.get('frame_size', DASH)} B", "result": result,
                     "details": details})
    return rows
