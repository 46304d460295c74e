"""The session's results as one JSON document.

The format is described field by field in docs/reports.md and checked by the
JSON Schema reports/results.schema.json (reports/schema.py, reports/load.py).
A change to what is written here changes both, and a change a 1.0 reader
would refuse (a new required field, a renamed or retyped one) raises
SCHEMA_VERSION; readers refuse documents newer than they know.

JSON format history:
- 1.0: session (package, host, topology, DUT), tests (nodeid, outcome,
  duration, measurements and verdicts as the fixtures and assertions
  recorded them).
  Measurements are a union on `kind`: throughput, latency_rfc2544,
  frame_loss, back_to_back, recovery, reset, mlrsearch, calibration,
  traffic, latency. Optional within 1.0: `tests[].captures` (pcap paths
  written for failed verdicts), `topology.dut`/`source`/`line_rate_bps`
  (topology files), `environment` (DPDK version, port drivers, clock
  source) and a latency record's `histogram`/`hdr`, which the schema
  accepts ahead of their producer; a trial's `loss_upper_bound`
  (Clopper-Pearson, 95 %); test outcome "error" (setup or teardown failed,
  or the engine host crashed during the test) with its `error` text;
  `session` (exit status, interrupted, stop reason, tests collected and
  run, tests in which the engine crashed); where a search's maximum came
  from and whether its figure is only a lower bound the generator set
  (`max_source`, `generator_max_pps`, `lower_bound_by_generator` on
  throughput, mlrsearch and its goals, frame_loss and the RFC 2889
  searches; `throughput_lower_bound_by_generator` on latency_rfc2544 and
  recovery; a verdict's `lower_bound_by_generator` and `outcome` "error").
- 1.1: the `y1564_bursts` record kind (Y.1564 CBS and EBS burst tests) and RFC
  2889's `rfc2889_partially_meshed`, `rfc2889_maximum_forwarding_rate` and
  `rfc2889_errored_frame_filtering`.
- 1.2: a throughput record's optional `latency_at` (latency at fractions
  of its throughput or PDR: `throughput(latency_at=...)`).
- 1.3: the `port_counts`, `spread` and `delivery` records (where frames land).
- 1.4: the streams a Y.1564 or RFC 2889 procedure sent (the user's `stream=`):
  `traffic.streams` of the y1564 records, `traffic` of the RFC 2889 meshes.
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

from ..atomic import write_atomic

SCHEMA_VERSION = "1.4"


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
    return write_atomic(path, json.dumps(document, indent=1, default=str) + "\n")
