"""A test's key figures as flat JUnit properties (``item.user_properties``).

The whole record travels on the report (``report.netload``); JUnit XML gets the figures
a CI dashboard plots, one ``(name, value)`` each, values as measured (unrounded floats,
counts as ints). Names are ``netload.<figure>.<frame size or stream>``:

- ``netload.throughput_pps.64B``: RFC 2544 throughput (binary search, or an MLRsearch's
  first goal);
- per MLRsearch goal, ``<goal>`` its name in lower case (``ndr``, ``pdr``):
  ``netload.ndr_pps.64B`` (the NDR: its relevant lower bound, the figure the summary
  shows), ``netload.ndr_lower_pps.64B`` and ``netload.ndr_upper_pps.64B`` (its relevant
  bounds), ``netload.ndr_conditional_pps.64B`` (its conditional throughput, RFC 9971); a
  bound that does not exist (not found; open above) has no property;
- Y.1564: ``netload.y1564_sct_ir_bps.<service>.<step>`` and
  ``netload.y1564_sct_passed.<service>.<step>`` (1 or 0) per configuration-test step;
  ``netload.y1564_spt_{ir_bps,flr,ftd_s,fdv_s,availability}.<service>`` per service of a
  performance test;
- RFC 2889: ``netload.rfc2889_mesh_throughput_pps.64B`` (per port),
  ``netload.rfc2889_broadcast_throughput_pps.64B``, ``netload.rfc2889_address_capacity.64B``,
  ``netload.rfc2889_learning_rate_fps.64B``;
- ``netload.latency_p50_ns.<stream>``, ``netload.latency_p99_ns.<stream>`` and
  ``netload.lost.<stream>``: a latency meter's;
- beside each throughput figure above (the throughput, an MLRsearch goal's figure, the RFC
  2889 throughputs and learning rate), ``netload.lower_bound_by_generator.<figure>.<frame
  size>``: 1 when the figure is only a lower bound the generator set (the DUT passed the
  highest load the generator could offer; not the DUT's figure), else 0. Records written
  before the field existed have none.

docs/reports.md lists them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from .. import format as fmt
from ..rfc2544.mlr_text import goal_key

GOAL_FIGURES = (("", "lower_bound_pps"), ("_lower", "lower_bound_pps"),
                ("_upper", "upper_bound_pps"), ("_conditional", "conditional_throughput_pps"))
"""(name suffix, goal record field) of the properties written per MLRsearch goal."""


def _bound_flag(figure: str, label: str, record: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """``netload.lower_bound_by_generator.<figure>.<label>``: 1 or 0 from the record's
    ``lower_bound_by_generator``; nothing when the record does not have it."""
    if "lower_bound_by_generator" not in record:
        return []
    return [(f"netload.lower_bound_by_generator.{figure}.{label}",
             int(record["lower_bound_by_generator"] is True))]


def goal_properties(m: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """The properties of an "mlrsearch" record: four per goal, and its lower-bound flag
    (see the module)."""
    label = fmt.frame_size(m["frame_size"])
    out: list[tuple[str, Any]] = []
    used: set[str] = set()
    for i, g in enumerate(m.get("goals", ())):
        key = goal_key(str(g["name"]))
        if key in used:   # two names alike once lower-cased and stripped: keep both apart
            key = f"{key}_{i + 1}"
        used.add(key)
        out += [(f"netload.{key}{suffix}_pps.{label}", g[field])
                for suffix, field in GOAL_FIGURES if g.get(field) is not None]
        out += _bound_flag(f"{key}_pps", label, g)
    return out


RFC2889_FIGURES = {
    "rfc2889_fully_meshed": ("rfc2889_mesh_throughput_pps", "throughput_pps_per_port"),
    "rfc2889_broadcast_forwarding": ("rfc2889_broadcast_throughput_pps", "throughput_pps"),
    "rfc2889_address_caching_capacity": ("rfc2889_address_capacity", "capacity"),
    "rfc2889_address_learning_rate": ("rfc2889_learning_rate_fps", "learning_rate_fps"),
    "rfc2889_maximum_forwarding_rate": ("rfc2889_mfr_pps", "mfr_pps"),
}
"""(property name, record field) of each RFC 2889 record's headline figure."""


def _key(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.+-]+", "_", text).strip("_") or "_"


def y1564_properties(m: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """A Y.1564 record's figures: each SCT step's IR and pass (1/0), each SPT service's
    IR, FLR, FTD, FDV and availability."""
    out: list[tuple[str, Any]] = []
    if m["kind"] == "y1564_sct":
        service = _key(m["service"]["name"])
        for step in m["steps"]:
            label = f"{service}.{_key(step['name'])}"
            if step.get("ir_bps") is not None:
                out.append((f"netload.y1564_sct_ir_bps.{label}", step["ir_bps"]))
            out.append((f"netload.y1564_sct_passed.{label}", int(step["passed"] is True)))
        return out
    for s in m["services"]:
        service = _key(s["service"]["name"])
        for figure in ("ir_bps", "flr", "ftd_s", "fdv_s"):
            if s.get(figure) is not None:
                out.append((f"netload.y1564_spt_{figure}.{service}", s[figure]))
        ratio = s["availability"].get("availability_ratio")
        if ratio is not None:
            out.append((f"netload.y1564_spt_availability.{service}", ratio))
    return out


def properties(measurements: Iterable[Mapping[str, Any]]) -> list[tuple[str, Any]]:
    """The JUnit properties of a test's measurements (records), in their order."""
    out: list[tuple[str, Any]] = []
    for m in measurements:
        kind = m["kind"]
        if kind == "throughput":
            label = fmt.frame_size(m["frame_size"])
            out.append((f"netload.throughput_pps.{label}", m["throughput_pps"]))
            out += _bound_flag("throughput_pps", label, m)
        elif kind == "mlrsearch":
            out += goal_properties(m)
        elif kind in ("y1564_sct", "y1564_spt"):
            out += y1564_properties(m)
        elif kind == "rfc2889_partially_meshed" and m.get("throughput_pps") is not None:
            figure = f"rfc2889_{m['direction']}_throughput_pps"
            label = fmt.frame_size(m.get("frame_size"))
            out.append((f"netload.{figure}.{label}", m["throughput_pps"]))
            out += _bound_flag(figure, label, m)
        elif kind in RFC2889_FIGURES:
            figure, key = RFC2889_FIGURES[kind]
            if m.get(key) is not None:
                label = fmt.frame_size(m.get("frame_size"))
                out.append((f"netload.{figure}.{label}", m[key]))
                out += _bound_flag(figure, label, m)
        elif kind == "latency":
            for p in ("p50", "p99"):
                value = (m["latency"]["percentiles"] or {}).get(p)
                if value:
                    out.append((f"netload.latency_{p}_ns.{m['stream']}", value["value_ns"]))
            out.append((f"netload.lost.{m['stream']}", m["lost"]))
    return out
