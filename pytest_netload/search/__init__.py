"""The search core below the standards: one bisection of a judged trial, by rate or by
count, with its resolution, retries of the trials the generator failed, ceiling
bookkeeping and the final bracket; and where a search's maximum came from.

RFC 2544 (throughput, back-to-back), RFC 2889 (forwarding, broadcast, address caching and
learning) and Y.1564 (the configuration test's retried steps) call it; none of them
imports another standard's internals. Every procedure gets its trials from the one
`Measurer` protocol (each standard names its specialisation as an alias of it) and its
trials' common settings as one `TrialSettings`. Pure: no engine, no pytest.
"""

from .bisection import (
    Bracket,
    CountSearch,
    RateSearch,
    TrialLog,
    bisect,
    check_count,
    check_rate,
    check_retries,
    search_count,
    search_rate,
)
from .lower_bound import (
    MAX_SOURCES,
    MaxSource,
    SearchMax,
    check_max_source,
    lower_bound_by_generator,
)
from .resolution import (
    DEFAULT_MAX_TRIALS,
    DEFAULT_RESOLUTION,
    DEFAULT_RESOLUTION_RATIO,
    DEFAULT_RETRIES,
    Resolution,
    check_reachable,
)
from .settings import MAX_FRAME_SIZE, MIN_FRAME_SIZE, TrialSettings, check_frame_size
from .trial import FrameSize, FunctionMeasurer, J, Judged, Measurer, require_valid, valid_trial

__all__ = [
    "DEFAULT_MAX_TRIALS", "DEFAULT_RESOLUTION", "DEFAULT_RESOLUTION_RATIO", "DEFAULT_RETRIES",
    "MAX_FRAME_SIZE", "MAX_SOURCES", "MIN_FRAME_SIZE", "Bracket", "CountSearch", "FrameSize",
    "FunctionMeasurer", "J", "Judged", "MaxSource", "Measurer", "RateSearch", "Resolution",
    "SearchMax", "TrialLog", "TrialSettings", "bisect", "check_count", "check_frame_size",
    "check_max_source", "check_rate", "check_reachable", "check_retries",
    "lower_bound_by_generator", "require_valid", "search_count", "search_rate", "valid_trial",
]
