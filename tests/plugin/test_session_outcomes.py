"""How a session's end shows: an engine crash is an ERROR (not a DUT's FAIL) that costs
one test, an interrupted session is INCOMPLETE, and results.json is written for every
netload session, measured or not. No engine runs here (tests/integration/test_crash_recovery.py
crashes a real one)."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_netload.engine.client import Port
from pytest_netload.bench.harness import WiredPorts
from pytest_netload.errors import EngineCrashed

pytest_plugins = ["pytester"]

CRASHING = """
    import pytest
    from pytest_netload.errors import EngineCrashed
    from pytest_netload.measure.recording import record_measurement

    @pytest.mark.netload
    def test_before():
        pass

    @pytest.mark.netload
    def test_crash():
        raise EngineCrashed("engine host died or hung during 'run_poll' (EOFError: ); "
                            "its log is /tmp/x/engine.log", "EAL: ready\\nSegmentation fault")

    @pytest.mark.netload
    def test_after():
        pass

    @pytest.mark.netload
    def test_dut_fails():
        record_measurement("traffic", {"pattern": "cbr", "offered_pps": 1.0, "streams": [],
                                       "duration_s": 1.0})
        assert False, "a DUT verdict"
"""


def _results(pytester: pytest.Pytester) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (pytester.path / "netload-results" / "results.json").read_text())
    return data


def test_an_engine_crash_is_an_error_listed_everywhere(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_crashing=CRASHING)
    result = pytester.runpytest("-rA")
    result.assert_outcomes(passed=2, failed=1, errors=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    out = result.stdout.str()
    result.stdout.fnmatch_lines([
        "*ERROR at call of test_crash*",
        "*EngineCrashed: engine host died or hung during 'run_poll'*",
        "*Segmentation fault*",
        ("netload: the engine host died in test_crashing.py::test_crash (ERROR, not "
         "a DUT verdict): engine host died or hung during 'run_poll'*; later tests ran on a "
         "fresh engine host"),
        "netload: overall verdict FAIL: 1 of 4 tests failed (1 errored; the engine crashed "
        "in 1 test)",
    ])
    assert "FAILED test_crashing.py::test_crash" not in out
    doc = _results(pytester)
    outcomes = {t["nodeid"].split("::")[1]: t for t in doc["tests"]}
    assert [t["outcome"] for t in doc["tests"]] == ["passed", "error", "passed", "failed"]
    assert "Segmentation fault" in outcomes["test_crash"]["error"]
    assert "error" not in outcomes["test_dut_fails"]
    assert doc["session"]["engine_crashes"] == ["test_crashing.py::test_crash"]
    assert (doc["session"]["collected"], doc["session"]["ran"]) == (4, 4)
    assert doc["session"]["exit_status"] == 1 and doc["session"]["interrupted"] is False
    page = (pytester.path / "netload-results" / "report.html").read_text()
    assert '<td id="engine-crashes"><code>test_crashing.py::test_crash</code>' in page


def test_results_are_written_when_nothing_was_measured(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
        import pytest

        @pytest.mark.rfc2544(trial_duration="1s")
        def test_nothing_measured():
            pass
    """)
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    doc = _results(pytester)
    assert [t["outcome"] for t in doc["tests"]] == ["passed"]
    result.stdout.fnmatch_lines(["netload: overall verdict PASS: 1 of 1 tests passed"])


def test_a_session_without_netload_tests_writes_nothing(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_plain(): pass")
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    assert not (pytester.path / "netload-results").exists()
    assert "overall verdict" not in result.stdout.str()


def test_collect_only_writes_nothing(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(CRASHING)
    pytester.runpytest("--collect-only")
    assert not (pytester.path / "netload-results").exists()


def test_an_interrupted_session_is_incomplete(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
        import pytest

        pytestmark = pytest.mark.netload

        def test_1(): pass
        def test_2(): raise KeyboardInterrupt
        def test_3(): pass
        def test_4(): pass
        def test_5(): pass
    """)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines([
        "netload: overall verdict INCOMPLETE: 1 of 5 tests ran (interrupted: *KeyboardInterrupt*)"])
    doc = _results(pytester)
    session = doc["session"]
    assert session["interrupted"] is True and session["exit_status"] == 2
    assert session["exit_status_name"] == "INTERRUPTED"
    assert (session["collected"], session["ran"]) == (5, 1)
    assert "KeyboardInterrupt" in session["stop_reason"]
    page = (pytester.path / "netload-results" / "report.html").read_text()
    assert '<div class="word">INCOMPLETE</div>' in page
    assert "1 of 5 tests ran" in page


def test_stopping_early_leaves_tests_not_run(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
        import pytest

        pytestmark = pytest.mark.netload

        def test_1(): pass
        def test_2(): assert False
        def test_3(): pass
    """)
    result = pytester.runpytest("-x")
    result.assert_outcomes(passed=1, failed=1)
    doc = _results(pytester)
    assert (doc["session"]["collected"], doc["session"]["ran"]) == (3, 2)
    result.stdout.fnmatch_lines([
        "netload: overall verdict FAIL: 1 of 3 tests failed (stopping after 1 failures; "
        "1 not run)"])


@pytest.mark.parametrize(("where", "args", "marker"), [
    ("marker", [], '@pytest.mark.rfc2544(trial_duration="1ns")'),
    ("option", ["--netload-trial-duration=1ns"], ""),
])
def test_a_trial_shorter_than_1ms_is_refused_before_traffic(
        pytester: pytest.Pytester, where: str, args: list[str], marker: str) -> None:
    pytester.makepyfile(f"""
        import pytest

        {marker}
        def test_x(rfc2544):
            pass
    """)
    result = pytester.runpytest(*args)
    text = result.stdout.str() + result.stderr.str()
    assert "trial_duration '1ns' is 1ns, shorter than a trial may be (1ms" in text or \
        "trial duration '1ns' is 1ns, shorter than a trial may be (1ms" in text
    if where == "option":
        assert result.ret == pytest.ExitCode.USAGE_ERROR
    else:
        result.assert_outcomes(errors=1)


# ---- fresh ports after a crash -------------------------------------------------------------


def test_ports_of_an_ended_engine_host_are_opened_again() -> None:
    engine = SimpleNamespace(_generation=1, alive=True)
    opened: list[int] = []

    def reopen(into: dict[str, Port]) -> None:
        opened.append(engine._generation)
        into["p0"] = Port(engine, 0, "net_null0", {}, engine._generation)  # type: ignore[arg-type]

    topo: Any = None  # refresh() never looks at the wiring
    wired = WiredPorts(topo, {}, reopen=reopen)
    reopen(wired.ports)
    assert not wired.stale and not wired.refresh() and opened == [1]
    engine.alive = False          # the host crashed
    assert wired.stale and not wired.ports["p0"].alive
    engine._generation, engine.alive = 2, True  # what Engine.port() does on the next call
    assert wired.refresh() and opened == [1, 2]
    assert wired.ports["p0"].alive and wired.ports["p0"].generation == 2
    assert not wired.refresh()
    assert WiredPorts(topo, dict(wired.ports)).refresh() is False  # no opener: left as is


def test_a_crash_while_opening_the_ports_errors_one_test_not_the_session() -> None:
    """The session fixture keeps the crash instead of raising it (pytest would cache the
    error for every later test): the test being set up gets it, the next one reopens."""
    engine = SimpleNamespace(_generation=2, alive=True)
    crash = EngineCrashed("engine host died or hung during 'port'")

    def reopen(into: dict[str, Port]) -> None:
        into["p0"] = Port(engine, 0, "net_null0", {}, engine._generation)  # type: ignore[arg-type]

    topo: Any = None
    wired = WiredPorts(topo, {}, reopen=reopen, pending_crash=crash)
    assert wired.stale
    with pytest.raises(EngineCrashed, match="during 'port'"):
        wired.refresh()                       # the test being set up: ERROR
    assert wired.pending_crash is None
    assert wired.refresh() and wired.ports["p0"].alive  # the next test: fresh ports


def test_junit_xml_files_an_engine_crash_as_an_error(pytester: pytest.Pytester) -> None:
    """CI dashboards read JUnit XML: a crash there is an <error>, the DUT's FAIL a
    <failure>, and the suite's counters agree."""
    import xml.etree.ElementTree as ET

    pytester.makepyfile(test_crashing=CRASHING)
    pytester.runpytest("--junitxml=junit.xml").assert_outcomes(passed=2, failed=1, errors=1)
    suite = ET.parse(pytester.path / "junit.xml").getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("errors"), suite.get("failures"), suite.get("tests")) == ("1", "1", "4")
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    crash = cases["test_crash"].find("error")
    assert crash is not None and cases["test_crash"].find("failure") is None
    assert crash.get("message", "").startswith("engine crashed (not a DUT verdict): ")
    assert "Segmentation fault" in (crash.text or "")
    assert cases["test_dut_fails"].find("failure") is not None
    assert cases["test_before"].find("error") is None


def test_a_test_whose_every_trial_was_invalid_is_an_error(pytester: pytest.Pytester) -> None:
    """InvalidTrial means the generator, not the DUT, failed (e.g. a busy machine took its
    CPU): ERROR in the summary, JUnit XML and results.json, never the DUT's FAIL."""
    import json
    import xml.etree.ElementTree as ET

    pytester.makepyfile(test_invalid="""
        import pytest
        from pytest_netload import InvalidTrial

        pytestmark = pytest.mark.netload

        def test_invalid():
            raise InvalidTrial("every trial of the throughput search at 64B was invalid: "
                               "its worker was off its CPU for 182.1 ms in 44 preemptions")

        def test_dut_fails():
            assert False, "throughput below the requirement"
    """)
    result = pytester.runpytest("--junitxml=junit.xml", "--netload-report-dir=out")
    result.assert_outcomes(failed=1, errors=1)
    suite = ET.parse(pytester.path / "junit.xml").getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("errors"), suite.get("failures")) == ("1", "1")
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    error = cases["test_invalid"].find("error")
    assert error is not None and error.get("message", "").startswith(
        "every trial invalid (not a DUT verdict): ")
    tests = {t["nodeid"].split("::")[-1]: t
             for t in json.loads((pytester.path / "out" / "results.json").read_text())["tests"]}
    assert tests["test_invalid"]["outcome"] == "error"
    assert "44 preemptions" in tests["test_invalid"]["error"]
    assert tests["test_dut_fails"]["outcome"] == "failed"
