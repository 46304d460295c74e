"""--netload-history DIR: each session adds its results.json to DIR, and the report shows
every figure's trend over the sessions there and this one; bad values stop the session
naming the option."""

from __future__ import annotations

import json

import pytest

pytest_plugins = ["pytester"]

SUITE = """
    import os
    import pytest
    from pytest_netload.measure.recording import record_measurement

    @pytest.mark.netload
    def test_router():
        tput = float(os.environ.get("TPUT", "250000"))
        record_measurement("throughput", {   # every field the report's schema wants
            "frame_size": 64, "mean_frame_size": 64.0, "throughput_pps": tput,
            "throughput_bps_l1": tput * 672, "throughput_bps_l2": tput * 512,
            "upper_pps": tput * 1.005, "max_pps": 1488095.0, "line_rate_bps": 1e9,
            "line_rate_ratio": tput * 672 / 1e9, "generator_ceiling_pps": None,
            "method": "binary", "duration_s": 1.0, "loss_tolerance": 0.0, "trials": []})
"""


def test_sessions_build_a_history_and_the_report_shows_its_trends(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makepyfile(SUITE)
    history = pytester.path / "history"
    pytester.runpytest(f"--netload-history={history}").assert_outcomes(passed=1)
    first = sorted(history.glob("*.json"))
    assert len(first) == 1 and json.loads(first[0].read_text())["schema_version"]
    report = (pytester.path / "netload-results" / "report.html").read_text()
    assert 'id="trend-table"' not in report  # one session is no trend yet
    for tput in ("250500", "249800", "200000", "199700"):
        monkeypatch.setenv("TPUT", tput)
        pytester.runpytest(f"--netload-history={history}").assert_outcomes(passed=1)
    assert len(list(history.glob("*.json"))) == 5
    report = (pytester.path / "netload-results" / "report.html").read_text()
    assert 'id="trend-table"' in report and "Trends over 5 runs" in report
    assert "<svg" in report.split('id="trend-table"', 1)[1]


def test_a_history_that_is_a_file_stops_the_session(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(SUITE)
    (pytester.path / "h.json").write_text("{}")
    result = pytester.runpytest("--netload-history=h.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--netload-history h.json: not a directory*"])


def test_a_broken_file_in_the_history_leaves_the_trends_out_not_the_results(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(SUITE)
    history = pytester.path / "history"
    history.mkdir()
    (history / "broken.json").write_text("{not json")
    result = pytester.runpytest(f"--netload-history={history}")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*trends left out of the report*broken.json*"])
    assert (pytester.path / "netload-results" / "results.json").exists()
    assert len(list(history.glob("results-*.json"))) == 1
