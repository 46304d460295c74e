"""The HTML report in a real browser: headless Chromium renders it, without console errors.

Debian's `chromium` package (scripts/setup.sh installs it). Without it the test is skipped
on a developer's machine, and fails on CI (CI=true), where it must run.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from pytest_netload.reports import html
from pytest_netload.reports.load import load

FULL = Path(__file__).parent.parent / "data" / "results-full.json"
WIDTH, HEIGHT = 1280, 4000
FAIL_RED = (0xB3, 0x26, 0x1E)  # the cover's FAIL box (style.css --fail)

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is not installed on CI: scripts/setup.sh installs it "
                        "(apt-get install chromium)")
        pytest.skip("chromium is not installed: apt-get install chromium")
    return path


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return html.write(load(FULL), tmp_path_factory.mktemp("report") / "report.html")


def _run(chromium: str, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [chromium, "--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars",
           "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False,
                          cwd=tmp_path)


def _console_errors(stderr: str) -> list[str]:
    """Console messages in Chromium's log: the page has no script, so any is a problem
    (`INFO:CONSOLE:1] "Uncaught Error: ..."`, `ERROR:CONSOLE(3)] ...` in older versions)."""
    return [line for line in stderr.splitlines()
            if "Uncaught" in line or re.search(r":CONSOLE[:(]", line)]


def test_console_errors_are_seen(chromium: str, tmp_path: Path) -> None:
    """The check below would see a script error: this Chromium logs it where we look."""
    broken = tmp_path / "broken.html"
    broken.write_text('<html><body><script>throw new Error("boom")</script></body></html>')
    out = _run(chromium, tmp_path, "--enable-logging=stderr", "--v=0", "--dump-dom",
               broken.as_uri())
    assert any("boom" in line for line in _console_errors(out.stderr)), out.stderr[-2000:]


def test_dom_holds_the_verdict_tables_and_plots(chromium: str, page: Path,
                                                tmp_path: Path) -> None:
    out = _run(chromium, tmp_path, "--enable-logging=stderr", "--v=0", "--dump-dom",
               page.as_uri())
    assert out.returncode == 0, out.stderr[-2000:]
    dom = out.stdout
    assert re.search(r'id="overall-verdict".*?<div class="word">FAIL</div>', dom, re.DOTALL)
    assert '<td id="dut-name">edge-1</td>' in dom
    assert dom.count("<svg") == 6  # the Y.1564 interval plot is the sixth
    assert len(re.findall(r'<table class="frame-loss"', dom)) == 4
    for cls in ("throughput", "latency", "back-to-back", "recovery", "reset", "mlrsearch",
                "y1564-sct", "y1564-spt", "verdicts"):
        assert f'<table class="{cls}"' in dom, cls
    assert _console_errors(out.stderr) == []


def test_screenshot_is_a_rendered_page(chromium: str, page: Path, tmp_path: Path) -> None:
    from matplotlib import image

    shot = tmp_path / "report.png"
    out = _run(chromium, tmp_path, "--enable-logging=stderr", "--v=0",
               f"--screenshot={shot}", f"--window-size={WIDTH},{HEIGHT}", page.as_uri())
    assert out.returncode == 0, out.stderr[-2000:]
    assert _console_errors(out.stderr) == []
    assert shot.is_file() and shot.stat().st_size > 50_000
    pixels = np.asarray(image.imread(shot))
    assert pixels.shape[:2] == (HEIGHT, WIDTH)
    rgb = np.rint(pixels[..., :3] * 255).astype(np.int32)
    colours = np.unique(rgb.reshape(-1, 3)[::97], axis=0)
    assert len(colours) > 50, "the page rendered as (nearly) one colour"
    top = rgb[:500]
    red = np.all(np.abs(top - np.array(FAIL_RED)) <= 8, axis=-1)
    assert red.sum() > 5_000, "the cover's FAIL verdict box is not drawn in its colour"
    ink = np.any(rgb < 128, axis=-1)
    assert ink[:, : WIDTH // 2].mean() > 0.005, "no text or lines on the page"
