"""RFC 2889 §5.2, §5.6 and §5.9 on the built-in netns-bridge, judged against known answers.

One pytest session (pytester, in a subprocess, as a user runs it) measures the bridge with
the `rfc2889` fixture, 1-s trials of 512-byte frames on ports shaped to 5 Mbit/s (a TBF on
each bridge port's egress: CAPACITY_PPS, 1,230.3 frames/s); every test here judges one
record of its results.json (valid against the shipped schema):

- partially meshed over 3 ports: one-to-many, p0's frames leave by two shaped ports, so
  the throughput (p0's load) is 2 x the capacity; many-to-one, they all leave by p0's, so
  it is the capacity; the forwarding rate at the maximum is the same bound; the search's
  maximum is the marker's per-port max_rate times the sending ports;
- maximum forwarding rate over 2 ports (fully meshed) at 5 loads up to 1.5 x capacity:
  2 x the capacity, reached at the first load above it; forward pressure is skipped:
  veth ports have no line rate, so no inter-frame gap to shorten;
- errored frames on the unshaped 2-port bridge: the engine cannot send undersized or
  bad-FCS frames, and the veths' MTU 1500 cannot carry an oversized (1,519-byte) one, so
  all three are skipped with those reasons; declared max_frame=1000, a 1,001-byte frame
  is sent and the bridge forwards every one (it knows no maximum below its MTU).

The bucket and the ~20 ms queue of each TBF pass ~30 frames above the rate in a trial:
about +2.5 % of a 1-s trial, hence RATE_TOLERANCE. A failed check is excused only with
proof that the machine took the generator's CPU (calm.py).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from calm import judged_unless_the_machine_was_busy
from pytest_netload.topology.builtin import shaper_capacity_pps

pytest_plugins = ["pytester"]

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="built-in DUTs need root (CI runs as root)"),
]

PORT_RATE_BPS = 5_000_000
FRAME_SIZE = 512
CAPACITY_PPS = shaper_capacity_pps(PORT_RATE_BPS, FRAME_SIZE)  # 1,230.3 pps per port
RATE_TOLERANCE = 0.04

INNER = f'''
import pytest

CAP = {CAPACITY_PPS!r}
SHAPED = "port_rate_bps={PORT_RATE_BPS}"
COMMON = dict(frame_size={FRAME_SIZE}, trial_duration="1s", drain="0.2s", resolution=0.02,
              retries=1)


@pytest.mark.netload_topology(f"netns-bridge:ports=3,{{SHAPED}}", ids=["br3"])
@pytest.mark.rfc2889(**COMMON, max_rate=f"{{CAP * 2.5}}pps")
@pytest.mark.parametrize("direction", ["one_to_many", "many_to_one"])
def test_partial(rfc2889, direction):
    r = rfc2889.partially_meshed(direction)
    print("partial", direction, r.throughput_pps, r.forwarding_rate_at_max_pps)


@pytest.mark.netload_topology(f"netns-bridge:ports=2,{{SHAPED}}", ids=["br2s"])
@pytest.mark.rfc2889(**COMMON, max_rate=f"{{CAP * 1.5}}pps", load_steps=5)
def test_mfr(rfc2889):
    r = rfc2889.maximum_forwarding_rate()
    print("mfr", r.mfr_pps, [round(t.forwarding_pps) for t in r.curve])


@pytest.mark.netload_topology("netns-bridge", ids=["br2"])
@pytest.mark.rfc2889(trial_duration="1s", test_rate="1000pps", drain="0.2s")
def test_errored(rfc2889):
    rfc2889.errored_frame_filtering()


@pytest.mark.netload_topology("netns-bridge", ids=["br2"])
@pytest.mark.rfc2889(trial_duration="1s", test_rate="1000pps", drain="0.2s", max_frame=1000)
def test_errored_declared(rfc2889):
    rfc2889.errored_frame_filtering()
'''

# As test_rfc2889_bridge.py: a run whose generator lost its CPU prints the proof.
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
    """The inner session, run once by the first test that needs it: the RunResult and
    results.json's tests by name (with their parameters)."""
    if not _SESSION:
        from pytest_netload.reports.load import load

        pytester.makepyfile(test_switch=INNER)
        pytester.makeconftest(INNER_CONFTEST)
        result = pytester.runpytest_subprocess(
            "-p", "no:cacheprovider", "-p", "no:randomly", "-s", "-rs",
            "--netload-report-dir=out", "test_switch.py", timeout=300)
        _SESSION["result"] = result
        try:
            doc = load(pytester.path / "out" / "results.json")  # valid against the schema
        except Exception as exc:
            _SESSION["error"] = exc
        else:
            _SESSION["tests"] = {t["nodeid"].split("::")[1]: t for t in doc["tests"]}
    if "error" in _SESSION:
        raise _SESSION["error"]
    return _SESSION


def _record(session: dict[str, Any], test: str, kind: str) -> dict[str, Any]:
    entry = session["tests"][test]
    assert entry["outcome"] == "passed", (test, entry["outcome"])
    (record,) = [m for m in entry["measurements"] if m["kind"] == kind]
    return record


@pytest.mark.parametrize(("direction", "bottleneck_ports"), [("one_to_many", 2),
                                                            ("many_to_one", 1)])
def test_partially_meshed_throughput_is_the_bottleneck_ports_capacity(
        session: dict[str, Any], direction: str, bottleneck_ports: int) -> None:
    with judged_unless_the_machine_was_busy(session["result"]):
        record = _record(session, f"test_partial[br3-{direction}]", "rfc2889_partially_meshed")
        expected = bottleneck_ports * CAPACITY_PPS
        assert record["direction"] == direction and record["ports"] == 3
        senders = 1 if direction == "one_to_many" else 2  # the marker's max_rate is per port
        assert record["max_pps"] == pytest.approx(2.5 * CAPACITY_PPS * senders)
        assert record["throughput_pps"] == pytest.approx(expected, rel=RATE_TOLERANCE), \
            record["trials"]
        assert record["forwarding_rate_at_max_pps"] == pytest.approx(expected,
                                                                     rel=RATE_TOLERANCE)
        assert record["loss_ratio_at_max"] > 0


def test_mfr_is_both_ports_capacity_and_forward_pressure_is_skipped(
        session: dict[str, Any]) -> None:
    with judged_unless_the_machine_was_busy(session["result"]):
        record = _record(session, "test_mfr[br2s]", "rfc2889_maximum_forwarding_rate")
        assert len(record["curve"]) == 5
        assert record["mfr_pps"] == pytest.approx(2 * CAPACITY_PPS, rel=RATE_TOLERANCE), \
            record["curve"]
        assert record["mfr_load_pps_per_port"] > CAPACITY_PPS
        low = record["curve"][0]  # 0.3 x capacity: all forwarded
        assert low["loss_ratio"] == 0
    fp = record["forward_pressure"]
    assert fp["skipped"] and fp["detected"] is None and fp["gap_bits"] == 88
    assert fp["skipped_reason"].startswith("the ports have no line rate (software ports")


def test_errored_frames_the_engine_cannot_send_are_skipped_with_the_reason(
        session: dict[str, Any]) -> None:
    record = _record(session, "test_errored[br2]", "rfc2889_errored_frame_filtering")
    out = {o["kind"]: o for o in record["outcomes"]}
    assert {k: o["verdict"] for k, o in out.items()} == {
        "undersized": "skipped", "oversized": "skipped", "bad_fcs": "skipped"}
    assert record["all_filtered"] is None and record["trials"] == []
    assert "at least 64 bytes" in out["undersized"]["skipped_reason"]
    assert out["oversized"]["skipped_reason"].startswith(
        "port p0's MTU 1500 carries frames of at most 1518 bytes")
    assert "cannot corrupt the frame check sequence" in out["bad_fcs"]["skipped_reason"]


def test_the_bridge_forwards_a_frame_above_a_declared_maximum(
        session: dict[str, Any]) -> None:
    record = _record(session, "test_errored_declared[br2]",
                     "rfc2889_errored_frame_filtering")
    over = {o["kind"]: o for o in record["outcomes"]}["oversized"]
    assert over["frame_size"] == 1001
    assert over["tx"] >= 990  # 1,000 at 1,000 fps for 1 s; a valid trial may end a few short
    with judged_unless_the_machine_was_busy(session["result"]):
        assert over["verdict"] == "forwarded" and over["forwarded"] == over["tx"], over
        assert record["all_filtered"] is False
