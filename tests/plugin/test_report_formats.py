"""--netload-report (ini netload_report) on the fake engine: which acceptance reports a
session writes beside results.json (report.html, report.pdf, both, none), the sign-off
fields (--netload-customer, ... / ini keys) in results.json and on the PDF's cover, and
the usage errors for a bad format, a bad field and a PDF renderer that is not installed.
(tests/unit/test_report_pdf.py checks the PDF's pages themselves.)"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_netload.reports.load import load

pytest_plugins = ["pytester"]

FAKE = "--netload-engine=fake:capacity_pps=50000,loss_ratio=0,delay_s=100e-6,buffer_frames=1000"
TEST = """
    import pytest

    @pytest.mark.rfc2544(frame_sizes=[64], trial_duration="1s", max_trials=4, resolution=0.25)
    def test_throughput(rfc2544):
        rfc2544.throughput()
"""


def _run(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, Path]:
    pytester.makepyfile(test_report=TEST)
    return pytester.runpytest(FAKE, "-p", "no:cacheprovider", *args), \
        pytester.path / "netload-results"


def _pdf_text(path: Path, page: int) -> str:
    return subprocess.run(["pdftotext", "-f", str(page), "-l", str(page), str(path), "-"],
                          capture_output=True, text=True, check=True).stdout


def test_pdf_report_with_the_sign_off_from_the_command_line(pytester: pytest.Pytester) -> None:
    result, out = _run(pytester, "--netload-report=pdf", "--netload-customer=Example Telecom",
                       "--netload-operator=J. Doe", "--netload-test-plan=ATP-7")
    result.assert_outcomes(passed=1)
    assert not (out / "report.html").exists()
    path = out / "report.pdf"
    assert path.read_bytes().startswith(b"%PDF-")
    assert f"netload: report written to {path}" in result.stdout.str()
    assert "report pdf" in result.stdout.str()  # the session header says so
    settings = load(out / "results.json")["settings"]
    assert {k: settings.get(k) for k in ("customer", "operator", "site", "test_plan")} == \
        {"customer": "Example Telecom", "operator": "J. Doe", "site": None,
         "test_plan": "ATP-7"}
    cover = " ".join(_pdf_text(path, 1).split())
    for text in ("Overall verdict PASS", "Customer Example Telecom", "Operator J. Doe",
                 "Test plan ATP-7"):
        assert text in cover, (text, cover)
    pages = int(re.search(r"Pages:\s+(\d+)", subprocess.run(  # type: ignore[union-attr]
        ["pdfinfo", str(path)], capture_output=True, text=True, check=True).stdout).group(1))
    assert pages >= 4  # cover, contents, throughput, ..., sign-off
    assert "Acceptance sign-off" in _pdf_text(path, pages)
    assert f"Page {pages} of {pages}" in _pdf_text(path, pages)


def test_both_reports_and_the_sign_off_from_ini_keys(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nnetload_report = html, pdf\nnetload_site = Lab 3\n")
    result, out = _run(pytester)
    result.assert_outcomes(passed=1)
    assert (out / "report.pdf").read_bytes().startswith(b"%PDF-")
    page = (out / "report.html").read_text()
    assert '<tr><th>Site</th><td class="sign-off">Lab 3</td></tr>' in page
    assert json.loads((out / "results.json").read_text())["settings"]["site"] == "Lab 3"
    assert "Site Lab 3" in " ".join(_pdf_text(out / "report.pdf", 1).split())


def test_none_writes_results_only_and_the_default_is_html(pytester: pytest.Pytester) -> None:
    result, out = _run(pytester, "--netload-report=none")
    result.assert_outcomes(passed=1)
    assert (out / "results.json").is_file()
    assert not (out / "report.html").exists() and not (out / "report.pdf").exists()
    assert "customer" not in load(out / "results.json")["settings"]
    result, out = _run(pytester)
    result.assert_outcomes(passed=1)
    assert (out / "report.html").is_file() and not (out / "report.pdf").exists()


@pytest.mark.parametrize(("args", "message"), [
    (("--netload-report=docx",), ("--netload-report: 'docx': 'docx' is no report format; "
                                  "give html, pdf, both as 'html,pdf', or none")),
    (("--netload-report=html,", ), "--netload-report: 'html,': '' is no report format"),
    (("--netload-operator=a\tb",), ("--netload-operator: operator 'a\\tb' holds a line "
                                    "break or a control character; give one line of text")),
])
def test_bad_values_are_usage_errors(pytester: pytest.Pytester, args: tuple[str, ...],
                                     message: str) -> None:
    result, _ = _run(pytester, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str(), result.stderr.str()


def test_pdf_without_weasyprint_is_a_usage_error_naming_the_extra(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "weasyprint", None)  # import weasyprint: not found
    result, out = _run(pytester, "--netload-report=html,pdf")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert ("--netload-report: pdf: the PDF report needs weasyprint, which is not installed: "
            "pip install 'pytest-netload[pdf]'; or write the HTML report only (html)"
            ) in result.stderr.str()
    assert not out.exists()  # found before any test ran
