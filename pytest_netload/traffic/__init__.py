"""What a generator sends: packet templates (packets), streams of them with frame
sizes and field ops (streams), template rewrites for another wire (rewrite), the
RFC 2544 procedures' traffic in any form a user gives it (mix), and the pacing
patterns that time them (patterns).

Pure Python, below the engine: the engine takes what `streams.Stream.compile()` and
the patterns produce as plain types. The stream API is re-exported here, so
``from pytest_netload.traffic import Stream`` keeps working.
"""

from .mix import Mix, as_mix, bidirectional
from .replay import Replay, from_pcap
from .streams import (
    IMIX_PRESETS,
    L4Spec,
    SizeSpec,
    Stream,
    TcpSpec,
    UdpSpec,
    flow_stream,
    tcp,
    udp,
)

__all__ = ["IMIX_PRESETS", "L4Spec", "Mix", "Replay", "SizeSpec", "Stream", "TcpSpec", "UdpSpec",
           "as_mix", "bidirectional", "flow_stream", "from_pcap", "tcp", "udp"]
