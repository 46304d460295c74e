"""The netload_requires marker: a test runs where its topology has what it needs and is
skipped elsewhere, naming what is missing and what the topology has; the
netload_capabilities fixture. Fake-engine sessions: no root, no DPDK."""

from __future__ import annotations

from pathlib import Path

import pytest

import pytest_netload.reports.baseline  # noqa: F401  (scipy, matplotlib: imported inside an
import pytest_netload.reports.html  # noqa: F401  in-process run, a second run cannot)

from labfiles import fake_lab

pytest_plugins = ["pytester"]

FAKE = "--netload-engine=fake:capacity_pps=60000,delay_s=50e-6,buffer_frames=1000"

POLICED = '[capabilities]\npolicer = "10Mbit/s"\npolicer_cbs = 12500'


def _file(pytester: pytest.Pytester, capabilities: str = POLICED) -> Path:
    path = pytester.path / "lab.toml"
    path.write_text(fake_lab("lab-policed", capabilities=capabilities))
    return path


REQUIRES = """
import pytest

@pytest.mark.netload_requires(ports=2)
def test_two_ports(netload_ports, netload_capabilities):
    assert netload_capabilities.ports == 2

@pytest.mark.netload_requires(policer="10Mbit/s")
def test_the_policer(netload_capabilities):
    assert netload_capabilities.policer_bps == 10_000_000
    assert netload_capabilities.policer_cbs_bytes == 12_500

@pytest.mark.netload_requires(policer="20Mbit/s")
def test_another_policer(netload_ports):
    raise AssertionError("ran on a topology without what it needs")

@pytest.mark.netload_requires(ports=4, both_ways=True, dut_reset=True)
def test_a_switch(netload_ports):
    raise AssertionError("ran on a topology without what it needs")
"""


def test_a_test_runs_where_the_topology_has_what_it_needs(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(REQUIRES)
    result = pytester.runpytest(FAKE, f"--netload-topology={_file(pytester)}", "-rs",
                                "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, skipped=2)
    result.stdout.fnmatch_lines([
        # at the test's line, as a skip marker's skip is
        "SKIPPED [[]1[]] test_a_test_runs_where_the_topology_has_what_it_needs.py:12: "
        "netload_requires: needs a policer at 20.00 Mbit/s; topology lab-policed "
        "has 2 ports wired one way*a policer at 10.00 Mbit/s (CBS 12,500 B)",
        "SKIPPED * netload_requires: needs 4 ports, ports wired both ways, a DUT reset (a "
        "built-in DUT or a pytest_netload_dut_reset hook); topology lab-policed has 2 ports "
        "wired one way, no line rate, no DUT commands, counters or reset*",
    ])


def test_the_fake_topology_has_no_policer(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(REQUIRES)
    result = pytester.runpytest(FAKE, "-rs", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, skipped=3)
    result.stdout.fnmatch_lines(["SKIPPED * needs a policer at 10.00 Mbit/s; topology fake "
                                 "has * no declared policer, shaper or loss"])


def test_a_conftest_hook_gives_a_file_s_dut_its_reset(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("def pytest_netload_dut_reset(dut):\n    return True\n")
    pytester.makepyfile("""
        import pytest

        @pytest.mark.netload_requires(dut_reset=True)
        def test_reset(netload_capabilities):
            assert netload_capabilities.dut_reset and not netload_capabilities.dut_counters
    """)
    result = pytester.runpytest(FAKE, f"--netload-topology={_file(pytester)}",
                                "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_module_and_test_requirements_add_up(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
        import pytest

        pytestmark = pytest.mark.netload_requires(policer=True)

        @pytest.mark.netload_requires(loss=True)
        def test_both(netload_ports):
            raise AssertionError("ran on a topology without a known loss")
    """)
    result = pytester.runpytest(FAKE, f"--netload-topology={_file(pytester)}", "-rs",
                                "-p", "no:cacheprovider")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*needs a DUT that drops a known share of frames; topology "
                                 "lab-policed has*"])


@pytest.mark.parametrize(("marker", "message"), [
    ("ports=0", "ports=0: give a number of ports"),
    ("policer='fast'", "policer*fast"),
    ("wires=2", "no requirement 'wires'"),
    ("'policer'", "give requirements as keywords"),
    ("dut='yes'", "dut='yes': give True"),
])
def test_a_bad_requirement_fails_the_test_naming_it(pytester: pytest.Pytester, marker: str,
                                                    message: str) -> None:
    pytester.makepyfile(f"""
        import pytest

        @pytest.mark.netload_requires({marker})
        def test_it(netload_ports):
            pass
    """)
    result = pytester.runpytest(FAKE, "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([f"*@pytest.mark.netload_requires: *{message}*"])


def test_what_a_test_requires_skips_it_rather_than_failing_collection(
        pytester: pytest.Pytester) -> None:
    """A one-way file: a both-ways RFC 2544 test that says it needs both ways skips at
    set-up naming that; without netload_requires the same marker fails collection, as
    before; a share of a line rate the file does not declare, likewise."""
    pytester.makepyfile("""
        import pytest

        @pytest.mark.netload_requires(both_ways=True)
        @pytest.mark.rfc2544(frame_sizes=[64], direction="both")
        def test_both_ways(rfc2544):
            raise AssertionError("ran on a one-way topology")

        @pytest.mark.netload_requires(line_rate=True)
        @pytest.mark.rfc2544(frame_sizes=[64], max_rate="50%")
        def test_share_of_line_rate(rfc2544):
            raise AssertionError("ran on a topology without a line rate")
    """)
    result = pytester.runpytest(FAKE, f"--netload-topology={_file(pytester)}", "-rs",
                                "-p", "no:cacheprovider")
    result.assert_outcomes(skipped=2)
    result.stdout.fnmatch_lines(["*netload_requires: needs*wired both ways*",
                                 "*netload_requires: needs*line rate*"])
    pytester.makepyfile(test_unguarded="""
        import pytest

        @pytest.mark.rfc2544(frame_sizes=[64], direction="both")
        def test_both_ways(rfc2544):
            pass
    """)
    result = pytester.runpytest(FAKE, f"--netload-topology={_file(pytester)}",
                                "-p", "no:cacheprovider", "test_unguarded.py")
    result.stdout.fnmatch_lines(["*@pytest.mark.rfc2544: *"])
    assert result.ret != 0


SHAPED = '[capabilities]\nshaper = "10Mbit/s"\nshaper_queue = 35000'

BURST_LIMITS = """
import pytest

from pytest_netload.bench.validity import BurstLimit

VOICE = {"name": "voice", "cir": "2Mbit/s", "frame_size": 128, "dscp": 46,
         "sac": {"flr": "0.1%"}}


def test_rfc2544_weighs_it(rfc2544):
    assert rfc2544.burst_limit == EXPECTED

@pytest.mark.y1564(services=[VOICE])
def test_y1564_weighs_it(y1564):
    assert y1564.burst_limit == EXPECTED

@pytest.mark.netload_requires(shaper="20Mbit/s")
def test_another_shaper(netload_ports):
    raise AssertionError("ran on a topology without what it needs")
"""


@pytest.mark.parametrize(("capabilities", "expected", "has"), [
    (SHAPED, 'BurstLimit(10_000_000, 35_000, "shaper")',
     "a shaper at 10.00 Mbit/s (queue 35,000 B)"),
    (f"{POLICED}\nshaper = \"10Mbit/s\"\nshaper_queue = 35000",
     'BurstLimit(10_000_000, 12_500, "policer")', "a policer at 10.00 Mbit/s (CBS 12,500 B)"),
    ('[capabilities]\nshaper = "10Mbit/s"', "None", "a shaper at 10.00 Mbit/s"),
])
def test_every_procedure_weighs_the_declared_policer_else_shaper(
        pytester: pytest.Pytester, capabilities: str, expected: str, has: str) -> None:
    """RFC 2544's and Y.1564's runners get the DUT's declared burst limit through one
    helper: its policer (CIR and CBS) where the file declares one, else its shaper with
    the shaper's queue; a shaper whose queue is not declared gives none."""
    pytester.makepyfile(BURST_LIMITS.replace("EXPECTED", expected))
    path = pytester.path / "lab.toml"
    path.write_text(fake_lab("lab-shaped", capabilities=capabilities))
    result = pytester.runpytest(FAKE, f"--netload-topology={path}", "-rs",
                                "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, skipped=1)
    result.stdout.fnmatch_lines([f"SKIPPED * needs a shaper at 20.00 Mbit/s; topology "
                                 f"lab-shaped has *{has}*"])
