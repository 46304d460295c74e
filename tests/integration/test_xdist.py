"""pytest-xdist with real engines on two built-in DUTs: conftest_examples/parallel under
`-n 2`, with 1-s trials.

Checked: no port clash (every test passed, no port was busy), the tests of one DUT ran in
one worker and the two DUTs in two, the two engines busy-polled different CPUs, and the
controller's results.json, report.html and JUnit file hold every test of both workers
with its records. The wall-time gain is measured, not tested (docs/plugin.md, "Parallel
tests").
"""

from __future__ import annotations

import json
import os
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="built-in DUTs and DPDK need root"),
    pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="two workers need two CPUs"),
]

EXAMPLE = Path(__file__).parents[2] / "conftest_examples" / "parallel" / "test_parallel.py"
IDS = [f"test_parallel.py::test_below_the_shaper[{rate}-{size}]"
       for rate in ("20M", "40M") for size in (128, 512)]


def test_two_duts_in_two_workers_merge_into_one_set_of_results(
        pytester: pytest.Pytester) -> None:
    shutil.copy(EXAMPLE, pytester.path / "test_parallel.py")
    result = pytester.runpytest_subprocess(
        "-n", "2", "-v", "-p", "no:cacheprovider", "--netload-trial-duration=1s",
        "--junitxml=j.xml", timeout=240)
    out = result.stdout.str()
    result.assert_outcomes(passed=4)
    assert "is held by" not in out  # no port lock was ever busy
    assert "netload: xdist: tests of one topology run in one worker" in out

    # one worker per DUT: each rate's tests in one worker, the two rates in two
    ran = re.findall(r"\[(gw\d)\] \[ *\d+%\] PASSED test_parallel.py::\S+\[(\d+M)-", out)
    by_rate: dict[str, set[str]] = {}
    for worker, rate in ran:
        by_rate.setdefault(rate, set()).add(worker)
    assert sorted(by_rate) == ["20M", "40M"], out
    assert by_rate["20M"] != by_rate["40M"] and all(len(w) == 1 for w in by_rate.values())

    doc = json.loads((pytester.path / "netload-results" / "results.json").read_text())
    assert sorted(t["nodeid"] for t in doc["tests"]) == sorted(IDS)
    for test in doc["tests"]:
        assert test["outcome"] == "passed"
        (run,) = [m for m in test["measurements"] if m["kind"] == "traffic"]
        assert run["streams"][0]["lost"] == 0 and run["streams"][0]["tx_packets"] >= 1900
    workers = doc["environment"]["workers"]
    assert len(workers) == 2
    assert sorted(len(w["topologies"]) for w in workers) == [1, 1]
    # each engine busy-polled CPUs no other worker's engine did
    polled = [w["environment"]["worker_cpus"] or [w["cpus"][0]] for w in workers]
    assert not set(polled[0]) & set(polled[1]), workers
    rates = sorted(t["dut"]["rate_bps"] for t in doc["environment"]["topologies"])
    assert rates == ["20000000", "40000000"]

    report = (pytester.path / "netload-results" / "report.html").read_text()
    suite = ET.parse(pytester.path / "j.xml").getroot().find("testsuite")
    assert suite is not None
    cases = sorted(c.get("name", "") for c in suite.iter("testcase"))
    assert cases == sorted(i.split("::")[1] for i in IDS)
    for nodeid in IDS:
        assert nodeid.split("::")[1] in report
