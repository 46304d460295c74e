"""The report's baseline and trend section: every figure against its baseline (value,
noise band, baseline, change, verdict) and, given a history of earlier results, each
figure's trend with its change points, as inline SVG (docs/baselines.md)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

# figures first: it loads matplotlib through the html extra, whose error names the fix
from .figures import COLOURS, PLAIN_TEXT, figure, matplotlib, svg  # isort: skip

from markupsafe import Markup  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

from ... import format as fmt  # noqa: E402
from ..bands import Figure, Key  # noqa: E402
from ..baseline import Comparison, Row  # noqa: E402
from ..threshold import threshold_text  # noqa: E402
from ..trend import Trend, analyse, counts_as_regression  # noqa: E402
from .sections import short_name  # noqa: E402
from .text import DASH, size_label  # noqa: E402

__all__ = ["MAX_TREND_PLOTS", "baseline_section", "trend_plot"]

MAX_TREND_PLOTS = 12
"""Plots drawn at most: figures with a change point first, the worst first."""
_FIRST_PLOT_INDEX = 100   # the page's own plots are 1 to 99: svg ids stay unique
_ORDER = {"regressed": 0, "improved": 1, "missing": 2, "new": 3, "unchanged": 4}
_CSS = {"regressed": "FAIL", "improved": "PASS"}


def baseline_section(document: Mapping[str, Any], comparison: Comparison | None = None,
                     history: Sequence[Mapping[str, Any]] | None = None,
                     threshold: float | None = None) -> dict[str, Any] | None:
    """The section's context, or None when there is neither a baseline nor a history.
    `history` holds earlier results documents; the report's own joins them when it is
    not among them already (by its `created` time)."""
    if comparison is None and not history:
        return None
    if comparison is not None and threshold is None:
        threshold = comparison.threshold
    out: dict[str, Any] = {"threshold": threshold_text(threshold), "comparison": None,
                           "trend": None}
    if comparison is not None:
        out["comparison"] = _comparison(comparison)
    if history:
        documents = list(history)
        if document.get("created") not in {d.get("created") for d in documents}:
            documents.append(document)
        regressed = {r.key for r in comparison.regressions} if comparison else set()
        out["trend"] = _trend(documents, threshold, regressed)
    return out


def _interval(fig: Figure | None) -> str:
    """The band alone: "[59.8, 63.1] µs"; "no band" when open both ways."""
    if fig is None:
        return DASH
    if not (math.isfinite(fig.noise_low) or math.isfinite(fig.noise_high)):
        return "no band"
    head = fmt.figure(fig.value, fig.unit, fmt.HTML)
    text = fmt.band(fig.value, fig.noise_low, fig.noise_high, fig.unit, fmt.HTML)
    ends = text[len(head):].strip()
    unit = head.rsplit(" ", 1)[-1] if " " in head and fig.unit not in ("ratio",) else ""
    return f"{ends} {unit}".strip()


def _value(fig: Figure | None) -> str:
    return DASH if fig is None else fmt.figure(fig.value, fig.unit, fmt.HTML)


def _better(fig: Figure | None) -> str:
    if fig is None:
        return ""
    return "higher is better" if fig.direction == "higher-is-better" else "lower is better"


def _row(r: Row) -> dict[str, Any]:
    fig = r.current or r.baseline
    return {"test": short_name(r.key.nodeid), "nodeid": r.key.nodeid, "metric": r.key.metric,
            "size": size_label(r.key.frame_size), "value": _value(r.current),
            "band": _interval(r.current), "baseline": _value(r.baseline),
            "baseline_band": _interval(r.baseline),
            "change": DASH if r.change_pct is None else fmt.change(r.change_pct / 100, fmt.HTML),
            "verdict": r.verdict, "css": _CSS.get(r.verdict, "other"),
            "how": "" if fig is None else fig.band, "better": _better(fig),
            "arrow": "" if fig is None else "↑" if fig.direction == "higher-is-better" else "↓",
            "note": r.note}


def _comparison(comparison: Comparison) -> dict[str, Any]:
    rows = sorted(comparison.rows, key=lambda r: _ORDER.get(r.verdict, 9))
    return {"name": comparison.name or "baseline", "created": comparison.baseline_created,
            "summary": comparison.summary_line(), "counts": comparison.counts(),
            "rows": [_row(r) for r in rows],
            "not_run": [short_name(n) for n in comparison.not_run]}


def _trend(documents: list[Mapping[str, Any]], threshold: float | None,
           regressed: set[Key]) -> dict[str, Any]:
    trends = analyse(documents)
    runs = len(documents)
    rows = []
    for key, t in trends.items():
        for c in t.changes:
            counted = counts_as_regression(c, threshold)
            kind = "regression" if counted else "progression" if c.kind == "progression" \
                else "regression within the threshold"
            rel = c.relative_change
            rows.append({"test": short_name(key.nodeid), "metric": key.metric,
                         "size": size_label(key.frame_size), "run": c.index + 1,
                         "created": t.points[c.index].created,
                         "before": fmt.figure(c.before.mean, t.unit, fmt.HTML),
                         "after": fmt.figure(c.after.mean, t.unit, fmt.HTML),
                         "change": DASH if rel is None else fmt.change(rel, fmt.HTML),
                         "kind": kind, "css": "FAIL" if counted else
                         "PASS" if c.kind == "progression" else "other"})
    rows.sort(key=lambda r: (r["css"] != "FAIL", r["test"], r["metric"]))

    def rank(item: tuple[Key, Trend]) -> tuple[int, int, str, str]:
        key, t = item
        worst = any(counts_as_regression(c, threshold) for c in t.changes)
        return (0 if worst else 1 if t.changes else 2 if key in regressed else 3,
                -len(t.changes), key.nodeid, key.metric)

    chosen = [kv for kv in sorted(trends.items(), key=rank)
              if kv[1].changes or kv[0] in regressed][:MAX_TREND_PLOTS]
    with matplotlib.rc_context(PLAIN_TEXT):
        plots = [{"svg": trend_plot(key, t, threshold, _FIRST_PLOT_INDEX + n),
                  "caption": _title(key)}
                 for n, (key, t) in enumerate(chosen)]
    with_changes = sum(1 for t in trends.values() if t.changes)
    return {"runs": runs, "figures": len(trends), "with_changes": with_changes,
            "rows": rows, "plots": plots, "left_out": max(0, with_changes - len(plots))}


def _title(key: Key) -> str:
    size = "" if key.frame_size is None else f" {fmt.frame_size(key.frame_size)}"
    return f"{short_name(key.nodeid)} {key.metric}{size}"


def trend_plot(key: Key, t: Trend, threshold: float | None, index: int) -> Markup:
    """One figure over the runs: each run's value with its 95 % error bar where its
    noise is known, each group's mean as a level, and a vertical line at each change
    point (red: a regression beyond the threshold, green: a progression, grey: a
    regression within the threshold)."""
    fig = figure(9.0, 2.6)
    ax = fig.subplots()
    x = list(range(1, len(t.points) + 1))
    y = [p.value for p in t.points]
    err = [1.96 * p.noise if p.noise is not None else 0.0 for p in t.points]
    ax.errorbar(x, y, yerr=err, fmt="o", color=COLOURS[0], markersize=3.5, capsize=2,
                linewidth=0.8, label="run (95 % band)")
    for n, g in enumerate(t.groups):
        ax.hlines(g.mean, g.start + 0.6, g.end + 0.4, color=COLOURS[6], linewidth=2,
                  label="group mean" if n == 0 else "_nolegend_")
    drawn: set[str] = set()
    for c in t.changes:
        counted = counts_as_regression(c, threshold)
        colour, label = (COLOURS[1], "regression") if counted else \
            (COLOURS[2], "progression") if c.kind == "progression" else \
            (COLOURS[6], "regression within the threshold")
        ax.axvline(c.index + 0.5, color=colour, linestyle="--", linewidth=1.2,
                   label=None if label in drawn else label)
        drawn.add(label)
    ax.set_xlim(0.3, len(x) + 0.7)
    step = max(1, math.ceil(len(x) / 12))
    ax.set_xticks(x[::step], [p.created[:10] for p in t.points][::step], fontsize=7)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: fmt.figure(v, t.unit)))
    ax.tick_params(axis="y", labelsize=7)
    title = _title(key)
    ax.set_title(f"{title} ({'higher' if t.direction == 'higher-is-better' else 'lower'} "
                 "is better)", fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    return svg(fig, index, f"trend of {title}")
