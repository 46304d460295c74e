"""pytest-netload: RFC 2544-style network device tests on a native DPDK engine.

Importing this package never loads the native extension or DPDK: the engine
runs in its own host process, started by `Engine`.
"""

from .engine.client import Engine, LoadedStream, Port
from .errors import (
    EngineCrashed,
    InvalidTrial,
    NativeError,
    NetloadConfigError,
    NetloadEnvironmentError,
    NetloadError,
    NetloadWarning,
)
from .packets import TCP, UDP, Eth, IPv4, IPv6, Template, Vlan, field, from_bytes, from_scapy
from .results import RunResult, StreamResult
from .traffic import Stream, flow_stream

__all__ = [
    "TCP",
    "UDP",
    "Engine",
    "EngineCrashed",
    "Eth",
    "IPv4",
    "IPv6",
    "InvalidTrial",
    "LoadedStream",
    "NativeError",
    "NetloadConfigError",
    "NetloadEnvironmentError",
    "NetloadError",
    "NetloadWarning",
    "Port",
    "RunResult",
    "Stream",
    "StreamResult",
    "Template",
    "Vlan",
    "field",
    "flow_stream",
    "from_bytes",
    "from_scapy",
]
