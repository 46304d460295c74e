"""allure-pytest integration, active only when allure is (`--alluredir`).

Per test: a step per procedure and in it one per trial, opened when the trial's
traffic starts and closed when it ends (`LiveSteps`, fed by the progress model as
the test runs, so allure's timeline is the run's); the trials of each procedure as a
CSV attachment, a loss-vs-load plot and the latency percentile plot (SVG), the
test's whole netload record as JSON; labels with the standard, the frame sizes and
the DUT (name, model, firmware). A record made without live trials (a test that
records figures itself) gets its trial steps from the record. Per session: the DUT
metadata and settings in allure's environment.properties.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from .. import format as fmt
from ..atomic import write_atomic
from ..extras import require

TRIAL_FIELDS = ("offered_pps", "duration_s", "tx_packets", "rx_packets", "lost", "loss_ratio",
                "achieved_tx_pps", "valid", "invalid_reason", "clock")


def active(config: pytest.Config) -> bool:
    return bool(getattr(config.option, "allure_report_dir", None)) and \
        config.pluginmanager.hasplugin("allure_pytest")


def _label(m: dict[str, Any]) -> str:
    size = m.get("frame_size")
    size_text = f"{size}B" if isinstance(size, int) else (size or "")
    return f"{m['kind']} {size_text}".strip()


def _csv(trials: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=TRIAL_FIELDS, extrasaction="ignore")
    writer.writeheader()
    for t in trials:
        writer.writerow(t)
    return out.getvalue()


def _plot(label: str, trials: list[dict[str, Any]]) -> str | None:
    """Loss ratio against offered load, one point per valid trial (SVG)."""
    points = [(t["offered_pps"], t.get("loss_ratio", t.get("lost", 0) / t["tx_packets"]
                                        if t.get("tx_packets") else 0.0))
              for t in trials if t.get("valid") and t.get("offered_pps")]
    if len(points) < 2:
        return None
    matplotlib = require("matplotlib", "plots", "allure's loss plots")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with matplotlib.rc_context({"text.parse_math": False}):  # a '$' is text, not TeX
        fig, ax = plt.subplots(figsize=(6, 3.5))
        xs, ys = zip(*sorted(points))
        ax.plot(xs, ys, "o-")
        ax.set_xlabel("offered load (pps)")
        ax.set_ylabel("loss ratio")
        ax.set_title(label)
        ax.grid(True, alpha=0.3)
        buf = io.StringIO()
        fig.savefig(buf, format="svg", bbox_inches="tight")
        plt.close(fig)
    return buf.getvalue()


STANDARDS = {"throughput": "RFC 2544", "latency_rfc2544": "RFC 2544", "frame_loss": "RFC 2544",
             "back_to_back": "RFC 2544", "recovery": "RFC 2544", "reset": "RFC 2544",
             "mlrsearch": "RFC 9971 (MLRsearch)", "y1564_sct": "ITU-T Y.1564",
             "y1564_spt": "ITU-T Y.1564"}


def standard_of(kind: str) -> str | None:
    """The standard a measurement kind follows (None: a plain traffic or latency run)."""
    if kind.startswith("rfc2889_"):
        return "RFC 2889"
    return STANDARDS.get(kind)


def _latency_svg(record: dict[str, Any]) -> str | None:
    """The latency percentile plot of the HTML report for this test's latency figures."""
    rows = [(str(m.get("frame_size") or m.get("stream") or m["kind"]), m)
            for m in record.get("measurements", ())
            if m.get("kind") in ("latency_rfc2544", "latency") and m.get("latency")]
    if not rows:
        return None
    try:
        from .html.plots import latency_figure
    except OSError:  # MissingExtra: without the html extra, the other attachments still go
        return None
    return latency_figure(rows, "Latency percentiles")


class LiveSteps:
    """allure steps as the test runs, from the progress model's Statuses
    (plugin/live.py): a step per procedure, in it a step per trial opened when its
    traffic starts and closed when it ends, the outcome a step inside it; an
    interrupted test closes what is open with the interruption."""

    def __init__(self) -> None:
        self.open: list[Any] = []  # [procedure step, trial step]
        self.wrote = False

    def __call__(self, s: Any) -> None:
        import allure

        if s.kind == "start":
            self._close(0)
            self._open(allure.step(_procedure_title(s)))
        elif s.kind == "trial_start" and self.open:
            self._close(1)
            self._open(allure.step(_trial_title(s)))
        elif s.kind == "trial" and self.open:
            if len(self.open) < 2:
                self._open(allure.step(_trial_title(s)))
            with allure.step(_outcome(s)):
                pass
            self._close(1)
        elif s.kind == "interval" and self.open and s.total and s.n == s.total:
            with allure.step(f"interval {s.n} of {s.total}: availability " + ", ".join(
                    f"{k} {fmt.share(v)}" for k, v in s.availability.items())):
                pass
        elif s.kind == "end":
            self._close(0)

    def _open(self, step: Any) -> None:
        step.__enter__()
        self.open.append(step)
        self.wrote = True

    def _close(self, keep: int, exc: BaseException | None = None) -> None:
        while len(self.open) > keep:
            step = self.open.pop()
            step.__exit__(type(exc) if exc else None, exc, exc.__traceback__ if exc else None)

    def close(self, exc: BaseException | None) -> None:
        self._close(0, exc)


def _procedure_title(s: Any) -> str:
    size = f" {fmt.frame_size(s.frame_size)}" if s.frame_size is not None else ""
    plan = f" ({'' if s.exact else 'at most '}{s.total} {s.what}s)" if s.total else ""
    return f"{s.procedure}{size}{plan}"


def _trial_title(s: Any) -> str:
    load = fmt.rate_pps_exact(s.offered_pps) if s.offered_pps else \
        fmt.bitrate(s.offered_bps) if s.offered_bps else ""
    return f"{s.what} {s.n}" + (f": {load}" if load else "")


def _outcome(s: Any) -> str:
    parts = [s.name] if s.name else []
    if s.loss_ratio is not None:
        parts.append(f"loss {fmt.loss_ratio(s.loss_ratio)}")
    if s.valid is False:
        parts.append(f"INVALID: {s.note}" if s.note else "INVALID")
    elif s.passed is not None:
        parts.append("passed" if s.passed else "failed")
    if s.lo is not None and s.hi is not None:
        parts.append(f"bracket [{fmt.rate_pps(s.lo)}, {fmt.rate_pps(s.hi)}]")
    return ", ".join(parts) or "done"


def attach(record: dict[str, Any], dut: dict[str, str], topology: str,
           live_steps: bool = False) -> None:
    """Steps, attachments and labels of one test's record (inside the test's call);
    with `live_steps` its trials' steps were written as they ran (LiveSteps)."""
    import allure

    for m in record.get("measurements", ()):
        trials = m.get("trials") or []
        label = _label(m)
        for n, t in enumerate(() if live_steps else trials, 1):
            if not isinstance(t, dict):
                continue
            offered = t.get("offered_pps") or t.get("overload_pps") or t.get("load_pps") or 0
            state = "valid" if t.get("valid", True) else f"INVALID: {t.get('invalid_reason')}"
            with allure.step(f"{label} trial {n}: {fmt.rate_pps_exact(offered)}, lost "
                             f"{fmt.count(t.get('lost', 0))} of "
                             f"{fmt.count(t.get('tx_packets', 0))} ({state})"):
                pass
        if trials and all(isinstance(t, dict) and "offered_pps" in t for t in trials):
            allure.attach(_csv(trials), name=f"{label} trials.csv",
                          attachment_type=allure.attachment_type.CSV)
            svg = _plot(label, trials)
            if svg is not None:
                allure.attach(svg, name=f"{label} loss vs load",
                              attachment_type=allure.attachment_type.SVG)
    svg = _latency_svg(record)
    if svg is not None:
        allure.attach(svg, name="latency percentiles",
                      attachment_type=allure.attachment_type.SVG)
    for path in record.get("captures", ()):
        allure.attach.file(path, name=Path(path).name, extension="pcap")
    allure.attach(json.dumps(record, indent=1, default=str), name="netload record",
                  attachment_type=allure.attachment_type.JSON)
    allure.dynamic.label("topology", topology)
    measured = record.get("measurements", ())
    for standard in dict.fromkeys(standard_of(m.get("kind", "")) for m in measured):
        if standard:
            allure.dynamic.label("standard", standard)
    for size in dict.fromkeys(m.get("frame_size") for m in measured):
        if size is not None:
            allure.dynamic.label("frame_size", fmt.frame_size(size))
    for key in ("name", "model", "firmware"):
        if dut.get(key):
            allure.dynamic.label(f"dut_{key}", str(dut[key]))


def write_environment(alluredir: str, values: dict[str, Any]) -> None:
    """allure's environment.properties: DUT metadata and the session's settings."""
    lines = [f"{k.replace(' ', '_')}={v}" for k, v in values.items() if v not in (None, "")]
    write_atomic(Path(alluredir) / "environment.properties", "\n".join(lines) + "\n")
