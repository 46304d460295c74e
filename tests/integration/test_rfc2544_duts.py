"""RFC 2544 procedures through the plugin on DUTs whose behaviour is known:
a shaper's capacity is found, a random-drop rule's loss is measured within
its binomial interval, and the example RFC 2544 suite passes on the router."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from calm import judged_unless_the_machine_was_busy

pytest_plugins = ["pytester"]

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="built-in DUTs need root (CI runs as root)"),
]

EXAMPLES = Path(__file__).parents[2] / "conftest_examples"
RATE = 10_000_000  # 64 B at 1.4x its capacity stays below the generator's netns ceiling
# a 10 ms queue: a 2 s trial can pass at most 0.5 % above the shaper's rate
SHAPED = f"netns-shaped:rate_bps={RATE},limit_bytes={RATE // 8 // 100 + 10_000}"


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-s", "-rs", *args, timeout=900)


def test_binary_search_and_mlrsearch_find_the_shaper_capacity(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(f"""
        import pytest
        from calm import excused_by_a_busy_ceiling
        from pytest_netload.topology.builtin import shaper_capacity_pps

        CAPACITY = shaper_capacity_pps({RATE}, 64)

        @pytest.mark.rfc2544(frame_sizes=[64], trial_duration="2s", drain="100ms",
                             max_rate="30kpps", resolution=0.005, max_trials=12)
        def test_binary(rfc2544):
            found = rfc2544.throughput()[64]
            print("binary", found.throughput_pps, CAPACITY)
            with excused_by_a_busy_ceiling(found.trials, found.generator_ceiling_pps):
                assert abs(found.throughput_pps - CAPACITY) / CAPACITY < 0.02
                assert found.upper_pps is not None and found.generator_ceiling_pps is None

        @pytest.mark.rfc2544(frame_sizes=[64], search="mlrsearch", goals="ci-fast",
                             drain="100ms", max_rate="30kpps", time_budget="40s")
        def test_mlrsearch(rfc2544):
            result = rfc2544.ndr_pdr()[0]
            print("mlr", result.ndr.lower_bound_pps, result.pdr.lower_bound_pps, CAPACITY)
            with excused_by_a_busy_ceiling(result.trials, result.generator_ceiling_pps):
                assert abs(result.ndr.lower_bound_pps - CAPACITY) / CAPACITY < 0.03
                assert result.pdr.lower_bound_pps >= result.ndr.lower_bound_pps
            assert all(t.duration_s > 0 for t in result.trials)  # the audit log
    """)
    shutil.copy(Path(__file__).with_name("calm.py"), pytester.path)  # its busy-machine skip
    result = _run(pytester, f"--netload-topology={SHAPED}")
    with judged_unless_the_machine_was_busy(result):
        result.assert_outcomes(passed=2)


def test_lossy_router_loss_is_inside_its_binomial_interval(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
        from scipy.stats import binom
        from pytest_netload import assert_loss, udp

        def test_loss(netload_ports, rate_controller, dut):
            tx, rx = netload_ports
            result = rate_controller(tx, rate="50kpps").run(udp(size=128), duration="2s")
            s = result.streams[0].result
            lo, hi = binom.interval(0.999, s.tx_packets, 0.01)
            print("lost", s.lost, "of", s.tx_packets, "interval", lo, hi)
            assert lo <= s.lost <= hi
            assert s.lost == dut.loss_rule.dropped()
            assert_loss(s, at_most=0.02)
    """)
    result = _run(pytester, "--netload-topology=netns-lossy:loss_ratio=0.01")
    with judged_unless_the_machine_was_busy(result):
        result.assert_outcomes(passed=1)


def test_example_rfc2544_suite_on_the_router(pytester: pytest.Pytester) -> None:
    shutil.copytree(EXAMPLES / "rfc2544", pytester.path / "rfc2544")
    result = _run(pytester, "rfc2544", "--netload-report-dir=out")
    with judged_unless_the_machine_was_busy(result):
        result.assert_outcomes(passed=5)
    result.stdout.fnmatch_lines([
        "*= netload summary =*",
        "test_throughput_latency_and_loss[[]64B[]]*64B*pps*us*us*PASS*frame loss*",
        "test_back_to_back*64B*PASS*back-to-back*frames",
        "test_reset*64B*PASS*reset *s",
    ])
    from pytest_netload.reports.load import load

    doc = load(pytester.path / "out" / "results.json")  # valid against the shipped schema
    assert doc["topology"]["dut"]["name"] == "netns-router"
    html = (pytester.path / "out" / "report.html").read_text()
    assert "<svg" in html and "RFC 2544" in html
    kinds = {m["kind"] for t in doc["tests"] for m in t["measurements"]}
    assert {"throughput", "latency_rfc2544", "frame_loss", "back_to_back", "reset"} <= kinds


def test_search_with_steady_state_fail_finds_the_capacity(pytester: pytest.Pytester) -> None:
    rate = RATE
    burst = max(3028, rate // 8 // 250)
    limits = {"burst_bytes": burst, "limit_bytes": int(rate / 8 * 0.060) + burst}
    shutil.copy(Path(__file__).with_name("calm.py"), pytester.path)  # its busy-machine skip
    pytester.makepyfile(f"""
        import pytest
        from calm import excused_by_a_busy_ceiling
        from pytest_netload.topology.builtin import shaper_capacity_pps

        CAPACITY = shaper_capacity_pps({rate}, 64)

        @pytest.mark.rfc2544(frame_sizes=[64], trial_duration="2s", drain="500ms",
                             max_rate="30kpps", steady_state="fail")
        def test_fail(rfc2544):
            found = rfc2544.throughput()[64]
            print("found", found.throughput_pps, "capacity", CAPACITY, found.bracket_pps)
            with excused_by_a_busy_ceiling(found.trials, found.generator_ceiling_pps):
                assert abs(found.throughput_pps / CAPACITY - 1) < 0.01
                assert any(t.steady is False for t in found.trials)
    """)
    topology = (f"netns-shaped:rate_bps={rate},burst_bytes={limits['burst_bytes']},"
                f"limit_bytes={limits['limit_bytes']}")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-s", "-rs",
                                           f"--netload-topology={topology}", timeout=600)
    with judged_unless_the_machine_was_busy(result):
        result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*not steady at *make it immaterial*"])
