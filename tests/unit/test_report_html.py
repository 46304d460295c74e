"""The HTML acceptance report (reports/html.py) and the `netload report` command."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, ClassVar

import pytest

from pytest_netload.reports import html
from pytest_netload.reports.load import load

DATA = Path(__file__).parent.parent / "data"
SAMPLE = DATA / "results-sample.json"
FULL = DATA / "results-full.json"


@pytest.fixture(scope="module")
def full() -> dict[str, Any]:
    return load(FULL)


@pytest.fixture(scope="module")
def sample() -> dict[str, Any]:
    return load(SAMPLE)


@pytest.fixture(scope="module")
def full_page(full: dict[str, Any]) -> str:
    return html.render(full)


@pytest.fixture(scope="module")
def sample_page(sample: dict[str, Any]) -> str:
    return html.render(sample)


class _Tags(HTMLParser):
    """Counts elements by tag and class, collects ids, links, and checks nesting."""

    VOID: ClassVar[frozenset[str]] = frozenset({"meta", "br", "img", "input", "link", "hr"})

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.tags: dict[str, int] = {}
        self.classes: dict[str, int] = {}
        self.ids: list[str] = []
        self.links: list[str] = []
        self.text: list[str] = []
        self.errors: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] = self.tags.get(tag, 0) + 1
        for name, value in attrs:
            if name == "class" and value:
                for c in value.split():
                    self.classes[f"{tag}.{c}"] = self.classes.get(f"{tag}.{c}", 0) + 1
            if name == "id" and value:
                self.ids.append(value)
            if name in ("href", "src", "xlink:href") and value is not None:
                self.links.append(value)
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in self.VOID:
            self.stack.pop()

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:]}")
            return
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _parse(page: str) -> _Tags:
    tags = _Tags()
    tags.feed(page)
    tags.close()
    return tags


# ---- the page -----------------------------------------------------------------------------


def test_page_is_well_formed_and_self_contained(full_page: str) -> None:
    tags = _parse(full_page)
    assert tags.errors == [] and tags.stack == []
    assert "http://" not in full_page and "https://" not in full_page
    assert "<script" not in full_page and "<link" not in full_page and "<img" not in full_page
    assert "@import" not in full_page and "url(" not in full_page.replace("url(#fig", "")
    # in-page anchors, and the failure pcaps in captures/ beside the report: nothing remote
    assert all(link.startswith(("#", "captures/")) for link in tags.links), tags.links
    assert len(tags.ids) == len(set(tags.ids)), "ids must be unique across the inline SVGs"
    for link in tags.links:
        assert link.startswith("captures/") or link[1:] in tags.ids, f"dangling link {link}"


def test_cover_shows_dut_date_verdict_and_package(full_page: str) -> None:
    assert '<td id="dut-name">edge-1</td>' in full_page
    assert '<td id="dut-model">ACME R-100</td>' in full_page
    assert '<td id="dut-firmware">4.2.1</td>' in full_page
    assert "R100-0042" in full_page  # other DUT metadata
    assert '<td id="created">2025-03-14T09:26:53+00:00</td>' in full_page
    assert re.search(r'id="overall-verdict">.*?<div class="word">FAIL</div>', full_page,
                     re.DOTALL)
    assert "pytest-netload 0.1.0" in full_page
    assert "10.00 Gbit/s (L1)" in full_page
    assert "15: 11 passed, 3 failed, 1 errored, 0 skipped" in full_page


def test_real_sample_passes(sample_page: str) -> None:
    assert re.search(r'id="overall-verdict">.*?<div class="word">PASS</div>', sample_page,
                     re.DOTALL)
    assert "<title>RFC 2544 acceptance report: netns-router (PASS)</title>" in sample_page
    assert "none (rates are relative to the generator&#39;s calibrated maximum)" in sample_page


def test_a_table_per_procedure_and_per_frame_size(full_page: str) -> None:
    tags = _parse(full_page)
    for cls in ("throughput", "latency", "latency-at", "back-to-back", "recovery", "reset",
                "traffic", "meters", "procedures", "calibration", "invalid", "verdicts",
                "ports"):
        assert tags.classes.get(f"table.{cls}") == 1, cls
    assert tags.classes["table.frame-loss"] == 4  # 64B, 512B, 1518B, imix
    assert tags.classes["table.mlrsearch"] == 1
    for label in ("Frame size 64B", "Frame size 512B", "Frame size 1518B", "Frame size imix"):
        assert label in full_page


def test_throughput_rows_in_pps_and_bits_at_both_layers(full_page: str, full: dict[str, Any]
                                                        ) -> None:
    m = next(m for t in full["tests"] for m in t["measurements"]
             if m["kind"] == "throughput" and m["frame_size"] == 64)
    row = re.search(r"<tr><td>64B</td><td>test_rfc2544\[64B\]</td>(.*?)</tr>", full_page, re.DOTALL)
    assert row is not None
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row.group(1))
    assert cells[:4] == [html.fmt_pps(m["throughput_pps"]), html.fmt_bps(m["throughput_bps_l1"]),
                         html.fmt_bps(m["throughput_bps_l2"]), "61.91 %"]
    assert cells[:4] == ["9.213 Mpps", "6.191 Gbit/s", "4.717 Gbit/s", "61.91 %"]


def test_latency_at_loads_has_a_row_per_load_with_percentiles(full_page: str,
                                                              full: dict[str, Any]) -> None:
    """throughput(latency_at=[0, 0.5, 0.9, 1.0]): a table "Latency at loads", one row per
    load of each frame size, lowest first, with its load, percentiles and loss."""
    m = next(m for t in full["tests"] for m in t["measurements"]
             if m["kind"] == "throughput" and m["frame_size"] == 512)
    assert [x["fraction"] for x in m["latency_at"]["loads"]] == [0.0, 0.5, 0.9, 1.0]
    assert 'href="#latency-at-loads"' in full_page
    table = full_page.split('class="latency-at"')[1].split("</table>")[0]
    rows = re.findall(r"<tr><td>512B</td><td>test_rfc2544\[512B\]</td>(.*?)</tr>", table,
                      re.DOTALL)
    assert len(rows) == 4
    shares = [re.findall(r"<td[^>]*>(.*?)</td>", r)[1] for r in rows]
    assert shares == ["no load", "50 %", "90 %", "100 %"]
    for row, load in zip(rows, m["latency_at"]["loads"]):
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row)
        assert cells[0] == f"{html.fmt_pps(m['throughput_pps'])} (throughput)"
        assert cells[2] == html.fmt_pps(load["load_pps"])
        assert re.search(r"\d[\d.]* µs \[[\d.]+, [\d.]+\]", cells[3])  # p50 with its CI
        assert cells[-2] == f"0 / {html.fmt_count(load['tx_packets'])}"
    # no load: CSIT's 9 kpps (below 1 % of this throughput)
    assert m["latency_at"]["loads"][0]["load_pps"] == 9000.0


def test_latency_rows_have_percentiles_with_cis_and_the_rfc_figure(full_page: str) -> None:
    row = re.search(r"<tr><td>512B</td><td>test_rfc2544\[512B\]</td>(.*?)</tr>", full_page.split(
        'class="latency"')[1], re.DOTALL)
    assert row is not None
    text = row.group(1)
    assert re.search(r"\d[\d.]* µs ± [\d.]+ ns", text)          # RFC figure: mean ± stdev
    assert "n = 3" in text
    assert re.search(r"4\.\d+ µs \[[\d.]+, [\d.]+\]", text)    # p50 with its CI
    for key in ("p50", "p99", "p99.9"):
        assert f"<th>{key} [95 % CI]</th>" in full_page


def test_frame_loss_rows_carry_the_clopper_pearson_bound(full_page: str) -> None:
    assert "Upper bound (95 %, Clopper-Pearson)" in full_page
    assert "29,761,905" in full_page and "11,309,524" in full_page   # 64B at 100 %
    assert "1.68e-07" in full_page                                     # 0 lost of 17.9 M


def test_other_procedures(full_page: str) -> None:
    assert "58,127" in full_page                              # back-to-back mean, frames
    assert "184 ms (n = 1)" in full_page                      # recovery time
    assert "2.28 s ± 43.1 ms" in full_page                    # reset time over 2 valid trials
    assert "<td>NDR</td>" in full_page and "<td>PDR</td>" in full_page
    assert "every goal reached" in full_page
    assert "the run ended before the reset hook was due" in full_page  # an invalid trial
    assert "DPDK 22.11.5" in full_page and "net_ice" in full_page
    assert "tsc-software (resolution 0.4 ns)" in full_page
    assert "Last frames before the failure" in full_page


def test_plots_are_inline_svg(full_page: str, sample_page: str) -> None:
    # throughput, latency, loss, back-to-back, meters, Y.1564 intervals
    assert full_page.count("<svg") == 6
    assert sample_page.count("<svg") == 4
    for label in ("throughput versus frame size", "frame loss versus offered load",
                  "back-to-back bursts per frame size",
                  "Latency percentiles per frame size, with 95 % CIs"):
        assert f'aria-label="{label}"' in full_page
    assert "<?xml" not in full_page and "<!DOCTYPE svg" not in full_page
    assert "<metadata" not in full_page


def test_verdict_table_lists_every_assertion(full_page: str, full: dict[str, Any]) -> None:
    verdicts = [v for t in full["tests"] for v in t["verdicts"]]
    table = full_page.split('class="verdicts"')[1]
    assert table.count("<td><code>") == len(verdicts)
    assert '<span class="badge FAIL">FAIL</span></td><td>8.836 Mpps (5.938 Gbit/s at L1)</td>' \
           '<td>&gt;= 99%</td>' in table
    assert "no frame lost" in table
    assert "no assertion helper recorded a verdict" in table


def test_render_is_deterministic(full: dict[str, Any], full_page: str) -> None:
    assert html.render(full) == full_page


def test_write(tmp_path: Path, sample: dict[str, Any], sample_page: str) -> None:
    path = html.write(sample, tmp_path / "sub" / "report.html")
    assert path == tmp_path / "sub" / "report.html"
    assert path.read_text(encoding="utf-8") == sample_page
    assert [p.name for p in path.parent.iterdir()] == ["report.html"]


# ---- hand-made documents ------------------------------------------------------------------


def _doc(sample: dict[str, Any], tests: list[dict[str, Any]]) -> dict[str, Any]:
    doc = copy.deepcopy(sample)
    doc["tests"] = tests
    return doc


@pytest.mark.parametrize(("outcomes", "verdict"), [
    ([], "NO VERDICT"), (["skipped"], "NO VERDICT"), (["passed", "skipped"], "PASS"),
    (["passed", "failed", "skipped"], "FAIL"),
])
def test_overall_verdict(sample: dict[str, Any], outcomes: list[str], verdict: str) -> None:
    doc = _doc(sample, [{"nodeid": f"t.py::test_{n}", "outcome": o, "duration_s": 0.0,
                         "measurements": [], "verdicts": []} for n, o in enumerate(outcomes)])
    assert html.overall_verdict(doc) == verdict
    page = html.render(doc)
    assert f'<div class="word">{verdict}</div>' in page
    assert _parse(page).errors == []


def test_empty_document_says_what_is_missing(sample: dict[str, Any]) -> None:
    page = html.render(_doc(sample, []))
    assert "<svg" not in page
    assert "No throughput measurement in this results file." in page
    assert "No MLRsearch in this results file." in page
    assert "Every trial was valid." in page


def test_latency_without_samples_and_without_cis(sample: dict[str, Any]) -> None:
    """An empty latency record shows dashes; a percentile whose sample was too small for a
    CI says so instead of showing an interval."""
    empty = {"count": 0, "min_ns": None, "max_ns": None, "mean_ns": None,
             "percentiles": {"p50": None, "p99": None, "p99.9": None}, "clock": None,
             "resolution_ns": None, "samples": 0, "duplicates": None, "reordered": None,
             "jitter_ns": None, "ipdv_ns": None}
    few = copy.deepcopy(empty)
    few.update(count=3, min_ns=900, max_ns=1200, mean_ns=1000.0, clock="tsc-software")
    few["percentiles"] = {"p50": {"p": 50.0, "value_ns": 1000.0, "ci_low_ns": 900.0,
                                  "ci_high_ns": 1200.0, "confidence": 0.95, "coverage": 0.75}}
    measurements = [{"kind": "latency", "stream": "dead", "tx_packets": 5, "rx_packets": 0,
                     "lost": 5, "latency": empty},
                    {"kind": "latency", "stream": "few", "tx_packets": 3, "rx_packets": 3,
                     "lost": 0, "latency": few}]
    doc = _doc(sample, [{"nodeid": "t.py::test_x", "outcome": "passed", "duration_s": 1.0,
                         "measurements": measurements, "verdicts": []}])
    page = html.render(doc)
    assert "1.00 µs (no 95 % CI: too few samples)" in page
    assert "5 / 5" in page
    assert page.count("<svg") == 1


def test_text_from_the_file_is_escaped(sample: dict[str, Any]) -> None:
    doc = copy.deepcopy(sample)
    doc["topology"]["dut"] = {"name": "<script>alert(1)</script>", "model": "a & b"}
    page = html.render(doc)
    assert "<script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "a &amp; b" in page


@pytest.mark.parametrize(("value", "fmt", "text"), [
    (146447.9, html.fmt_pps, "146.4 kpps"), (9_184_337.8, html.fmt_pps, "9.184 Mpps"),
    (12.0, html.fmt_pps, "12.0 pps"), (None, html.fmt_pps, "–"),
    (98_413_001.5, html.fmt_bps, "98.41 Mbit/s"), (1e10, html.fmt_bps, "10.00 Gbit/s"),
    (75007.5, html.fmt_ns, "75.0 µs"), (812.0, html.fmt_ns, "812 ns"),
    (8_044_543.5, html.fmt_ns, "8.04 ms"), (0.184, html.fmt_s, "184 ms"),
    (0.0, html.fmt_loss, "0"), (2.03e-05, html.fmt_loss, "2.03e-05"),
    (0.38, html.fmt_loss, "38.00 %"), (0.6171875, html.fmt_share, "61.72 %"),
    (58127.0, html.fmt_count, "58,127"), (1_625_488, html.fmt_count, "1,625,488"),
    (float("nan"), html.fmt_ns, "–"), (64, html.size_label, "64B"),
    ("imix", html.size_label, "imix"),
])
def test_formats(value: Any, fmt: Any, text: str) -> None:
    assert fmt(value) == text


# ---- the command --------------------------------------------------------------------------


def netload(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_netload", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120, check=False)


def test_report_command_writes_the_page(tmp_path: Path, full_page: str) -> None:
    out = netload("report", str(FULL), "-o", "out/report.html", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "report written to out/report.html"
    assert (tmp_path / "out" / "report.html").read_text(encoding="utf-8") == full_page


def test_report_command_defaults_to_report_html_beside_the_results(tmp_path: Path) -> None:
    results = tmp_path / "run" / "results.json"
    results.parent.mkdir()
    results.write_bytes(SAMPLE.read_bytes())
    out = netload("report", "run/results.json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "run" / "report.html").is_file()


def _one_line(code: int, stderr: str, *words: str) -> None:
    assert code == 2, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("netload report: error: ")
    for w in words:
        assert w in lines[0]


def test_report_command_errors_are_one_line(tmp_path: Path) -> None:
    """In a subprocess, as a user runs it: a missing, a truncated and a newer file."""
    out = netload("report", "missing.json", cwd=tmp_path)
    _one_line(out.returncode, out.stderr, "missing.json: no such file")
    (tmp_path / "cut.json").write_text(SAMPLE.read_text()[:5000])
    out = netload("report", "cut.json", cwd=tmp_path)
    _one_line(out.returncode, out.stderr, "cut.json: is truncated")
    newer = json.loads(SAMPLE.read_text())
    newer["schema_version"] = "2.0"
    (tmp_path / "new.json").write_text(json.dumps(newer))
    out = netload("report", "new.json", cwd=tmp_path)
    _one_line(out.returncode, out.stderr,
              "new.json: $.schema_version: written by a newer pytest-netload (schema 2.0); "
              "upgrade")
    assert not list(tmp_path.glob("*.html"))


def _wrong_duration(tmp_path: Path) -> list[str]:
    wrong = json.loads(SAMPLE.read_text())
    wrong["tests"][1]["duration_s"] = "long"
    (tmp_path / "wrong.json").write_text(json.dumps(wrong))
    return ["wrong.json"]


def _bad_json(tmp_path: Path) -> list[str]:
    (tmp_path / "bad.json").write_text('{"schema_version": "1.0",}')
    return ["bad.json"]


def _unwritable(tmp_path: Path) -> list[str]:
    (tmp_path / "file").write_text("")
    return [str(SAMPLE), "-o", "file/report.html"]


@pytest.mark.parametrize(("make", "words"), [
    (_wrong_duration, ("wrong.json: $.tests[1].duration_s: 'long' is not of type number",)),
    (_bad_json, ("bad.json: is not valid JSON", "line 1 column 26")),
    (_unwritable, ("file/report.html: cannot be written", "give a writable path with -o")),
])
def test_report_command_errors_in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str], make: Any,
                                          words: tuple[str, ...]) -> None:
    from pytest_netload.cli import main

    monkeypatch.chdir(tmp_path)
    code = main(["report", *make(tmp_path)])
    _one_line(code, capsys.readouterr().err, *words)


def test_a_failed_tests_capture_is_linked_beside_the_report() -> None:
    import copy
    import json
    from pathlib import Path

    from pytest_netload.reports.html import render

    doc = json.loads((Path(__file__).parents[1] / "data" / "results-sample.json").read_text())
    doc = copy.deepcopy(doc)
    doc["tests"][0]["outcome"] = "failed"
    doc["tests"][0]["captures"] = ["/lab/netload-results/captures/t.py_test_a.pcap"]
    page = render(doc)
    assert '<a href="captures/t.py_test_a.pcap">' in page


def test_y1564_tables_show_each_step_with_its_verdict(full_page: str) -> None:
    """The service-by-step table of each configuration test, with coloured verdicts and
    their reasons, and the performance test's per-service summary and interval plot."""
    assert '<h2 id="y1564">Service activation (ITU-T Y.1564)</h2>' in full_page
    assert '<a href="#y1564">' in full_page
    sct = full_page[full_page.index("Service configuration test"):
                    full_page.index("Service performance test")]
    assert sct.count('<table class="y1564-sct">') == 2  # voice and data
    for step in ("CIR 25%", "CIR 50%", "CIR 75%", "CIR 100%", "CIR+EIR", "policing"):
        assert f"<td>{step}</td>" in sct, step
    # the fake policer lets the colour-aware data service's yellow excess through: its
    # policing step fails on the yellow rate, and the table counts the colours apart
    data = sct[sct.index("<h4>data"):]
    assert "colour-aware by DSCP: green 10, yellow 12" in data
    assert "<th>Yellow recv / sent</th>" in data
    assert "<th>Yellow recv / sent</th>" not in sct[:sct.index("<h4>data")]
    policing = data[data.index("<td>policing</td>"):].split("</tr>")[0]
    assert '<span class="badge FAIL">FAIL</span>' in policing
    assert "yellow IR 4.000 Mbit/s fails" in policing and "9,766 / 10,986" in policing
    assert '<span class="badge PASS">PASS</span>' in sct[:sct.index("<h4>data")]
    spt = full_page[full_page.index("Service performance test"):]
    assert '<table class="y1564-spt">' in spt and "100.0%" in spt  # availability
    assert 'aria-label="Y.1564 service performance test per interval"' in spt


@pytest.mark.parametrize(("kinds", "title"), [
    ((), "Acceptance report"),
    (("throughput",), "RFC 2544 acceptance report"),
    (("y1564_spt", "calibration"), "Y.1564 acceptance report"),
    (("rfc2889_fully_meshed", "throughput"), "RFC 2544 and RFC 2889 acceptance report"),
    (("y1564_bursts", "rfc2889_errored_frame_filtering", "mlrsearch"),
     "RFC 2544, Y.1564 and RFC 2889 acceptance report"),
])
def test_the_title_names_the_standards_the_results_hold(kinds: tuple[str, ...],
                                                        title: str) -> None:
    from pytest_netload.reports.html.sections import report_title

    doc = {"tests": [{"measurements": [{"kind": k} for k in kinds]}]}
    assert report_title(doc) == title


def test_where_frames_land_has_its_tables(full_page: str) -> None:
    spread = full_page[full_page.index("Where frames land: spread over members"):]
    spread = spread[:spread.index("</table>")]
    assert "p1 2,200 (expected 2,133, +3.125 %)" in spread
    assert "64 flows" in spread and '<span class="badge PASS">PASS</span>' in spread
    assert "± 50.00 %" in spread
    delivery = full_page[full_page.index("Where frames land: forwarding decisions"):]
    delivery = delivery[:delivery.index("</table>")]
    assert "delivered to p2" in delivery and "not delivered to p1" in delivery
    assert "p1 0, p2 1,000, p3 0" in delivery
    assert "0 of 64 sampled" in spread  # no flow split over two members
