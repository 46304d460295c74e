"""allure-pytest integration, active only when allure is (`--alluredir`).

Per test: one step per trial (load, duration, loss, validity), the trials of
each procedure as a CSV attachment, a loss-vs-load plot (SVG), the test's
whole netload record as JSON, and the DUT as labels. Per session: the DUT
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


def attach(record: dict[str, Any], dut: dict[str, str], topology: str) -> None:
    """Steps, attachments and labels of one test's record (inside the test's call)."""
    import allure

    for m in record.get("measurements", ()):
        trials = m.get("trials") or []
        label = _label(m)
        for n, t in enumerate(trials, 1):
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
    for path in record.get("captures", ()):
        allure.attach.file(path, name=Path(path).name, extension="pcap")
    allure.attach(json.dumps(record, indent=1, default=str), name="netload record",
                  attachment_type=allure.attachment_type.JSON)
    allure.dynamic.label("topology", topology)
    for key in ("name", "model", "firmware"):
        if dut.get(key):
            allure.dynamic.label(f"dut_{key}", dut[key])


def write_environment(alluredir: str, values: dict[str, Any]) -> None:
    """allure's environment.properties: DUT metadata and the session's settings."""
    lines = [f"{k.replace(' ', '_')}={v}" for k, v in values.items() if v not in (None, "")]
    write_atomic(Path(alluredir) / "environment.properties", "\n".join(lines) + "\n")
