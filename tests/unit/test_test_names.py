"""The suite's own layout: test dirs have no __init__.py, so pytest imports each test
file by its basename, and two files with one basename stop the whole run at collection
("import file mismatch"), as tests/unit/test_dut_ssh.py and an integration twin once did."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).parents[1]


def test_every_test_file_has_a_basename_of_its_own() -> None:
    names = Counter(p.name for p in TESTS.rglob("*.py") if p.name != "conftest.py")
    assert not [n for n, k in names.items() if k > 1], \
        "rename one of each: " + ", ".join(str(p.relative_to(TESTS)) for p in TESTS.rglob("*.py")
                                           if names[p.name] > 1)
