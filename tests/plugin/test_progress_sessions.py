"""The live progress line in whole sessions on the fake engine, at the procedures'
defaults (60 s trials, 20 trials at most) under a simulated clock: a line per trial off
a terminal, one line rewritten in place on one, nothing with -q, xdist workers' lines on
the controller, allure's steps timed as the trials ran, and Ctrl-C mid-search."""

from __future__ import annotations

import json
import re

import pytest

pytest_plugins = ["pytester"]

FAKE = "--netload-engine=fake:capacity_pps=50000,loss_ratio=0,delay_s=100e-6,buffer_frames=1000"

# The engine's runs move a simulated clock on by what they sent for plus 2 s of overhead
# (drain, setup): a 60 s trial reads as 62 s, though the fake works it out in milliseconds.
CONFTEST = """
    import pytest
    from pytest_netload.bench import progress

    class SimulatedClock:
        def __init__(self):
            self.t = 0.0

        def __call__(self):
            return self.t

        def ran(self, run):
            spans = [s.tx_last_ns - s.tx_first_ns for s in run.streams if s.tx_packets]
            self.t += max(spans, default=0) / 1e9 + 2.0

    @pytest.fixture(autouse=True)
    def simulated_clock(request):
        sim = SimulatedClock()
        if "netload_engine" in request.fixturenames:
            request.getfixturevalue("netload_engine").observers.append(sim.ran)
        with progress.clock(sim):
            yield sim
"""

TTY_CONFTEST = CONFTEST + """
    @pytest.hookimpl(trylast=True)
    def pytest_configure(config):
        from _pytest.compat import CallableBool

        config.pluginmanager.get_plugin("terminalreporter").isatty = CallableBool(True)
"""

SEARCH = """
    import pytest

    @pytest.mark.rfc2544(frame_sizes=[64])
    def test_router(rfc2544):
        rfc2544.throughput()
"""

SPT = """
    import pytest

    @pytest.mark.y1564(services=[{"name": "data", "cir": "10Mbit/s", "sac": {"flr": "0.1%"}}],
                       spt_duration="120s")
    def test_service(y1564):
        y1564.run()
"""


def _trial_lines(out: str) -> list[str]:
    return [line for line in re.split(r"[\r\n]", out) if "| throughput | trial" in line]


def test_off_a_terminal_a_search_prints_a_line_per_trial_with_n_of_n_and_eta(
        pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(SEARCH)
    result = pytester.runpytest_subprocess(FAKE, "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([
        "netload: test_router | 64B | throughput | at most 20 trials | ETA ~10:00, "
        "elapsed 0:00",
        "netload: test_router | 64B | throughput | trial 1 of at most 20 | ETA ~9:18, elapsed "
        "1:02 | [[]0 pps, 14.88 Mpps[]] width 14.88 Mpps, to 0.5% of the lower bound | offered "
        "14.88 Mpps | loss 99.66%",
        "*| trial 10 of at most 20 | ETA ~8:16, elapsed 10:20 | [[]29.06 kpps, 58.13 kpps[]] "
        "width 100.0% of lo, to 0.5% | offered 29.06 kpps | loss 0",
        "*| trial 17 of at most 20 | ETA ~0:00, elapsed 17:34 | [[]49.95 kpps, 50.18 kpps[]] "
        "width 0.4545% of lo, to 0.5% |*",
    ])
    assert len(_trial_lines(result.stdout.str())) == 17


def test_on_a_terminal_the_line_is_rewritten_in_place(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(TTY_CONFTEST)
    pytester.makepyfile(SEARCH)
    result = pytester.runpytest_subprocess(FAKE, "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    with open(pytester.path / "stdout", newline="") as f:  # as written, "\r" kept
        out = f.read()
    drawn = _trial_lines(out)
    assert len(drawn) == 17
    assert all(len(line) < 80 for line in drawn[:-1])  # clipped to the width: never wraps
    # one line: each trial returns to its start ("\r") instead of starting a new line
    assert "\nnetload: test_router | 64B | throughput | trial" not in out
    assert "\rnetload: test_router | 64B | throughput | trial 17 of at most 20" in out


def test_quiet_sessions_show_no_progress(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(TTY_CONFTEST)
    pytester.makepyfile(SEARCH)
    result = pytester.runpytest_subprocess(FAKE, "-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=1)
    assert "| throughput |" not in result.stdout.str()


def test_a_y1564_run_shows_its_steps_and_its_spt_intervals_with_availability(
        pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(SPT)
    result = pytester.runpytest_subprocess(FAKE, "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([
        "netload: test_service | 512B | Y.1564 SCT data | 5 steps | ETA 0:50, elapsed 0:00",
        "netload: test_service | 512B | Y.1564 SCT data | step 1 of 5 CIR 25% | ETA *, "
        "elapsed * | offered 2.500 Mbit/s | loss 0",
        "netload: test_service | 512B | Y.1564 SCT data | step 5 of 5 policing | ETA 0:00, *",
        "netload: test_service | Y.1564 SPT | 120 intervals | ETA 2:00, elapsed 0:00",
        # the SPT is one engine run and the simulated clock moves when a run ends: every
        # interval reports at the same (simulated) time, so one line, the last
        "netload: test_service | Y.1564 SPT | interval 120 of 120 | ETA 0:00, * | "
        "availability data 100.0%",
    ])
    assert len(re.findall(r"\| interval \d+ of 120", result.stdout.str())) == 1


def test_xdist_workers_show_their_progress_on_the_controller(pytester: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(SEARCH)
    result = pytester.runpytest_subprocess(FAKE, "-p", "no:cacheprovider", "-n", "1",
                                           "-p", "no:randomly")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([
        "[[]gw0[]] netload: test_router | 64B | throughput | trial 1 of at most 20 |*",
        "[[]gw0[]] netload: test_router | 64B | throughput | trial 17 of at most 20 |*",
        "*1 passed*",
    ])
    quiet = pytester.runpytest_subprocess(FAKE, "-p", "no:cacheprovider", "-n", "1", "-q")
    quiet.assert_outcomes(passed=1)
    assert "[gw0] netload:" not in quiet.stdout.str()


def test_ctrl_c_mid_search_is_incomplete_with_the_trials_measured(
        pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST + """
    @pytest.fixture(autouse=True)
    def interrupt_after_trial_5(request, simulated_clock):
        runs = []

        def ran(run):
            runs.append(run)
            if len(runs) == 5:  # learning frames, calibration... then trials
                raise KeyboardInterrupt

        request.getfixturevalue("netload_engine").observers.append(ran)
    """)
    pytester.makepyfile(SEARCH)
    result = pytester.runpytest_subprocess(FAKE, "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines([
        "*| throughput | trial 3 of at most 20 |*",
        "netload: overall verdict INCOMPLETE: 0 of 1 tests ran (interrupted: *KeyboardInterrupt*)",
    ])
    assert "trial 4 of" not in result.stdout.str()


def test_allure_steps_open_and_close_as_the_trials_run(pytester: pytest.Pytester) -> None:
    pytest.importorskip("allure_pytest")
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile("""
        import pytest

        @pytest.mark.rfc2544(frame_sizes=[64])
        def test_router(rfc2544):
            tput = rfc2544.throughput()
            rfc2544.latency(throughput=tput, trials=2, duration="1s")
    """)
    result = pytester.runpytest_subprocess(FAKE, "-p", "no:cacheprovider",
                                           "--alluredir=allure")
    result.assert_outcomes(passed=1)
    (res,) = [json.loads(p.read_text()) for p in (pytester.path / "allure").glob(
        "*-result.json")]
    procedures = res["steps"]
    assert [s["name"] for s in procedures] == ["throughput 64B (at most 20 trials)",
                                               "latency 64B (2 trials)"]
    search = procedures[0]["steps"]
    assert len(search) == 17
    assert search[0]["name"] == "trial 1: 14,880,952 pps"
    assert search[0]["steps"][0]["name"].startswith("loss 99.66%, failed, bracket [0 pps, ")
    assert search[9]["steps"][0]["name"] == "loss 0, passed, bracket [29.06 kpps, 58.13 kpps]"
    for step in search:  # each trial's own time, in order, inside its procedure's
        assert step["start"] <= step["stop"]
        assert procedures[0]["start"] <= step["start"] and step["stop"] <= procedures[0]["stop"]
    assert all(a["stop"] <= b["start"] for a, b in zip(search, search[1:]))
    labels = {(lab["name"], lab["value"]) for lab in res["labels"]}
    assert {("standard", "RFC 2544"), ("frame_size", "64B"), ("dut_name", "fake")} <= labels
    names = {a["name"] for a in res["attachments"]}
    assert {"latency percentiles", "throughput 64B trials.csv", "netload record"} <= names
    (svg,) = [a for a in res["attachments"] if a["name"] == "latency percentiles"]
    assert (pytester.path / "allure" / svg["source"]).read_text().startswith("<svg xmlns=")
