"""Whole pytest sessions on the fake engine (--netload-engine=fake:...): the fixtures,
the procedures at their default settings (60-s trials, which the fake works out in
milliseconds), the verdicts, the summary and results.json, without root or DPDK."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_netload.reports.load import load

pytest_plugins = ["pytester"]

FAKE = "--netload-engine=fake:capacity_pps=50000,loss_ratio=0,delay_s=100e-6,buffer_frames=1000"

SESSION = """
    import pytest
    from pytest_netload import assert_latency, assert_loss, assert_throughput

    @pytest.mark.rfc2544(frame_sizes=[64])
    def test_below_capacity(rfc2544):
        result = rfc2544.throughput()
        assert_throughput(result, at_least="45kpps")

    @pytest.mark.rfc2544(frame_sizes=[64])
    def test_above_capacity(rfc2544):
        assert_throughput(rfc2544.throughput(), at_least="60kpps")

    @pytest.mark.netload(duration="60s")
    def test_paced_traffic(netload_ports, traffic, rate_controller, latency_meter, dut):
        tx, rx = netload_ports
        stream = traffic.udp(size=128, name="probe")
        with latency_meter(rx, stream) as lat:
            result = rate_controller(rate="20kpps").run(stream)
        s = result["probe"]
        assert s.offered_pps == 20_000
        assert abs(s.achieved_tx_pps - 20_000) < 1
        assert s.result.tx_packets == 1_200_000
        assert lat.latency.count == 1_200_000
        assert [r.latency_min_ns for r in lat.results] == [100_000]
        assert_loss(lat, at_most=0)
        assert_latency(lat, p99="< 101us")
        assert dut.info["name"] == "fake"
"""


def _results(pytester: pytest.Pytester) -> dict[str, Any]:
    path = pytester.path / "netload-results" / "results.json"
    document = load(path)  # valid against the schema
    data: dict[str, Any] = json.loads(Path(path).read_text())
    assert data == document
    return document




def test_a_fake_session_runs_rfc2544_at_its_defaults_in_seconds(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_fake=SESSION)
    result = pytester.runpytest(FAKE, "-p", "no:cacheprovider", "-rA", "--durations=0")
    result.assert_outcomes(passed=2, failed=1)
    out = result.stdout.str()
    result.stdout.fnmatch_lines([
        "netload: engine fake:capacity_pps=50000,*, topology fake, reports netload-results",
        "*test_above_capacity*",
        "*measured: 49,9?? pps*the highest load that passed*",
        "*required: throughput >= 60kpps",
    ])
    assert "FAILED test_fake.py::test_above_capacity" in out
    assert "PASSED test_fake.py::test_paced_traffic" in out
    assert "PASSED test_fake.py::test_below_capacity" in out
    data = _results(pytester)
    tests = {t["nodeid"].split("::")[-1]: t for t in data["tests"]}
    assert tests["test_below_capacity"]["outcome"] == "passed"
    assert tests["test_above_capacity"]["outcome"] == "failed"
    (tp,) = [m for m in tests["test_below_capacity"]["measurements"]
             if m["kind"] == "throughput"]
    size = tp["sizes"][0] if "sizes" in tp else tp
    assert size["duration_s"] == 60.0  # the RFC's default trial, not shortened
    assert 50_000 * 0.995 <= size["throughput_pps"] <= 50_000 + 1000 / 60
    assert data["environment"]["dpdk_version"].startswith("none: fake engine")
    assert data["topology"]["name"] == "fake"
    assert [p["driver"] for p in data["environment"]["ports"]] == ["net_fake", "net_fake"]


@pytest.mark.parametrize(("args", "message"), [
    (["--netload-engine=fake:capacity=5"],
     "*--netload-engine: 'fake:capacity=5': the fake DUT has no parameter 'capacity'; write "
     "fake or fake:key=value,... with keys capacity_pps, *"),
    (["--netload-engine=fake:loss_ratio=2"],
     "*--netload-engine: fake DUT loss_ratio=2.0: give a share in [0, 1), e.g. 0.01*"),
    (["--netload-engine=fake:delay_s=soon"],
     "*--netload-engine: fake DUT delay_s 'soon': cannot parse it as a number and a unit*"),
    (["--netload-engine=fakes"],
     "*--netload-engine: 'fakes' is not an execnet gateway*nor 'fake'*"),
    (["--netload-engine=fake", "--netload-topology=netns-shaped"],
     "*--netload-topology: topology 'netns-shaped' builds a real DUT of network namespaces, "
     "but the engine is the fake one (--netload-engine), whose DUT is a model: leave the "
     "topology out*"),
])
def test_a_bad_fake_engine_setting_is_a_usage_error(pytester: pytest.Pytester,
                                                     args: list[str], message: str) -> None:
    pytester.makepyfile("def test_nothing(): pass")
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_the_fake_engine_comes_from_the_ini_file_too(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nnetload_engine = fake:capacity_pps=1000\n")
    pytester.makepyfile("""
        def test_engine(netload_engine, netload_topology):
            assert netload_engine.fake.capacity_pps == 1000
            assert netload_topology.name == "fake"
            assert netload_topology.line_rate_bps == 10_000_000_000
    """)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["netload: engine fake:capacity_pps=1000, topology fake, *"])
    result.assert_outcomes(passed=1)
