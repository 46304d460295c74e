"""SIGTERM unwinds a session like Ctrl-C (finalizers run, status 2); the handler goes at
unconfigure; a session's start sweeps partial report files of dead writers and says so."""

from __future__ import annotations

import os
import signal
import subprocess

import pytest

from pytest_netload.plugin.cleanup import SigtermHandler, Terminated

pytest_plugins = ["pytester"]

KILLED_SUITE = """
import os, signal, time
import pytest

pytestmark = pytest.mark.netload  # a netload session: the handler is installed

@pytest.fixture(scope="session")
def resource():
    yield
    os.kill(os.getpid(), signal.SIGTERM)  # a second SIGTERM must not cut the cleanup short
    time.sleep(0.2)
    with open(os.environ["NETLOAD_MARK"], "w") as f:
        f.write("finalized")

def test_killed(resource):
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(30)

def test_never_runs():
    pass
"""


def test_sigterm_runs_the_finalizers_and_interrupts(pytester: pytest.Pytester,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    mark = pytester.path / "mark"
    monkeypatch.setenv("NETLOAD_MARK", str(mark))
    pytester.makepyfile(KILLED_SUITE)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=60)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*Terminated: SIGTERM: pytest-netload stopped the session*"])
    assert mark.read_text() == "finalized"
    assert "test_never_runs PASSED" not in result.stdout.str()


def test_sigterm_without_the_plugin_kills_at_once(pytester: pytest.Pytester,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The same suite with -p no:netload: the default action, no finalizer (what the
    handler is there to change)."""
    mark = pytester.path / "mark"
    monkeypatch.setenv("NETLOAD_MARK", str(mark))
    pytester.makepyfile(KILLED_SUITE)
    result = pytester.runpytest_subprocess("-p", "no:netload", "-p", "no:cacheprovider",
                                           timeout=60)
    assert result.ret == -signal.SIGTERM
    assert not mark.exists()


def test_the_handler_is_restored_at_unconfigure(pytester: pytest.Pytester) -> None:
    before = signal.getsignal(signal.SIGTERM)
    pytester.makepyfile("""
        import signal
        import pytest
        from pytest_netload.plugin.cleanup import SigtermHandler

        @pytest.mark.netload  # a netload session installs it; others do not (below)
        def test_installed():
            assert isinstance(signal.getsignal(signal.SIGTERM), SigtermHandler)
    """)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    assert signal.getsignal(signal.SIGTERM) is before


def test_a_session_without_netload_tests_installs_no_handler(pytester: pytest.Pytester) -> None:
    before = signal.getsignal(signal.SIGTERM)
    pytester.makepyfile("""
        import signal

        def test_untouched():
            assert signal.getsignal(signal.SIGTERM) is not None
            assert type(signal.getsignal(signal.SIGTERM)).__name__ != "SigtermHandler"
    """)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    assert signal.getsignal(signal.SIGTERM) is before


def test_an_uninstalled_handler_passes_sigterm_on() -> None:
    """Another handler installed after ours (the topologies' own) may still call ours
    after the session: it then acts as the handler it replaced."""
    seen: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: seen.append(signum))
    try:
        handler = SigtermHandler()
        assert handler.install()
        with pytest.raises(Terminated):
            handler(signal.SIGTERM, None)
        handler(signal.SIGTERM, None)  # once only: the cleanup is under way
        handler.uninstall()
        assert signal.getsignal(signal.SIGTERM) is handler.previous
        handler(signal.SIGTERM, None)
        assert seen == [signal.SIGTERM]
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_an_ignored_sigterm_stays_ignored() -> None:
    previous = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        assert not SigtermHandler().install()
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_session_start_sweeps_partial_report_files(pytester: pytest.Pytester) -> None:
    proc = subprocess.Popen(["true"])
    proc.wait()  # its pid is a dead writer's
    reports = pytester.path / "out"
    (reports / "captures").mkdir(parents=True)
    partial = reports / "captures" / f".t.pcap.{proc.pid}.abcd1234.tmp"
    partial.write_bytes(b"\xd4\xc3")
    live = reports / f".results.json.{os.getpid()}.abcd1234.tmp"
    live.write_text("{")
    pytester.makepyfile("import pytest\n\n@pytest.mark.netload\ndef test_nothing(): pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider", f"--netload-report-dir={reports}")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([
        "netload: removed * leftovers of sessions that ended without cleaning up: *"])
    assert not partial.exists()
    assert live.exists()


def test_a_forked_child_never_unwinds_the_session() -> None:
    """pyroute2 forks for namespace work and ends the child with SIGTERM: the child must
    act as the handler before ours did, not unwind a copy of the session."""
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: os._exit(7))
    try:
        handler = SigtermHandler()
        assert handler.install()
        child = os.fork()
        if child == 0:
            try:
                handler(signal.SIGTERM, None)
            finally:
                os._exit(3)  # Terminated raised, or nothing happened
        _, status = os.waitpid(child, 0)
        assert os.waitstatus_to_exitcode(status) == 7
        handler.uninstall()
    finally:
        signal.signal(signal.SIGTERM, previous)
