"""The session's results as one JSON document.

JSON format history:
- 1.0: session (package, host, topology, DUT), tests (nodeid, outcome,
  duration, measurements and verdicts as the fixtures and assertions
  recorded them).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import socket
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

SCHEMA_VERSION = "1.0"


def package_version() -> str:
    try:
        return metadata.version("pytest-netload")
    except metadata.PackageNotFoundError:
        return "unknown"


def session_document(tests: Sequence[Mapping[str, Any]], *, topology: Mapping[str, Any],
                     settings: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "package": {"name": "pytest-netload", "version": package_version()},
        "host": {"hostname": socket.gethostname(), "platform": platform.platform(),
                 "python": platform.python_version(), "cpus": os.cpu_count()},
        "settings": dict(settings),
        "topology": dict(topology),
        "tests": [dict(t) for t in tests],
    }


def write(document: Mapping[str, Any], path: str | os.PathLike[str]) -> Path:
    """Write atomically (a reader never sees half a file)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_text(json.dumps(document, indent=1, default=str) + "\n")
    tmp.replace(target)
    return target
