"""pytest-netload: RFC 2544-style network device tests on a native DPDK engine.

Importing this package never loads the native extension or DPDK: the engine
runs in its own host process, started by `Engine`.
"""

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
from .measure.results import RunResult, StreamResult
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
from .traffic.streams import Stream, TcpSpec, UdpSpec, flow_stream, tcp, udp
from .units import Duration, Rate, Size
from .verdicts.assertions import (assert_latency, assert_loss, assert_rfc2889, assert_sac,
                                  assert_throughput)
from .y1564 import Sac, Service

__all__ = [
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
    "Ramp",
    "Rate",
    "RateController",
    "RateResult",
    "RateShortfallWarning",
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
    "assert_latency",
    "assert_loss",
    "assert_rfc2889",
    "assert_sac",
    "assert_throughput",
    "bidirectional",
    "field",
    "flow_stream",
    "from_bytes",
    "from_scapy",
    "tcp",
    "udp",
]
