"""Quiet when unused: what a netload test is, and what a session without one sees of the
plugin (nothing). A CI job on the default topology says it measured a built-in DUT."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

pytest_plugins = ["pytester"]

# Runs in the inner session: each collected test's answer, one line each.
SHOW_SELECTION = """
from pytest_netload.plugin.selection import is_netload_test

def pytest_collection_finish(session):
    for item in session.items:
        print(f"SELECTED {item.name} {is_netload_test(item)}")
"""


def _selected(result: pytest.RunResult) -> dict[str, bool]:
    return {line.split()[1]: line.split()[2] == "True"
            for line in result.outlines if line.startswith("SELECTED ")}


def test_a_netload_test_uses_a_fixture_of_the_plugin_or_carries_its_marker(
        pytester: pytest.Pytester) -> None:
    pytester.makeconftest(SHOW_SELECTION + textwrap.dedent("""
        import pytest

        @pytest.fixture
        def my_ports(netload_ports):  # a fixture of the user's over one of ours
            return netload_ports

        @pytest.fixture
        def traffic():  # overrides ours and does not request it: the user's own
            return "mine"
    """))
    pytester.makepyfile(
        test_one=textwrap.dedent("""
            import pytest

            def test_ports(netload_ports): pass
            def test_through_my_fixture(my_ports): pass
            def test_rfc2544(rfc2544): pass
            def test_y1564(y1564): pass
            def test_dut(dut): pass
            @pytest.mark.netload
            def test_marker(): pass
            @pytest.mark.rfc2544(frame_sizes=[64])
            def test_rfc2544_marker(): pass
            def test_plain(): pass
            def test_own_traffic(traffic): pass
            def test_tmp(tmp_path): pass
            @pytest.mark.parametrize("dut", ["a", "b"])
            def test_argument_named_dut(dut): pass
        """),
        test_two=textwrap.dedent("""
            import pytest

            pytestmark = pytest.mark.rfc2889

            def test_module_marker(): pass
        """))
    result = pytester.runpytest("--collect-only", "-q")
    assert _selected(result) == {
        "test_ports": True, "test_through_my_fixture": True, "test_rfc2544": True,
        "test_y1564": True, "test_dut": True, "test_marker": True,
        "test_rfc2544_marker": True, "test_plain": False, "test_own_traffic": False,
        "test_tmp": False, "test_argument_named_dut[a]": False,
        "test_argument_named_dut[b]": False, "test_module_marker": True}


def test_a_session_without_netload_tests_sees_nothing_of_the_plugin(
        pytester: pytest.Pytester) -> None:
    """No output, no results, no sweep (as root: no namespace looked at), no SIGTERM
    handler, and nothing heavy imported: in a subprocess, as a user's session runs."""
    pytester.makeconftest(textwrap.dedent("""
        import signal, sys

        HEAVY = ("numpy", "scipy", "MLRsearch", "cffi", "pyroute2", "jinja2", "matplotlib")

        def pytest_configure(config):
            config._before = signal.getsignal(signal.SIGTERM)

        def pytest_sessionfinish(session):
            import pytest_netload.plugin as plugin
            handler = signal.getsignal(signal.SIGTERM)
            heavy = sorted({m.split(".")[0] for m in sys.modules} & set(HEAVY))
            print(f"CHECK handler-kept={handler is session.config._before} heavy={heavy} "
                  f"swept={plugin.SWEPT_KEY in session.config.stash}")
    """))
    pytester.makepyfile("def test_plain(): pass\ndef test_failing(): assert False\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-s")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*CHECK handler-kept=True heavy=[[]] swept=False"])
    assert "netload:" not in result.stdout.str()
    assert not (pytester.path / "netload-results").exists()


def test_the_verdict_and_the_results_count_netload_tests_only(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(textwrap.dedent("""
        import pytest

        @pytest.mark.netload
        def test_netload(): pass

        def test_plain_passes(): pass
        def test_plain_fails(): assert False
    """))
    result = pytester.runpytest()
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["netload: overall verdict PASS: 1 of 1 tests passed"])
    doc = json.loads((pytester.path / "netload-results" / "results.json").read_text())
    assert [t["nodeid"].split("::")[-1] for t in doc["tests"]] == ["test_netload"]
    assert doc["session"]["collected"] == 1


def test_the_header_comes_after_collection_and_only_for_netload_tests(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(textwrap.dedent("""
        import pytest

        @pytest.mark.netload
        def test_netload(): pass

        def test_plain(): pass
    """))
    result = pytester.runpytest("-k", "plain")
    assert "netload:" not in result.stdout.str()
    result = pytester.runpytest()
    result.stdout.fnmatch_lines(["collected 2 items", "netload: engine popen, topology *"])
    result = pytester.runpytest("--no-header")
    assert "netload: engine" not in result.stdout.str()
    result = pytester.runpytest("-q")
    assert "netload: engine" not in result.stdout.str()


def test_with_q_a_ci_job_on_the_built_in_dut_still_says_so(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    pytester.makepyfile("import pytest\n\n@pytest.mark.netload\ndef test_nothing(): pass\n")
    result = pytester.runpytest("-q")
    result.stdout.fnmatch_lines(["netload: engine *[[]built-in DUT, not your device[]]*"])


@pytest.mark.parametrize(("ci", "args", "noted"), [
    ("true", [], True),
    ("1", [], True),
    ("false", [], False),
    ("", [], False),
    ("true", ["--netload-topology=netns-shaped"], False),
    ("true", ["--netload-topology=netns-router"], False),  # given: the user's choice
])
def test_a_ci_job_on_the_default_topology_says_built_in_dut_not_your_device(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, ci: str,
        args: list[str], noted: bool) -> None:
    monkeypatch.setenv("CI", ci)
    pytester.makepyfile("import pytest\n\n@pytest.mark.netload\ndef test_nothing(): pass\n")
    result = pytester.runpytest(*args)
    result.assert_outcomes(passed=1)
    header = [line for line in result.outlines if line.startswith("netload: engine")]
    assert len(header) == 1
    assert ("[built-in DUT, not your device]" in header[0]) == noted, header
    doc = json.loads((pytester.path / "netload-results" / "results.json").read_text())
    assert (doc["settings"].get("topology_note") == "built-in DUT, not your device") == noted
    html = (pytester.path / "netload-results" / "report.html").read_text()
    assert ('id="topology-note">built-in DUT, not your device<' in html) == noted


def test_the_ini_key_is_a_given_topology(pytester: pytest.Pytester,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    pytester.makeini("[pytest]\nnetload_topology = netns-lossy\n")
    pytester.makepyfile("import pytest\n\n@pytest.mark.netload\ndef test_nothing(): pass\n")
    result = pytester.runpytest()
    assert "not your device" not in result.stdout.str()


def test_plugin_import_loads_no_heavy_package_and_few_modules() -> None:
    """`python -X importtime -c "import pytest_netload.plugin"`'s own modules: the
    plugin's options and errors, not the engine, numpy, MLRsearch or cffi."""
    code = ("import sys; import pytest; before = set(sys.modules); "
            "import pytest_netload.plugin; "
            "print(sorted(set(sys.modules) - before))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True)
    new = eval(out.stdout)  # noqa: S307 - our own print of a list of str
    assert all(m.startswith("pytest_netload") for m in new), new
    assert len(new) <= 10, new


def test_under_xdist_only_a_netload_session_shows_the_plugin(pytester: pytest.Pytester) -> None:
    """The controller collects nothing: its workers' first netload test (a report that
    says so) makes the session netload's; without one it stays silent."""
    pytest.importorskip("xdist")
    pytester.makepyfile(test_plain="def test_a(): pass\ndef test_b(): pass\n")
    result = pytester.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    assert "netload:" not in result.stdout.str()
    assert not (pytester.path / "netload-results").exists()
    pytester.makepyfile(test_marked="import pytest\n\n@pytest.mark.netload\ndef test_m(): pass\n")
    result = pytester.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["netload: engine popen, topology *",
                                 "netload: overall verdict PASS: 1 of 1 tests passed"])
