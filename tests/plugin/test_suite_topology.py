"""A suite's own topology (netload_topology(..., default=True)) is its default: the
topology a session is given -- on the command line, in the environment, in the ini file,
or the fake engine's -- wins over it, and the test runs once, on that (collection only:
no root, no engine)."""

from __future__ import annotations

import pytest

import pytest_netload.reports.baseline  # noqa: F401  (scipy, matplotlib: imported inside an
import pytest_netload.reports.html  # noqa: F401  in-process run, a second run cannot)

pytest_plugins = ["pytester"]

FAKE = "--netload-engine=fake:capacity_pps=60000,delay_s=50e-6,buffer_frames=1000"

LAB = """
[topology]
name = "lab"

[[ports]]
name = "p0"
device = "net_fake0"

[[wires]]
tx = "p0"
rx = "p0"
"""


SUITE = """
import pytest

pytestmark = pytest.mark.netload_topology("netns-lossy:loss_ratio=0.01", ids=["lossy"],
                                          default=True)

def test_it(netload_topology):
    pass
"""


def test_a_suite_s_own_topology_is_its_default(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(SUITE)
    result = pytester.runpytest("--collect-only", "-q", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["*test_it[[]lossy[]]"])


@pytest.mark.parametrize("how", ["option", "environment", "ini", "fake engine"])
def test_a_given_topology_wins_over_a_suite_s_own(pytester: pytest.Pytester,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  how: str) -> None:
    pytester.makepyfile(SUITE)
    args = ["--collect-only", "-q", "-p", "no:cacheprovider"]
    path = pytester.path / "lab.toml"
    path.write_text(LAB)
    if how == "option":
        args.append("--netload-topology=netns-router")  # the plain default, given
    elif how == "environment":
        monkeypatch.setenv("PYTEST_NETLOAD_TOPOLOGY", str(path))
    elif how == "ini":
        pytester.makeini(f"[pytest]\nnetload_topology = {path}\n")
    else:
        args.append(FAKE)
    result = pytester.runpytest(*args)
    assert "[lossy]" not in result.stdout.str()
    result.stdout.fnmatch_lines(["*test_it"])


def test_default_takes_a_flag(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(SUITE.replace("default=True", "default='yes'"))
    result = pytester.runpytest("--collect-only", "-q", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["*netload_topology: default='yes': give True*"])


def test_the_header_names_the_topologies_tests_take_for_their_own(
        pytester: pytest.Pytester) -> None:
    """A suite on its own topology is not on the session's: the header says which, so
    "topology netns-router" is never read as where those tests ran."""
    pytester.makepyfile(SUITE, test_plain="""
        def test_on_the_session_s(netload_topology):
            pass
    """)
    result = pytester.runpytest("--collect-only", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines([
        "netload: engine popen, topology netns-router*",
        "netload: tests on their own topology (not the session's): "
        "netns-lossy:loss_ratio=0.01 (1 test)"])
    given = pytester.runpytest("--collect-only", "-p", "no:cacheprovider",
                               "--netload-topology=netns-router")
    assert "own topology" not in given.stdout.str()
