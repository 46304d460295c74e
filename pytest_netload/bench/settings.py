"""The parsed settings of a test's markers: what the bench reads.

`NetloadMark` and `Rfc2544Mark` are the frozen dataclasses the plugin's marker
parser (plugin/markers.py) fills from ``@pytest.mark.netload(...)`` and
``@pytest.mark.rfc2544(...)``; their defaults are the markers' defaults. The
harness and the runner take them as plain values, so scripts can build them
without pytest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import NetloadConfigError
from ..rfc2544 import RFC2544_FRAME_SIZES, FrameSize
from ..rfc2544.throughput import DEFAULT_RESOLUTION_RATIO
from ..units import MAX_RUN_S, Rate, as_duration

__all__ = ["DIRECTIONS", "NetloadMark", "Rfc2544Mark", "both_ways_problem",
           "time_budget_seconds"]

DIRECTIONS = ("one", "both")


@dataclass(frozen=True)
class NetloadMark:
    rate: Rate | None = None
    pattern: str = "cbr"
    duration_s: float = 1.0
    frame_sizes: tuple[FrameSize, ...] | None = None
    flows: int = 1
    wire: int = 0


@dataclass(frozen=True)
class Rfc2544Mark:
    frame_sizes: tuple[FrameSize, ...] = RFC2544_FRAME_SIZES
    trial_duration_s: float = 60.0
    loss_tolerance: float = 0.0
    search: str = "binary"
    resolution: float | Rate = DEFAULT_RESOLUTION_RATIO
    """Binary-search resolution: a ratio in (0, 1) of the bracket's lower bound (the
    search stops when hi - lo <= ratio * lo), or an absolute Rate (hi - lo <= rate)."""
    max_trials: int = 20
    retries: int = 2
    drain_s: float = 2.0
    flows: int = 1
    max_rate: Rate | None = None
    wire: int = 0
    learning_frames: int = 10
    """Frames sent each way before the first trial (§23); 0: none."""
    warmup_s: float = 0.0
    """Uncounted traffic at each trial's load before it."""
    trial_duration_set: bool = False
    """trial_duration was given: it then applies to every procedure's trials."""
    goals: Any = "rfc2544-strict"
    """MLRsearch loss goals: a preset name or a tuple of rfc2544.mlr.LossGoal."""
    time_budget_s: float | None = None
    """MLRsearch: the most trial time one search may spend."""
    steady_state: str = "warn"
    """A trial whose DUT buffered a material backlog: "warn", "fail" or "off"."""
    direction: str = "one"
    """"one": traffic on `wire`; "both": on `wire` and its reverse at once, the load
    offered on each (RFC 2544 §14)."""
    stream: Any = None
    """The procedures' traffic (a traffic.mix.Mix); None: UDP with `flows` source ports."""
    dut_health: bool | None = None
    """Run the DUT's health hooks after every trial; None: the session's setting (ini
    netload_dut_health)."""

    @property
    def resolution_ratio(self) -> float | None:
        """The relative resolution; None when it is a rate."""
        return None if isinstance(self.resolution, Rate) else self.resolution

    def resolution_pps(self, mean_frame_size: float,
                       line_rate_bps: float | None = None) -> float | None:
        """The absolute resolution in pps for frames of `mean_frame_size` bytes; None
        when it is a ratio."""
        if not isinstance(self.resolution, Rate):
            return None
        return self.resolution.pps(mean_frame_size, line_rate_bps=line_rate_bps)


def _seconds(name: str, value: Any) -> float:
    seconds = as_duration(value, what=name).seconds
    if seconds <= 0:
        raise NetloadConfigError(f"{name}={value!r}: give a duration > 0, e.g. '10s'")
    if seconds > MAX_RUN_S:
        raise NetloadConfigError(f"{name}={value!r} is {seconds:g} s, more than 24 h "
                                 f"({MAX_RUN_S} s); give at most '24h'")
    return seconds


def time_budget_seconds(value: Any) -> float:
    """An MLRsearch time budget in seconds: > 0 and at most 24 h."""
    return _seconds("time_budget", value)


def both_ways_problem(topology: str, wires: list[str], wire: int) -> str | None:
    """Why `direction="both"` cannot load wire `wire` ("tx->rx") of `topology` (whose
    wires are `wires`) and its reverse at once; None when the topology has both."""
    if not 0 <= wire < len(wires):
        return None  # the wire itself is refused elsewhere, naming the wires
    tx, _, rx = wires[wire].partition("->")
    listed = f"its wires are {', '.join(wires)}" if len(wires) > 1 else \
        f"its one wire is {wires[0]}"
    if tx == rx:
        return (f"direction='both': wire {wire} of topology {topology!r} ({tx}->{rx}) is a "
                f"hairpin, which has no reverse ({listed}); use direction='one', or a wire "
                "between two ports")
    if f"{rx}->{tx}" not in wires:
        return (f"direction='both' sends on wire {wire} ({tx}->{rx}) and its reverse "
                f"{rx}->{tx} at once, but topology {topology!r} has no {rx}->{tx} ({listed}); "
                f"add a [[wires]] table with tx = \"{rx}\" and rx = \"{tx}\" to the "
                "topology file, or use direction='one'")
    return None
