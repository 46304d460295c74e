"""RFC 2544 procedures as pure logic over a `measure(load) -> TrialResult` callable.

Nothing here imports the engine: the plugin's `rfc2544` fixture binds the
procedures to real trials, and unit tests bind them to fake DUTs.
"""

from .throughput import (
    FrameSizeThroughput,
    Resolution,
    ThroughputResult,
    binary_search,
    check_frame_sizes,
)
from .trial import FrameSize, Measurer, TrialResult, frame_size_label

RFC2544_FRAME_SIZES = (64, 128, 256, 512, 1024, 1280, 1518)

__all__ = [
    "RFC2544_FRAME_SIZES",
    "FrameSize",
    "FrameSizeThroughput",
    "Measurer",
    "Resolution",
    "ThroughputResult",
    "TrialResult",
    "binary_search",
    "check_frame_sizes",
    "frame_size_label",
]
