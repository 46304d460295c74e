"""The report's "Where frames land" tables: each assert_spread check (per member its
frames, expected frames and deviation; the chi-square statistic, p, the sampled flows
seen on two ports and the verdict) and
each assert_delivered_to / assert_not_delivered check (the stream's frames per watched
port)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ... import format as fmt
from .sections import measurements_of, short_name
from .text import DASH, fmt_count

__all__ = ["landing_rows"]


def _spread(nodeid: str, m: Mapping[str, Any]) -> dict[str, Any]:
    members = []
    for name, got, exp in zip(m["members"], m["counts"], m["expected"]):
        dev = (got - exp) / exp if exp else None
        members.append(f"{name} {fmt_count(got)} (expected {fmt.count(exp, fmt.HTML)}"
                       + (f", {'+' if dev >= 0 else ''}{fmt.share(dev, fmt.HTML)}"
                          if dev is not None else "") + ")")
    stat = DASH if m["p"] is None else f"{m['chi2']:.3g}"
    p = DASH if m["p"] is None else f"{m['p']:.3g}"
    tol = DASH if m["tolerance"] is None else f"± {fmt.share(m['tolerance'], fmt.HTML)}"
    return {"test": short_name(nodeid), "stream": m["stream"], "members": members,
            "units": f"{fmt_count(m['units'])} {m['unit']}s", "chi2": stat, "p": p,
            "alpha": f"{m['alpha']:g}", "tolerance": tol,
            "outside": ", ".join(f"{k} {fmt_count(v)}" for k, v in m["outside"].items()),
            "split": DASH if m.get("split_flows") is None else
            f"{fmt_count(m['split_flows'])} of {fmt_count(m['sampled_flows'])} sampled",
            "verdict": "PASS" if m["passed"] else "FAIL"}


def _delivery(nodeid: str, m: Mapping[str, Any]) -> dict[str, Any]:
    expect = "delivered to" if m["expect"] == "delivered_to" else "not delivered to"
    return {"test": short_name(nodeid), "stream": m["stream"],
            "check": f"{expect} {m['port']}",
            "counts": ", ".join(f"{k} {fmt_count(v)}" for k, v in m["counts"].items()),
            "sent": fmt_count(m["tx_packets"]) if m["tx_packets"] else DASH,
            "verdict": "PASS" if m["passed"] else "FAIL"}


def landing_rows(doc: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The spread and delivery checks of the document, in test order."""
    return {"spread": [_spread(n, m) for n, m in measurements_of(doc, "spread")],
            "delivery": [_delivery(n, m) for n, m in measurements_of(doc, "delivery")]}
