"""RFC 2544 procedures as pure logic over the search core's `Measurer` of a `TrialResult`
(``measure(load_pps, duration_s) -> TrialResult``), each taking its trials' common
settings as one `TrialSettings`.

Nothing here imports the engine: the plugin's `rfc2544` fixture binds the
procedures to real trials, and unit tests bind them to fake DUTs.
"""

from ..search.settings import TrialSettings
from .back_to_back import BurstMeasurer
from .recovery import RecoveryLoad, RecoveryMeasurer
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
    "BurstMeasurer",
    "FrameSize",
    "FrameSizeThroughput",
    "Measurer",
    "RecoveryLoad",
    "RecoveryMeasurer",
    "Resolution",
    "ThroughputResult",
    "TrialResult",
    "TrialSettings",
    "binary_search",
    "check_frame_sizes",
    "frame_size_label",
]
