"""The report's plots as inline SVG (matplotlib, Agg): throughput against frame size,
latency percentiles, loss and back-to-back bursts."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

# figures first: it loads matplotlib through the html extra, whose error names the fix
from .figures import COLOURS, PLAIN_TEXT, figure, matplotlib, svg  # isort: skip

from markupsafe import Markup  # noqa: E402
from matplotlib.ticker import EngFormatter, NullFormatter  # noqa: E402

from .sections import base_name, by_frame_size, line_rate_of, measurements_of, short_name
from .text import has_ci, size_label
from .y1564 import y1564_plot


def _throughput_plot(doc: Mapping[str, Any], index: int) -> Markup | None:
    series: dict[str, list[dict[str, Any]]] = {}
    for nodeid, m in measurements_of(doc, "throughput"):
        series.setdefault(base_name(nodeid), []).append(m)
    if not series:
        return None
    line = line_rate_of(doc)
    fig = figure()
    ax_pps, ax_bps = fig.subplots(1, 2)
    sizes = [m["mean_frame_size"] for ms in series.values() for m in ms]
    for n, (name, ms) in enumerate(series.items()):
        ms = sorted(ms, key=lambda m: m["mean_frame_size"])
        x = [m["mean_frame_size"] for m in ms]
        colour = COLOURS[n % len(COLOURS)]
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
    return svg(fig, index, "throughput versus frame size")


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
    fig = figure(9.0, 4.2)
    ax = fig.subplots()
    values = []
    for n, (label, lat, pcts) in enumerate(curves):
        colour = COLOURS[n % len(COLOURS)]
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
    return svg(fig, index, title)


def latency_figure(rows: list[tuple[str, dict[str, Any]]], title: str) -> str | None:
    """The latency percentile plot of `rows` (label, measurement with `latency`) alone,
    as an SVG document (allure's attachment); None without percentiles."""
    plot = _latency_plot(rows, 0, title, lambda label, _m: label)
    if plot is None:
        return None
    return ('<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"'
            + str(plot)[len("<svg"):])


def _loss_plot(doc: Mapping[str, Any], index: int) -> Markup | None:
    rows = by_frame_size(list(measurements_of(doc, "frame_loss")))
    if not rows:
        return None
    fig = figure(9.0, 3.6)
    ax = fig.subplots()
    for n, (_, m) in enumerate(rows):
        pts = sorted(m["points"], key=lambda p: p["load_ratio"])
        colour = COLOURS[n % len(COLOURS)]
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
    return svg(fig, index, "frame loss versus offered load")


def _back_to_back_plot(doc: Mapping[str, Any], index: int) -> Markup | None:
    rows = by_frame_size(list(measurements_of(doc, "back_to_back")))
    if not rows:
        return None
    fig = figure(9.0, 3.2)
    ax = fig.subplots()
    labels = [f"{size_label(m['frame_size'])}\n{base_name(nodeid)}" for nodeid, m in rows]
    means = [m["spread"]["mean"] for _, m in rows]
    errors = [m["spread"]["stdev"] for _, m in rows]
    ax.bar(range(len(rows)), means, yerr=errors, capsize=4, color=COLOURS[0], alpha=0.8)
    ax.set_xticks(range(len(rows)), labels, fontsize=8)
    ax.set_ylabel("longest loss-free burst (frames)")
    ax.set_title("Back-to-back frames: mean ± standard deviation (RFC 2544 §26.4)",
                 fontsize=10)
    ax.grid(True, axis="y", alpha=0.3)
    return svg(fig, index, "back-to-back bursts per frame size")


def page_plots(doc: Mapping[str, Any]) -> dict[str, Markup | None]:
    """The page's plots by name; None where the document has nothing to draw."""
    with matplotlib.rc_context(PLAIN_TEXT):  # texts take it when made, ticks when drawn
        return _draw(doc)


def _draw(doc: Mapping[str, Any]) -> dict[str, Markup | None]:
    rfc = by_frame_size(list(measurements_of(doc, "latency_rfc2544")))
    meters = list(measurements_of(doc, "latency"))
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
