"""The PDF acceptance report (reports/pdf.py) and `netload report --pdf`.

The committed full sample (tests/data/results-full.json: RFC 2544, MLRsearch, Y.1564 and
RFC 2889), compared with a baseline and a history of earlier runs, is laid out by
WeasyPrint and read back with poppler's tools: pdfinfo for the pages, pdftotext for each
page's text and its words' boxes, pdftoppm for the rendered pages. No engine is needed.
"""

from __future__ import annotations

import copy
import logging
import re
import subprocess
import sys
from html import unescape
from pathlib import Path
from typing import Any

import pytest

from pytest_netload.errors import MissingExtra, NetloadConfigError, NetloadEnvironmentError
from pytest_netload.reports import html, pdf
from pytest_netload.reports.baseline import compare
from pytest_netload.reports.load import load
from pytest_netload.reports.signoff import sign_off, with_sign_off

DATA = Path(__file__).parent.parent / "data"
FULL = DATA / "results-full.json"
SIGN_OFF = {"customer": "Example Telecom AG", "operator": "J. Doe",
            "site": "Lab 3, Zurich", "test_plan": "ATP-2026-014 rev B"}
MM = 72 / 25.4  # PDF points per millimetre
SIDE_MARGIN = 12 * MM  # print.css: @page margin, left and right


def _run(*args: str) -> str:
    return subprocess.run(args, capture_output=True, text=True, check=True, timeout=120).stdout


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return with_sign_off(load(FULL), SIGN_OFF)


def _slower(document: dict[str, Any], created: str, scale: float) -> dict[str, Any]:
    """`document` as an earlier run whose throughputs were `scale` times these."""
    earlier = copy.deepcopy(document)
    earlier["created"] = created
    for test in earlier["tests"]:
        for m in test["measurements"]:
            if m["kind"] == "throughput":
                m["throughput_pps"] *= scale
                if m.get("upper_pps"):
                    m["upper_pps"] *= scale
    return earlier


@pytest.fixture(scope="module")
def report(document: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The PDF with every section, the baseline's and the trends' too (their tables are
    the widest: nine columns)."""
    history = [_slower(document, f"2025-03-{day:02d}T09:00:00+00:00", scale)
               for day, scale in ((10, 1.1), (11, 1.1), (12, 1.1), (13, 1.0))]
    comparison = compare(document, history[0], name="main", threshold=0.05)
    path = tmp_path_factory.mktemp("pdf") / "report.pdf"
    pdf.write(document, path, comparison=comparison, history=[*history, document],
              threshold=0.05)
    return path


@pytest.fixture(scope="module")
def pages(report: Path) -> list[dict[str, Any]]:
    """Per page: its box (width, height in points) and its words with their boxes, as
    `pdftotext -bbox` reads them."""
    out = _run("pdftotext", "-bbox", str(report), "-")
    found = []
    for page in re.finditer(r'<page width="([\d.]+)" height="([\d.]+)">(.*?)</page>', out,
                            re.DOTALL):
        words = [(float(x0), float(y0), float(x1), float(y1), unescape(w)) for x0, y0, x1, y1, w
                 in re.findall(r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" '
                               r'yMax="([\d.]+)">(.*?)</word>', page.group(3))]
        lines: dict[int, list[tuple[float, str]]] = {}
        for x0, y0, _, _, word in words:
            lines.setdefault(round(y0), []).append((x0, word))
        found.append({"width": float(page.group(1)), "height": float(page.group(2)),
                      "words": words, "text": " ".join(w[4] for w in words),
                      # line by line, top to bottom (a table row's cells side by side)
                      "lines": [" ".join(w for _, w in sorted(lines[y])) for y in sorted(lines)]})
    return found


def test_pages_are_a4_landscape_and_numbered_n_of_m(report: Path,
                                                    pages: list[dict[str, Any]]) -> None:
    info = _run("pdfinfo", str(report))
    found = re.search(r"^Pages:\s+(\d+)", info, re.MULTILINE)
    assert found, info
    count = int(found.group(1))
    assert len(pages) == count
    assert 12 <= count <= 40, count  # every section of the full sample, a page or more each
    for number, page in enumerate(pages, 1):
        assert (round(page["width"]), round(page["height"])) == (842, 595)  # A4 landscape
        assert f"Page {number} of {count}" in page["text"], (number, page["text"][-200:])


def test_cover_shows_the_verdict_the_duts_identity_and_the_sign_off(
        pages: list[dict[str, Any]], document: dict[str, Any]) -> None:
    cover = pages[0]["text"]
    verdict = html.overall_verdict(document)
    assert verdict == "FAIL"  # the full sample has a failed test
    assert f"Overall verdict {verdict}" in cover
    dut = document["topology"]["dut"]
    for label, value in (("Model", dut["model"]), ("Firmware", dut["firmware"]),
                         ("Serial number", dut["serial"]), ("Device under test", dut["name"]),
                         ("Customer", SIGN_OFF["customer"]), ("Operator", SIGN_OFF["operator"]),
                         ("Site", SIGN_OFF["site"]), ("Test plan", SIGN_OFF["test_plan"])):
        assert f"{label} {value}" in cover, (label, cover)
    assert "Contents" not in cover  # the contents have a page of their own


def test_contents_give_each_sections_page(pages: list[dict[str, Any]]) -> None:
    """Each entry of the table of contents names the page its section starts on: every
    standard's sections (RFC 2544, MLRsearch, Y.1564, RFC 2889) and the sign-off."""
    contents = pages[1]["text"]
    assert contents.split(" ")[:7] == ["Acceptance", "report:", "edge-1", "Overall",
                                       "verdict:", "FAIL", "Contents"]
    headings = {"Throughput (§26.1)": "Throughput (RFC 2544 §26.1)",
                "Latency (§26.2)": "Latency (RFC 2544 §26.2)",
                "Frame loss rate (§26.3)": "Frame loss rate (RFC 2544 §26.3)",
                "Back-to-back frames (§26.4)": "Back-to-back frames (RFC 2544 §26.4)",
                "System recovery (§26.5)": "System recovery (RFC 2544 §26.5)",
                "Reset (§26.6)": "Reset (RFC 2544 §26.6)",
                "NDR/PDR by MLRsearch (RFC 9971)": "NDR/PDR by MLRsearch (RFC 9971)",
                "Service activation (ITU-T Y.1564)": "Service activation (ITU-T Y.1564)",
                "Switch benchmarks (RFC 2889)": "Switch benchmarks (RFC 2889)",
                "Against the baseline and trends": "Against the baseline and trends",
                "Other measurements": "Other measurements",
                "Test conditions": "Test conditions", "Verdicts per test": "Verdicts per test",
                "Acceptance sign-off": "Acceptance sign-off"}
    previous, starts = 2, {}
    for entry, heading in headings.items():
        match = re.search(re.escape(entry) + r"[ .]+ (\d+) ", contents)  # the leader, the page
        assert match, (entry, contents)
        page = int(match.group(1))
        assert page >= previous, (entry, page)
        assert heading in pages[page - 1]["lines"], (entry, page)
        previous = starts[heading] = page
    # the chapters start a page: a standard's first heading below the running header
    for heading in ("Throughput (RFC 2544 §26.1)", "Service activation (ITU-T Y.1564)",
                    "Switch benchmarks (RFC 2889)", "Acceptance sign-off"):
        lines = pages[starts[heading] - 1]["lines"]
        assert lines[:2] == ["Acceptance report: edge-1 Overall verdict: FAIL", heading]


def test_no_text_leaves_the_page_box(pages: list[dict[str, Any]]) -> None:
    """Every word lies inside its page and between the side margins: no table, figure or
    long test id runs off the page."""
    for number, page in enumerate(pages, 1):
        right = page["width"] - SIDE_MARGIN
        for x0, y0, x1, y1, word in page["words"]:
            assert SIDE_MARGIN - 1 <= x0 and x1 <= right + 1, (number, word, x0, x1, right)
            assert 0 <= y0 and y1 <= page["height"], (number, word, y0, y1)


def test_rendered_pages_keep_their_side_margins_blank(report: Path, tmp_path: Path) -> None:
    """The pages drawn at 40 dpi: nothing (a table's rule, a plot, a cell's background)
    is drawn in the side margins, so no table is wider than its page."""
    from PIL import Image  # matplotlib's own dependency

    _run("pdftoppm", "-r", "40", "-png", str(report), str(tmp_path / "page"))
    files = sorted(tmp_path.glob("page-*.png"))
    assert files
    for path in files:
        image = Image.open(path).convert("L")
        width, height = image.size
        margin = int(SIDE_MARGIN / 72 * 40) - 1
        for box in ((0, 0, margin, height), (width - margin, 0, width, height)):
            histogram = image.crop(box).histogram()  # pixels per grey level, 0 black
            darkest = next(level for level, count in enumerate(histogram) if count)
            assert darkest >= 250, (path.name, box, darkest)  # white, or anti-aliasing's grey


def test_a_row_is_never_split_and_headers_repeat(pages: list[dict[str, Any]],
                                                 document: dict[str, Any]) -> None:
    """The verdicts table runs over several pages: every statement (a cell of several
    lines) is whole on one page, and each page of the table starts with its header."""
    start = next(i for i, p in enumerate(pages) if "Verdicts per test" in p["text"]
                 and "Contents" not in p["text"])
    end = next(i for i, p in enumerate(pages) if "Acceptance sign-off" in p["text"]
               and i > start)
    table = pages[start:end]
    assert len(table) >= 2  # the table does run over a page break
    header = "Test Outcome Duration Check Verdict Measured Required Statement"
    for page in table:
        assert header in page["lines"][:4], page["lines"][:4]
    statements = [v["message"] for t in document["tests"] for v in t.get("verdicts", ())
                  if len((v.get("message") or "").split()) > 12]
    assert statements
    for statement in statements:
        words = " ".join(statement.split())
        assert any(words in page["text"] for page in table), statement


def test_a_tall_row_moves_to_the_next_page_whole(tmp_path: Path) -> None:
    """Tests that errored, each with a 12-line error in its row: with rows of a sixth of a
    page, page breaks would fall inside rows; each row's lines stay on one page."""
    document = load(DATA / "results-sample.json")
    document["tests"] += [{"nodeid": f"tests/test_tall.py::test_tall_{n}", "outcome": "error",
                           "duration_s": 1.0, "measurements": [], "verdicts": [],
                           "error": "\n".join(f"row{n}-line{k}" for k in range(12))}
                          for n in range(30)]
    path = tmp_path / "tall.pdf"
    pdf.write(document, path)
    found: dict[int, set[int]] = {}
    for number, text in enumerate(_run("pdftotext", "-layout", str(path), "-").split("\f"), 1):
        for n in map(int, re.findall(r"\brow(\d+)-line\d+\b", text)):
            found.setdefault(n, set()).add(number)
        if "test_tall_" in text:
            assert "Test Outcome Duration Check Verdict Measured Required Statement" in \
                " ".join(text.split()), number  # the header, again on every page
    assert sorted(found) == list(range(30))
    assert max(max(p) for p in found.values()) > min(min(p) for p in found.values()) + 1
    split = {n: pages for n, pages in found.items() if len(pages) > 1}
    assert split == {}


def test_the_pdf_names_its_author_and_subject(report: Path) -> None:
    info = _run("pdfinfo", str(report))
    assert re.search(r"^Author:\s+J\. Doe$", info, re.MULTILINE), info
    assert re.search(r"^Subject:\s+Acceptance report of edge-1: FAIL$", info, re.MULTILINE)
    assert re.search(r"^Title:\s+RFC 2544, Y\.1564 and RFC 2889 acceptance report: edge-1 "
                     r"\(FAIL\)$", info,
                     re.MULTILINE)


def test_weasyprint_warns_about_nothing_but_the_svg_styles(
        document: dict[str, Any], caplog: pytest.LogCaptureFixture) -> None:
    """print.css uses only what WeasyPrint supports: it warns about nothing (the SVG
    properties it reads in the plots' style attributes are dropped as noise)."""
    with caplog.at_level(logging.WARNING, logger="weasyprint"):
        assert pdf.render(document).startswith(b"%PDF-")
    assert [r.getMessage() for r in caplog.records if r.name.startswith("weasyprint")] == []


# ---- the page both media share ----------------------------------------------------------


def test_the_html_page_shows_the_serial_and_the_sign_off_and_stays_unpaged(
        document: dict[str, Any]) -> None:
    page = html.render(document)
    assert '<td id="dut-serial">R100-0042</td>' in page
    assert '<tr><th>Customer</th><td class="sign-off">Example Telecom AG</td></tr>' in page
    assert '<tr><th>Test plan</th><td class="sign-off">ATP-2026-014 rev B</td></tr>' in page
    for paged_only in ("<wbr>", "@page", "target-counter", 'id="sign-off"'):
        assert paged_only not in page
    # the sign-off fields are on the cover, not again among the settings
    assert "<th>customer</th>" not in page
    paged = html.render(document, pdf=True)
    assert "test_<wbr>rfc2544[<wbr>64B]" in paged and "@page" in paged


def test_sign_off_fields_are_checked() -> None:
    document = load(FULL)
    assert sign_off(document) == {}
    assert sign_off(with_sign_off(document, {"operator": "  Ann  ", "site": None})) == \
        {"operator": "Ann"}
    with pytest.raises(NetloadConfigError, match=r"customer 'a\\nb' holds a line break"):
        with_sign_off(document, {"customer": "a\nb"})
    with pytest.raises(NetloadConfigError, match=r"test plan is 201 characters long"):
        with_sign_off(document, {"test_plan": "x" * 201})
    with pytest.raises(NetloadConfigError, match=r"'signer' is no sign-off field"):
        with_sign_off(document, {"signer": "x"})


# ---- without the renderer ----------------------------------------------------------------


def test_without_weasyprint_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "weasyprint", None)  # import weasyprint: not found
    with pytest.raises(MissingExtra, match=r"^the PDF report needs weasyprint, which is not "
                       r"installed: pip install 'pytest-netload\[pdf\]'$"):
        pdf.render(load(FULL))


def test_without_pango_the_error_names_the_system_packages(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    real = importlib.import_module

    def no_pango(name: str, package: str | None = None) -> Any:
        if name == "weasyprint":
            raise OSError("cannot load library 'libpango-1.0-0': libpango-1.0-0: cannot open "
                          "shared object file: No such file or directory")
        return real(name, package)

    monkeypatch.setattr(importlib, "import_module", no_pango)
    with pytest.raises(NetloadEnvironmentError, match=r"apt-get install libpango-1.0-0 "
                       r"libpangoft2-1.0-0") as caught:
        pdf.renderer()
    assert "cannot load library 'libpango-1.0-0'" in str(caught.value)


# ---- the command ---------------------------------------------------------------------------


def netload(*args: str, cwd: Path, python: str = "") -> subprocess.CompletedProcess[str]:
    """`python -m pytest_netload ARGS`, or with `python` code run first (to hide a module)."""
    code = (f"{python}\nimport sys\nfrom pytest_netload.cli import main\n"
            f"sys.exit(main({list(args)!r}))")
    command = [sys.executable, "-c", code] if python else \
        [sys.executable, "-m", "pytest_netload", *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300,
                          check=False)


def test_report_command_writes_the_pdf_with_the_sign_off(tmp_path: Path) -> None:
    out = netload("report", str(FULL), "--pdf", "-o", "out/report.pdf", "--customer",
                  "Example Telecom AG", "--operator", "J. Doe", "--site", "Lab 3",
                  "--test-plan", "ATP-7", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "report written to out/report.pdf"
    path = tmp_path / "out" / "report.pdf"
    assert path.read_bytes().startswith(b"%PDF-")
    cover = _run("pdftotext", "-f", "1", "-l", "1", str(path), "-")
    for text in ("Example Telecom AG", "J. Doe", "Lab 3", "ATP-7", "FAIL", "R100-0042"):
        assert text in cover, text


def test_report_command_defaults_to_report_pdf_beside_the_results(tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "results.json").write_bytes(FULL.read_bytes())
    out = netload("report", "run/results.json", "--pdf", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "run" / "report.pdf").read_bytes().startswith(b"%PDF-")
    assert not (tmp_path / "run" / "report.html").exists()


def test_report_command_errors_name_the_option_and_the_extra(tmp_path: Path) -> None:
    out = netload("report", str(FULL), "--pdf", "--operator", "a\tb", cwd=tmp_path)
    assert out.returncode == 2
    assert out.stderr.strip() == ("netload report: error: --operator: operator 'a\\tb' holds "
                                  "a line break or a control character; give one line of text")
    out = netload("report", str(FULL), "--pdf", cwd=tmp_path,
                  python="import sys\nsys.modules['weasyprint'] = None")
    assert out.returncode == 2
    assert out.stderr.strip() == ("netload report: error: the PDF report needs weasyprint, "
                                  "which is not installed: pip install 'pytest-netload[pdf]'")
    assert not list(tmp_path.iterdir())
