"""The HTML report's RFC 2889 rows for the partially meshed, maximum forwarding rate and
errored-frame records of the full sample: each names its section, its headline, and
a sub-case the generator could not run with the reason."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_netload.reports.html.rfc2889 import RFC2889_KINDS, rfc2889_rows

FULL = Path(__file__).parent.parent / "data" / "results-full.json"


def _rows() -> dict[str, dict[str, str]]:
    doc = json.loads(FULL.read_text())
    return {r["procedure"]: r for r in rfc2889_rows(doc)}


def test_every_kind_has_a_row() -> None:
    assert set(_rows()) == set(RFC2889_KINDS.values())


def test_partially_meshed_row() -> None:
    row = _rows()["§5.2 partially meshed"]
    assert row["result"].startswith("throughput ") and "(one-to-many)" in row["result"]
    assert "p0 the one port" in row["details"] and row["size"] == "64 B"


def test_mfr_row_says_why_forward_pressure_did_not_run() -> None:
    row = _rows()["§5.6 maximum forwarding rate"]
    assert row["result"].startswith("MFR ")
    assert "forward pressure (88-bit gap) not run: the ports leave the gap to their MAC" \
        in row["details"]


def test_errored_row_names_each_kind_and_the_reasons() -> None:
    row = _rows()["§5.9 errored frames filtering"]
    assert row["result"] == ("undersized: not sent, oversized: filtered, bad fcs: not sent")
    assert "undersized: the engine pads to 64 bytes" in row["details"]
    assert "oversized (1519 B): 0 of 30,000 forwarded" in row["details"]
