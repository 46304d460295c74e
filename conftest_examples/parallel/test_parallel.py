"""Two DUTs tested in parallel: `python3 -m pytest -n 2 conftest_examples/parallel`.

Every test here runs once on each of two built-in shaped routers (20 and 40 Mbit/s,
the `netload_topology` marker). Under pytest-xdist the tests of one DUT run in one
worker, one after another, and the two DUTs run at the same time, each worker's engine
on a CPU of its own: the session takes about half its serial time (`-n 0`), and
results.json, report.html and the JUnit file hold every test of both workers.
Time here is trial time: each test offers a steady load for 20 s.

The two routers are the suite's own topologies: a topology given to the session
(`--netload-topology=lab.toml`) replaces them, and each test runs once on it.
"""

import pytest

from pytest_netload import assert_loss

pytestmark = pytest.mark.netload_topology(
    "netns-shaped:rate_bps=20Mbit/s", "netns-shaped:rate_bps=40Mbit/s", ids=["20M", "40M"],
    default=True)


@pytest.mark.netload(rate="2kpps", duration="20s")
@pytest.mark.parametrize("size", [128, 512])
def test_below_the_shaper(rate_controller, traffic, size):
    # 2 kpps of 512 B is 8.2 Mbit/s: below both shapers, so nothing is lost
    result = rate_controller().run(traffic.udp(size=size))
    assert_loss(result.streams[0].result, max_lost=0)
