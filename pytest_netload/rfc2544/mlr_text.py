"""How an MLRsearch's goals read in text: the terminal summary, assertion messages and
the names of JUnit properties.

Over plain values, so a result (`MlrGoalResult`) and its record (a goal of an
"mlrsearch" measurement) read the same. A goal's figure is its relevant lower bound: the
load `throughput()` reports with ``search="mlrsearch"`` (for its first goal, the NDR).
Its relevant upper bound closes the bracket. Light on purpose: no MLRsearch package, so
the plugin's summary can import it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from .. import format as fmt

GENERATOR_NOTE = "upper bound: the generator's ceiling"
"""Said of a goal whose upper bound the generator set (every try invalid), not the DUT."""


def goal_band(name: str, lower_pps: float | None, upper_pps: float | None,
              by_generator: bool = False) -> str:
    """A goal as the terminal summary shows it, its figure with its bracket:
    ``"NDR 50.01 kpps [50.01, 50.27]"``; open above (the maximum load was a lower bound)
    ``"NDR 14.88 Mpps [14.88, inf)"``; ``"NDR not found (upper bound 14.88 kpps)"`` when
    even the search's minimum was an upper bound."""
    if lower_pps is None:
        upper = "" if upper_pps is None else f" (upper bound {fmt.rate_pps(upper_pps)})"
        text = f"{name} not found{upper}"
    else:
        text = f"{name} " + fmt.band(lower_pps, lower_pps,
                                     math.inf if upper_pps is None else upper_pps, "pps")
    return text + (f" ({GENERATOR_NOTE})" if by_generator and upper_pps is not None else "")


def goal_bracket(name: str, lower_pps: float | None, upper_pps: float | None,
                 by_generator: bool = False) -> str:
    """A goal's bracket as assertion messages write rates, exact:
    ``"NDR [50,015, 50,266] pps"``; ``-`` for a bound that does not exist (a lower bound not
    found; an upper bound when the maximum load was a lower bound)."""
    lower, upper = (fmt.rate_pps_exact(x).removesuffix(" pps") for x in (lower_pps, upper_pps))
    return f"{name} [{lower}, {upper}] pps" + (
        f" ({GENERATOR_NOTE})" if by_generator and upper_pps is not None else "")


def goals_note(goals: Iterable[Mapping[str, Any]]) -> str:
    """The goals of an "mlrsearch" record, each as :func:`goal_band`, joined by "; "."""
    return "; ".join(goal_band(str(g.get("name")), g.get("lower_bound_pps"),
                               g.get("upper_bound_pps"), bool(g.get("upper_bound_by_generator")))
                     for g in goals)


def goal_key(name: str) -> str:
    """A goal's name as a property name part: lower case, runs of anything but letters and
    digits as one ``_``: "NDR" -> "ndr", "PDR 1%" -> "pdr_1"."""
    return re.sub(r"[^a-z0-9]+", "_", name.casefold()).strip("_") or "goal"
