"""The package's optional dependencies, imported where a feature needs them.

``pip install pytest-netload`` installs what a test session imports; the rest comes with
an extra (pyproject.toml): ``engine`` (the native DPDK engine, pytest-netload-engine),
``html`` (the HTML report: jinja2, matplotlib), ``plots`` (matplotlib), ``scapy``, ``hdr``
(hdrhistogram). A feature imports its dependency through :func:`require`, so a missing one
is a :class:`~pytest_netload.errors.MissingExtra` naming the pip command, not a bare
ModuleNotFoundError.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from .errors import MissingExtra

__all__ = ["require"]


def require(module: str, extra: str, what: str) -> ModuleType:
    """``module`` imported; MissingExtra naming ``pytest-netload[extra]`` when it (or its
    top-level package) is not installed. ``what`` names the feature: "the HTML report".
    A module that is installed but fails to import raises its own error."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if missing and not (module == missing or module.startswith(missing + ".")):
            raise  # the module is there; something it imports is not: its own error
        raise MissingExtra(what, module.partition(".")[0], extra) from exc
