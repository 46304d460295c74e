"""Expected frames in whole sessions on the fake engine, whose DUT routes (rewrites the
MACs, decrements the TTL), or forgets the TTL, or re-marks DSCP: the expect_frames
fixture, the RFC 2544 marker's expect=, assert_frames_match's message and the
``expected_frames`` record in results.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_netload.reports.load import load

pytest_plugins = ["pytester"]

ROUTER = "--netload-engine=fake:capacity_pps=50000,routed=1"
NO_TTL = "--netload-engine=fake:capacity_pps=50000,routed=1,keep_ttl=1"
REMARK = "--netload-engine=fake:capacity_pps=50000,routed=1,remark_dscp=0"

SESSION = """
    import pytest
    from pytest_netload import assert_frames_match, expect, udp

    ROUTED = expect(ttl="sent-1", src="dut_mac", dst="rx_mac", dscp=10)

    def test_standalone(expect_frames):
        check = expect_frames(udp(size=128, dscp=10, name="probe"), ROUTED)
        assert check.received == 1000
        assert_frames_match(check)

    @pytest.mark.rfc2544(frame_sizes=[64], trial_duration="1s", expect=ROUTED,
                         stream=udp(dscp=10))
    def test_throughput(rfc2544):
        rfc2544.throughput()
        assert_frames_match(rfc2544.frames)

    def test_under_load(rate_controller):
        result = rate_controller(rate="10kpps").run(udp(size=64, dscp=10, name="load"),
                                                    duration="2s", expect=ROUTED)
        assert result.run.frames["load"].received == 20000
        assert_frames_match(result)
"""


def _records(pytester: pytest.Pytester) -> dict[str, list[dict]]:
    path = pytester.path / "netload-results" / "results.json"
    load(path)  # valid against the schema
    data = json.loads(Path(path).read_text())
    return {t["nodeid"].split("::")[-1]: [m for m in t["measurements"]
                                          if m["kind"] == "expected_frames"]
            for t in data["tests"]}


def test_a_router_that_routes_passes(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_expect=SESSION)
    result = pytester.runpytest(ROUTER, "-p", "no:cacheprovider", "-rA")
    result.assert_outcomes(passed=3)
    records = _records(pytester)
    (standalone,) = records["test_standalone"]
    assert standalone["procedure"] == "expect_frames"
    assert standalone["streams"] == [{"stream": "probe", "received": 1000, "matched": 1000,
                                      "mismatched": 0, "by_rule": {"expected": 1000},
                                      "mismatches": []}]
    (tp,) = records["test_throughput"]
    assert tp["procedure"] == "throughput" and tp["frame_size"] == "64B"
    assert tp["trials"] >= 1 and tp["mismatch_trials"] == 0


@pytest.mark.parametrize(("engine", "diff"), [
    (NO_TTL, "ip.ttl: expected 63, got 64"),
    (REMARK, "ip.dscp: expected 10, got 0"),
])
def test_a_router_that_keeps_the_ttl_or_remarks_fails_with_a_diff(
        pytester: pytest.Pytester, engine: str, diff: str) -> None:
    pytester.makepyfile(test_expect=SESSION)
    result = pytester.runpytest(engine, "-p", "no:cacheprovider", "-rA")
    result.assert_outcomes(failed=3)
    result.stdout.fnmatch_lines([
        "*received frames differ from the expected frame*",
        "*stream 'probe': 1000 of 1000 frames did not match the expected frame*",
        f"*frame seq 0 (124 bytes): {diff}*",
    ])
    (standalone,) = _records(pytester)["test_standalone"]
    (stream,) = standalone["streams"]
    assert stream["mismatched"] == 1000 and len(stream["mismatches"]) == 8
    assert stream["mismatches"][0]["diff"] == [diff]
    (tp,) = _records(pytester)["test_throughput"]
    assert tp["mismatch_trials"] == tp["trials"] >= 1
    html = (pytester.path / "netload-results" / "report.html").read_text()
    assert "Expected frames (compared in the engine&#39;s RX path)" in html or \
        "Expected frames (compared in the engine's RX path)" in html
    assert f"seq 0: {diff}" in html and "expect_frames" in html


def test_every_rfc2544_procedure_takes_expect(pytester: pytest.Pytester) -> None:
    """frame_loss, back_to_back, recovery and reset compare their trials' frames too,
    each procedure's checks recorded apart."""
    pytester.makepyfile(test_expect_procedures="""
        import pytest
        from pytest_netload import assert_frames_match, expect, udp

        @pytest.mark.rfc2544(frame_sizes=[64], trial_duration="1s", stream=udp(dscp=10))
        def test_all(rfc2544):
            routed = expect(ttl="sent-1", src="dut_mac", dst="rx_mac")
            rfc2544.frame_loss(expect=routed)
            rfc2544.back_to_back(expect=routed, burst="10ms", repetitions=1)
            rfc2544.recovery(throughput="20kpps", expect=routed, overload="1s", relief="1s")
            rfc2544.reset(lambda: None, load="10kpps", at="0s", duration="2s",
                          expect=routed)
            assert {c.stream for c in rfc2544.frames} and len(rfc2544.frames) == 4
            assert_frames_match(rfc2544.frames)
    """)
    result = pytester.runpytest(ROUTER, "-p", "no:cacheprovider", "-rA")
    result.assert_outcomes(passed=1)
    procedures = [m["procedure"] for m in _records(pytester)["test_all"]]
    assert procedures == ["frame_loss", "back_to_back", "recovery", "reset"]


def test_a_dict_expect_names_one_stream_of_a_run_that_loads_several(
        pytester: pytest.Pytester) -> None:
    """expect={name: ...} checks that stream only, in a run of a two-stream mix (it was
    refused as naming a stream 'not of this run' when the lanes checked it per stream);
    a name of no stream is refused, naming the run's streams."""
    pytester.makepyfile(test_expect_dict="""
        import pytest
        from pytest_netload import assert_frames_match, expect, udp
        from pytest_netload.errors import NetloadConfigError

        MIX = [(udp(dscp=10), 1), (udp(dscp=10, dport=5001), 1)]

        @pytest.mark.rfc2544(frame_sizes=[64], trial_duration="1s", stream=MIX)
        def test_dict(rfc2544):
            routed = expect(ttl="sent-1", src="dut_mac", dst="rx_mac")
            rfc2544.frame_loss(expect=routed, step=0.5)
            names = sorted({c.stream for c in rfc2544.frames})
            assert len(names) == 2, names
            rfc2544.frame_loss(expect={names[0]: routed}, step=0.5)
            assert sorted({c.stream for c in rfc2544.frames}) == names
            assert_frames_match(rfc2544.frames)
            with pytest.raises(NetloadConfigError, match="not streams of this run"):
                rfc2544.frame_loss(expect={"nosuch": routed}, step=0.5)
    """)
    result = pytester.runpytest(ROUTER, "-p", "no:cacheprovider", "-rA")
    result.assert_outcomes(passed=1)
