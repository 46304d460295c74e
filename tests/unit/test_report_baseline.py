"""The report's baseline and trend section (reports/html/baseline.py), and the commands
that feed it: `netload report --baseline/--history/--regression`, `netload compare` and
`netload trend --regression`."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from pytest_netload.reports import html
from pytest_netload.reports.baseline import compare
from pytest_netload.reports.load import load

FULL = Path(__file__).parents[1] / "data" / "results-full.json"


class _Section(HTMLParser):
    """The rows (cell texts) of each table with an id, the svgs inside <section>s of
    figure.trend-plot, and every id."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self.ids: list[str] = []
        self.trend_svgs = 0
        self._table: str | None = None
        self._cell: list[str] | None = None
        self._in_trend = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.append(str(a["id"]))
        if tag == "table" and a.get("id"):
            self._table = str(a["id"])
            self.tables[self._table] = []
        elif tag == "tr" and self._table:
            self.tables[self._table].append([])
        elif tag in ("td", "th") and self._table:
            self._cell = []
        elif tag == "figure" and "trend-plot" in (a.get("class") or ""):
            self._in_trend = True
        elif tag == "svg" and self._in_trend:
            self.trend_svgs += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._table and self._cell is not None:
            self.tables[self._table][-1].append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "table":
            self._table = None
        elif tag == "figure":
            self._in_trend = False

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _parse(page: str) -> _Section:
    p = _Section()
    p.feed(page)
    p.close()
    return p


def _variant(doc: dict[str, Any], created: str, *, scale: float = 1.0,
             lost: int = 0) -> dict[str, Any]:
    """The sample with its RFC 2544 throughput and RFC 2889 mesh throughput scaled, and
    `lost` frames lost by the first Y.1564 service."""
    d = copy.deepcopy(doc)
    d["created"] = created
    for t in d["tests"]:
        for m in t["measurements"]:
            if m["kind"] == "throughput":
                m["throughput_pps"] *= scale
                if m.get("upper_pps"):
                    m["upper_pps"] *= scale
            elif m["kind"] == "rfc2889_fully_meshed":
                m["throughput_pps_per_port"] *= scale
                m["upper_pps_per_port"] *= scale
            elif m["kind"] == "y1564_spt":
                s = m["services"][0]
                s["lost"], s["flr"] = lost, lost / s["tx_frames"]
    return d


@pytest.fixture(scope="module")
def full() -> dict[str, Any]:
    return load(FULL)


@pytest.fixture(scope="module")
def history(full: dict[str, Any]) -> list[dict[str, Any]]:
    return [_variant(full, f"2026-11-{i + 1:02d}T00:00:00+00:00",
                     scale=1.0 + 0.0003 * (-1) ** i if i < 6 else 0.9, lost=0 if i < 6 else 300)
            for i in range(9)]


@pytest.fixture(scope="module")
def page(full: dict[str, Any], history: list[dict[str, Any]]) -> str:
    current = _variant(full, "2026-12-01T00:00:00+00:00", scale=0.9, lost=300)
    comparison = compare(current, history[0], name="main", threshold=0.05)
    return html.render(current, comparison=comparison, history=history)


def test_without_baseline_or_history_the_page_has_no_such_section(full: dict[str, Any]) -> None:
    page = html.render(full)
    assert 'id="baseline"' not in page and "Against the baseline" not in page


def test_the_baseline_table_shows_value_band_baseline_change_and_verdict(page: str) -> None:
    p = _parse(page)
    assert "baseline" in p.ids and "#baseline" in page   # the section and its nav entry
    rows = p.tables["baseline-table"]
    assert rows[0] == ["Test", "Figure", "Frame size", "Value", "Noise band", "Baseline",
                       "Baseline band", "Change", "Verdict", "Note"]
    by_figure = {(r[0], r[1].split(" ")[0], r[2]): r for r in rows[1:]}
    tput = by_figure[("test_rfc2544[64B]", "throughput", "64B")]
    assert tput[3].endswith("Mpps") and tput[4].startswith("[") and tput[5].endswith("Mpps")
    assert tput[7] == "-10.0 %" and tput[8] == "regressed"
    mesh = by_figure[("test_switch_rfc2889", "rfc2889.mesh.throughput_per_port", "64B")]
    assert mesh[8] == "regressed" and mesh[7] == "-10.0 %"
    flr = by_figure[("test_service_activation", "y1564[voice].flr", "128B")]
    assert flr[8] == "regressed" and flr[6].startswith("[0, ")
    fdv = by_figure[("test_service_activation", "y1564[voice].fdv", "128B")]
    assert fdv[8] == "unchanged" and fdv[1] == "y1564[voice].fdv ↓" and tput[1] == "throughput ↑"
    assert 'title="lower is better">↓<' in page
    verdicts = [r[8] for r in rows[1:]]
    assert verdicts.index("unchanged") > verdicts.index("regressed")   # regressions first
    assert 'id="regression-threshold">5%<' in page
    assert "(regression threshold 5%)" in page


def test_the_trend_table_and_plots_show_the_change_points(page: str) -> None:
    p = _parse(page)
    rows = p.tables["trend-table"]
    assert rows[0][:4] == ["Test", "Figure", "Frame size", "From run"]
    changed = {(r[0], r[1]): r for r in rows[1:]}
    tput = changed[("test_rfc2544[64B]", "throughput")]
    assert tput[3] == "7" and tput[8] == "regression" and tput[7] == "-10.0 %"
    assert changed[("test_service_activation", "y1564[voice].flr")][8] == "regression"
    assert changed[("test_switch_rfc2889", "rfc2889.mesh.throughput_per_port")][8] == "regression"
    assert 1 <= p.trend_svgs <= 12
    assert page.count('aria-label="trend of ') == p.trend_svgs
    assert len(p.ids) == len(set(p.ids)), "the trend plots' svg ids must stay unique"


# ---- the commands -------------------------------------------------------------------------


def _netload(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_netload", *args],
                          capture_output=True, text=True, check=False)


def _write(doc: dict[str, Any], path: Path) -> str:
    path.write_text(json.dumps(doc))
    return str(path)


def test_netload_report_takes_a_baseline_by_name_and_a_history_directory(
        tmp_path: Path, full: dict[str, Any], history: list[dict[str, Any]]) -> None:
    (tmp_path / "baselines").mkdir()
    _write(history[0], tmp_path / "baselines" / "main.json")
    (tmp_path / "history").mkdir()
    for i, doc in enumerate(history):
        _write(doc, tmp_path / "history" / f"r{i}.json")
    results = _write(_variant(full, "2026-12-01T00:00:00+00:00", scale=0.97), tmp_path / "results.json")
    out = _netload("report", results, "--baseline", "main", "--history", str(tmp_path / "history"),
                   "--regression", "5%")
    assert out.returncode == 0, out.stderr
    assert "baseline 'main'" in out.stdout and "(regression threshold 5%)" in out.stdout
    p = _parse((tmp_path / "report.html").read_text())
    rows = {(r[0], r[1].split(" ")[0], r[2]): r for r in p.tables["baseline-table"][1:]}
    tput = rows[("test_rfc2544[64B]", "throughput", "64B")]
    # 3 % slower: beyond the search bracket, within the 5 % threshold
    assert tput[8] == "unchanged" and "within the 5% threshold" in tput[9]
    assert p.trend_svgs >= 1


@pytest.mark.parametrize(("value", "words"), [
    ("5", "has no % sign"), ("x%", "is not a percentage"), ("-5%", "cannot be negative")])
def test_a_bad_regression_threshold_names_the_option(tmp_path: Path, full: dict[str, Any],
                                                     value: str, words: str) -> None:
    results = _write(full, tmp_path / "results.json")
    for command in (["report", results], ["compare", results, results],
                    ["trend", results, results]):
        out = _netload(*command, f"--regression={value}")
        assert out.returncode == 2, out.stdout
        assert "argument --regression" in out.stderr and words in out.stderr, out.stderr
        assert "such as 5%" in out.stderr


def test_netload_compare_exits_1_on_a_regression_beyond_the_threshold(
        tmp_path: Path, full: dict[str, Any]) -> None:
    base = _write(full, tmp_path / "base.json")
    slower = _write(_variant(full, "2026-12-01T00:00:00+00:00", scale=0.9), tmp_path / "now.json")
    out = _netload("compare", slower, base, "--regression", "5%")
    assert out.returncode == 1, out.stdout + out.stderr
    assert "regressed" in out.stdout and "rfc2889.mesh.throughput_per_port" in out.stdout
    out = _netload("compare", slower, base, "--regression", "15%")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 regressed" in out.stdout.splitlines()[0]


def test_netload_trend_counts_only_regressions_beyond_the_threshold(
        tmp_path: Path, history: list[dict[str, Any]]) -> None:
    paths = [_write(d, tmp_path / f"r{i}.json") for i, d in enumerate(history)]
    out = _netload("trend", *paths, "--fail-on-regression", "--regression", "5%")
    assert out.returncode == 1, out.stdout + out.stderr
    assert "y1564[voice].flr" in out.stdout and "rfc2889.mesh.throughput_per_port" in out.stdout
    out = _netload("trend", str(tmp_path), "--fail-on-regression", "--regression", "20%")
    assert out.returncode == 1   # FLR from 0: infinitely worse, whatever the threshold
    assert "within the 20% threshold" in out.stdout
    assert f"over {len(history)} runs" in out.stdout
