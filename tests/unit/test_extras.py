"""A feature that needs an optional dependency imports it through
pytest_netload.extras.require: when the extra is not installed, the error names the pip
command (`pip install 'pytest-netload[html]'`), not a bare ModuleNotFoundError. The
packages are blocked here with None in sys.modules, as if not installed."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from pytest_netload.errors import MissingExtra, NetloadEnvironmentError
from pytest_netload.extras import require


def _block(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    """Imports of `names` (and their submodules) fail as if the packages were not installed
    (None in sys.modules: ModuleNotFoundError); the modules that import them are imported
    afresh."""
    for module in list(sys.modules):
        if module.partition(".")[0] in names or module.startswith("pytest_netload.reports.html"):
            monkeypatch.delitem(sys.modules, module)
    for name in names:
        monkeypatch.setitem(sys.modules, name, None)


def test_the_html_report_without_jinja2(monkeypatch: pytest.MonkeyPatch) -> None:
    _block(monkeypatch, "jinja2")
    with pytest.raises(MissingExtra, match=r"the HTML report needs jinja2, which is not "
                       r"installed: pip install 'pytest-netload\[html\]'") as caught:
        importlib.import_module("pytest_netload.reports.html")
    assert (caught.value.module, caught.value.extra) == ("jinja2", "html")
    assert isinstance(caught.value, NetloadEnvironmentError)  # the session writer's OSError


def test_the_html_report_without_matplotlib(monkeypatch: pytest.MonkeyPatch) -> None:
    _block(monkeypatch, "matplotlib")
    with pytest.raises(MissingExtra, match=r"pip install 'pytest-netload\[html\]'"):
        importlib.import_module("pytest_netload.reports.html")


def test_from_scapy_without_scapy(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_netload.traffic.packets import from_scapy

    monkeypatch.setitem(sys.modules, "scapy.layers.inet", None)
    with pytest.raises(MissingExtra, match=r"pip install 'pytest-netload\[scapy\]'"):
        from_scapy(object())


def test_hdr_export_without_hdrhistogram(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_netload.measure import latency

    _block(monkeypatch, "hdrh")
    with pytest.raises(MissingExtra, match=r"HdrHistogram export needs hdrh, which is not "
                       r"installed: pip install 'pytest-netload\[hdr\]'"):
        latency._hdrh()


def test_require_reraises_what_an_installed_module_lacks(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "netload_present.py").write_text("import netload_absent_dependency\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError, match="netload_absent_dependency") as caught:
        require("netload_present", "html", "a feature")
    assert not isinstance(caught.value, MissingExtra)
    assert require("json", "html", "a feature") is sys.modules["json"]
