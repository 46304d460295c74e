"""NDR/PDR everywhere the throughput is shown, in whole sessions on the fake engine: the
terminal summary, the JUnit properties and assert_throughput's verdicts (passed and failed)
give every MLRsearch goal with its lower and upper bound; binary search reads as before."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

import pytest

import pytest_netload.reports.html  # noqa: F401  (matplotlib: see below)
from pytest_netload import format as fmt
from pytest_netload.reports.load import load
from pytest_netload.rfc2544.mlr_text import goal_band

pytest_plugins = ["pytester"]

# The session writes report.html, which imports matplotlib. Imported first inside an
# in-process pytester run, matplotlib leaves sys.modules with that run, and the next
# run's fresh import fails in Figure() ("'Figure' object has no attribute 'items'").
# Imported here, at collection, it is there before any run.

FAKE = "--netload-engine=fake:capacity_pps=50000,loss_ratio=0,delay_s=100e-6,buffer_frames=1000"

SESSION = """
    import pytest
    from pytest_netload import assert_throughput

    @pytest.mark.rfc2544(frame_sizes=[64], search="mlrsearch", goals="ci-fast")
    def test_ndr_pdr(rfc2544):
        assert_throughput(rfc2544.ndr_pdr(), at_least="45kpps")

    @pytest.mark.rfc2544(frame_sizes=[64], search="mlrsearch", goals="ci-fast")
    def test_mlr_throughput(rfc2544):
        assert_throughput(rfc2544.throughput(), at_least="60kpps")

    @pytest.mark.rfc2544(frame_sizes=[64], trial_duration="1s")
    def test_binary(rfc2544):
        assert_throughput(rfc2544.throughput(), at_least="45kpps")
"""

BOUNDS = "NDR ??.?? kpps [[]??.??, ??.??[]]; PDR ??.?? kpps [[]??.??, ??.??[]]"
EXACT = "NDR [[]??,???, ??,???[]] pps, PDR [[]??,???, ??,???[]] pps"


def _goals(pytester: pytest.Pytester, test: str) -> list[dict[str, Any]]:
    doc = load(pytester.path / "netload-results" / "results.json")
    (test_doc,) = [t for t in doc["tests"] if t["nodeid"].endswith(test)]
    (search,) = [m for m in test_doc["measurements"] if m["kind"] == "mlrsearch"]
    return list(search["goals"])


def _verdict(pytester: pytest.Pytester, test: str) -> dict[str, Any]:
    doc = load(pytester.path / "netload-results" / "results.json")
    (test_doc,) = [t for t in doc["tests"] if t["nodeid"].endswith(test)]
    (verdict,) = test_doc["verdicts"]
    return dict(verdict)


def _properties(pytester: pytest.Pytester) -> dict[str, dict[str, float]]:
    tree = ET.parse(pytester.path / "junit.xml")
    return {case.get("name", ""): {p.get("name", ""): float(p.get("value", "nan"))
                                   for p in case.iter("property")
                                   if p.get("name", "").startswith("netload.")
                                   and p.get("name") != "netload.capture"}
            for case in tree.iter("testcase")}


def _check_summary(result: pytest.RunResult, pytester: pytest.Pytester) -> None:
    """The summary shows NDR and PDR with their bounds, those of the results' record."""
    result.stdout.fnmatch_lines([
        "*= netload summary =*",
        "test*frame size*throughput*p50*p99*loss*verdict*notes",
        f"test_ndr_pdr  *64B*??.?? kpps*PASS*{BOUNDS}*",
        f"test_mlr_throughput  *64B*??.?? kpps*FAIL*{BOUNDS}*",
        "test_binary  *64B*??.?? kpps*0 at throughput*PASS*",
    ])
    table = result.stdout.str().split("netload summary")[1].split("netload: ")[0]
    # test_mlr_throughput's search and its throughput record: one row
    assert [x.split()[0] for x in table.splitlines()[3:] if x] == \
        ["test_ndr_pdr", "test_mlr_throughput", "test_binary"]
    for test in ("test_ndr_pdr", "test_mlr_throughput"):
        goals = _goals(pytester, test)
        assert [g["name"] for g in goals] == ["NDR", "PDR"]
        (line,) = [x for x in table.splitlines() if x.startswith(test + " ")]
        for g in goals:   # the very bounds of the record
            assert goal_band(g["name"], g["lower_bound_pps"], g["upper_bound_pps"]) in line
        assert f" {fmt.rate_pps(goals[0]['lower_bound_pps'])} " in line
    (binary,) = [x for x in table.splitlines() if x.startswith("test_binary ")]
    assert "NDR" not in binary and "PDR" not in binary


def _check_junit(result: pytest.RunResult, pytester: pytest.Pytester) -> None:
    """JUnit properties carry each goal's figure, bounds and conditional throughput."""
    props = _properties(pytester)
    for test in ("test_ndr_pdr", "test_mlr_throughput"):
        mine = props[test]
        for g in _goals(pytester, test):
            key = g["name"].lower()
            assert mine[f"netload.{key}_pps.64B"] == g["lower_bound_pps"]
            assert mine[f"netload.{key}_lower_pps.64B"] == g["lower_bound_pps"]
            assert mine[f"netload.{key}_upper_pps.64B"] == g["upper_bound_pps"]
            assert mine[f"netload.{key}_conditional_pps.64B"] == g["conditional_throughput_pps"]
            assert 45_000 < g["lower_bound_pps"] < g["upper_bound_pps"] < 60_000
    assert props["test_mlr_throughput"]["netload.throughput_pps.64B"] == \
        props["test_mlr_throughput"]["netload.ndr_pps.64B"]
    assert "netload.throughput_pps.64B" not in props["test_ndr_pdr"]
    # as before, with the flag: a line-rate search the DUT bounded is the DUT's figure
    assert props["test_binary"] == {
        "netload.throughput_pps.64B": props["test_binary"]["netload.throughput_pps.64B"],
        "netload.lower_bound_by_generator.throughput_pps.64B": 0.0}
    for test in ("test_ndr_pdr", "test_mlr_throughput"):
        assert props[test]["netload.lower_bound_by_generator.ndr_pps.64B"] == 0.0


def _check_passed_verdict(result: pytest.RunResult, pytester: pytest.Pytester) -> None:
    """A passed assert_throughput names the goal judged, NDR and PDR with their bounds."""
    verdict = _verdict(pytester, "test_ndr_pdr")
    ndr, pdr = _goals(pytester, "test_ndr_pdr")
    exact = fmt.rate_pps_exact
    assert verdict["passed"] and verdict["goal"] == "NDR"
    assert verdict["message"] == (
        f"throughput at 64B {exact(ndr['lower_bound_pps'])} (the NDR) is >= 45,000 pps; "
        f"MLRsearch bounds: NDR [{exact(ndr['lower_bound_pps'])[:-4]}, "
        f"{exact(ndr['upper_bound_pps'])[:-4]}] pps, PDR [{exact(pdr['lower_bound_pps'])[:-4]}, "
        f"{exact(pdr['upper_bound_pps'])[:-4]}] pps")
    assert [g["upper_bound_pps"] for g in verdict["goals"]] == \
        [ndr["upper_bound_pps"], pdr["upper_bound_pps"]]


def _check_failed_verdict(result: pytest.RunResult, pytester: pytest.Pytester) -> None:
    """A failed one too, and adds the conditional throughputs."""
    result.stdout.fnmatch_lines([
        "*test_mlr_throughput*",
        ("E * throughput at 64B ??,??? pps (the NDR) is not >= 60,000 pps; "
         f"MLRsearch bounds: {EXACT}"),
        ("E * measured: ??,??? pps (*line rate), the NDR's relevant lower bound (MLRsearch, "
         "RFC 9971); conditional throughput: NDR ??,??? pps, PDR ??,??? pps"),
        "E * required: throughput >= 60kpps",
        "E * conditions: frame size 64B, *(mlrsearch search)*",
    ])
    verdict = _verdict(pytester, "test_mlr_throughput")
    assert not verdict["passed"] and "MLRsearch bounds: NDR [" in verdict["message"]


def _check_binary_unchanged(result: pytest.RunResult, pytester: pytest.Pytester) -> None:
    """A binary search's verdict reads as before: no goals."""
    verdict = _verdict(pytester, "test_binary")
    assert verdict["message"] == \
        f"throughput at 64B {fmt.rate_pps_exact(verdict['measured'])} is >= 45,000 pps"
    assert "goals" not in verdict


def test_ndr_and_pdr_show_in_the_summary_junit_and_assert_throughput(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_ndr=SESSION)
    result = pytester.runpytest(FAKE, "-p", "no:cacheprovider", "-rA", "--junitxml=junit.xml")
    result.assert_outcomes(passed=2, failed=1)
    assert "FAILED test_ndr.py::test_mlr_throughput" in result.stdout.str()
    _check_summary(result, pytester)
    _check_junit(result, pytester)
    _check_passed_verdict(result, pytester)
    _check_failed_verdict(result, pytester)
    _check_binary_unchanged(result, pytester)
