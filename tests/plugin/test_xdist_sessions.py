"""pytest-xdist on the fake engine (no root, no DPDK): the tests of one topology run in one
worker, the controller merges every worker's records into one results.json, report.html,
JUnit file and summary table, and an engine crash is still an ERROR in JUnit. Real engines
on built-in DUTs: tests/integration/test_xdist.py."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest

from pytest_netload.errors import NetloadConfigError
from pytest_netload.plugin.xdist import cpu_slices

pytest_plugins = ["pytester"]

FAKE = "--netload-engine=fake:capacity_pps=50000,loss_ratio=0,delay_s=100e-6"

TOPOLOGY = """
[topology]
name = "lab-{x}"
[dut]
name = "dut-{x}"
[[ports]]
name = "p0"
device = "net_null0"
mac = "02:00:00:00:00:01"
[[ports]]
name = "p1"
device = "net_null1"
mac = "02:00:00:00:00:02"
[[wires]]
tx = "p0"
rx = "p1"
"""

SUITE = """
    import pytest
    from pytest_netload import assert_loss, assert_throughput
    from pytest_netload.errors import EngineCrashed

    pytestmark = pytest.mark.netload_topology("a.toml", "b.toml")

    @pytest.mark.rfc2544(frame_sizes=[64], trial_duration="1s")
    @pytest.mark.parametrize("i", range(2))
    def test_throughput(rfc2544, i):
        assert_throughput(rfc2544.throughput(), at_least="45kpps")

    @pytest.mark.netload(rate="10kpps", duration="1s")
    def test_latency(netload_ports, traffic, rate_controller, latency_meter):
        tx, rx = netload_ports
        stream = traffic.udp(size=128, name="probe")
        with latency_meter(rx, stream) as lat:
            rate_controller().run(stream)
        assert_loss(lat, max_lost=0)

    def test_crash(netload_ports):
        raise EngineCrashed("engine host died during 'run_poll'", "Segmentation fault")

    def test_plain():
        pass
"""


def _session(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    for x in "ab":
        pytester.path.joinpath(f"{x}.toml").write_text(TOPOLOGY.format(x=x))
    pytester.makepyfile(test_suite=SUITE)
    return pytester.runpytest_subprocess(FAKE, "-p", "no:cacheprovider", "--junitxml=j.xml",
                                         "-v", *args)


def test_two_workers_one_topology_each_and_one_set_of_results(
        pytester: pytest.Pytester) -> None:
    result = _session(pytester, "-n", "2")
    result.assert_outcomes(passed=7, errors=2)
    out = result.stdout.str()
    assert "netload: xdist: tests of one topology run in one worker (--dist loadgroup)" in out
    # each topology's tests ran in one worker, and the two topologies in two
    workers: dict[str, set[str]] = {}
    for worker, test in re.findall(r"\[(gw\d)\] \[ *\d+%\] \w+ test_suite.py::(\S+)", out):
        if "[" in test:
            workers.setdefault(test.split("[")[1].split("-")[0].rstrip("]"), set()).add(worker)
    assert set(workers) == {"a", "b"}
    assert all(len(w) == 1 for w in workers.values()), workers
    assert workers["a"] != workers["b"]

    ids = [f"test_suite.py::test_throughput[{x}-{i}]" for x in "ab" for i in range(2)] + \
        [f"test_suite.py::test_latency[{x}]" for x in "ab"] + \
        [f"test_suite.py::test_crash[{x}]" for x in "ab"]
    # one results.json, in collection order, every netload test with its records (not
    # test_plain, which uses nothing of netload's: selection.py); no group suffix
    doc = json.loads((pytester.path / "netload-results" / "results.json").read_text())
    tests = {t["nodeid"]: t for t in doc["tests"]}
    assert sorted(tests) == sorted(ids)
    # in collection order (pytest orders the tests by topology), not as workers finished
    order = [t["nodeid"] for t in doc["tests"]]
    assert order.index("test_suite.py::test_crash[a]") < order.index(
        "test_suite.py::test_throughput[b-0]")
    for x in "ab":
        assert "throughput" in {
            m["kind"] for m in tests[f"test_suite.py::test_throughput[{x}-0]"]["measurements"]}
        assert {m["kind"] for m in tests[f"test_suite.py::test_latency[{x}]"]["measurements"]} \
            >= {"traffic", "latency"}
        assert tests[f"test_suite.py::test_crash[{x}]"]["outcome"] == "error"
    env = doc["environment"]
    assert sorted(w["worker"] for w in env["workers"]) == ["gw0", "gw1"]
    assert sorted(t for w in env["workers"] for t in w["topologies"]) == ["a.toml", "b.toml"]
    assert {t["dut"]["name"] for t in env["topologies"]} == {"dut-a", "dut-b"}
    assert doc["session"]["collected"] == 8 and doc["session"]["ran"] == 8
    assert sorted(doc["session"]["engine_crashes"]) == [i for i in ids if "crash" in i]

    report = (pytester.path / "netload-results" / "report.html").read_text()
    for nodeid in ids:
        assert nodeid.split("::")[1] in report, nodeid
    # the summary table on the controller has every measured test
    table = out[out.index("netload summary"):]
    for nodeid in ids:
        if "crash" not in nodeid:
            assert nodeid.split("::")[1] in table, nodeid

    # JUnit: one testcase per test, properties from the workers, crashes as <error>
    suite = ET.parse(pytester.path / "j.xml").getroot().find("testsuite")
    assert suite is not None
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert sorted(cases) == sorted([*(i.split("::")[1] for i in ids), "test_plain"])
    props = {p.get("name") for p in cases["test_throughput[a-0]"].iter("property")}
    assert "netload.throughput_pps.64B" in props
    for x in "ab":
        crash = cases[f"test_crash[{x}]"]
        assert crash.find("error") is not None and crash.find("failure") is None
        assert "engine crashed (not a DUT verdict)" in crash.find("error").get("message", "")
    assert suite.get("errors") == "2" and suite.get("failures") == "0"


def test_serial_session_runs_each_topology_in_turn(pytester: pytest.Pytester) -> None:
    result = _session(pytester, "-p", "no:xdist")
    result.assert_outcomes(passed=7, errors=2)
    doc = json.loads((pytester.path / "netload-results" / "results.json").read_text())
    assert [t["dut"]["name"] for t in doc["environment"]["topologies"]] == ["dut-a", "dut-b"]


def test_a_bad_topology_in_the_marker_fails_collection_naming_the_test(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
        import pytest

        @pytest.mark.netload_topology("netns-shaped:rate=1")
        def test_x(netload_ports):
            pass
    """)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["*test_x: @pytest.mark.netload_topology: *rate*"])
    assert result.ret != 0


@pytest.mark.parametrize(("cpus", "workers", "slices"), [
    ([0, 1], 2, [[0], [1]]),             # a CPU each: main and worker share it
    ([0, 1, 2], 2, [[0, 1], [0, 2]]),    # the mains share CPU 0, each worker its own
    ([0, 1, 2, 3], 2, [[0, 1], [2, 3]]),
    ([0, 1, 2, 3, 4], 2, [[0, 1], [2, 3, 4]]),
    ([4, 6], 1, [[4, 6]]),
])
def test_cpu_slices_give_each_worker_cpus_of_its_own(
        cpus: list[int], workers: int, slices: list[list[int]]) -> None:
    got = cpu_slices(cpus, workers)
    assert got == slices
    polled = [c for s in got for c in (s[1:] or s)]  # CPUs the engines' workers busy-poll
    assert len(polled) == len(set(polled))


def test_fewer_cpus_than_workers_is_an_error_naming_the_fix() -> None:
    with pytest.raises(NetloadConfigError) as err:
        cpu_slices([0, 1], 3)
    assert str(err.value).startswith("pytest -n 3: each worker's engine busy-polls CPUs of "
                                     "its own, and pytest may use 2 CPUs (0-1): run at most 2 "
                                     "workers (-n 2)")
