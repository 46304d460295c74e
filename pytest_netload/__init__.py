"""pytest-netload: RFC 2544-style network device tests on a native DPDK engine.

Importing this package never loads the native extension or DPDK: the engine
runs in its own host process, started by `Engine`. Nor does it load numpy,
MLRsearch or the engine client: the public names below are imported on first
use (PEP 562), so the pytest plugin costs a session without netload tests
nothing. `from pytest_netload import udp` imports what `udp` needs, no more.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .bench.ratecontrol import RateController, RateResult, RateShortfallWarning
    from .engine.client import Engine, LoadedStream, Port
    from .bench.dut_trial import TrialContext
    from .errors import (
        DutHealthFailure,
        EngineCrashed,
        GeneratorLimit,
        InvalidTrial,
        NativeError,
        NetloadConfigError,
        NetloadEnvironmentError,
        NetloadError,
        NetloadHookError,
        NetloadWarning,
    )
    from .measure.dut import DutCounter, DutHealth, LossAttribution
    from .measure.landing import PortCounts
    from .measure.results import RunResult, StreamResult
    from .traffic.expect import ANY, expect
    from .traffic.mix import bidirectional
    from .traffic.packets import (
        TCP,
        UDP,
        Eth,
        IPv4,
        IPv6,
        Template,
        Vlan,
        field,
        from_bytes,
        from_scapy,
    )
    from .traffic.patterns import CBR, Bursts, Gaps, MaxRate, Poisson, Ramp
    from .traffic.replay import Replay, from_pcap
    from .traffic.streams import Stream, TcpSpec, UdpSpec, flow_stream, tcp, udp
    from .units import Duration, Rate, Size
    from .verdicts.assertions import (assert_delivered_to, assert_frames_match,
                                      assert_latency, assert_loss, assert_not_delivered,
                                      assert_rfc2889, assert_sac, assert_spread,
                                      assert_throughput)
    from .y1564 import Sac, Service

# public name -> the module that defines it (relative to this package)
_WHERE: dict[str, str] = {
    name: module
    for module, names in {
        "bench.ratecontrol": ("RateController", "RateResult", "RateShortfallWarning"),
        "engine.client": ("Engine", "LoadedStream", "Port"),
        "bench.dut_trial": ("TrialContext",),
        "errors": ("DutHealthFailure", "EngineCrashed", "GeneratorLimit", "InvalidTrial",
                   "NativeError", "NetloadConfigError", "NetloadEnvironmentError", "NetloadError",
                   "NetloadHookError", "NetloadWarning"),
        "measure.dut": ("DutCounter", "DutHealth", "LossAttribution"),
        "measure.results": ("RunResult", "StreamResult"),
        "traffic.expect": ("ANY", "expect"),
        "traffic.mix": ("bidirectional",),
        "traffic.packets": ("TCP", "UDP", "Eth", "IPv4", "IPv6", "Template", "Vlan", "field",
                            "from_bytes", "from_scapy"),
        "traffic.patterns": ("CBR", "Bursts", "Gaps", "MaxRate", "Poisson", "Ramp"),
        "traffic.replay": ("Replay", "from_pcap"),
        "traffic.streams": ("Stream", "TcpSpec", "UdpSpec", "flow_stream", "tcp", "udp"),
        "units": ("Duration", "Rate", "Size"),
        "verdicts.assertions": ("assert_delivered_to", "assert_frames_match",
                                "assert_latency", "assert_loss", "assert_not_delivered",
                                "assert_rfc2889", "assert_sac", "assert_spread",
                                "assert_throughput"),
        "measure.landing": ("PortCounts",),
        "y1564": ("Sac", "Service"),
    }.items()
    for name in names
}

__all__ = [
    "ANY",
    "CBR",
    "TCP",
    "UDP",
    "Bursts",
    "Duration",
    "DutCounter",
    "DutHealth",
    "DutHealthFailure",
    "Engine",
    "EngineCrashed",
    "Eth",
    "Gaps",
    "GeneratorLimit",
    "IPv4",
    "IPv6",
    "InvalidTrial",
    "LoadedStream",
    "LossAttribution",
    "MaxRate",
    "NativeError",
    "NetloadConfigError",
    "NetloadEnvironmentError",
    "NetloadError",
    "NetloadHookError",
    "NetloadWarning",
    "Poisson",
    "Port",
    "PortCounts",
    "Ramp",
    "Rate",
    "RateController",
    "RateResult",
    "RateShortfallWarning",
    "Replay",
    "RunResult",
    "Sac",
    "Service",
    "Size",
    "Stream",
    "StreamResult",
    "TcpSpec",
    "Template",
    "TrialContext",
    "UdpSpec",
    "Vlan",
    "assert_delivered_to",
    "assert_frames_match",
    "assert_latency",
    "assert_loss",
    "assert_not_delivered",
    "assert_rfc2889",
    "assert_sac",
    "assert_spread",
    "assert_throughput",
    "bidirectional",
    "expect",
    "field",
    "flow_stream",
    "from_bytes",
    "from_pcap",
    "from_scapy",
    "tcp",
    "udp",
]


def __getattr__(name: str) -> Any:
    """A public name, imported from its module on first use and kept here."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
