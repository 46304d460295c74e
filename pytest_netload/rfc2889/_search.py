"""The settings check the RFC 2889 load searches share, and their trials' default
duration. The searches themselves (by rate: a load in pps, a learning rate in fps; by
count: an address count) are the search core's (`search/bisection.py`), as RFC 2544's
are."""

from __future__ import annotations

from dataclasses import replace

from ..search.bisection import check_count, check_rate
from ..search.resolution import Resolution, check_reachable
from ..search.settings import TrialSettings
from .ports import check_port_count

__all__ = ["TIMED", "TRIAL_S", "check_search", "timed"]

TRIAL_S = 30.0
"""Trial duration (s) of every timed procedure (mesh, congestion, broadcast)."""
TIMED = TrialSettings(duration_s=TRIAL_S)
"""The timed procedures' default settings: TRIAL_S trials, the default retries."""


def timed(settings: TrialSettings) -> TrialSettings:
    """`settings` with TRIAL_S as the trials' duration where it gives none."""
    return settings if settings.duration_s is not None else replace(settings, duration_s=TRIAL_S)


def check_search(procedure: str, ports: int, max_value: float, max_name: str,
                 settings: TrialSettings, resolution: float | Resolution,
                 max_trials: int) -> tuple[float, float, Resolution]:
    """The settings of a load search over `ports` ports, checked before any trial:
    (the maximum, the duration, the Resolution); errors name the argument."""
    check_port_count(ports, ports, procedure)
    top = check_rate(max_value, max_name)
    duration = timed(settings).timed(procedure)
    res = resolution if isinstance(resolution, Resolution) else Resolution(ratio=resolution)
    check_count(max_trials, "max_trials")
    check_reachable(res, max_trials, top)
    return top, duration, res
