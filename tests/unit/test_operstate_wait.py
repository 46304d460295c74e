"""The built-in topologies hand out ports only once their veth ends run (operstate UP).

A veth end that was just set up drops what is sent on it until the kernel's linkwatch
work turns its carrier on; on a busy machine that is later, and a test's first frames
were lost (tests/integration/test_topology.py::test_loopback_wire_passes_frames on CI).
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("pyroute2")

from pytest_netload.errors import NetloadEnvironmentError
from pytest_netload.topology.builtin.netns import _wait_running


class FakeIPRoute:
    """get_links(ifname=...) answers DOWN for each name until it was asked ``polls`` times."""

    def __init__(self, polls: dict[str, int]) -> None:
        self.polls = dict(polls)
        self.asked: dict[str, int] = {}

    def get_links(self, *, ifname: str) -> tuple[dict[str, Any]]:
        self.asked[ifname] = self.asked.get(ifname, 0) + 1
        up = self.asked[ifname] > self.polls[ifname]
        return ({"IFLA_OPERSTATE": "UP" if up else "DOWN"},)


def test_returns_once_every_end_is_up() -> None:
    ipr = FakeIPRoute({"a": 0, "b": 3})
    _wait_running(ipr, ("a", "b"), timeout_s=5.0)
    assert ipr.asked == {"a": 1, "b": 4}  # an end that is up is not asked again


def test_already_running_asks_once() -> None:
    ipr = FakeIPRoute({"a": 0})
    _wait_running(ipr, ("a",), timeout_s=0.0)
    assert ipr.asked == {"a": 1}


def test_an_end_that_never_runs_names_itself() -> None:
    ipr = FakeIPRoute({"a": 0, "zz9g1": 10**9})
    with pytest.raises(NetloadEnvironmentError, match=r"zz9g1 .*operstate is still DOWN after 0.05 s"):
        _wait_running(ipr, ("a", "zz9g1"), timeout_s=0.05)
