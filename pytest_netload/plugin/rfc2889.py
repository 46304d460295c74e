"""The `rfc2889` marker and fixture: RFC 2889 switch benchmarks as pytest checks.

``@pytest.mark.rfc2889(...)`` sets the procedures' frame size, trial duration, search
and address-test settings; it is checked at collection. The `rfc2889` fixture gives a
`bench.rfc2889.Rfc2889Runner` over the topology's ports; a procedure needing more
ports than the topology has is a usage error naming both counts (docs/rfc2889.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from ..errors import NetloadConfigError

if TYPE_CHECKING:
    from ..bench.rfc2889 import Rfc2889Mark, Rfc2889Runner

__all__ = ["RFC2889_ARGS", "RFC2889_HELP", "parse_rfc2889", "rfc2889"]

RFC2889_HELP = (
    "rfc2889(frame_size=64, trial_duration='30s', resolution=0.005, max_trials=20, "
    "retries=2, max_rate=None, drain='0.5s', ports=None, low=1, high=65536, "
    "learning_rate='1000pps', test_rate='1000pps', learning_count=1000, age_time=None): "
    "settings of the rfc2889 fixture's procedures (fully_meshed, congestion_control, "
    "address_caching_capacity, address_learning_rate, broadcast_forwarding). "
    "Provided by pytest-netload.")
RFC2889_ARGS = ("frame_size", "trial_duration", "resolution", "max_trials", "retries",
                "max_rate", "drain", "ports", "low", "high", "learning_rate", "test_rate",
                "learning_count", "age_time")


def _fps(key: str, value: Any) -> float:
    from ..units import as_rate

    rate = as_rate(value, what=key)
    if rate.kind != "pps" or not rate.value > 0:
        raise NetloadConfigError(f"{key}={value!r}: give a frame rate > 0, e.g. '1000pps'")
    return rate.value


def parse_rfc2889(mark: pytest.Mark) -> Rfc2889Mark:
    from ..bench.rfc2889 import Rfc2889Mark
    from ..rfc2544 import check_frame_sizes
    from ..units import as_rate, run_seconds
    from .markers import _count, _kwargs, _resolution

    kw = _kwargs(mark, RFC2889_ARGS)
    out: dict[str, Any] = {}
    for key, value in kw.items():
        if key == "frame_size":
            (size,) = check_frame_sizes([value])
            if not isinstance(size, int):
                raise NetloadConfigError(f"frame_size={value!r}: give bytes with FCS, e.g. 64")
            out[key] = size
        elif key == "trial_duration":
            out["trial_duration_s"] = run_seconds(value, what=key)
        elif key == "drain":
            out["drain_s"] = run_seconds(value, what=key, zero_ok=True)
        elif key == "age_time":
            out["age_time_s"] = None if value is None else run_seconds(value, what=key)
        elif key == "resolution":
            res = _resolution(value)
            if not isinstance(res, float):
                raise NetloadConfigError(f"resolution={value!r}: give a ratio of the lower "
                                         "bound in (0, 1), e.g. 0.005")
            out[key] = res
        elif key == "max_rate":
            out[key] = None if value is None else as_rate(value, what=key)
        elif key in ("learning_rate", "test_rate"):
            out[f"{key}_fps"] = _fps(key, value)
        elif key == "max_trials":
            out[key] = _count(key, value, 1, 1000)
        elif key == "retries":
            out[key] = _count(key, value, 0, 100)
        elif key == "ports":
            out[key] = None if value is None else _count(key, value, 2, 1024)
        elif key in ("low", "high"):
            out[key] = _count(key, value, 1, 1 << 24)
        elif key == "learning_count":
            out[key] = _count(key, value, 1, 1 << 24)
    if out.get("high", 1) < out.get("low", 1):
        raise NetloadConfigError(f"high={out['high']} is below low={out['low']}: give "
                                 "high >= low")
    return Rfc2889Mark(**out)



@pytest.fixture
def rfc2889(request: pytest.FixtureRequest, netload_engine: Any, netload_ports: Any,
            _netload_built: Any) -> Rfc2889Runner:
    """RFC 2889 procedures over the topology's ports: `rfc2889.fully_meshed()`,
    `.congestion_control()`, `.address_caching_capacity()`, `.address_learning_rate()`,
    `.broadcast_forwarding()` (docs/rfc2889.md)."""
    from ..bench.rfc2889 import Rfc2889Mark, Rfc2889Runner

    mark = request.node.get_closest_marker("rfc2889")
    parsed = parse_rfc2889(mark) if mark is not None else Rfc2889Mark()
    dut = _netload_built[1]
    flush = getattr(dut, "flush_fdb", None)
    first = netload_ports.ports[netload_ports.topology.ports[0].name]
    return Rfc2889Runner(first.engine, netload_ports, parsed, flush=flush,
                         test=request.node.nodeid)
