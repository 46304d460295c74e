"""A trial's common settings, one value for every procedure: `TrialSettings`.

Every procedure of every standard runs trials of one frame size for a duration,
retries the ones the generator failed and shows each try to an observer; RFC 2544's
results also state the frame size's mean length on the wire and the line rate their
figures are a share of. Those settings travel as one frozen value, checked once when it
is made, instead of as the same keyword arguments on every procedure and result.

What is not common stays with its procedure: a search's maximum, resolution and trial
budget, a loss tolerance, a repetition count.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import NetloadConfigError
from .bisection import check_rate, check_retries
from .resolution import DEFAULT_RETRIES
from .trial import FrameSize

__all__ = ["MAX_FRAME_SIZE", "MIN_FRAME_SIZE", "TrialSettings", "check_frame_size"]

MIN_FRAME_SIZE, MAX_FRAME_SIZE = 64, 9216
"""Frame sizes in bytes with the FCS: Ethernet's least, and the largest jumbo frame."""


def check_frame_size(size: object, what: str = "frame_size") -> FrameSize:
    """A frame size: bytes with the FCS, 64..9216, "imix" or "pcap" (a replayed capture's
    own frames; any case); a NetloadConfigError naming `what` otherwise."""
    if isinstance(size, str) and size.lower() in ("imix", "pcap"):
        return size.lower()
    if isinstance(size, int) and not isinstance(size, bool) and \
            MIN_FRAME_SIZE <= size <= MAX_FRAME_SIZE:
        return size
    raise NetloadConfigError(
        f"{what}: {size!r} is not a frame size; give bytes with FCS from 64 to 9216 "
        "(RFC 2544: 64, 128, 256, 512, 1024, 1280, 1518), 'imix', or 'pcap' (the "
        "captured frames of stream=from_pcap(path))")


def _positive(x: object, what: str, optional: bool = False) -> None:
    if x is None and optional:
        return
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) \
            or x <= 0:
        raise NetloadConfigError(f"{what}={x!r}: give a positive finite number"
                                 + (" or None" if optional else ""))


@dataclass(frozen=True)
class TrialSettings:
    """The settings every trial of a procedure shares, checked when made.

    `duration_s` is None only where the load fixes a trial's length (a back-to-back
    burst, an address trial); a timed procedure refuses None (`timed`). `frame_size`
    and `mean_frame_size` are None where the measurer owns the frames (RFC 2889's and
    Y.1564's bindings); RFC 2544's procedures refuse None (`sized`)."""

    duration_s: float | None = None
    """Seconds each trial offers its load."""
    retries: int = DEFAULT_RETRIES
    """How often a trial the generator failed is tried again at the same load."""
    frame_size: FrameSize | None = None
    """Bytes with the FCS, or "imix"."""
    mean_frame_size: float | None = None
    """Bytes with the FCS, averaged over the frame sequence (an IMIX's mean)."""
    line_rate_bps: float | None = None
    """The medium's line rate at L1, when it has one: what a figure is a share of."""
    on_trial: Callable[[Any], None] | None = field(default=None, compare=False)
    """Shown every try, invalid ones included, as it ends: the procedure's trial."""

    def __post_init__(self) -> None:
        if self.duration_s is not None:
            check_rate(self.duration_s, "duration_s")
        check_retries(self.retries)
        if self.frame_size is not None:
            object.__setattr__(self, "frame_size", check_frame_size(self.frame_size))
        _positive(self.mean_frame_size, "mean_frame_size", optional=True)
        _positive(self.line_rate_bps, "line_rate_bps", optional=True)
        if self.on_trial is not None and not callable(self.on_trial):
            raise NetloadConfigError(f"on_trial={self.on_trial!r}: give a function of one "
                                     "trial, or None")

    def timed(self, procedure: str) -> float:
        """`duration_s`, which `procedure` needs; NetloadConfigError naming it if None."""
        if self.duration_s is None:
            raise NetloadConfigError(f"{procedure} runs timed trials: give TrialSettings"
                                     "(duration_s=...), the seconds each trial offers its load")
        return float(self.duration_s)

    def size(self, procedure: str) -> FrameSize:
        """`frame_size`, which `procedure` states; NetloadConfigError naming it if None."""
        if self.frame_size is None:
            raise NetloadConfigError(f"{procedure} states its frame size: give TrialSettings("
                                     "frame_size=...) (bytes with FCS, or 'imix')")
        return self.frame_size

    def sized(self, procedure: str) -> tuple[FrameSize, float]:
        """(`frame_size`, `mean_frame_size`), which `procedure` needs; NetloadConfigError
        naming it when either is None."""
        if self.frame_size is None or self.mean_frame_size is None:
            raise NetloadConfigError(
                f"{procedure} states its frame size: give TrialSettings(frame_size=..., "
                "mean_frame_size=...) (bytes with FCS; the mean of an IMIX's sequence)")
        return self.frame_size, self.mean_frame_size
