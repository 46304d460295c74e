"""The `rfc2889` marker and fixture: RFC 2889 switch benchmarks as pytest checks.

``@pytest.mark.rfc2889(...)`` sets the procedures' frame size, trial duration, search
and address-test settings; it is checked at collection. The `rfc2889` fixture gives a
`bench.rfc2889.Rfc2889Runner` over the topology's ports; a procedure needing more
ports than the topology has is a usage error naming both counts (docs/rfc2889.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from ..bench.rfc2889 import Rfc2889Runner
    from ..bench.settings import Rfc2889Mark

__all__ = ["RFC2889_ARGS", "RFC2889_HELP", "parse_rfc2889", "rfc2889"]

RFC2889_HELP = (
    "rfc2889(frame_size=64, trial_duration='30s', resolution=0.005, max_trials=20, "
    "retries=2, max_rate=None, drain='0.5s', ports=None, low=1, high=65536, "
    "learning_rate='1000pps', test_rate='1000pps', learning_count=1000, age_time=None, "
    "load_steps=10, max_frame=1518, stream=None, expect=None): "
    "settings of the rfc2889 fixture's procedures (fully_meshed, partially_meshed, "
    "congestion_control, maximum_forwarding_rate, address_caching_capacity, "
    "address_learning_rate, errored_frame_filtering, broadcast_forwarding); stream: the "
    "meshes' traffic, any form rfc2544's stream= takes (default UDP); expect: the frames "
    "the meshes compare (rfc2889.frames). "
    "Provided by pytest-netload.")
RFC2889_ARGS = ("frame_size", "trial_duration", "resolution", "max_trials", "retries",
                "max_rate", "drain", "ports", "low", "high", "learning_rate", "test_rate",
                "learning_count", "age_time", "load_steps", "max_frame", "stream", "expect")


def parse_rfc2889(mark: pytest.Mark) -> Rfc2889Mark:
    """The marker's settings (bench/settings.py reads and checks them)."""
    from ..bench.settings import Rfc2889Mark

    return Rfc2889Mark.from_marker(mark)


@pytest.fixture
def rfc2889(request: pytest.FixtureRequest, netload_engine: Any, netload_ports: Any,
            _netload_built: Any) -> Rfc2889Runner:
    """RFC 2889 procedures over the topology's ports: `rfc2889.fully_meshed()`,
    `.partially_meshed(direction)`, `.congestion_control()`,
    `.maximum_forwarding_rate()`, `.address_caching_capacity()`,
    `.address_learning_rate()`, `.errored_frame_filtering()`,
    `.broadcast_forwarding()` (docs/rfc2889.md); the DUT's hooks (docs/hooks.md) run
    around every trial."""
    from ..bench.rfc2889 import Rfc2889Runner
    from ..bench.settings import Rfc2889Mark
    from .dut_hooks import dut_flush_addresses
    from .fixtures import _hook_runner, trial_hooks

    mark = request.node.get_closest_marker("rfc2889")
    parsed = parse_rfc2889(mark) if mark is not None else Rfc2889Mark()
    dut = _netload_built[1]
    first = netload_ports.ports[netload_ports.topology.ports[0].name]
    return Rfc2889Runner(first.engine, netload_ports, parsed,
                         flush=dut_flush_addresses(_hook_runner(request.config), dut),
                         test=request.node.nodeid, hooks=trial_hooks(request, dut))
