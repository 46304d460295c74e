"""The C facts Python reads without the extension are generated from netload_api.h,
never typed again: the checked-in module must be what native/gen_facts.py makes of the
header (run `python3 native/gen_facts.py` after changing it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pytest_netload import _native_facts
from pytest_netload.traffic.patterns import MAX_GAPS, MAX_PHASES
from pytest_netload.units import MAX_FRAME_BYTES, MAX_RUN_S, MIN_FRAME_BYTES

ROOT = Path(__file__).resolve().parents[2]


def test_the_checked_in_facts_match_the_header() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "native" / "gen_facts.py"), "--check"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_python_limits_come_from_the_facts() -> None:
    assert (MIN_FRAME_BYTES, MAX_FRAME_BYTES, MAX_RUN_S, MAX_GAPS, MAX_PHASES) == (
        _native_facts.MIN_FRAME_BYTES, _native_facts.MAX_FRAME_BYTES, _native_facts.MAX_RUN_S,
        _native_facts.MAX_GAPS, _native_facts.MAX_PHASES)
    assert _native_facts.SIGNATURE_FIELDS == ("magic", "stream_id", "seq", "tx_tsc")
