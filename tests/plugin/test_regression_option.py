"""--netload-regression (ini netload_regression): a threshold that joins the noise-band rule
of --netload-baseline, and bad values that stop the session naming the option and the fix."""

from __future__ import annotations

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


@pytest.fixture
def saved(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    pytester.makepyfile(SUITE)
    pytester.runpytest("--netload-save-baseline=lab-1").assert_outcomes(passed=1)
    monkeypatch.setenv("TPUT", "240000")   # 4 % slower: beyond the 0.5 % bracket
    return pytester


def test_a_change_beyond_the_noise_but_within_the_threshold_passes(saved: pytest.Pytester) -> None:
    result = saved.runpytest("--netload-baseline=lab-1", "--netload-regression=5%")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([
        "*regression threshold 5%*",   # the session header
        "baseline 'lab-1'*0 regressed*1 unchanged*(regression threshold 5%)",
        # shown without -v: a change the threshold spared is still a change
        "*throughput*unchanged (worse beyond the noise, but within the 5% threshold)*"])
    report = (saved.path / "netload-results" / "report.html").read_text()
    assert 'id="baseline-table"' in report and "within the 5% threshold" in report


def test_a_change_worse_than_the_threshold_fails(saved: pytest.Pytester) -> None:
    result = saved.runpytest("--netload-baseline=lab-1", "--netload-regression=3%")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        ("*regressed against baseline 'lab-1' beyond measurement noise*and worse than the 3% "
         "regression threshold*"),
        "*test_router*throughput*64B*regressed*"])
    report = (saved.path / "netload-results" / "report.html").read_text()
    assert '<span class="badge FAIL">regressed</span>' in report


def test_the_ini_key_sets_the_threshold(saved: pytest.Pytester) -> None:
    saved.makeini("[pytest]\nnetload_regression = 5%\n")
    saved.runpytest("--netload-baseline=lab-1").assert_outcomes(passed=1)
    saved.runpytest("--netload-baseline=lab-1",
                    "--netload-regression=1%").assert_outcomes(failed=1)   # CLI over ini


@pytest.mark.parametrize(("value", "words"), [
    ("5", "'5' has no % sign: give the threshold as a percentage, such as 5%"),
    ("x%", "'x%' is not a percentage: give a number with a % sign, such as 5%"),
    ("-5%", "'-5%': a threshold cannot be negative; give 0% or more, such as 5%")])
def test_a_bad_threshold_stops_the_session_naming_the_option(
        pytester: pytest.Pytester, value: str, words: str) -> None:
    pytester.makepyfile(SUITE)
    result = pytester.runpytest(f"--netload-regression={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--netload-regression: {words}*"])
    pytester.makeini(f"[pytest]\nnetload_regression = {value}\n")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*ini key netload_regression: {words}*"])
