"""The pytest_netload_* hooks on the fake engine: they run around every trial, their
answers reach the records, the reports and the failure messages, and a hook that raises,
answers the wrong type or hangs errors its test, naming the hook and its plugin, while
the session goes on. (tests/integration/test_loss_attribution.py checks the built-in
DUTs' counters on the real engine; conftest_examples/dut_hooks runs them end to end.)"""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_netload.reports.load import load

pytest_plugins = ["pytester"]

FAKE = "--netload-engine=fake:capacity_pps=50000,loss_ratio=0,delay_s=100e-6,buffer_frames=1000"
SHORT = 'frame_sizes=[64], trial_duration="1s", max_trials=6, resolution=0.1'

CONFTEST = """
    import json, os, time
    from pytest_netload import DutCounter, DutHealth

    CALLS = []
    DROPS = [0]

    def _log(what):
        with open("calls.log", "a") as f:
            f.write(what + "\\n")

    def pytest_netload_dut_info(dut):
        return {"firmware": "9.9.9", "hooks": "conftest"}

    def pytest_netload_before_trial(trial, dut):
        _log(f"before {trial.procedure} {trial.number} {trial.phase}")

    def pytest_netload_dut_counters(trial, dut):
        DROPS[0] += 7 if trial.phase == "after" else 0
        _log(f"counters {trial.phase}")
        return [DutCounter("drops", DROPS[0], "queue_drop", "egress queue q0"),
                DutCounter("forwarded", 1000 + DROPS[0], "info", "port 1")]

    def pytest_netload_dut_health(trial, dut, result):
        _log(f"health {trial.number} {result.lost}")
        return None

    def pytest_netload_report_sections(config, results):
        return [("DUT software", f"{len(results['tests'])} tests on firmware 9.9.9")]
"""


def _results(pytester: pytest.Pytester) -> dict[str, Any]:
    path = pytester.path / "netload-results" / "results.json"
    load(path)  # valid against the schema
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def _calls(pytester: pytest.Pytester) -> list[str]:
    path = pytester.path / "calls.log"
    return path.read_text().splitlines() if path.exists() else []


def test_hooks_run_around_every_trial_and_reach_the_reports(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_dut=f"""
        import pytest
        from pytest_netload import assert_throughput

        @pytest.mark.rfc2544({SHORT}, dut_health=True)
        def test_above_capacity(rfc2544):
            assert_throughput(rfc2544.throughput(), at_least="60kpps")
    """)
    result = pytester.runpytest(FAKE, "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    # the failure message says where the frames of the lowest lossy load went
    result.stdout.fnmatch_lines(["*where: at * pps: lost *: 7 dropped by the DUT's egress "
                                 "queue (egress queue q0), * unaccounted*"])
    calls = _calls(pytester)
    trials = [c for c in calls if c.startswith("before throughput")]
    assert trials and all(c.endswith(" before") for c in trials)
    # per trial: before_trial, counters before, counters after, health (in that order)
    first = calls.index(trials[0])
    assert calls[first:first + 4] == [trials[0], "counters before", "counters after",
                                      calls[first + 3]]
    assert calls[first + 3].startswith("health 1 ")
    data = _results(pytester)
    assert data["topology"]["dut"]["firmware"] == "9.9.9"
    assert data["report_sections"] == [{"title": "DUT software", "plugin": data[
        "report_sections"][0]["plugin"], "text": "1 tests on firmware 9.9.9"}]
    assert data["report_sections"][0]["plugin"].endswith("conftest.py")
    (tp,) = [m for m in data["tests"][0]["measurements"] if m["kind"] == "throughput"]
    assert len(tp["trials"]) == len(trials)
    for t in tp["trials"]:
        table = t["loss_attribution"]
        assert table["counters"] == {"drops (egress queue q0)": 7,
                                     "forwarded (port 1)": 7}
        assert t["dut_health"] == "ok"
        if t["lost"]:
            assert table["rows"][0] == {"kind": "queue_drop", "frames": 7, "counter": "drops",
                                        "where": "egress queue q0",
                                        "what": "dropped by the DUT's egress queue"}
            assert table["unaccounted"] == t["lost"] - 7
    report = (pytester.path / "netload-results" / "report.html").read_text()
    assert "Where lost frames went" in report and "DUT software" in report
    assert "7 dropped by the DUT&#39;s egress queue (egress queue q0)" in report


def test_health_checks_are_off_unless_asked(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_dut=f"""
        import pytest

        @pytest.mark.rfc2544({SHORT})
        def test_off(rfc2544):
            rfc2544.throughput()
    """)
    pytester.runpytest(FAKE, "-p", "no:cacheprovider").assert_outcomes(passed=1)
    assert not [c for c in _calls(pytester) if c.startswith("health")]
    # the ini key turns them on for every test
    pytester.makeini("[pytest]\nnetload_dut_health = true\n")
    pytester.runpytest(FAKE, "-p", "no:cacheprovider").assert_outcomes(passed=1)
    assert [c for c in _calls(pytester) if c.startswith("health")]


def test_an_unhealthy_trial_is_invalid_and_retried(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("""
        from pytest_netload import DutHealth
        SEEN = []

        def pytest_netload_dut_health(trial, dut, result):
            SEEN.append(trial.number)
            return DutHealth.invalid("DUT rebooted") if len(SEEN) == 1 else None
    """)
    pytester.makepyfile(test_dut=f"""
        import pytest

        @pytest.mark.rfc2544({SHORT}, dut_health=True)
        def test_retried(rfc2544):
            rfc2544.throughput()
    """)
    pytester.runpytest(FAKE, "-p", "no:cacheprovider").assert_outcomes(passed=1)
    (tp,) = [m for m in _results(pytester)["tests"][0]["measurements"]
             if m["kind"] == "throughput"]
    first, second = tp["trials"][:2]
    assert (first["valid"], first["invalid_reason"], first["dut_health"]) == \
        (False, "DUT health: DUT rebooted", "DUT rebooted")
    assert second["offered_pps"] == first["offered_pps"] and second["valid"]


def test_a_failed_health_check_fails_the_test_with_its_reason(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("""
        from pytest_netload import DutHealth

        def pytest_netload_dut_health(trial, dut, result):
            return DutHealth.failed("kernel: BUG: soft lockup on CPU#1")
    """)
    pytester.makepyfile(test_dut=f"""
        import pytest

        @pytest.mark.rfc2544({SHORT}, dut_health=True)
        def test_failed(rfc2544):
            rfc2544.throughput()
    """)
    result = pytester.runpytest(FAKE, "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*DutHealthFailure: DUT health check of *conftest.py failed "
                                 "after throughput trial 1 (64B at *): kernel: BUG: soft "
                                 "lockup on CPU#1*"])
    (rec,) = [m for m in _results(pytester)["tests"][0]["measurements"]
              if m["kind"] == "dut_health"]
    assert rec["reason"] == "kernel: BUG: soft lockup on CPU#1"
    assert rec["result"]["tx_packets"] > 0  # the trial measured is kept


BAD = {
    "raises": ("""
        def pytest_netload_before_trial(trial, dut):
            if trial.test == "test_first":
                raise ValueError("the DUT's CLI is gone")
    """, "pytest_netload_before_trial of plugin '*conftest.py' raised ValueError: the DUT's "
         "CLI is gone"),
    "wrong type": ("""
        def pytest_netload_dut_counters(trial, dut):
            if trial.test == "test_first":
                return {"drops": 1}
    """, "pytest_netload_dut_counters of plugin '*conftest.py' returned dict {'drops': 1}: "
         "return a list of pytest_netload.DutCounter, or None"),
    "bad health answer": ("""
        def pytest_netload_dut_health(trial, dut, result):
            if trial.test == "test_first":
                return 42
    """, "pytest_netload_dut_health of plugin '*conftest.py' returned int 42: return None, "
         "a DutHealth*"),
    "slow": ("""
        import time

        def pytest_netload_before_trial(trial, dut):
            if trial.test == "test_first":
                time.sleep(3)
    """, "pytest_netload_before_trial of plugin '*conftest.py' did not return within "
         "*(the hook timeout)*--netload-hook-timeout*"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_a_bad_hook_errors_its_test_and_the_session_goes_on(
        pytester: pytest.Pytester, case: str) -> None:
    conftest, message = BAD[case]
    pytester.makeconftest(conftest)
    pytester.makepyfile(test_dut=f"""
        import pytest

        @pytest.mark.rfc2544({SHORT}, dut_health=True)
        def test_first(rfc2544):
            rfc2544.throughput()

        @pytest.mark.rfc2544({SHORT}, dut_health=True)
        def test_second(rfc2544):
            rfc2544.throughput()
    """)
    result = pytester.runpytest(FAKE, "-p", "no:cacheprovider", "-rA",
                                "--netload-hook-timeout=0.5s")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines([f"*NetloadHookError: {message}"])
    tests = {t["nodeid"].split("::")[-1]: t for t in _results(pytester)["tests"]}
    assert tests["test_first"]["outcome"] == "error"
    assert tests["test_second"]["outcome"] == "passed"


def test_reset_uses_the_reset_hook_when_given_no_callable(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("""
        import pytest

        @pytest.hookimpl(tryfirst=True)
        def pytest_netload_dut_reset(dut):
            with open("reset.log", "a") as f:
                f.write("reset\\n")
            return True
    """)
    pytester.makepyfile(test_dut="""
        import pytest

        @pytest.mark.rfc2544(frame_sizes=[64])
        def test_reset(rfc2544):
            # what rfc2544.reset() calls `at` into its traffic when given no callable (the
            # fake engine runs no clock for it to be due: conftest_examples/dut_hooks
            # resets a built-in DUT that way on the real engine)
            rfc2544.reset_hook()()
    """)
    pytester.runpytest(FAKE, "-p", "no:cacheprovider").assert_outcomes(passed=1)
    assert (pytester.path / "reset.log").read_text() == "reset\n"


def test_reset_without_callable_or_hook_errors_naming_the_hook(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_dut="""
        import pytest

        @pytest.mark.rfc2544(frame_sizes=[64])
        def test_reset(rfc2544):
            rfc2544.reset_hook()()
    """)
    result = pytester.runpytest(FAKE, "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*no pytest_netload_dut_reset implementation reset this DUT*"
                                 "pass a callable to rfc2544.reset()*"])


def test_dut_health_marker_value_is_checked(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_dut="""
        import pytest

        @pytest.mark.rfc2544(frame_sizes=[64], dut_health="yes")
        def test_bad(rfc2544):
            pass
    """)
    result = pytester.runpytest(FAKE, "-p", "no:cacheprovider")
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*dut_health='yes': give True*"])


def test_hook_wrappers_are_refused_by_name(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("""
        import pytest

        @pytest.hookimpl(wrapper=True)
        def pytest_netload_before_trial(trial, dut):
            return (yield)
    """)
    pytester.makepyfile(test_dut=f"""
        import pytest

        @pytest.mark.rfc2544({SHORT})
        def test_wrapped(rfc2544):
            rfc2544.throughput()
    """)
    result = pytester.runpytest(FAKE, "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*pytest_netload_before_trial of plugin '*conftest.py' is a "
                                 "hook wrapper*"])
