"""What a generator sends: packet templates (packets), streams of them with frame
sizes and field ops (streams), and the pacing patterns that time them (patterns).

Pure Python, below the engine: the engine takes what `streams.Stream.compile()` and
the patterns produce as plain types. The stream API is re-exported here, so
``from pytest_netload.traffic import Stream`` keeps working.
"""

from .streams import IMIX_PRESETS, SizeSpec, Stream, UdpSpec, flow_stream, udp

__all__ = ["IMIX_PRESETS", "SizeSpec", "Stream", "UdpSpec", "flow_stream", "udp"]
