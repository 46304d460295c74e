"""`netload trend`: change points over saved results files."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

SAMPLE = Path(__file__).parents[1] / "data" / "results-sample.json"


def _history(tmp_path: Path, values: list[float]) -> list[str]:
    base = json.loads(SAMPLE.read_text())
    paths = []
    for i, v in enumerate(values):
        doc = copy.deepcopy(base)
        doc["created"] = f"2026-11-{i + 1:02d}T00:00:00+00:00"
        for t in doc["tests"]:
            for m in t["measurements"]:
                if m["kind"] == "throughput":
                    m["throughput_pps"] = v
                    m["upper_pps"] = v * 1.002
        path = tmp_path / f"r{i}.json"
        path.write_text(json.dumps(doc))
        paths.append(str(path))
    return paths


def _trend(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_netload", "trend", *args],
                          capture_output=True, text=True, check=False)


def test_a_step_down_is_a_regression(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    values = [float(v) for v in np.r_[rng.normal(300e3, 300, 12), rng.normal(250e3, 300, 8)]]
    out = _trend(*_history(tmp_path, values), "--fail-on-regression")
    assert out.returncode == 1, out.stdout + out.stderr
    assert "regression at run 12" in out.stdout


def test_noise_alone_has_no_change_point(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    values = [float(v) for v in rng.normal(300e3, 300, 15)]
    out = _trend(*_history(tmp_path, values), "--fail-on-regression")
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.strip().splitlines()[-1].startswith("0 change point(s)")


def test_one_file_is_not_a_history(tmp_path: Path) -> None:
    out = _trend(*_history(tmp_path, [1.0]))
    assert out.returncode == 2 and "at least two results files" in out.stderr
