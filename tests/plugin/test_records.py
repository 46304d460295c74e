"""Records attached to test items, the live progress line and the summary table."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from pytest_netload.bench.progress import progress_line
from pytest_netload.plugin.terminal import format_table, rows_of

pytest_plugins = ["pytester"]

FAKE_SUITE = """
    import pytest
    from pytest_netload.bench import progress
    from pytest_netload.measure.recording import record_measurement

    THROUGHPUT = {"frame_size": 64, "throughput_pps": 250000.0, "trials": [
        {"valid": True, "lost": 0, "offered_pps": 250000.0,
         "latency": {"percentiles": {"p50": {"value_ns": 8200.0}, "p99": {"value_ns": 41000.0}}}},
        {"valid": True, "lost": 12, "offered_pps": 500000.0}]}

    @pytest.mark.netload  # measures without a fixture: a netload test so
    def test_measured():
        for n in range(3):
            progress.report(test="test_measured", frame_size=64, procedure="throughput",
                            trial=n + 1, offered_pps=250000.0 * (n + 1), loss_ratio=0.0)
        record_measurement("throughput", THROUGHPUT)

    @pytest.mark.netload
    def test_failing():
        record_measurement("throughput", dict(THROUGHPUT, frame_size=1518))
        assert False, "DUT too slow"

    def test_plain():
        pass
"""


def test_summary_table_lists_each_measured_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(FAKE_SUITE)
    result = pytester.runpytest()
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines([
        "*= netload summary =*",
        "test*frame size*throughput*p50*p99*loss*verdict*notes",
        "test_measured*64B*250.0 kpps*8.20us*41.0us*0 at throughput*PASS*",
        "test_failing*1518B*250.0 kpps*FAIL*",
    ])
    assert "test_plain" not in result.stdout.str().split("netload summary")[1]


def test_quiet_runs_print_no_table_and_no_progress(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(FAKE_SUITE)
    result = pytester.runpytest("-qq")
    assert "netload summary" not in result.stdout.str()
    assert "netload: test_measured" not in result.stdout.str()


def test_verbose_prints_one_progress_line_per_trial(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(FAKE_SUITE)
    result = pytester.runpytest("-v")
    result.stdout.fnmatch_lines([
        "netload: test_measured | 64B | throughput | trial 1 | offered 250.0 kpps | loss 0",
        "netload: test_measured | 64B | throughput | trial 3 | offered 750.0 kpps | loss 0",
        "*test_measured PASSED*",
    ])


def test_default_verbosity_off_a_terminal_prints_a_line_per_trial(
        pytester: pytest.Pytester) -> None:
    """A CI log gets a line per trial without -v; -q keeps it quiet."""
    pytester.makepyfile(FAKE_SUITE)
    result = pytester.runpytest()
    result.stdout.fnmatch_lines([
        "netload: test_measured | 64B | throughput | trial 1 | offered 250.0 kpps | loss 0",
        "netload: test_measured | 64B | throughput | trial 3 | offered 750.0 kpps | loss 0"])
    quiet = pytester.runpytest("-q")
    assert "netload: test_measured |" not in quiet.stdout.str()


def test_records_ride_on_reports_and_key_figures_become_junit_properties(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(FAKE_SUITE)
    pytester.makeconftest("""
        import json
        def pytest_runtest_logreport(report):
            if report.when == "call" and hasattr(report, "netload"):
                print("RECORD", report.nodeid, json.dumps(report.netload["measurements"][0]["frame_size"]))
    """)
    result = pytester.runpytest("-s", "--junitxml=out.xml", "-o", "junit_family=xunit1")
    result.stdout.fnmatch_lines(["*RECORD *test_measured 64", "*RECORD *test_failing 1518"])
    tree = ET.parse(pytester.path / "out.xml")
    props = {p.get("name"): p.get("value") for p in tree.iter("property")}
    assert "netload" not in props  # the structured record stays out of JUnit
    assert props["netload.throughput_pps.64B"] == "250000.0"
    assert props["netload.throughput_pps.1518B"] == "250000.0"


def test_progress_line_wording() -> None:
    line = progress_line({"test": "t[64B]", "frame_size": "imix", "procedure": "throughput",
                          "trial": 4, "offered_pps": 1_488_095.0, "loss_ratio": 0.0123,
                          "note": "invalid: TX short"})
    assert line == ("netload: t[64B] | imix | throughput | trial 4 | offered 1.488 Mpps | "
                    "loss 1.230% | invalid: TX short")


def test_table_merges_a_latency_meter_into_its_traffic_row() -> None:
    record = {"measurements": [
        {"kind": "traffic", "streams": [{"tx_packets": 1000, "lost": 0, "mean_frame_size": 128,
                                         "achieved_rx_pps": 20000.0}]},
        {"kind": "latency", "tx_packets": 1000, "lost": 0, "latency": {"percentiles": {
            "p50": {"value_ns": 3300.0}, "p99": {"value_ns": 13000.0}}}},
    ]}
    rows = rows_of("t.py::test_lat", "passed", record)
    assert rows == [("test_lat", "128B", "20.00 kpps", "3.30us", "13.0us", "0/1,000", "PASS",
                     "")]
    lines = format_table(rows)
    assert lines[0].split() == ["test", "frame", "size", "throughput", "p50", "p99", "loss",
                                "verdict", "notes"]


def test_table_notes_the_procedures_without_a_throughput_column() -> None:
    record = {"measurements": [
        {"kind": "throughput", "frame_size": 64, "throughput_pps": 1e5, "trials": []},
        {"kind": "latency_rfc2544", "frame_size": 64, "lost": 0, "tx_packets": 300,
         "latency": {"percentiles": {"p50": {"value_ns": 5e3}, "p99": {"value_ns": 9e3}}}},
        {"kind": "frame_loss", "frame_size": 64,
         "points": [{"loss_ratio": 0.125, "load_ratio": 1.0}]},
        {"kind": "back_to_back", "frame_size": 64, "spread": {"mean": 1234.0}},
        {"kind": "reset", "frame_size": 64, "reset_s": {"mean": 0.5}},
        {"kind": "recovery", "frame_size": 64, "recovery_s": None},
    ]}
    (row,) = rows_of("t.py::test_all", "passed", record)
    assert row[:7] == ("test_all", "64B", "100.0 kpps", "5.00us", "9.00us", "0/300", "PASS")
    assert row[7] == ("frame loss 12.50% at 100%; back-to-back 1,234 frames; reset 500ms; "
                      "recovery: no overload loss")


class FakeTerminal:
    """What TerminalProgress uses of pytest's TerminalReporter."""

    def __init__(self, isatty: bool) -> None:
        self.isatty = isatty
        self.calls: list[tuple[str, str]] = []

        class TW:
            fullwidth = 40

        self._tw = TW()

    def ensure_newline(self) -> None:
        self.calls.append(("newline", ""))

    def rewrite(self, line: str, erase: bool = False) -> None:
        assert erase  # a shorter line must not leave the end of a longer one
        self.calls.append(("rewrite", line))

    def write_line(self, line: str) -> None:
        self.calls.append(("line", line))


@pytest.mark.parametrize(("isatty", "verbosity", "kind"), [
    (True, 0, "rewrite"), (True, 1, "rewrite"), (True, -1, None),
    (False, 0, "line"), (False, 1, "line"), (False, -1, None),
])
def test_live_line_on_a_terminal_lines_elsewhere_nothing_with_q(isatty: bool, verbosity: int,
                                                                kind: str | None) -> None:
    from pytest_netload.bench.progress_model import Status
    from pytest_netload.plugin.live import TerminalProgress

    term = FakeTerminal(isatty)
    show = TerminalProgress(term, verbosity, clock=lambda: 0.0)
    show(Status("trial", "test_a_rather_long_name[1518B]", "throughput", 1518, n=12,
                offered_pps=812_743.0))
    drawn = [c for c in term.calls if c[0] != "newline"]
    if kind is None:
        assert drawn == []
    else:
        assert [c[0] for c in drawn] == [kind]
        if kind == "rewrite":  # clipped to the terminal width: never wraps
            assert len(drawn[0][1]) == term._tw.fullwidth - 1


def test_session_results_are_written_as_json(pytester: pytest.Pytester) -> None:
    import json

    pytester.makepyfile(FAKE_SUITE)
    result = pytester.runpytest("--netload-report-dir=out")
    path = pytester.path / "out" / "results.json"
    result.stdout.fnmatch_lines([f"netload: results written to {path}"])
    doc = json.loads(path.read_text())
    assert doc["schema_version"] == "1.4"
    # every netload test is listed; test_plain uses nothing of netload's: not one
    assert [t["outcome"] for t in doc["tests"]] == ["passed", "failed"]
    assert doc["tests"][0]["measurements"][0]["throughput_pps"] == 250000.0
    assert doc["topology"]["name"] == "netns-router"


def test_an_unwritable_report_dir_is_named_and_results_stay_on_screen(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(FAKE_SUITE)
    (pytester.path / "blocked").write_text("a file, not a directory")
    result = pytester.runpytest("--netload-report-dir=blocked/out")
    result.stdout.fnmatch_lines([
        "test_measured*64B*250.0 kpps*",
        "netload: results written to */netload-results-*/results.json",
        ("netload: could not write */blocked/out/results.json: *; the results went to "
         "*/netload-results-* instead; give a writable --netload-report-dir")])


def test_allure_gets_steps_attachments_and_environment(pytester: pytest.Pytester) -> None:
    import json

    pytest.importorskip("allure_pytest")
    pytester.makepyfile(FAKE_SUITE.replace(
        '''        {"valid": True, "lost": 12, "offered_pps": 500000.0}]}''',
        '''        {"valid": True, "lost": 12, "offered_pps": 500000.0, "loss_ratio": 2.4e-5,
         "tx_packets": 500000}]}'''))
    result = pytester.runpytest("--alluredir=allure")
    result.assert_outcomes(passed=2, failed=1)
    out = pytester.path / "allure"
    results = [json.loads(p.read_text()) for p in out.glob("*-result.json")]
    measured = next(r for r in results if r["name"] == "test_measured")
    steps = [s["name"] for s in measured["steps"]]
    assert steps[0].startswith("throughput 64B trial 1: 250,000 pps, lost 0 of")
    assert steps[1].startswith("throughput 64B trial 2: 500,000 pps, lost 12 of 500,000")
    names = {a["name"]: a for a in measured["attachments"]}
    assert {"throughput 64B trials.csv", "throughput 64B loss vs load", "netload record"} <= set(names)
    csv_text = (out / names["throughput 64B trials.csv"]["source"]).read_text()
    assert csv_text.splitlines()[0].startswith("offered_pps,duration_s,tx_packets")
    assert "<svg" in (out / names["throughput 64B loss vs load"]["source"]).read_text()
    assert {"name": "topology", "value": "netns-router"} in measured["labels"]
    env = (out / "environment.properties").read_text()
    assert "topology=netns-router" in env and "pytest-netload=" in env


BASELINE_SUITE = """
    import os
    import pytest
    from pytest_netload.measure.recording import record_measurement

    @pytest.mark.netload
    def test_router():
        tput = float(os.environ.get("TPUT", "250000"))
        record_measurement("throughput", {
            "frame_size": 64, "throughput_pps": tput, "upper_pps": tput * 1.005,
            "method": "binary", "duration_s": 1.0, "loss_tolerance": 0.0, "trials": []})
"""


def test_a_baseline_catches_a_regression_and_tolerates_noise(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makepyfile(BASELINE_SUITE)
    result = pytester.runpytest("--netload-save-baseline=lab-1")
    result.assert_outcomes(passed=1)
    saved = pytester.path / "netload-results" / "baselines" / "lab-1.json"
    result.stdout.fnmatch_lines([f"netload: baseline saved to {saved}"])
    # within the search's resolution: noise, not a regression
    monkeypatch.setenv("TPUT", "250600")
    result = pytester.runpytest("--netload-baseline=lab-1")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*= netload baseline comparison =*",
                                 "baseline 'lab-1'*0 regressed*1 unchanged*"])
    # 10 % slower with a 0.5 % bracket: fails, with the comparison in the message
    monkeypatch.setenv("TPUT", "225000")
    result = pytester.runpytest("--netload-baseline=lab-1")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*regressed against baseline 'lab-1' beyond measurement noise*",
        "*test_router*throughput*64B*regressed*"])
    assert (pytester.path / "netload-results" / "baseline-comparison.json").exists()


def test_a_missing_or_corrupt_baseline_stops_the_run(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(BASELINE_SUITE)
    result = pytester.runpytest("--netload-baseline=nothing-here")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--netload-baseline: *nothing-here*"])
    folder = pytester.path / "netload-results" / "baselines"
    folder.mkdir(parents=True)
    (folder / "broken.json").write_text('{"schema_version": "1.0", "tests": [')
    result = pytester.runpytest("--netload-baseline=broken")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--netload-baseline: *broken.json*"])
    result = pytester.runpytest("--netload-baseline=../escape")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
