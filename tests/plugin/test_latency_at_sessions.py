"""Latency at loads in whole sessions on the fake engine: the marker's `latency_at` (and
throughput()'s) measure latency at fractions of each frame size's throughput, or of the
PDR with 'csit', in the same session; results.json (valid against the schema), the
terminal summary and the HTML report show it; a bad value fails collection naming it."""

from __future__ import annotations

import re
from typing import Any

import pytest

import pytest_netload.reports.html  # noqa: F401  (matplotlib first: test_ndr_pdr_sessions.py)
from pytest_netload.reports.json import SCHEMA_VERSION
from pytest_netload.reports.load import load

pytest_plugins = ["pytester"]

FAKE = "--netload-engine=fake:capacity_pps=50000,loss_ratio=0,delay_s=100e-6,buffer_frames=1000"

SESSION = """
    import pytest
    from pytest_netload import assert_throughput

    @pytest.mark.rfc2544(frame_sizes=[64], trial_duration="1s",
                         latency_at=[1.0, 0.1, 0.5, 0.9])
    def test_binary(rfc2544):
        result = rfc2544.throughput()
        at = result[64].latency_at
        assert [x.fraction for x in at.loads] == [0.1, 0.5, 0.9, 1.0]
        assert all(x.latency is not None for x in at.loads)
        assert_throughput(result, at_least="45kpps")

    @pytest.mark.rfc2544(frame_sizes=[64], search="mlrsearch", goals="ci-fast")
    def test_csit(rfc2544):
        assert rfc2544.throughput(latency_at="csit")[64].latency_at.of == "PDR"
"""


def _throughput(doc: dict[str, Any], test: str) -> dict[str, Any]:
    (test_doc,) = [t for t in doc["tests"] if t["nodeid"].endswith(test)]
    (record,) = [m for m in test_doc["measurements"] if m["kind"] == "throughput"]
    return dict(record)


def test_latency_at_loads_reaches_results_summary_and_report(pytester: pytest.Pytester
                                                             ) -> None:
    pytester.makepyfile(test_lat=SESSION)
    result = pytester.runpytest("-p", "no:randomly", FAKE, "--netload-report=html")
    result.assert_outcomes(passed=2)
    doc = load(pytester.path / "netload-results" / "results.json")  # the schema's check
    assert doc["schema_version"] == SCHEMA_VERSION  # latency_at came with 1.2
    assert tuple(int(x) for x in SCHEMA_VERSION.split(".")) >= (1, 2)

    binary = _throughput(doc, "test_binary")
    at = binary["latency_at"]
    assert (at["of"], at["base_pps"], at["preset"], at["duration_s"]) == \
        ("throughput", binary["throughput_pps"], None, 1.0)
    assert [x["load_pps"] for x in at["loads"]] == \
        [f * binary["throughput_pps"] for f in (0.1, 0.5, 0.9, 1.0)]
    for step in at["loads"]:
        lat = step["latency"]
        assert lat["count"] > 0 and lat["min_ns"] <= lat["mean_ns"] <= lat["max_ns"]
        assert {"p50", "p99", "p99.9"} <= set(lat["percentiles"])
        assert step["invalid_reason"] is None and step["lost"] == 0

    csit = _throughput(doc, "test_csit")
    at = csit["latency_at"]
    (search,) = [m for t in doc["tests"] if t["nodeid"].endswith("test_csit")
                 for m in t["measurements"] if m["kind"] == "mlrsearch"]
    pdr = next(g for g in search["goals"] if g["name"] == "PDR")
    assert (at["of"], at["base_pps"], at["preset"]) == ("PDR", pdr["lower_bound_pps"], "csit")
    assert [x["fraction"] for x in at["loads"]] == [0.0, 0.1, 0.5, 0.9]
    assert at["loads"][0]["load_pps"] == min(9000.0, 0.01 * pdr["lower_bound_pps"])

    summary = result.stdout.str()
    assert re.search(r"test_binary .*latency p50/p99 at % of throughput: 10% \S+/\S+, "
                     r"50% \S+/\S+, 90% \S+/\S+, 100% \S+/\S+", summary)
    assert re.search(r"test_csit .*latency p50/p99 at % of PDR: no load \S+/\S+, "
                     r"10% \S+/\S+, 50% \S+/\S+, 90% \S+/\S+", summary)

    html = (pytester.path / "netload-results" / "report.html").read_text()
    table = html.split('class="latency-at"')[1].split("</table>")[0]
    assert len(re.findall(r"<tr><td>64B</td>", table)) == 8  # 4 loads x 2 tests
    assert "no load" in table and "(PDR)" in table and "(throughput)" in table


def test_a_bad_latency_at_fails_collection_naming_it(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_lat="""
        import pytest

        @pytest.mark.rfc2544(frame_sizes=[64], latency_at=[0.5, 2])
        def test_x(rfc2544):
            rfc2544.throughput()
    """)
    result = pytester.runpytest("-p", "no:randomly", FAKE)
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*latency_at=[[]0.5, 2[]]: 2 is not a fraction from 0 to 1; "
                                 "give fractions of the throughput*"])
