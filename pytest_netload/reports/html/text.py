"""How the report writes numbers and spreads: the HTML medium of `format`, and the
cells built from a figure with its confidence interval or spread."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

from ... import format as fmt


DASH = fmt.dash(fmt.HTML)
PERCENTILE_KEYS = ("p50", "p99", "p99.9")


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
