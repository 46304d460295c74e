"""Where a search's maximum load came from, and when its figure is only a lower bound
the generator set.

A search for the highest load a DUT passes (RFC 2544 §26.1 throughput, an MLRsearch goal,
RFC 2889's forwarding and learning searches) starts from a maximum: the topology's line
rate, the user's ``max_rate``, or, where the medium has no line rate, the generator's own
calibrated ceiling (``MAX_SOURCES``). Its figure is the DUT's only when the DUT failed a
valid trial above it. When no valid trial failed and the search's top was the generator's
(the maximum passed and was the generator's own ceiling, or the lowest load that did not
pass was one the generator could not offer), the DUT was never saturated: the figure is a
lower bound of the DUT's, set by the generator (`lower_bound_by_generator`). A maximum at
the line rate that passes is the DUT's figure (it forwards at line rate); one at the
user's ``max_rate`` is what the user asked to search up to.

Pure and light (no MLRsearch, no engine): the procedures, the verdicts, the terminal
summary and the reports read the same words from here.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from .. import format as fmt
from ..errors import NetloadConfigError

__all__ = ["GENERATOR_FIX", "LOWER_BOUND_NOTE", "MAX_SOURCES", "MaxSource", "SearchMax",
           "check_max_source", "lower_bound_by_generator", "lower_bound_reason"]

MaxSource = Literal["line_rate", "max_rate", "generator"]
MAX_SOURCES: tuple[MaxSource, ...] = ("line_rate", "max_rate", "generator")
"""Where a search's maximum came from: the topology's line rate, the user's max_rate,
or the generator's calibrated ceiling (a share of it)."""

LOWER_BOUND_NOTE = "generator ceiling; DUT not saturated"
"""The terminal summary's note beside a figure that is a lower bound set by the generator."""
GENERATOR_FIX = ("give the generator faster ports or more cores, or lower the requirement")
"""What to do when such a lower bound does not clear a requirement."""


def check_max_source(max_source: object, generator_max_pps: object = None
                     ) -> tuple[MaxSource | None, float | None]:
    """(`max_source`, `generator_max_pps`) checked: a source of MAX_SOURCES or None (not
    said), and the generator's calibrated ceiling, a rate > 0, given with the source
    "generator" only (it may be left out there); NetloadConfigError otherwise."""
    if max_source is not None and max_source not in MAX_SOURCES:
        raise NetloadConfigError(f"max_source={max_source!r}: give one of "
                                 f"{', '.join(map(repr, MAX_SOURCES))} or None")
    if generator_max_pps is None:
        return max_source, None   # narrowed by the check above: one of MAX_SOURCES, or None
    if isinstance(generator_max_pps, bool) or not isinstance(generator_max_pps, (int, float)) \
            or not math.isfinite(generator_max_pps) or generator_max_pps <= 0:
        raise NetloadConfigError(f"generator_max_pps={generator_max_pps!r}: give the "
                                 "generator's calibrated rate, a finite number > 0, or None")
    if max_source != "generator":
        raise NetloadConfigError(
            f"generator_max_pps={generator_max_pps!r} with max_source={max_source!r}: the "
            "generator's calibrated rate goes with max_source='generator' only")
    return "generator", float(generator_max_pps)


@dataclass(frozen=True)
class SearchMax:
    """A search's maximum load and where it came from. `generator_max_pps` is the
    generator's calibrated ceiling (the full rate, of which `pps` is a share) when
    `source` is "generator"; None otherwise."""

    pps: float
    source: MaxSource
    generator_max_pps: float | None = None

    def __post_init__(self) -> None:
        if isinstance(self.pps, bool) or not isinstance(self.pps, (int, float)) or \
                not math.isfinite(self.pps) or self.pps <= 0:
            raise NetloadConfigError(f"maximum load {self.pps!r} pps: give a positive rate")
        if self.source is None:
            raise NetloadConfigError("a search maximum needs its source: give one of "
                                     f"{', '.join(map(repr, MAX_SOURCES))}")
        check_max_source(self.source, self.generator_max_pps)
        if self.source == "generator" and self.generator_max_pps is None:
            raise NetloadConfigError("a maximum from the generator needs its calibrated "
                                     "rate: give generator_max_pps")

    @property
    def source_args(self) -> dict[str, Any]:
        """What a procedure is told of its maximum: ``max_source`` and
        ``generator_max_pps`` keyword arguments."""
        return {"max_source": self.source, "generator_max_pps": self.generator_max_pps}


def lower_bound_by_generator(found: float, upper: float | None, ceiling: float | None,
                             max_value: float, max_source: str | None) -> bool:
    """Whether a search's figure `found` is only a lower bound set by the generator:
    something passed, no valid trial failed (`upper` is None), and the search's top was
    the generator's: the maximum passed and was the generator's own ceiling
    (`max_source` "generator"), or a load the generator could not offer (`ceiling`, every
    try invalid) closed the bracket."""
    if not found > 0 or upper is not None:
        return False
    return ceiling is not None or (found == max_value and max_source == "generator")


def invalid_reason_at(trials: Iterable[Any], pps: float | None,
                      load: str = "offered_pps") -> str | None:
    """Why the generator could not offer `pps`: the reason of the last invalid try at
    that load ("the worker waited 959 ms for its CPU ... (another task took the core)").
    `load` names the trials' field of the offered load (RFC 2889's fully meshed trials:
    offered_pps_per_port; address learning: learning_rate_fps)."""
    if pps is None:
        return None
    reasons = [t.invalid_reason for t in trials
               if getattr(t, "invalid_reason", None) and
               abs((getattr(t, load, None) or math.nan) - pps) <= 1e-9 * max(abs(pps), 1.0)]
    return reasons[-1] if reasons else None


def every_try_invalid(why: str | None) -> str:
    """"(every try invalid)", with the last try's reason where it is known."""
    return f"(every try invalid: {why})" if why else "(every try invalid)"


def lower_bound_reason(*, max_pps: float, max_source: str | None,
                       generator_max_pps: float | None, ceiling_pps: float | None,
                       unit: str = "pps", why: str | None = None) -> str:
    """How the generator bounded a search, for a message (TEXT, rates exact, in `unit`):
    "the search's maximum, 95% of the generator's calibrated 148,810 pps, passed", or "the
    generator could not offer 150,000 pps (every try invalid: <why>) and every load
    below it passed"."""
    def rate(x: float) -> str:
        text = fmt.rate_pps_exact(x)
        return text if unit == "pps" else text.removesuffix(" pps") + f" {unit}"

    if ceiling_pps is not None:
        return (f"the generator could not offer {rate(ceiling_pps)} {every_try_invalid(why)} "
                "and every load below it passed")
    if max_source == "generator" and generator_max_pps:
        return (f"the search's maximum, {fmt.percent(max_pps / generator_max_pps)} of the "
                f"generator's calibrated {rate(generator_max_pps)}, passed")
    return f"the search's maximum {rate(max_pps)}, the generator's ceiling, passed"
