"""Sessions on the fake engine whose DUT is faster than the generator: on a topology without
a line rate the searches start from 95 % of the generator's calibrated ceiling, the maximum
passes, and the throughput is only a lower bound the generator set. The summary writes it
">= ...", results.json, JUnit and report.html say so, `assert_throughput` passes when the
bound clears the requirement and is an ERROR (GeneratorLimit), not a FAIL, when it does
not; the same for RFC 2889's broadcast throughput and for MLRsearch. A DUT slower than the
generator keeps its plain figure."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

import pytest

import pytest_netload.reports.baseline  # noqa: F401  (scipy.stats, likewise)
import pytest_netload.reports.html  # noqa: F401  (matplotlib before any in-process run)
from pytest_netload.reports.load import load
from pytest_netload.units import frame_bits

from labfiles import fake_lab

pytest_plugins = ["pytester"]

PORT_RATE_BPS = 100e6   # the fake generator's ports: 148,810 pps of 64-B frames
GENERATOR_PPS = PORT_RATE_BPS / frame_bits(64, "l1")
SEARCH_MAX_PPS = GENERATOR_PPS * 0.95
FAST = "--netload-engine=fake:capacity_pps=1000000,port_rate_bps=100Mbit/s,delay_s=50e-6"
SLOW = "--netload-engine=fake:capacity_pps=50000,port_rate_bps=100Mbit/s,delay_s=50e-6"

# no line rate: the maximum load is the generator's own (as on veth)
RFC2544 = """
    import pytest
    from pytest_netload import assert_throughput

    MARK = dict(frame_sizes=[64], trial_duration="1s", max_trials=8, resolution=0.02)

    @pytest.mark.rfc2544(**MARK)
    def test_reachable(rfc2544):
        tp = rfc2544.throughput()
        assert tp[64].lower_bound_by_generator == {bounded}
        assert_throughput(tp, at_least="40kpps")

    @pytest.mark.rfc2544(**MARK)
    def test_unreachable(rfc2544):
        tp = rfc2544.throughput()
        rfc2544.latency(throughput=tp, trials=1, duration="1s")
        assert_throughput(tp, at_least="1Mpps")
"""


def _run(pytester: pytest.Pytester, engine: str, body: str, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_bound=body)
    path = pytester.path / "veth-like.toml"
    path.write_text(fake_lab("veth-like"))  # no line rate: the generator's own maximum (as on veth)
    return pytester.runpytest(engine, f"--netload-topology={path}", "-p", "no:cacheprovider",
                              "-p", "no:randomly", "--junitxml=junit.xml", *args)


def _document(pytester: pytest.Pytester) -> dict[str, Any]:
    return load(pytester.path / "netload-results" / "results.json")  # valid against the schema


def _tests(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["nodeid"].split("::")[-1]: t for t in doc["tests"]}


def _kind(test: dict[str, Any], kind: str) -> dict[str, Any]:
    (m,) = [m for m in test["measurements"] if m["kind"] == kind]
    return m


def _junit(pytester: pytest.Pytester) -> dict[str, ET.Element]:
    tree = ET.parse(pytester.path / "junit.xml")
    return {case.get("name", ""): case for case in tree.iter("testcase")}


def test_a_dut_faster_than_the_generator_gets_a_lower_bound(pytester: pytest.Pytester) -> None:
    result = _run(pytester, FAST, RFC2544.format(bounded=True))
    # the requirement the bound clears passes; the one it does not is an ERROR, not a FAIL
    result.assert_outcomes(passed=1, errors=1)
    out = result.stdout.str()
    assert "FAILED" not in out, out
    result.stdout.fnmatch_lines([
        "*= netload summary =*",
        "test*frame size*throughput*p50*p99*loss*verdict*notes",
        "test_reachable  *64B*>= 141.4 kpps*0 at throughput*PASS*"
        "generator ceiling; DUT not saturated*",
        "test_unreachable  *64B*>= 141.4 kpps*ERROR*generator ceiling; DUT not saturated*",
        "netload: overall verdict ERROR: 1 of 2 tests errored*",
    ])
    assert re.search(r"ERROR test_bound.py::test_unreachable - "
                     r"pytest_netload.errors.GeneratorLimit", out), out
    assert "last packets of failed" not in out   # no capture: the DUT did not fail
    # the whole message: the bound, what the generator did, the requirement, the fix
    result.stdout.fnmatch_lines([
        "E *pytest_netload.errors.GeneratorLimit: throughput at 64B is at least 141,369 pps "
        "(the generator's ceiling; the DUT lost nothing at the highest load offered), which "
        "does not clear >= 1,000,000 pps: the generator, not the DUT, is the limit; give the "
        "generator faster ports or more cores, or lower the requirement",
        "E *measured: 141,369 pps (95.00 Mbit/s at L1: frame+FCS+preamble+IFG), the highest "
        "load that passed (the search's maximum); only a lower bound of the DUT's "
        "throughput: the search's maximum, 95% of the generator's calibrated 148,810 pps, "
        "passed, so the DUT was never saturated",
        "E *required: throughput >= 1Mpps",
    ])
    tests = _tests(_document(pytester))
    assert tests["test_reachable"]["outcome"] == "passed"
    assert tests["test_unreachable"]["outcome"] == "error"
    assert "GeneratorLimit" not in tests["test_unreachable"]["error"]
    assert tests["test_unreachable"]["error"].startswith("throughput at 64B is at least")
    for name in ("test_reachable", "test_unreachable"):
        tp = _kind(tests[name], "throughput")
        assert tp["lower_bound_by_generator"] is True and tp["max_source"] == "generator"
        assert tp["generator_max_pps"] == pytest.approx(GENERATOR_PPS, rel=1e-5)
        assert tp["max_pps"] == pytest.approx(SEARCH_MAX_PPS, rel=1e-5)
        assert tp["throughput_pps"] == tp["max_pps"] and tp["upper_pps"] is None
    (passed,) = tests["test_reachable"]["verdicts"]
    assert passed["passed"] and passed["lower_bound_by_generator"] and "outcome" not in passed
    assert "is at least 141,369 pps" in passed["message"]
    assert "which clears >= 40,000 pps" in passed["message"]
    (errored,) = tests["test_unreachable"]["verdicts"]
    assert not errored["passed"] and errored["outcome"] == "error"
    assert errored["lower_bound_by_generator"] is True
    latency = _kind(tests["test_unreachable"], "latency_rfc2544")
    assert latency["throughput_lower_bound_by_generator"] is True
    # JUnit: an <error>, not a <failure>, and the figure's lower-bound flag
    cases = _junit(pytester)
    error = cases["test_unreachable"].find("error")
    assert error is not None and cases["test_unreachable"].find("failure") is None
    assert error.get("message", "").startswith("the generator's ceiling (not a DUT verdict)")
    props = {p.get("name"): p.get("value") for p in cases["test_reachable"].iter("property")}
    assert props["netload.lower_bound_by_generator.throughput_pps.64B"] == "1"
    # the report: the figure as a lower bound, the check as an ERROR
    page = (pytester.path / "netload-results" / "report.html").read_text()
    assert "\u2265 141.4 kpps" in page and "ceiling (calibrated 148.8 kpps)" in page
    assert '<span class="badge ERROR">ERROR</span>' in page


def test_a_dut_slower_than_the_generator_keeps_its_figure(pytester: pytest.Pytester) -> None:
    result = _run(pytester, SLOW, RFC2544.format(bounded=False))
    result.assert_outcomes(passed=1, failed=1)   # below 1 Mpps: the DUT's FAIL
    out = result.stdout.str()
    table = out.split("netload summary")[1]
    assert "GeneratorLimit" not in out and not re.search(r"64B +>=", table), out
    assert "generator ceiling; DUT not saturated" not in table, out
    result.stdout.fnmatch_lines(["*AssertionError: throughput at 64B 5?,??? pps is not >= "
                                 "1,000,000 pps*",
                                 "test_reachable  *64B*5?.?? kpps*0 at throughput*PASS*"])
    tp = _kind(_tests(_document(pytester))["test_reachable"], "throughput")
    assert tp["lower_bound_by_generator"] is False and tp["max_source"] == "generator"
    assert tp["upper_pps"] is not None and tp["throughput_pps"] < 60_000


def test_mlrsearch_and_rfc2889_broadcast_say_so_too(pytester: pytest.Pytester) -> None:
    result = _run(pytester, FAST, """
        import pytest
        from pytest_netload import assert_rfc2889, assert_throughput

        @pytest.mark.rfc2544(frame_sizes=[64], search="mlrsearch", goals="ci-fast")
        def test_ndr(rfc2544):
            (r,) = rfc2544.ndr_pdr()
            assert r.ndr.lower_bound_by_generator and r.ndr.upper_bound_pps is None
            assert_throughput(r, at_least="100kpps")

        @pytest.mark.rfc2889(trial_duration="1s", resolution=0.02, max_trials=8)
        def test_broadcast(rfc2889):
            r = rfc2889.broadcast_forwarding()
            assert r.lower_bound_by_generator and r.max_source == "generator"
            assert_rfc2889(r, at_least="200kpps")
    """)
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines([
        "E *GeneratorLimit: RFC 2889 broadcast throughput is at least 141.4 kpps (the "
        "generator's ceiling; the DUT delivered every frame at the highest load offered), "
        "which does not clear >= 200.0 kpps: the generator, not the DUT, is the limit*",
        "E *measured: 141.4 kpps (1 trials); only a lower bound: the search's maximum, 95% of "
        "the generator's calibrated 148,810 pps, passed, so the DUT was never saturated",
        "E *required: broadcast throughput >= 200.0 kpps",
        "test_ndr  *64B*>= 141.4 kpps*PASS*generator ceiling; DUT not saturated; NDR*",
        "test_broadcast  *64B*ERROR*RFC 2889 broadcast throughput >= 141.4 kpps (generator "
        "ceiling; DUT not saturated)*",
    ])
    tests = _tests(_document(pytester))
    mlr = _kind(tests["test_ndr"], "mlrsearch")
    assert mlr["max_source"] == "generator" and mlr["goals"][0]["lower_bound_by_generator"]
    assert mlr["generator_max_pps"] == pytest.approx(GENERATOR_PPS, rel=1e-5)
    bcast = _kind(tests["test_broadcast"], "rfc2889_broadcast_forwarding")
    assert bcast["lower_bound_by_generator"] is True
    assert bcast["generator_max_pps"] == pytest.approx(GENERATOR_PPS, rel=1e-3)
    assert tests["test_broadcast"]["outcome"] == "error"
    cases = _junit(pytester)
    props = {p.get("name"): p.get("value") for p in cases["test_ndr"].iter("property")}
    assert props["netload.lower_bound_by_generator.ndr_pps.64B"] == "1"
    assert cases["test_broadcast"].find("error") is not None
