"""The two distributions and their extras, without building anything.

pytest-netload is pure Python; pytest-netload-engine (native/) is the cffi extension, pulled
by the extra `engine`, which pins its version. What a test session imports is a required
dependency; the rest is an extra (tests/unit/test_extras.py). The engine's build checks
DPDK's version (native/build_checks.py).
"""

from __future__ import annotations

import importlib
import runpy
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path
from typing import Any

import pytest

from pytest_netload.errors import NetloadEnvironmentError

ROOT = Path(__file__).resolve().parents[2]
CLIENT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
ENGINE = tomllib.loads((ROOT / "native" / "pyproject.toml").read_text())["project"]
URL = "https://github.com/pytest-netload/pytest-netload"
# what only an extra brings: never imported by a session that does not ask for it
OPTIONAL = ("jinja2", "matplotlib", "scapy", "hdrh", "cffi", "pytest_netload_engine",
            "weasyprint")


def _names(requirements: list[str]) -> set[str]:
    return {r.split(";")[0].split("[")[0].split("=")[0].split(">")[0].split("<")[0].strip()
            .lower() for r in requirements}


def test_the_engine_extra_pins_the_engine_of_the_same_version() -> None:
    assert CLIENT["version"] == ENGINE["version"]
    assert CLIENT["optional-dependencies"]["engine"] == [
        f"pytest-netload-engine=={CLIENT['version']}"]


def test_the_client_requires_no_native_build_and_no_report_extras() -> None:
    required = _names(CLIENT["dependencies"])
    assert not required & {"cffi", "matplotlib", "jinja2", "scapy", "hdrhistogram",
                           "pytest-netload-engine", "weasyprint"}, required
    extras = CLIENT["optional-dependencies"]
    assert _names(extras["html"]) == {"jinja2", "matplotlib"}
    assert _names(extras["plots"]) == {"matplotlib"}
    assert _names(extras["pdf"]) == {"pytest-netload", "weasyprint"}  # with [html]
    assert "pytest-netload[html]" in extras["pdf"]
    assert _names(extras["scapy"]) == {"scapy"}
    assert _names(extras["hdr"]) == {"hdrhistogram"}
    build = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
    assert not any(r.startswith("cffi") for r in build), "the client's build needs no cffi"


@pytest.mark.parametrize("project", [CLIENT, ENGINE], ids=["pytest-netload",
                                                           "pytest-netload-engine"])
def test_metadata(project: dict[str, Any]) -> None:
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    assert set(project["urls"]) == {"Homepage", "Documentation", "Changelog", "Issues"}
    assert all(url.startswith(URL) for url in project["urls"].values())
    classifiers = set(project["classifiers"])
    assert {"Operating System :: POSIX :: Linux", "Topic :: System :: Networking",
            "Programming Language :: Python :: 3.11"} <= classifiers
    assert any(c.startswith("Development Status ::") for c in classifiers)
    if project is CLIENT:
        assert "Framework :: Pytest" in classifiers


def test_both_distributions_carry_the_license() -> None:
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License\n\nCopyright (c) 2026 the pytest-netload authors\n")
    assert (ROOT / "native" / "LICENSE").read_text() == text


def test_a_client_only_install_names_the_engine_package(monkeypatch: pytest.MonkeyPatch) -> None:
    for module in [m for m in sys.modules if m.startswith("pytest_netload_engine")]:
        monkeypatch.delitem(sys.modules, module)
    monkeypatch.setitem(sys.modules, "pytest_netload_engine", None)  # as if not installed
    monkeypatch.delitem(sys.modules, "pytest_netload.engine.facade", raising=False)
    with pytest.raises(NetloadEnvironmentError, match=r"client-only install\). On the host "
                       r"that runs the engine: pip install 'pytest-netload\[engine\]'"):
        importlib.import_module("pytest_netload.engine.facade")


def test_a_session_on_the_fake_engine_imports_no_extra(tmp_path: Path) -> None:
    """The client's required dependencies suffice for a session: with every extra's module
    blocked, a throughput test on the fake engine passes, and the report.html it cannot
    write is named with the extra that writes it."""
    (tmp_path / "test_lean.py").write_text(textwrap.dedent("""
        import pytest
        from pytest_netload import assert_throughput

        @pytest.mark.rfc2544(frame_sizes=[64])
        def test_throughput(rfc2544):
            assert_throughput(rfc2544.throughput(), at_least="45kpps")
    """))
    runner = textwrap.dedent(f"""
        import sys
        for name in {OPTIONAL!r}:
            sys.modules[name] = None  # as if not installed
        import pytest
        code = pytest.main(["-q", "-p", "no:cacheprovider", "test_lean.py",
                            "--netload-engine=fake:capacity_pps=50000",
                            "--netload-report-dir=out"])
        loaded = sorted(n for n in {OPTIONAL!r} if sys.modules.get(n) is not None)
        print("loaded:", loaded)
        sys.exit(code)
    """)
    done = subprocess.run([sys.executable, "-c", runner], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, check=False)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "1 passed" in out and "loaded: []" in out, out
    assert (tmp_path / "out" / "results.json").exists()
    assert "report.html not written" in out and "pip install 'pytest-netload[html]'" in out, out


# ---- the engine's build checks DPDK's version -------------------------------------------

CHECKS = runpy.run_path(str(ROOT / "native" / "build_checks.py"))


@pytest.mark.parametrize("found", ["22.11", "22.11.0", "22.11.11"])
def test_dpdk_22_11_builds(found: str) -> None:
    assert CHECKS["check_dpdk_version"](found, {}) is None


@pytest.mark.parametrize("found", ["23.11.0", "21.11.4", "22.110", "24.03.0-rc1"])
def test_another_dpdk_is_an_error_naming_it(found: str) -> None:
    with pytest.raises(SystemExit) as caught:
        CHECKS["check_dpdk_version"](found, {"PKG_CONFIG_PATH": "/opt/dpdk/lib/pkgconfig"})
    text = str(caught.value.code)
    assert f"supports DPDK 22.11, but pkg-config libdpdk found DPDK {found} " \
           "(PKG_CONFIG_PATH=/opt/dpdk/lib/pkgconfig)" in text
    assert "NETLOAD_ALLOW_ANY_DPDK=1" in text


def test_the_override_makes_it_a_warning() -> None:
    warning = CHECKS["check_dpdk_version"]("23.11.0", {"NETLOAD_ALLOW_ANY_DPDK": "1"})
    assert warning.startswith("warning: building pytest-netload-engine against DPDK 23.11.0, "
                              "not the supported 22.11")
    with pytest.raises(SystemExit):
        CHECKS["check_dpdk_version"]("23.11.0", {"NETLOAD_ALLOW_ANY_DPDK": "0"})
