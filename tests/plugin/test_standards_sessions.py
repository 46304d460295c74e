"""The y1564 and rfc2889 markers and fixtures on the fake engine: bad input fails at
collection (or at set-up, where it needs the topology) naming the field; a Y.1564 run
records its SCT and SPT in results.json (valid against the schema), JUnit, the summary
and the HTML report; assert_sac fails naming the step and criterion; an RFC 2889
procedure needing more ports than the topology has is a usage error naming both counts.
(tests/integration/test_y1564_policed.py and test_rfc2889_bridge.py run them on the
real engine against DUTs with known answers.)"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from pytest_netload.reports.load import load

pytest_plugins = ["pytester"]

# a 10 Mbit/s (L2) shaper with a small buffer: the SCT's policing step is held at 10 Mbit/s
FAKE = ("--netload-engine=fake:capacity_bps=10Mbit/s,capacity_layer=l2,loss_ratio=0,"
        "delay_s=100e-6,buffer_frames=20")
GOOD = ('{"name": "data", "cir": "10Mbit/s", "frame_size": 512, "dscp": 10, '
        '"sac": {"flr": "0.1%", "ftd": "10ms", "availability": "99%"}}')


def _run(pytester: pytest.Pytester, body: str, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_std=body)
    return pytester.runpytest("-p", "no:randomly", FAKE, "--junitxml=junit.xml", *args)


def _results(pytester: pytest.Pytester) -> dict[str, Any]:
    path = pytester.path / "netload-results" / "results.json"
    load(path)  # valid against the schema
    data: dict[str, Any] = json.loads(path.read_text())
    return data


BAD_SERVICES = {
    "a SAC without units": ('{"name": "v", "cir": "1Mbit/s", "sac": {"ftd": 10}}',
                            r"service 'v': sac ftd=10 has no unit; write e.g. ftd='10ms'"),
    "a CIR without a unit": ('{"name": "v", "cir": 1000000}', r"service 'v': cir=1000000 has "
                             "no unit"),
    "an EIR without a CIR": ('{"name": "v", "cir": 0, "eir": "2Mbit/s"}', r"EIR without "
                             "(a )?CIR"),
}


@pytest.mark.parametrize("case", sorted(BAD_SERVICES))
def test_bad_services_fail_collection_naming_the_field(pytester: pytest.Pytester,
                                                       case: str) -> None:
    service, message = BAD_SERVICES[case]
    result = _run(pytester, f"""
        import pytest

        @pytest.mark.y1564(services=[{service}])
        def test_x(y1564):
            pass
    """)
    result.assert_outcomes(errors=1)
    out = result.stdout.str()
    assert "test_std.py::test_x: @pytest.mark.y1564:" in out, out
    assert re.search(message, out), out


def test_overlapping_classifiers_name_both_services(pytester: pytest.Pytester) -> None:
    result = _run(pytester, """
        import pytest

        @pytest.mark.y1564(services=[{"name": "a", "cir": "1Mbit/s", "dscp": 46},
                                     {"name": "b", "cir": "1Mbit/s"}])
        def test_x(y1564):
            pass
    """)
    result.assert_outcomes(errors=1)
    out = result.stdout.str()
    assert "@pytest.mark.y1564:" in out and "'a'" in out and "'b'" in out, out
    assert "overlap" in out and "dscp" in out, out


def test_a_cir_above_the_line_rate_errors_naming_it(pytester: pytest.Pytester) -> None:
    # the fake topology declares its ports' line rate (10 Gbit/s at L1)
    result = _run(pytester, """
        import pytest

        @pytest.mark.y1564(services=[{"name": "big", "cir": "20Gbit/s"}])
        def test_x(y1564):
            pass
    """)
    result.assert_outcomes(errors=1)
    out = result.stdout.str()
    assert "@pytest.mark.y1564:" in out and "'big'" in out and "line rate" in out, out


def test_unknown_marker_argument_fails_collection(pytester: pytest.Pytester) -> None:
    result = _run(pytester, f"""
        import pytest

        @pytest.mark.y1564(services=[{GOOD}], step="1s")
        def test_x(y1564):
            pass
    """)
    result.assert_outcomes(errors=1)
    assert "unknown argument 'step'" in result.stdout.str()


def test_y1564_run_reaches_every_report(pytester: pytest.Pytester) -> None:
    result = _run(pytester, f"""
        import pytest
        from pytest_netload import assert_sac

        @pytest.mark.y1564(services=[{GOOD}], step_duration="1s", spt_duration="5s")
        def test_activation(y1564):
            result = y1564.run()
            assert [s.name for s in result.sct[0].steps] == [
                "CIR 25%", "CIR 50%", "CIR 75%", "CIR 100%", "policing"]
            assert_sac(result)
    """)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*test_activation*PASS*Y.1564 SCT 'data': all 5 steps "
                                 "passed*Y.1564 SPT 5.00s: data 100.0% avail*"])
    doc = _results(pytester)
    kinds = [m["kind"] for m in doc["tests"][0]["measurements"]]
    assert kinds.count("y1564_sct") == 1 and kinds.count("y1564_spt") == 1, kinds
    (spt,) = [m for m in doc["tests"][0]["measurements"] if m["kind"] == "y1564_spt"]
    assert spt["intervals"] == 5 and len(spt["services"][0]["series"]["flr"]) == 5
    (verdict,) = doc["tests"][0]["verdicts"][-1:]
    assert verdict["check"] == "sac" and verdict["passed"]
    junit = (pytester.path / "junit.xml").read_text()
    assert 'name="netload.y1564_sct_passed.data.policing" value="1"' in junit
    assert 'name="netload.y1564_spt_availability.data" value="1.0"' in junit
    html = (pytester.path / "netload-results" / "report.html").read_text()
    assert '<h2 id="y1564">' in html and '<table class="y1564-sct">' in html
    # done: the checkpoint file is gone, the result is in results.json
    assert not list((pytester.path / "netload-results").glob("y1564-checkpoints/*.jsonl"))


def test_assert_sac_names_the_step_and_criterion(pytester: pytest.Pytester) -> None:
    # a service that claims 12.5 Mbit/s on the 10 Mbit/s DUT: CIR 100 % loses frames
    result = _run(pytester, """
        import pytest
        from pytest_netload import assert_sac

        @pytest.mark.y1564(services=[{"name": "over", "cir": "12.5Mbit/s", "frame_size": 512,
                                      "sac": {"flr": "0.1%"}}],
                           step_duration="1s", steps=[0.5, 1.0], policing=False)
        def test_over(y1564):
            assert_sac(y1564.sct("over"))
    """)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*AssertionError: Y.1564 SAC not met: 1 of 1 results failed",
                                 "*service configuration test: service 'over' CIR 100%: "
                                 "*FLR * fails <= 0.1*"])


def test_rfc2889_port_count_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = _run(pytester, """
        import pytest

        @pytest.mark.rfc2889(trial_duration="1s")
        def test_congestion(rfc2889):
            rfc2889.congestion_control()
    """)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*rfc2889 congestion control needs 4 ports; the topology "
                                 "has 2 (*): use a topology with at least 4 ports, e.g. "
                                 "--netload-topology=netns-bridge:ports=4*"])


def test_rfc2889_bad_marker_argument_fails_collection(pytester: pytest.Pytester) -> None:
    result = _run(pytester, """
        import pytest

        @pytest.mark.rfc2889(low=100, high=10)
        def test_x(rfc2889):
            pass
    """)
    result.assert_outcomes(errors=1)
    assert "@pytest.mark.rfc2889: high=10 is below low=100" in result.stdout.str()


def test_rfc2889_broadcast_on_the_fake_engine(pytester: pytest.Pytester) -> None:
    result = _run(pytester, """
        import pytest

        @pytest.mark.rfc2889(trial_duration="1s", max_rate="2kpps", resolution=0.25,
                             max_trials=4, frame_size=512)
        def test_broadcast(rfc2889):
            r = rfc2889.broadcast_forwarding()
            assert r.ports == 2 and r.throughput_pps > 0
            assert r.latency and r.latency[0] is not None
    """)
    result.assert_outcomes(passed=1)
    (m,) = [m for m in _results(pytester)["tests"][0]["measurements"]
            if m["kind"] == "rfc2889_broadcast_forwarding"]
    assert m["port_names"] == ["p1"] and m["trials"], m  # the receivers, as latency is ordered
    result.stdout.fnmatch_lines(["*test_broadcast*PASS*RFC 2889 broadcast throughput*"])


def test_rfc2889_mesh_needs_every_pair_wired(pytester: pytest.Pytester) -> None:
    result = _run(pytester, """
        import pytest

        @pytest.mark.rfc2889(trial_duration="1s", max_rate="2kpps")
        def test_mesh(rfc2889):
            rfc2889.fully_meshed()
    """)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*no wire of topology 'fake' goes from p1 to p0; its wires "
                                 "are p0->p1*"])


# The fake DUT's 20-frame buffer in front of its 10 Mbit/s: to a back-to-back burst it is a
# token bucket of 20 x 512 B filled at 10 Mbit/s (the queue starts empty at each run).
BUCKET = ('{"name": "data", "cir": "10Mbit/s", "cbs": "10240B", "frame_size": 512, '
          '"sac": {"flr": "0.1%"}}')


def test_y1564_bursts_follow_the_bucket_and_reach_every_report(
        pytester: pytest.Pytester) -> None:
    result = _run(pytester, f"""
        import pytest
        from pytest_netload import assert_sac

        @pytest.mark.y1564(services=[{BUCKET}], burst_sizes=[0.8, 2.0], bursts=True,
                           step_duration="1s", spt_duration="2s", steps=[1.0])
        def test_bursts(y1564):
            result = y1564.run()
            (b,) = result.bursts
            small, big = b.steps
            assert (small.frames, small.expected, small.sample.rx_frames) == (16, "pass", 16)
            assert (big.frames, big.expected) == (40, "drop"), big.reason
            assert abs(big.sample.rx_frames - 20) <= 1, big.reason
            assert_sac(result)

        @pytest.mark.y1564(services=[{{"name": "claims", "cir": "10Mbit/s", "cbs": "20kB",
                                       "frame_size": 512}}])
        def test_a_bigger_claimed_cbs_fails(y1564):
            assert_sac(y1564.bursts("claims"))
    """)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "*AssertionError: Y.1564 SAC not met: 1 of 1 results failed",
        "*burst test: service 'claims' burst CBS 100%: expected to pass whole (19,968 B "
        "within the bucket, CBS 20,000 B at 10.00 Mbit/s, at *); received 2? of 39: not as "
        "expected within 1 frame*"])
    result.stdout.fnmatch_lines(["*Y.1564 bursts 'data': CBS 80% 16/16, CBS 200% 2?/40*"])
    # the progress line, off a terminal: a line per burst, k of n
    line = "netload: test_bursts | 512B | Y.1564 bursts data | burst {} of 2*"
    result.stdout.fnmatch_lines([line.format(1), line.format(2)])
    doc = _results(pytester)
    bursts = [m for t in doc["tests"] for m in t["measurements"] if m["kind"] == "y1564_bursts"]
    assert [b["passed"] for b in bursts] == [True, False]
    assert bursts[0]["steps"][1]["expected"] == "drop" and bursts[0]["steps"][1]["lost"] >= 19
    html = (pytester.path / "netload-results" / "report.html").read_text()
    assert '<table class="y1564-bursts">' in html and "CBS 200%" in html


def test_rfc2889_errored_frames_on_the_fake_engine(pytester: pytest.Pytester) -> None:
    """The fake wire forwards what fits: an oversized frame for max_frame=1000 (1,001 B)
    runs and is forwarded; undersized and bad-FCS frames are skipped with the reason."""
    result = _run(pytester, """
        import pytest

        @pytest.mark.rfc2889(trial_duration="1s", test_rate="500pps", max_frame=1000)
        def test_errored(rfc2889):
            r = rfc2889.errored_frame_filtering()
            assert r.outcome("oversized").verdict == "forwarded"
            assert r.all_filtered is False

        @pytest.mark.rfc2889(trial_duration="1s")
        def test_oversized_beyond_the_mtu(rfc2889):
            r = rfc2889.errored_frame_filtering()
            assert [o.verdict for o in r.outcomes] == ["skipped"] * 3
            assert r.all_filtered is None

        @pytest.mark.rfc2889(trial_duration="1s")
        def test_partial(rfc2889):
            rfc2889.partially_meshed("many_to_one")
    """)
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*rfc2889 partially meshed needs 3 ports; the topology has 2 "
                                 "(p0, p1)*"])
    tests = {t["nodeid"].split("::")[-1]: t for t in _results(pytester)["tests"]}
    (m,) = [m for m in tests["test_errored"]["measurements"]
            if m["kind"] == "rfc2889_errored_frame_filtering"]
    over = {o["kind"]: o for o in m["outcomes"]}
    assert over["oversized"]["frame_size"] == 1001 and over["oversized"]["tx"] == 500
    assert over["undersized"]["skipped_reason"].startswith("the engine sends frames of at "
                                                           "least 64 bytes")
    (big,) = [m for m in tests["test_oversized_beyond_the_mtu"]["measurements"]
              if m["kind"] == "rfc2889_errored_frame_filtering"]
    assert "MTU 1500 carries frames of at most 1518 bytes" in \
        big["outcomes"][1]["skipped_reason"]


COLOURED = ('{"name": "data", "cir": "5Mbit/s", "eir": "3Mbit/s", "frame_size": 512, '
            '"colour": "dscp", "green": 10, "yellow": 12, "sac": {"flr": "0.1%"}}')


def test_a_colour_aware_sct_counts_green_and_yellow_apart(pytester: pytest.Pytester) -> None:
    """The fake DUT's 10 Mbit/s carries the 5 + 3 Mbit/s CIR+EIR step whole; its policing
    step (10 Mbit/s offered: 5 green, 5 yellow) passes the green but lets yellow above
    the EIR through, which fails only the yellow rate criterion."""
    result = _run(pytester, f"""
        import pytest

        @pytest.mark.y1564(services=[{COLOURED}], step_duration="1s", steps=[1.0])
        def test_colour(y1564):
            cir, eir, policing = y1564.sct("data").steps
            assert cir.sample.yellow_tx_frames is None and cir.passed, cir.reason
            assert eir.passed, eir.reason
            assert eir.sample.yellow_rx_frames == eir.sample.yellow_tx_frames > 0
            assert [c.name for c in policing.checks if c.passed is False] == ["yellow_ir"]
    """)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*Y.1564 SCT 'data': 2/3 steps passed, not policing "
                                 "(CIR+EIR: green 1,22?/1,22?, yellow 73?/73?)*"])
    (sct,) = [m for m in _results(pytester)["tests"][0]["measurements"]
              if m["kind"] == "y1564_sct"]
    assert sct["service"]["colour"] == "dscp" and sct["service"]["yellow"] == 12
    eir = sct["steps"][1]
    assert eir["yellow"]["tx_frames"] == eir["yellow"]["rx_frames"] > 700, eir
    assert sct["steps"][0]["yellow"] is None
    html = (pytester.path / "netload-results" / "report.html").read_text()
    assert "Yellow recv / sent" in html and "colour-aware by DSCP: green 10, yellow 12" in html


def test_a_colour_aware_spt_is_one_run_of_its_green_frames(pytester: pytest.Pytester) -> None:
    """The SPT sends each service at its CIR, all green, in one engine run: every
    interval counted, none invalid, no yellow frames."""
    result = _run(pytester, f"""
        import pytest

        @pytest.mark.y1564(services=[{COLOURED}], spt_duration="5s", checkpoint=False)
        def test_colour(y1564):
            result = y1564.spt()
            (s,) = result.services
            assert result.intervals == 5 and s.invalid_intervals == 0 and result.passed
            assert len(y1564.spt_intervals) == 5
            assert all(iv.tx_packets.shape == (1,) for iv in y1564.spt_intervals)
    """)
    result.assert_outcomes(passed=1)
