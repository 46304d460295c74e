"""The settings check the RFC 2889 load searches share. The searches themselves (by rate:
a load in pps, a learning rate in fps; by count: an address count) are the search core's
(`search/bisection.py`), as RFC 2544's are."""

from __future__ import annotations

from ..search.bisection import check_count, check_rate, check_retries
from ..search.resolution import Resolution, check_reachable
from .ports import check_port_count

__all__ = ["check_search"]


def check_search(procedure: str, ports: int, max_value: float, max_name: str,
                 duration_s: float, resolution: float | Resolution, max_trials: int,
                 retries: int) -> tuple[float, float, Resolution]:
    """The settings of a load search over `ports` ports, checked before any trial:
    (the maximum, the duration, the Resolution); errors name the argument."""
    check_port_count(ports, ports, procedure)
    top = check_rate(max_value, max_name)
    duration = check_rate(duration_s, "duration_s")
    res = resolution if isinstance(resolution, Resolution) else Resolution(ratio=resolution)
    check_count(max_trials, "max_trials")
    check_reachable(res, max_trials, top)
    check_retries(retries)
    return top, duration, res
