"""Baselines: a session's key figures with their own noise bands, saved, loaded, compared.

A results document (:mod:`pytest_netload.reports.json`, schema "1.1") holds each test's
measurements. :func:`extract_figures` turns them into :class:`Figure` s, each a value with
a band that comes from the measurement's own uncertainty, never from a fixed percentage:

- throughput (binary search or MLRsearch): the search's bracket, from the highest load that
  passed to the lowest that failed; open above when no DUT-set upper bound exists;
- latency percentiles: their distribution-free confidence interval (docs/latency.md);
- repeated trials summarised as a spread (the RFC 2544 latency figure, back-to-back,
  recovery, reset): mean +- t(1 - a/2, n - 1) * stdev / sqrt(n), Student's t from scipy;
- ITU-T Y.1564 and RFC 2889 figures (standards.py): per-interval t-intervals, exact
  binomial intervals of loss and availability, search brackets.

:func:`compare` declares a regression only when the two bands do not overlap in the bad
direction, so noise alone (overlapping bands) never reads as a change; with a threshold
(threshold.py) the change must also be worse than it. docs/baselines.md gives the
formulas and how the plugin stores baselines.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import format as fmt
from ..atomic import write_atomic
from ..errors import NetloadConfigError
from ..files import MIB, read_input_file
from .bands import HIGHER, LOWER, T_CONFIDENCE, Figure, Key
from .bands import At as _At
from .bands import bracket as _bracket
from .bands import percentiles as _percentiles
from .bands import spread as _spread
from .json import SCHEMA_VERSION
from .standards import STANDARD_KINDS, standard_figures
from .threshold import beyond_threshold, threshold_text

__all__ = ["BASELINE_DIR", "HIGHER", "LOWER", "T_CONFIDENCE", "Comparison", "Figure", "Key",
           "Row", "baseline_dir", "check_baseline_name", "compare", "extract_figures",
           "list_baselines", "load_baseline", "save_baseline", "validate_document", "verdict"]

BASELINE_DIR = "baselines"
"""Baselines live in <report dir>/baselines/<name>.json."""
MAX_BASELINE_BYTES = 256 * MIB
"""The largest baseline read (a saved results document)."""
_PARTIAL_NUMBER = re.compile(r"[-+.eE0-9]+")   # what a number cut short leaves unparsed
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
_KINDS = ("throughput", "mlrsearch", "latency_rfc2544", "latency", "back_to_back", "recovery",
          "reset")
_ROOT_FIELDS = (("schema_version", str), ("created", str), ("tests", list))



def _version(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in text.split("."))
    except ValueError:
        raise NetloadConfigError(f"schema_version = {text!r}: expected a version such as "
                                 f"{SCHEMA_VERSION!r}") from None


def validate_document(document: Any) -> None:
    """Check the fields every results document has; NetloadConfigError names the first
    one missing or of the wrong type, or a schema_version newer than this package reads."""
    if not isinstance(document, dict):
        raise NetloadConfigError(f"the document is {type(document).__name__}, not a JSON "
                                 "object: not a pytest-netload results document")
    at = _At("document")
    for name, kind in _ROOT_FIELDS:
        at.get(document, name, kind)
    if _version(document["schema_version"]) > _version(SCHEMA_VERSION):
        raise NetloadConfigError(
            f"schema_version {document['schema_version']!r} is newer than this "
            f"pytest-netload reads ({SCHEMA_VERSION!r}): upgrade pytest-netload, or save the "
            "baseline again with this version")
    for i, test in enumerate(document["tests"]):
        if not isinstance(test, dict):
            raise NetloadConfigError(f"tests[{i}] = {test!r}: expected an object")
        t_at = _At(f"tests[{i}]")
        nodeid = t_at.get(test, "nodeid", str)
        for j, m in enumerate(t_at.get(test, "measurements", list)):
            if not isinstance(m, dict):
                raise NetloadConfigError(f"tests[{i}].measurements[{j}] = {m!r}: expected an "
                                         f"object (test {nodeid})")
            _At(f"tests[{i}].measurements[{j}]", f"test {nodeid}").get(m, "kind", str)



def _figures_of(at: _At, m: Mapping[str, Any], confidence: float
                ) -> list[tuple[str, int | str | None, Figure]]:
    kind = m["kind"]
    out: list[tuple[str, int | str | None, Figure]] = []
    if kind in STANDARD_KINDS:
        return standard_figures(at, m, confidence)
    if kind not in _KINDS:
        return out
    size: int | str | None = None if kind == "latency" else at.get(m, "frame_size", (int, str))
    if kind == "throughput":
        value = at.num(m, "throughput_pps")
        assert value is not None
        cond = {k: m.get(k) for k in ("method", "duration_s", "loss_tolerance")}
        out.append(("throughput", size, _bracket(value, at.num(m, "upper_pps", True), cond)))
    elif kind == "mlrsearch":
        for g, goal in enumerate(at.get(m, "goals", list)):
            g_at = at.inner(f"goals[{g}]")
            if not isinstance(goal, dict):
                raise at.fail(f"goals[{g}]", f"= {goal!r}: expected an object")
            name = g_at.get(goal, "name", str)
            lower, upper = g_at.num(goal, "lower_bound_pps", True), \
                g_at.num(goal, "upper_bound_pps", True)
            if goal.get("upper_bound_by_generator"):
                upper = None   # the generator, not the DUT, set it: the DUT may do more
            spec = g_at.get(goal, "goal", dict, optional=True) or {}
            cond = {k: spec.get(k, goal.get(k)) for k in
                    ("loss_ratio", "exceed_ratio", "relative_width", "final_trial_duration_s")}
            out.append((f"mlrsearch.{name}", size, _bracket(lower or 0.0, upper, cond)))
    elif kind in ("latency_rfc2544", "latency"):
        latency = at.get(m, "latency", dict)
        cond = {"clock": latency.get("clock")}
        if kind == "latency":
            prefix = f"latency[{at.get(m, 'stream', str)}]"
        else:
            prefix = "latency"
            cond["duration_s"] = m.get("duration_s")
            out.append(("latency.rfc2544_mean", size, _spread(
                at.inner("rfc2544_ns"), at.get(m, "rfc2544_ns", dict), LOWER, "ns",
                confidence, cond)))
        out.extend((name, size, fig) for name, fig in
                   _percentiles(at.inner("latency"), latency, prefix, cond))
    elif kind == "back_to_back":
        fig = _spread(at.inner("spread"), at.get(m, "spread", dict), HIGHER, "frames",
                      confidence, {})
        # each repetition is itself a search: its burst passed, one `resolution` longer failed
        max_frames = at.get(m, "max_frames", int, optional=True)
        res = at.get(m, "resolution_frames", int, optional=True) or \
            (max(1, max_frames // 200) if max_frames else 0)
        if math.isfinite(fig.noise_low):
            low, high = fig.noise_low, fig.noise_high + res
            band = fig.band + (f" + search resolution {res}" if res else "")
            sigma = math.hypot(fig.sigma or 0.0, res / math.sqrt(12))
        else:   # one repetition: its search bracket is all we know
            low, high, band, sigma = fig.value, fig.value + res, "search bracket", \
                res / math.sqrt(12)
        if m.get("at_maximum"):   # every burst passed the longest tried: open above
            high, band = math.inf, band + " (open above: bursts at the maximum)"
        out.append(("back_to_back", size, Figure(fig.value, low, high, HIGHER, "frames", band,
                                                 sigma, {})))
    elif kind in ("recovery", "reset"):
        spread = at.get(m, f"{kind}_s", dict, optional=True)
        if spread is not None:   # None: no overload loss / the DUT did not recover
            out.append((kind, size, _spread(at.inner(f"{kind}_s"), spread, LOWER, "s",
                                            confidence, {})))
    return out


def extract_figures(document: Any, *, confidence: float = T_CONFIDENCE) -> dict[Key, Figure]:
    """Every key figure of a results document, keyed by (nodeid, metric, frame size).

    Metrics: "throughput", "mlrsearch.<goal>", "latency.<pNN>" and "latency.rfc2544_mean"
    (RFC 2544 §26.2), "latency[<stream>].<pNN>" (latency meters), "back_to_back",
    "recovery", "reset"; "y1564[<service>].ir" (and .flr, .ftd, .fdv, .availability) of
    a Y.1564 service performance test; "rfc2889.<procedure>.<figure>" (standards.py).
    A test that records the same figure twice gets "#2", "#3" ...
    appended to the later metrics. Other kinds (calibration, traffic, frame loss) carry no
    single figure and are skipped. NetloadConfigError names a missing or malformed field.
    """
    if not 0 < confidence < 1:
        raise NetloadConfigError(f"confidence={confidence!r}: give a number in (0, 1)")
    validate_document(document)
    out: dict[Key, Figure] = {}
    for i, test in enumerate(document["tests"]):
        nodeid = test["nodeid"]
        for j, m in enumerate(test["measurements"]):
            at = _At(f"tests[{i}].measurements[{j}]", f"test {nodeid}, kind {m['kind']!r}")
            for metric, size, fig in _figures_of(at, m, confidence):
                key, n = Key(nodeid, metric, size), 1
                while key in out:
                    n += 1
                    key = Key(nodeid, f"{metric}#{n}", size)
                out[key] = fig
    return out


# ---- storing baselines ----------------------------------------------------------------


def check_baseline_name(name: Any) -> str:
    """A baseline name: 1-100 letters, digits, '-', '_' or '.', not starting with '.'."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise NetloadConfigError(
            f"baseline name {name!r}: use 1 to 100 letters, digits, '-', '_' or '.', "
            "starting with a letter or digit, e.g. 'main' or 'v1.2-router'")
    return name


def baseline_dir(report_dir: str | os.PathLike[str]) -> Path:
    """Where the plugin keeps baselines: <report dir>/baselines."""
    return Path(report_dir) / BASELINE_DIR


def list_baselines(directory: str | os.PathLike[str]) -> list[str]:
    path = Path(directory)
    return sorted(p.stem for p in path.glob("*.json")) if path.is_dir() else []


def save_baseline(document: Mapping[str, Any], name: str,
                  directory: str | os.PathLike[str]) -> Path:
    """Store a copy of `document` as <directory>/<name>.json, atomically (a reader sees
    the old file or the new one, never half of one), creating the directory. The
    document is checked first, so a saved baseline can always be loaded."""
    check_baseline_name(name)
    extract_figures(document)
    return write_atomic(Path(directory) / f"{name}.json",
                        json.dumps(document, indent=1, default=str) + "\n")


def load_baseline(name: str, directory: str | os.PathLike[str]) -> dict[str, Any]:
    """The document saved as `name`; NetloadConfigError names the file and the problem
    (missing, not JSON, truncated, too new a schema, a required field missing)."""
    check_baseline_name(name)
    path = Path(directory) / f"{name}.json"
    again = f"save the baseline again (--netload-save-baseline {name})"
    if not os.path.lexists(path):
        known = list_baselines(directory)
        raise NetloadConfigError(
            f"baseline {name!r} not found: {path} does not exist; "
            + (f"saved baselines: {', '.join(known)}" if known else
               f"save one with --netload-save-baseline {name}"))
    try:
        raw = read_input_file(path, MAX_BASELINE_BYTES, what="baseline",
                              fix=f"remove it and {again}")
    except IsADirectoryError:
        raise NetloadConfigError(
            f"baseline {name!r}: {path} is a directory, not a baseline file; remove or rename "
            f"it, or {again}") from None
    except NetloadConfigError as exc:  # a FIFO, a device, too large
        raise NetloadConfigError(f"baseline {exc}") from None
    except OSError as exc:
        raise NetloadConfigError(f"baseline {path} cannot be read ({exc.strerror or exc}); "
                                 "check its permissions") from None
    text = raw.decode("utf-8", errors="replace")
    try:
        document = json.loads(text)
    except RecursionError:
        raise NetloadConfigError(f"baseline {path} is nested deeper than any results "
                                 f"document: it is not a baseline; {again}") from None
    except json.JSONDecodeError as exc:
        rest = text[exc.pos:].rstrip()
        if not rest or exc.msg.startswith("Unterminated string") or \
                _PARTIAL_NUMBER.fullmatch(rest) or \
                any(word.startswith(rest) for word in ("true", "false", "null")):
            raise NetloadConfigError(
                f"baseline {path} is truncated: it ends after {len(text)} bytes, inside the "
                "JSON; save the baseline again") from None
        raise NetloadConfigError(f"baseline {path} is not valid JSON (line {exc.lineno}, "
                                 f"column {exc.colno}: {exc.msg}); save it again") from None
    try:
        extract_figures(document)
    except NetloadConfigError as exc:
        fix = "" if re.search(r"\b(save|upgrade)\b", str(exc)) else f"; {again}"
        raise NetloadConfigError(f"baseline {path}: {exc}{fix}") from None
    return dict(document)


# ---- comparing ------------------------------------------------------------------------


_WITHIN = "beyond the noise, but within the"


def _band_verdict(base: Figure, cur: Figure) -> str:
    worse, better = (cur.noise_high < base.noise_low, cur.noise_low > base.noise_high)
    if cur.direction == LOWER:
        worse, better = better, worse
    return "regressed" if worse else "improved" if better else "unchanged"


def verdict(base: Figure, cur: Figure, threshold: float | None = None) -> tuple[str, str]:
    """(verdict, note) of one figure: "regressed" when its band lies on the bad side of the
    baseline's AND it is worse by more than `threshold` (a share, e.g. 0.05; None: any
    amount); "improved" likewise on the good side; else "unchanged", with a note when
    the bands part but the change is within the threshold."""
    by_band = _band_verdict(base, cur)
    if by_band == "unchanged" or threshold is None:
        return by_band, ""
    higher = cur.direction == HIGHER
    if beyond_threshold(base.value, cur.value, higher, threshold,
                        worse=by_band == "regressed"):
        return by_band, ""
    word = "worse" if by_band == "regressed" else "better"
    return "unchanged", f"{word} {_WITHIN} {threshold_text(threshold)} threshold"


@dataclass(frozen=True)
class Row:
    """One figure of the baseline beside the same figure now."""

    key: Key
    baseline: Figure | None
    current: Figure | None
    verdict: str
    """"regressed", "improved", "unchanged", "new" (no baseline) or "missing" (not now)."""
    note: str = ""

    @property
    def within_threshold(self) -> bool:
        """Unchanged only because the regression threshold spared it: the bands part."""
        return self.verdict == "unchanged" and _WITHIN in self.note

    @property
    def change_pct(self) -> float | None:
        if self.baseline is None or self.current is None or self.baseline.value == 0:
            return None
        return (self.current.value - self.baseline.value) / abs(self.baseline.value) * 100

    def as_dict(self) -> dict[str, Any]:
        return {"nodeid": self.key.nodeid, "metric": self.key.metric,
                "frame_size": self.key.frame_size,
                "baseline": None if self.baseline is None else self.baseline.as_dict(),
                "current": None if self.current is None else self.current.as_dict(),
                "change_pct": self.change_pct, "verdict": self.verdict, "note": self.note}


def _note(base: Figure, cur: Figure) -> str:
    changed = [k for k in dict.fromkeys([*base.conditions, *cur.conditions])
               if base.conditions.get(k) != cur.conditions.get(k)]
    notes = [f"{k} {base.conditions.get(k)!r} -> {cur.conditions.get(k)!r}"
             for k in changed if k != "observed"]
    parts = [f"measured differently: {', '.join(notes)}"] if notes else []
    if "observed" in changed:   # RFC 2889 congestion: what the switch did, not how measured
        parts.append(f"behaviour changed: {base.conditions.get('observed')!r} -> "
                     f"{cur.conditions.get('observed')!r}")
    if not (math.isfinite(base.noise_low) and math.isfinite(cur.noise_low)):
        unknown = base if not math.isfinite(base.noise_low) else cur
        parts.append("no band: " + unknown.band.removeprefix("unknown: "))
    return "; ".join(parts)


def compare(current_document: Any, baseline_document: Any, *,
            name: str | None = None, threshold: float | None = None) -> Comparison:
    """Every figure of the current session beside the baseline's.

    A figure regressed when the current band lies entirely on the bad side of the
    baseline band (below it for higher-is-better, above it for lower-is-better) and,
    with a `threshold` (a share: 0.05 for 5 %), it is also worse than the baseline's
    value by more than that; improved likewise on the good side; otherwise unchanged.
    Bands that touch overlap. Baseline tests absent from the current session (deselected) are listed in
    `not_run`, not as rows; a figure missing from a test that did run is "missing".
    """
    current = extract_figures(current_document)
    baseline = extract_figures(baseline_document)
    ran = {t["nodeid"] for t in current_document["tests"]}
    rows = []
    for key, cur in current.items():
        base = baseline.get(key)
        if base is None:
            rows.append(Row(key, None, cur, "new"))
        else:
            word, why = verdict(base, cur, threshold)
            rows.append(Row(key, base, cur, word,
                            "; ".join(filter(None, [why, _note(base, cur)]))))
    rows.extend(Row(key, base, None, "missing") for key, base in baseline.items()
                if key not in current and key.nodeid in ran)
    not_run = tuple(dict.fromkeys(t["nodeid"] for t in baseline_document["tests"]
                                  if t["nodeid"] not in ran))
    return Comparison(tuple(rows), not_run, name, baseline_document.get("created"),
                      current_document.get("created"), threshold)


def _cell(fig: Figure | None) -> str:
    """"value unit [low, high]" with the ends in the value's unit and decimals
    (format.band): "500.0 kpps [499.0, inf)" when open above."""
    if fig is None:
        return "-"
    return fmt.band(fig.value, fig.noise_low, fig.noise_high, fig.unit)


@dataclass(frozen=True)
class Comparison:
    """The rows of one comparison, for the terminal, the plugin's verdicts and JSON."""

    rows: tuple[Row, ...]
    not_run: tuple[str, ...] = ()
    """Baseline tests that did not run in the current session."""
    name: str | None = None
    baseline_created: str | None = None
    current_created: str | None = None
    threshold: float | None = None
    """The user's regression threshold (a share), or None: the noise band alone."""

    @property
    def regressions(self) -> list[Row]:
        return [r for r in self.rows if r.verdict == "regressed"]

    def regressions_for(self, nodeid: str) -> list[Row]:
        return [r for r in self.regressions if r.key.nodeid == nodeid]

    def counts(self) -> dict[str, int]:
        out = dict.fromkeys(("regressed", "improved", "unchanged", "new", "missing"), 0)
        for r in self.rows:
            out[r.verdict] += 1
        return out

    def summary_line(self) -> str:
        what = f"baseline {self.name!r}" if self.name else "baseline"
        when = f" of {self.baseline_created}" if self.baseline_created else ""
        text = ", ".join(f"{n} {v}" for v, n in self.counts().items())
        if self.not_run:
            text += f"; {len(self.not_run)} baseline test(s) not run"
        if self.threshold is not None:
            text += f" (regression threshold {threshold_text(self.threshold)})"
        return f"{what}{when}: {text}"

    def table_lines(self, *, changes_only: bool = False) -> list[str]:
        """Aligned rows for the terminal: test, metric, size, baseline and current
        (value [band] unit), change, verdict and note."""
        rows = [r for r in self.rows if not changes_only or r.verdict != "unchanged"
                or r.within_threshold]
        names = [r.key.nodeid.split("::", 1)[-1] for r in rows]
        if len(set(names)) < len({r.key.nodeid for r in rows}):   # ambiguous: full ids
            names = [r.key.nodeid for r in rows]
        table = [("test", "metric", "size", "baseline", "current", "change", "verdict")]
        for name, r in zip(names, rows, strict=True):
            change = "-" if r.change_pct is None else fmt.change(r.change_pct / 100)
            table.append((name, r.key.metric, fmt.frame_size(r.key.frame_size),
                          _cell(r.baseline), _cell(r.current), change,
                          r.verdict + (f" ({r.note})" if r.note else "")))
        widths = [max(len(row[c]) for row in table) for c in range(6)]
        return ["  ".join([*(row[c].rjust(widths[c]) if c == 5 else row[c].ljust(widths[c])
                              for c in range(6)), row[6]]).rstrip() for row in table]

    def as_dict(self) -> dict[str, Any]:
        return {"baseline": {"name": self.name, "created": self.baseline_created},
                "current": {"created": self.current_created}, "threshold": self.threshold,
                "counts": self.counts(),
                "not_run": list(self.not_run), "rows": [r.as_dict() for r in self.rows]}

