"""The report's plots as inline SVG (matplotlib, Agg): throughput against frame size,
latency percentiles, loss and back-to-back bursts."""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Mapping
from typing import Any

from ...extras import require

matplotlib = require("matplotlib", "html", "the HTML report (its plots)")
matplotlib.use("Agg")

from markupsafe import Markup
from matplotlib.figure import Figure
from matplotlib.ticker import EngFormatter, NullFormatter

from .sections import _base_name, _line_rate, _measurements, _sorted, short_name
from .text import has_ci, size_label

_COLOURS = ("#1f5fa8", "#c0392b", "#2e8b57", "#8e44ad", "#d35400", "#16a085", "#7f8c8d",
            "#b8860b")


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
    from .y1564 import y1564_plot  # it draws with this module's helpers

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
        "y1564": y1564_plot(doc, 6),
    }
