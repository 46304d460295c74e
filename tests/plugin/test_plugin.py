"""The plugin surface as it stands: options, header, the engine fixture."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest_plugins = ["pytester"]


def test_importing_the_plugin_loads_no_native_code() -> None:
    code = (
        "import sys, pytest_netload, pytest_netload.plugin; "
        "bad = [m for m in sys.modules if 'cffi' in m or '_netload_native' in m]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    out = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_help_shows_the_netload_group(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    result.stdout.fnmatch_lines([
        "*network device conformance testing (pytest-netload)*",
        "*--netload-engine=*",
        "*--netload-engine-memory=*",
    ])


def test_header_names_the_engine(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_nothing(): pass")
    result = pytester.runpytest("--netload-engine=popen")
    result.stdout.fnmatch_lines(["netload: engine popen"])
    result.assert_outcomes(passed=1)


def test_plugin_can_be_disabled(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_nothing(): pass")
    result = pytester.runpytest("-p", "no:netload", "--help")
    assert "--netload-engine" not in result.stdout.str()


def test_bad_memory_option_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_engine(netload_engine): pass")
    result = pytester.runpytest("--netload-engine-memory=lots")
    result.stderr.fnmatch_lines(["*--netload-engine-memory: invalid int value: 'lots'*"])
    assert result.ret == pytest.ExitCode.USAGE_ERROR


def test_bad_memory_ini_names_the_setting(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nnetload_engine_memory = lots\n")
    pytester.makepyfile("def test_engine(netload_engine): pass")
    result = pytester.runpytest()
    result.stdout.fnmatch_lines(["*netload_engine_memory 'lots' is not a whole number of MiB*"])


@pytest.mark.integration
@pytest.mark.skipif(os.geteuid() != 0, reason="the engine needs root (run as root or in CI)")
def test_engine_fixture_runs_traffic(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        from pytest_netload import Eth, IPv4, UDP, Stream

        def test_ring(netload_engine):
            port = netload_engine.port("net_ring0")
            tmpl = (Eth() / IPv4() / UDP()).build()
            stream = netload_engine.load(port, Stream(tmpl, size=128))
            result = netload_engine.run([stream], [port], count=10_000)
            assert result.tx_packets == result.rx_packets == 10_000
            assert result.lost == 0
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
