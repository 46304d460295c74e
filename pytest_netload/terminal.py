"""Terminal output: the live progress line and the end-of-session summary table.

Rows come from the records tests attach to their reports (`report.netload`),
so the table is the same with or without xdist.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

from .progress import progress_line

COLUMNS = ("test", "frame size", "throughput", "p50", "p99", "loss", "verdict")


def _pps(pps: float | None) -> str:
    if pps is None:
        return "-"
    for div, unit in ((1e6, "Mpps"), (1e3, "kpps")):
        if pps >= div:
            return f"{pps / div:.3f} {unit}"
    return f"{pps:.0f} pps"


def _ns(value: float | None) -> str:
    if value is None:
        return "-"
    for div, unit in ((1e6, "ms"), (1e3, "us")):
        if value >= div:
            return f"{value / div:.1f}{unit}"
    return f"{value:.0f}ns"


def _size(size: Any) -> str:
    return "-" if size is None else f"{size}B" if isinstance(size, int) else str(size)


def _percentile(latency: dict[str, Any] | None, label: str) -> str:
    if not latency:
        return "-"
    p = (latency.get("percentiles") or {}).get(label)
    return _ns(p["value_ns"]) if p else "-"


def rows_of(nodeid: str, outcome: str, record: dict[str, Any]) -> list[tuple[str, ...]]:
    """Summary rows of one test: one per frame size measured, else one per measurement."""
    rows: list[tuple[str, ...]] = []
    verdict = {"passed": "PASS", "failed": "FAIL"}.get(outcome, outcome.upper())
    name = nodeid.split("::", 1)[-1]
    for m in record.get("measurements", ()):
        kind = m.get("kind")
        if kind == "throughput":
            best = None
            for t in m.get("trials", ()):
                if t.get("valid") and t.get("lost") == 0 and \
                        t.get("offered_pps") == m.get("throughput_pps"):
                    best = t
            lat = (best or {}).get("latency")
            loss = "0 at throughput" if m.get("throughput_pps") else "-"
            rows.append((name, _size(m.get("frame_size")), _pps(m.get("throughput_pps")),
                         _percentile(lat, "p50"), _percentile(lat, "p99"), loss, verdict))
        elif kind == "latency":
            lat = m.get("latency")
            tx, lost = m.get("tx_packets", 0), m.get("lost", 0)
            loss = f"{lost}/{tx}" if tx else "-"
            if rows and rows[-1][3] == "-" and rows[-1][2] != "-":
                # the traffic run this meter watched: one row with its latency
                size, rate = rows[-1][1], rows[-1][2]
                rows[-1] = (name, size, rate, _percentile(lat, "p50"), _percentile(lat, "p99"),
                            loss, verdict)
            else:
                rows.append((name, "-", "-", _percentile(lat, "p50"), _percentile(lat, "p99"),
                             loss, verdict))
        elif kind == "traffic":
            streams = m.get("streams", ())
            tx = sum(s["tx_packets"] for s in streams)
            lost = sum(s["lost"] for s in streams)
            sizes = {round(s["mean_frame_size"]) for s in streams}
            rows.append((name, _size(sizes.pop()) if len(sizes) == 1 else "mix",
                         _pps(sum(s["achieved_rx_pps"] for s in streams)), "-", "-",
                         f"{lost}/{tx}" if tx else "-", verdict))
    return rows


def format_table(rows: Iterable[tuple[str, ...]]) -> list[str]:
    rows = list(rows)
    widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(COLUMNS)]
    line = "  ".join(c.ljust(w) for c, w in zip(COLUMNS, widths))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(v.ljust(w) for v, w in zip(r, widths)) for r in rows]
    return out


class TerminalProgress:
    """The live line: rewritten in place on a terminal, one line per event with -v
    elsewhere, nothing with -q (or on xdist workers, which have no terminal)."""

    def __init__(self, reporter: Any, verbosity: int) -> None:
        self.reporter = reporter
        self.verbosity = verbosity
        self.live = bool(getattr(reporter, "isatty", False)) and verbosity >= 0
        self.lines = verbosity >= 1 and not self.live

    def __call__(self, event: dict[str, Any]) -> None:
        text = progress_line(event)
        if self.live:
            self.reporter.ensure_newline()
            self.reporter.rewrite(text[: self.reporter._tw.fullwidth - 1])
        elif self.lines:
            self.reporter.ensure_newline()
            self.reporter.write_line(text)


class Summary:
    """Collects the netload records from test reports; prints the table at the end."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, ...]] = []

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call":
            return
        record = getattr(report, "netload", None)
        if isinstance(record, dict):
            self.rows += rows_of(report.nodeid, report.outcome, record)

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.rows or terminalreporter.verbosity < -1:  # shown with -q, not -qq
            return
        terminalreporter.write_sep("=", "netload summary")
        for line in format_table(self.rows):
            terminalreporter.write_line(line)
