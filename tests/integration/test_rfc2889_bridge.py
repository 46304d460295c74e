"""RFC 2889 on the built-in netns-bridge, judged against known answers.

One pytest session (pytester, in a subprocess, as a user runs it) measures the switch with
the `rfc2889` fixture; every test here judges one procedure's record in its results.json
(which validates against the shipped schema) against the bridge's known answer:

- address caching capacity with ``max_learned=K``: exactly K, for K = 64 and K = 200;
- with ``port_rate_bps`` (a TBF on every port's egress, so a port forwards
  CAPACITY_PPS frames/s of 512 B), congestion control: port C loses
  EXPECTED_CONGESTED_LOSS (1/3) of what it is offered, the uncongested a->d nothing
  (a Linux bridge queues per egress port: no head-of-line blocking), and the frames
  lost are C's TBF drops;
- fully meshed: the throughput per port is the port's capacity (each port receives from
  N - 1 senders splitting their load, so its offered rx is the per-port load), and the
  forwarding rate at a load above it is N x the capacity;
- broadcast: the throughput is the port capacity, with a latency for every receiving port;
- congestion control on the 2-port default is the usage error naming both counts.

The session runs once for the module, in whichever of its tests comes first (about 40 s
on a 2-vCPU VM); the rates stay near 1.2 kpps per port. A failed check is excused only
with proof that the machine took the generator's CPU (calm.py).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from calm import judged_unless_the_machine_was_busy
from pytest_netload.rfc2889 import EXPECTED_CONGESTED_LOSS
from pytest_netload.topology.builtin import shaper_capacity_pps

pytest_plugins = ["pytester"]

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="built-in DUTs need root (CI runs as root)"),
]

PORT_RATE_BPS = 5_000_000
FRAME_SIZE = 512
CAPACITY_PPS = shaper_capacity_pps(PORT_RATE_BPS, FRAME_SIZE)  # 1,230.3 pps per port
RATE_TOLERANCE = 0.03  # a port's bucket and queue pass ~31 frames more: 1.7 % of 1.5 s
LOSS_TOLERANCE = 0.03  # absolute, on the 1/3 C loses
TABLES = (64, 200)

INNER = f'''
import pytest
from pytest_netload import assert_rfc2889

RATE, SIZE, CAP = {PORT_RATE_BPS}, {FRAME_SIZE}, {CAPACITY_PPS!r}
SHAPED = "port_rate_bps={PORT_RATE_BPS}"
SEARCH = dict(frame_size=SIZE, trial_duration="1.5s", drain="0.2s", resolution=0.02,
              retries=1, max_rate=f"{{CAP * 1.1}}pps")


def _show(result):
    for t in result.trials:  # a trial the machine disturbed names it (calm.BUSY_PROOF)
        if t.invalid_reason:
            print("invalid trial:", t.invalid_reason)


@pytest.mark.netload_topology("netns-bridge:ports=3,learning=true,max_learned=64", ids=["k64"])
@pytest.mark.rfc2889(low=1, high=200, learning_rate="5000pps", test_rate="5000pps",
                     drain="0.1s")
def test_capacity_64(rfc2889):
    result = rfc2889.address_caching_capacity()
    print("capacity", result.capacity)
    assert_rfc2889(result, at_least=64)


@pytest.mark.netload_topology("netns-bridge:ports=3,learning=true,max_learned=200",
                              ids=["k200"])
@pytest.mark.rfc2889(low=1, high=400, learning_rate="5000pps", test_rate="5000pps",
                     drain="0.1s")
def test_capacity_200(rfc2889):
    print("capacity", rfc2889.address_caching_capacity().capacity)


@pytest.mark.netload_topology(f"netns-bridge:ports=4,{{SHAPED}}", ids=["br4"])
@pytest.mark.rfc2889(frame_size=SIZE, trial_duration="2s", retries=1, max_rate=f"{{CAP}}pps")
def test_congestion(rfc2889, dut):
    def drops():
        return {{c.where: c.value for c in dut.trial_counters() if c.kind == "queue_drop"}}

    before = drops()
    result = rfc2889.congestion_control()
    after = drops()
    _show(result)
    tbf = {{where: after[where] - before[where] for where in after}}
    print("congestion", result.describe(), "TBF drops", tbf)
    assert_rfc2889(result, head_of_line_blocking=False)
    c, d = dut.interfaces[2], dut.interfaces[3]
    assert tbf[f"tbf on {{c}}"] == result.congested_lost, tbf  # C's TBF dropped them
    assert tbf[f"tbf on {{d}}"] == 0, tbf


@pytest.mark.netload_topology(f"netns-bridge:ports=3,{{SHAPED}}", ids=["br3"])
@pytest.mark.rfc2889(**SEARCH)
def test_mesh(rfc2889):
    result = rfc2889.fully_meshed()
    _show(result)
    print("mesh", result.throughput_pps_per_port, result.forwarding_rate_at_max_pps)


@pytest.mark.netload_topology(f"netns-bridge:ports=3,{{SHAPED}}", ids=["br3"])
@pytest.mark.rfc2889(**SEARCH)
def test_broadcast(rfc2889):
    result = rfc2889.broadcast_forwarding()
    _show(result)
    print("broadcast", result.throughput_pps, [l and l.mean_ns for l in result.latency])


@pytest.mark.netload_topology("netns-bridge", ids=["br2"])
def test_too_few_ports(rfc2889):
    rfc2889.congestion_control()
'''

# The inner session's conftest: every engine run of a procedure whose generator the
# engine measured losing its CPU (calm.machine_took_the_cpu) prints a "busy machine:"
# line, the proof judged_unless_the_machine_was_busy reads. A valid trial may still hold
# a catch-up burst (the validity rule lets up to 32 frames per stream leave late), which
# near the capacity can overflow a port's ~30-frame queue: its answer is the machine's.
INNER_CONFTEST = f'''
import sys

sys.path.insert(0, {str(Path(__file__).parent)!r})

from calm import machine_took_the_cpu
from pytest_netload.bench import rfc2889 as bench

_run = bench.Rfc2889Runner._run


def _judged_run(self, entries, rx, duration_s):
    run, why = _run(self, entries, rx, duration_s)
    proof = machine_took_the_cpu(run)
    if proof is not None:
        print(f"busy machine: the generator of a {{duration_s:g}} s trial lost its CPU: {{proof}}")
    return run, why


bench.Rfc2889Runner._run = _judged_run
'''

_SESSION: dict[str, Any] = {}


@pytest.fixture
def session(pytester: pytest.Pytester) -> dict[str, Any]:
    """The inner session's outcome, run by the first test that needs it: the pytester
    RunResult, and results.json's measurements and outcomes by test name."""
    if not _SESSION:
        from pytest_netload.reports.load import load

        pytester.makepyfile(test_switch=INNER)
        pytester.makeconftest(INNER_CONFTEST)
        result = pytester.runpytest_subprocess(
            "-p", "no:cacheprovider", "-p", "no:randomly", "-s", "-rs",
            "--netload-report-dir=out", "test_switch.py", timeout=300)
        _SESSION.update(result=result, path=Path(pytester.path))
        try:  # once: a failure here fails each test, it does not run the session again
            doc = load(pytester.path / "out" / "results.json")  # valid against the schema
        except Exception as exc:
            _SESSION["error"] = exc
        else:
            _SESSION["tests"] = {t["nodeid"].split("::")[1].split("[")[0]: t
                                 for t in doc["tests"]}
    if "error" in _SESSION:
        raise _SESSION["error"]
    return _SESSION


def _record(session: dict[str, Any], test: str, kind: str) -> dict[str, Any]:
    entry = session["tests"][test]
    assert entry["outcome"] == "passed", (test, entry["outcome"])
    (record,) = [m for m in entry["measurements"] if m["kind"] == kind]
    assert record["procedure"] == kind
    return record


@pytest.mark.parametrize("table", TABLES)
def test_address_caching_capacity_is_max_learned(session: dict[str, Any], table: int) -> None:
    with judged_unless_the_machine_was_busy(session["result"]):
        record = _record(session, f"test_capacity_{table}", "rfc2889_address_caching_capacity")
        assert record["capacity"] == table, record["capacity"]
        assert record["upper"] == table + 1  # and one address more was not all learned
        assert all(t["learned_all"] == (t["count"] <= table) for t in record["trials"]
                   if t["valid"])


def test_congested_port_loses_a_third_and_no_head_of_line_blocking(
        session: dict[str, Any]) -> None:
    with judged_unless_the_machine_was_busy(session["result"]):
        record = _record(session, "test_congestion", "rfc2889_congestion_control")
        assert record["load_pps_per_port"] == pytest.approx(CAPACITY_PPS)
        assert record["expected_loss_ratio"] == pytest.approx(EXPECTED_CONGESTED_LOSS)
        assert record["congested_loss_ratio"] == pytest.approx(
            EXPECTED_CONGESTED_LOSS, abs=LOSS_TOLERANCE), record["summary"]
        assert "congestion_loss" in record["observed"], record["summary"]
        assert "head_of_line_blocking" not in record["observed"], record["summary"]
        assert record["hol_loss_ratio"] == 0 and not record["back_pressure"], record["summary"]
    # and the inner test found the lost frames in C's TBF drops, none in D's (it passed)


def test_fully_meshed_throughput_is_the_port_capacity(session: dict[str, Any]) -> None:
    with judged_unless_the_machine_was_busy(session["result"]):
        record = _record(session, "test_mesh", "rfc2889_fully_meshed")
        ports = record["ports"]
        assert ports == 3
        assert record["throughput_pps_per_port"] == pytest.approx(
            CAPACITY_PPS, rel=RATE_TOLERANCE), record["trials"]
        assert record["max_pps_per_port"] > CAPACITY_PPS * (1 + RATE_TOLERANCE)
        assert record["forwarding_rate_at_max_pps"] == pytest.approx(
            ports * CAPACITY_PPS, rel=RATE_TOLERANCE)  # capped at N x the port's capacity
        assert record["loss_ratio_at_max"] > 0


def test_broadcast_throughput_is_the_port_capacity(session: dict[str, Any]) -> None:
    with judged_unless_the_machine_was_busy(session["result"]):
        record = _record(session, "test_broadcast", "rfc2889_broadcast_forwarding")
        assert record["throughput_pps"] == pytest.approx(CAPACITY_PPS, rel=RATE_TOLERANCE), \
            record["trials"]
        assert record["port_names"] == ["p1", "p2"]
        assert len(record["latency"]) == 2
        for latency in record["latency"]:  # every receiving port's, at the throughput
            assert latency is not None and latency["count"] > 0, record["latency"]
            assert latency["min_ns"] > 0


def test_too_few_ports_is_the_usage_error(session: dict[str, Any]) -> None:
    assert session["tests"]["test_too_few_ports"]["outcome"] == "failed"
    session["result"].stdout.fnmatch_lines([
        "*rfc2889 congestion control needs 4 ports; the topology has 2 (p0, p1): use a "
        "topology with at least 4 ports, e.g. --netload-topology=netns-bridge:ports=4*"])
