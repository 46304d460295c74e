"""The benchmarks' contract with benchmarks/run_all.py: each script prints its headline
as its last line (`name: value`), and run_all reads every figure of that line."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import run_all  # noqa: E402


@pytest.mark.parametrize(("stdout", "figures"), [
    ("table\nrx_vs_testpmd: 0.582\n", {"rx_vs_testpmd": 0.582}),
    ("x\ncapacity_error_pct: 0.41 mlr_time_ratio: 0.62\n\n",
     {"capacity_error_pct": 0.41, "mlr_time_ratio": 0.62}),
    ("median_minus_d_us: -3.250", {"median_minus_d_us": -3.25}),
    ("soak_unaccounted_frames: 0\n", {"soak_unaccounted_frames": 0.0}),
    ("rx_vs_testpmd: 0.5\nsomething after it\n", {}),  # not the last line: no headline
    ("", {}),
])
def test_the_headline_is_every_figure_of_the_last_line(stdout: str,
                                                       figures: dict[str, float]) -> None:
    assert run_all.headline(stdout) == figures


def test_every_benchmark_prints_a_headline_last() -> None:
    """Statically: each script's main() ends with a print of `name: value`."""
    names = run_all.scripts()
    assert {"tx_vs_testpmd", "rx_vs_testpmd", "soak"} <= set(names)
    for name in names:
        tree = ast.parse((BENCHMARKS / f"{name}.py").read_text())
        main = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "main")
        prints = [n for n in ast.walk(main) if isinstance(n, ast.Call)
                  and getattr(n.func, "id", "") == "print" and n.args
                  and isinstance(n.args[0], ast.JoinedStr)]
        assert prints, f"{name}.py: main() prints no f-string headline"
        last = max(prints, key=lambda n: (n.lineno, n.col_offset)).args[0]
        first = last.values[0]
        assert isinstance(first, ast.Constant) and run_all.HEADLINE.match(
            f"{first.value}0"), f"{name}.py: its last print is not `name: value`"


def test_machine_description_names_what_comparisons_need() -> None:
    info = run_all.machine()
    assert {"cpu_model", "cpus_online", "cpus_usable", "memory_gib", "kernel", "dpdk", "python",
            "pytest_netload", "git_commit"} <= set(info)
