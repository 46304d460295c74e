"""The suite's own layout: test dirs have no __init__.py, so pytest imports each test
file by its basename, and two files with one basename stop the whole run at collection
("import file mismatch"), as tests/unit/test_dut_ssh.py and an integration twin once did."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

TESTS = Path(__file__).parents[1]


def test_every_test_file_has_a_basename_of_its_own() -> None:
    names = Counter(p.name for p in TESTS.rglob("*.py") if p.name != "conftest.py")
    assert not [n for n, k in names.items() if k > 1], \
        "rename one of each: " + ", ".join(str(p.relative_to(TESTS)) for p in TESTS.rglob("*.py")
                                           if names[p.name] > 1)


def test_no_inner_pytester_file_takes_a_suite_files_basename() -> None:
    """A pytester session's own test file (`makepyfile(test_x=...)`) is imported by its
    basename in the same process: one named as a suite file fails to collect
    ("import file mismatch") whenever that suite file ran first in the worker."""
    suite = {p.stem for p in TESTS.rglob("test_*.py")}
    inner = re.compile(r"makepyfile\(\s*(test_\w+)\s*=")
    clashes = sorted(f"{p.relative_to(TESTS)}: {name}" for p in TESTS.rglob("*.py")
                     for name in inner.findall(p.read_text()) if name in suite)
    assert not clashes, "rename the inner file: " + ", ".join(clashes)


def test_no_example_suite_file_takes_a_suite_files_basename() -> None:
    """The plugin tests copy conftest_examples/ into pytester sessions of the same
    process: an example file named as a suite file fails to collect there."""
    suite = {p.stem for p in TESTS.rglob("test_*.py")}
    examples = sorted(str(p.relative_to(TESTS.parent))
                      for p in (TESTS.parent / "conftest_examples").rglob("test_*.py")
                      if p.stem in suite)
    assert not examples, "rename the suite file or the example: " + ", ".join(examples)
