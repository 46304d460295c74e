"""Who the acceptance report is for and who ran it: customer, operator, site, test plan.

They come from the session's settings (ini keys netload_customer, netload_operator,
netload_site, netload_test_plan, or their --netload-* options), which results.json keeps
under `settings` when given, or from `netload report --customer ...`, which overrides the
file's. The report's cover lists the ones given; the PDF's signature block names them.
Pure: no template, no renderer.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from ..errors import NetloadConfigError

__all__ = ["FIELDS", "LABELS", "check_field", "sign_off", "with_sign_off"]

FIELDS = ("customer", "operator", "site", "test_plan")
LABELS = {"customer": "Customer", "operator": "Operator", "site": "Site",
          "test_plan": "Test plan"}
MAX_CHARS = 200  # a name or a plan's reference, not a document


def check_field(key: str, value: str) -> str:
    """`value` for sign-off field `key`, stripped; NetloadConfigError naming the field when
    it would not print on a cover (a line break, a control character, or too long)."""
    text = value.strip()
    if any(ord(c) < 32 or ord(c) == 127 for c in text):
        raise NetloadConfigError(f"{key.replace('_', ' ')} {value!r} holds a line break or "
                                 "a control character; give one line of text")
    if len(text) > MAX_CHARS:
        raise NetloadConfigError(f"{key.replace('_', ' ')} is {len(text)} characters long; "
                                 f"give at most {MAX_CHARS} (a name or a reference)")
    return text


def sign_off(document: Mapping[str, Any]) -> dict[str, str]:
    """The sign-off fields the document's settings give, in FIELDS order (none: empty)."""
    settings = document.get("settings") or {}
    return {k: str(settings[k]) for k in FIELDS if isinstance(settings.get(k), str)
            and settings[k].strip()}


def with_sign_off(document: Mapping[str, Any], values: Mapping[str, str | None]
                  ) -> dict[str, Any]:
    """A copy of `document` whose settings carry `values` (a None or missing key keeps the
    document's own); each value checked with check_field."""
    out = copy.deepcopy(dict(document))
    settings = dict(out.get("settings") or {})
    for key, value in values.items():
        if key not in FIELDS:
            raise NetloadConfigError(f"{key!r} is no sign-off field; use one of "
                                     f"{', '.join(FIELDS)}")
        if value is not None:
            text = check_field(key, value)
            if text:
                settings[key] = text
            else:
                settings.pop(key, None)
    out["settings"] = settings
    return out
