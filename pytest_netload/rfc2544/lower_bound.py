"""Where a search's maximum load came from, and when its figure is only a lower bound the
generator set: the search core's `search/lower_bound.py`, under the name RFC 2544's
callers (the verdicts, the terminal summary, the bench) have always imported."""

from ..search.lower_bound import (
    GENERATOR_FIX,
    LOWER_BOUND_NOTE,
    MAX_SOURCES,
    MaxSource,
    SearchMax,
    check_max_source,
    every_try_invalid,
    invalid_reason_at,
    lower_bound_by_generator,
    lower_bound_reason,
)

__all__ = ["GENERATOR_FIX", "LOWER_BOUND_NOTE", "MAX_SOURCES", "MaxSource", "SearchMax",
           "check_max_source", "every_try_invalid", "invalid_reason_at",
           "lower_bound_by_generator", "lower_bound_reason"]
