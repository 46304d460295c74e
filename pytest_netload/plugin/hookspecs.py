"""The hooks pytest-netload calls: DUT facts, trial set-up, DUT counters and health, the
DUT reset, the switch's address table flush, and extra report sections.

Registered with ``pluginmanager.add_hookspecs`` (plugin/__init__.py,
``pytest_addhooks``). A conftest.py or an installed plugin implements them; the
built-in DUTs implement them too (plugin/dut_hooks.py, ``BuiltinDutHooks``).
pytest-netload calls every implementation itself (plugin/dut_hooks.py,
``HookRunner``), one at a time in pluggy's order, so that an error names the
plugin, a wrong return type names the hook, and a slow one is bounded by
``--netload-hook-timeout`` (ini ``netload_hook_timeout``). docs/hooks.md shows a
worked example of each, and one for a router reached over ssh.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

__all__ = ["HOOK_NAMES"]

HOOK_NAMES = ("pytest_netload_dut_info", "pytest_netload_before_trial",
              "pytest_netload_dut_counters", "pytest_netload_dut_health",
              "pytest_netload_dut_reset", "pytest_netload_dut_flush_addresses",
              "pytest_netload_report_sections")


@pytest.hookspec
def pytest_netload_dut_info(config: pytest.Config, dut: Any) -> Mapping[str, str] | None:
    """Facts about the DUT for the reports (model, software version, serial), once per
    session when the topology is built; every implementation's facts are merged.

    Example::

        def pytest_netload_dut_info(dut):
            version = dut.run(["cat", "/etc/os-release"]).stdout
            return {"os": version.splitlines()[0]}

    Return a mapping of str to str, or None.
    """


@pytest.hookspec
def pytest_netload_before_trial(trial: Any, dut: Any) -> None:
    """Before each trial's traffic, after its warm-up: configure the DUT, clear its
    counters. ``trial`` is a `TrialContext` (test, procedure, frame size, load,
    duration, the trial's number).

    Example::

        def pytest_netload_before_trial(trial, dut):
            dut.run(["vppctl", "clear", "interfaces"])

    Return None.
    """


@pytest.hookspec
def pytest_netload_dut_counters(trial: Any, dut: Any) -> Sequence[Any] | None:
    """The DUT's counters, read before the trial's traffic (``trial.phase ==
    "before"``) and after its drain (``"after"``); their growth goes into the trial's
    record, and the growth of drop counters into its loss attribution.

    Example::

        from pytest_netload import DutCounter

        def pytest_netload_dut_counters(trial, dut):
            out = dut.run(["cat", "/sys/class/net/eth1/statistics/rx_dropped"]).stdout
            return [DutCounter("rx_dropped", int(out), "ingress_drop", "eth1")]

    Return a list of `pytest_netload.DutCounter`, or None.
    """


@pytest.hookspec
def pytest_netload_dut_health(trial: Any, dut: Any, result: Any) -> Any:
    """After each trial, when health checks are on (``@pytest.mark.rfc2544(
    dut_health=True)`` or ini ``netload_dut_health = true``): is the DUT still well?
    ``result`` is the trial's `TrialResult`.

    Example::

        from pytest_netload import DutHealth

        def pytest_netload_dut_health(trial, dut, result):
            if "rebooted" in dut.run(["uptime"]).stdout:
                return DutHealth.invalid("DUT rebooted")  # the trial is retried
            return None

    Return None or ``DutHealth.ok()`` (well), ``DutHealth.invalid(reason)`` or a
    string (the trial is invalid and retried like one the generator failed), or
    ``DutHealth.failed(reason)`` (the test fails with the reason).
    """


@pytest.hookspec(firstresult=True)
def pytest_netload_dut_reset(dut: Any) -> Any:
    """Reset the DUT: what ``rfc2544.reset()`` calls in the middle of its traffic when
    it is given no callable (RFC 2544 §26.6). The first implementation that returns a
    value other than None ends the call.

    Example::

        def pytest_netload_dut_reset(dut):
            dut.run(["reboot"], check=False)
            return True

    Return True once the reset is done, or None to leave it to another plugin.
    """


@pytest.hookspec(firstresult=True)
def pytest_netload_dut_flush_addresses(trial: Any, dut: Any) -> Any:
    """Empty the switch's address table (its learned MAC addresses; static entries
    stay): before each RFC 2889 address trial (address caching capacity, address
    learning rate), which must start from an empty table. ``trial`` is the trial's
    `TrialContext` (its procedure "rfc2889_address_caching_capacity" or
    "rfc2889_address_learning_rate"). The first implementation that returns a value
    other than None ends the call; the built-in netns-bridge flushes its own.

    Example::

        def pytest_netload_dut_flush_addresses(trial, dut):
            dut.run(["bridge", "fdb", "flush", "dev", "br0", "dynamic"])
            return True

    Return True once the table is empty, or None to leave it to another plugin (with
    none, the trial waits out the marker's ``age_time``).
    """


@pytest.hookspec
def pytest_netload_report_sections(config: pytest.Config,
                                   results: Mapping[str, Any]) -> Sequence[Any] | None:
    """Extra sections for the report, at the end of the session: ``results`` is the
    results document (results.json) as it stands. Each section goes into results.json
    (``report_sections``) and the HTML report.

    Example::

        def pytest_netload_report_sections(config, results):
            return [("DUT software", "VPP 24.02, DPDK 23.11")]

    Return a list of (title, text) pairs, or None.
    """
