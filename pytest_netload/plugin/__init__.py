"""pytest-netload's pytest plugin: options, markers, fixtures, records, terminal output.

This package is the plugin module pytest loads (entry point ``pytest_netload.plugin``);
its hooks are here. Thin on purpose: importing it never loads the cffi extension or
DPDK; the engine host process starts only when a test asks for it. The fixtures
live in fixtures.py, the settings in options.py, the markers in markers.py, the
terminal output in terminal.py (what results record of the engine and ports
in environment.py), the session-start sweep and SIGTERM handling in
cleanup.py, the shared stash keys in keys.py, the netload_topology marker in
topologies.py and pytest-xdist's part in xdist.py.

Quiet when unused: which tests are netload tests is decided at collection
(selection.py). Only a session that collected one sweeps leftovers, installs the
SIGTERM handler, prints the netload header (after pytest's "collected N items"),
and writes results; the others see nothing of the plugin. A session whose netload
tests cannot run here (a built-in DUT without root) is a usage error naming the
fix, unless --netload-skip-unavailable asks to skip them.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Generator
from typing import Any

import pytest

from . import options
from .keys import ACTIVE_KEY

RECORD_STASH = pytest.StashKey[dict[str, Any]]()
SIGTERM_KEY = pytest.StashKey[Any]()  # cleanup.SigtermHandler, while configured
SWEPT_KEY = pytest.StashKey[tuple[list[str], list[str]]]()  # cleanup.sweep's answer
REFUSED_KEY = pytest.StashKey[str]()  # the usage error of netload tests that cannot run


def pytest_addoption(parser: pytest.Parser) -> None:
    options.add_options(parser)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    """The hooks pytest-netload calls (plugin/hookspecs.py, docs/hooks.md)."""
    from . import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


def pytest_configure(config: pytest.Config) -> None:
    from . import capabilities, fixtures, keys, marker_help, topologies, xdist

    config.addinivalue_line("markers", "netload" + marker_help.NETLOAD_HELP[len("netload"):])
    config.addinivalue_line("markers", "rfc2544" + marker_help.RFC2544_HELP[len("rfc2544"):])
    config.addinivalue_line("markers", topologies.HELP)
    from .rfc2889 import RFC2889_HELP
    from .y1564 import Y1564_HELP

    config.addinivalue_line("markers", "y1564" + Y1564_HELP[len("y1564"):])
    config.addinivalue_line("markers", "rfc2889" + RFC2889_HELP[len("rfc2889"):])
    settings = options.resolve(config)
    config.stash[keys.SETTINGS_KEY] = settings
    reports = fixtures.report_dir(config)
    if reports.exists() and not reports.is_dir():  # found now, not after the whole run
        raise pytest.UsageError(
            f"--netload-report-dir: {reports} is not a directory (a file is there); give a "
            "directory for the result files, or move the file away")
    if settings.baseline:  # checked before any traffic
        from ..errors import NetloadConfigError
        from ..reports.baseline import baseline_dir, load_baseline

        try:
            config.stash[keys.BASELINE_KEY] = load_baseline(
                settings.baseline, baseline_dir(fixtures.report_dir(config)))
        except NetloadConfigError as exc:
            raise pytest.UsageError(f"--netload-baseline: {exc}") from None
    dut = settings.fake_dut
    if dut is not None:
        from ..topology.fake import FAKE_TOPOLOGY, fake_topology
    if dut is not None and settings.topology == FAKE_TOPOLOGY:  # the fake engine's own
        config.stash[keys.TOPOLOGY_KEY] = fake_topology(
            dut.port_rate_bps, {"name": "fake", "model": dut.spec(), "about": dut.describe()},
            members=dut.ecmp)
    elif not settings.builtin_topology:  # a topology file: checked before any test runs
        from ..errors import NetloadConfigError
        from ..topology.toml import load_topology

        try:
            topology = config.stash[keys.TOPOLOGY_KEY] = load_topology(settings.topology)
            specs = dict(settings.engines)
            for i, port in enumerate(topology.ports):
                if port.engine is not None and port.engine not in specs:
                    raise NetloadConfigError(
                        f"{settings.topology}: ports[{i}] ({port.name}) runs on engine "
                        f"{port.engine!r}, which --netload-engines (ini netload_engines) does "
                        f"not name ({', '.join(specs) or 'it names none'}); add "
                        f"{port.engine}=SPEC there, e.g. {port.engine}=ssh=ci@{port.engine}"
                        "//python=/opt/netload/.venv/bin/python")
                spec = specs[port.engine] if port.engine else settings.engine
                if port.lcores and spec.startswith("popen"):  # here: CPUs it may use
                    from ..engine.client import check_cpus

                    check_cpus(port.lcores, f"{settings.topology}: ports[{i}].lcores")
        except NetloadConfigError as exc:
            raise pytest.UsageError(f"--netload-topology: {exc}") from None
    if not config.pluginmanager.has_plugin("netload-fixtures"):
        config.pluginmanager.register(fixtures, "netload-fixtures")
    if not config.pluginmanager.has_plugin("netload-y1564"):
        from . import rfc2889, y1564

        config.pluginmanager.register(y1564, "netload-y1564")
        config.pluginmanager.register(rfc2889, "netload-rfc2889")
    if not hasattr(config, "workerinput"):  # the xdist controller or a plain run
        from .terminal import Summary

        config.pluginmanager.register(Summary(config, activate_late), "netload-summary")

    xdist.configure(config, settings)  # pytest -n: a worker per topology, merged results
    capabilities.configure(config)  # the netload_requires marker, netload_capabilities
    if not config.pluginmanager.has_plugin("netload-junit-errors"):
        config.pluginmanager.register(JunitCrashAsError(config), "netload-junit-errors")
    # the sweep and the SIGTERM handler wait for a netload test (activate)


def active(config: pytest.Config) -> bool:
    """Whether this session collected a netload test (selection.py)."""
    return config.stash.get(ACTIVE_KEY, False)


def activate(config: pytest.Config) -> None:
    """A netload test was collected: sweep what sessions that died left (not on an xdist
    worker: the controller sweeps, once) and install the SIGTERM handler. Once."""
    if active(config):
        return
    config.stash[ACTIVE_KEY] = True
    from .dut_hooks import BUILTIN_PLUGIN, BuiltinDutHooks

    if not config.pluginmanager.has_plugin(BUILTIN_PLUGIN):  # the built-in DUTs' hooks
        config.pluginmanager.register(BuiltinDutHooks(), BUILTIN_PLUGIN)
    if not hasattr(config, "workerinput"):
        from .cleanup import sweep
        from .fixtures import report_dir

        config.stash[SWEPT_KEY] = sweep(report_dir(config))
    from .cleanup import SigtermHandler

    handler = SigtermHandler()
    if handler.install():  # SIGTERM unwinds the session like Ctrl-C: nothing left behind
        config.stash[SIGTERM_KEY] = handler


def activate_late(config: pytest.Config) -> list[str]:
    """On an xdist controller, which collects nothing, when its workers' first netload
    test arrives (terminal.Summary): activate, and the header's lines as a plain run
    shows them."""
    activate(config)
    return pytest_report_collectionfinish(config, [])


@pytest.hookimpl(trylast=True)  # after -k/-m deselection and other plugins' changes
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    """Which tests are netload tests; a session whose netload tests cannot run here is a
    usage error naming the fix (or, with --netload-skip-unavailable, they skip)."""
    from .selection import mark_netload_tests

    netload = mark_netload_tests(items)
    if not netload:
        return
    from .keys import SETTINGS_KEY
    from .selection import unavailable, unavailable_text

    blocked = unavailable(netload)
    if not blocked:
        return
    text = unavailable_text(len(blocked), sorted({t for _, t in blocked}))
    if config.stash[SETTINGS_KEY].skip_unavailable:
        for item, _ in blocked:
            item.add_marker(pytest.mark.skip(reason=text))
    elif not config.option.collectonly and not hasattr(config, "workerinput"):
        config.stash[REFUSED_KEY] = text  # nothing ran: no sweep, no results
        raise pytest.UsageError(text)
    # (on an xdist worker each such test errors with the text: fixtures._netload_built)


@pytest.hookimpl(tryfirst=True)  # before the terminal asks for the header
def pytest_collection_finish(session: pytest.Session) -> None:
    from .selection import is_netload_test

    if REFUSED_KEY not in session.config.stash and \
            any(is_netload_test(item) for item in session.items):
        activate(session.config)


def pytest_report_collectionfinish(config: pytest.Config,
                                   items: list[pytest.Item]) -> list[str]:
    """The netload header, once a netload test is collected (after "collected N items").
    -q and --no-header hide it, but for a CI job on the built-in default topology:
    "built-in DUT, not your device" always shows."""
    if not active(config):
        return []
    from .keys import SETTINGS_KEY

    if (config.get_verbosity() < 0 or config.getoption("no_header", False)) and \
            not config.stash[SETTINGS_KEY].builtin_in_ci:
        return []
    return header_lines(config, items)


def own_topology_lines(config: pytest.Config, items: list[pytest.Item]) -> list[str]:
    """The header's line for tests that run on a topology of their own (a suite's
    `netload_topology` marker), not the session's: which, and how many tests each."""
    from .keys import SETTINGS_KEY
    from .selection import is_netload_test
    from .topologies import topology_of

    session = config.stash[SETTINGS_KEY].topology
    counts: dict[str, int] = {}
    for item in items:
        spec = topology_of(item) if is_netload_test(item) else None
        if spec is not None and spec != session:
            counts[spec] = counts.get(spec, 0) + 1
    if not counts:
        return []
    return ["netload: tests on their own topology (not the session's): " +
            ", ".join(f"{spec} ({n} test{'s' if n != 1 else ''})"
                      for spec, n in counts.items())]


def pytest_unconfigure(config: pytest.Config) -> None:
    handler = config.stash.get(SIGTERM_KEY, None)
    if handler is not None:
        handler.uninstall()
        del config.stash[SIGTERM_KEY]


def header_lines(config: pytest.Config, items: list[pytest.Item] | None = None) -> list[str]:
    """The netload header: the settings, what the sweep removed, the xdist controller's
    plan. Shown once a netload test is collected (pytest_report_collectionfinish; on an
    xdist controller, which collects nothing, when its workers' are known)."""
    from .keys import SETTINGS_KEY
    from .environment import port_mac_lines

    lines = [config.stash[SETTINGS_KEY].header(), *port_mac_lines(config),
             *own_topology_lines(config, items or [])]
    removed, problems = config.stash.get(SWEPT_KEY, ([], []))
    if removed:
        shown = ", ".join(os.path.basename(p) for p in removed[:6])
        more = f" and {len(removed) - 6} more" if len(removed) > 6 else ""
        lines.append(f"netload: removed {len(removed)} leftovers of sessions that ended "
                     f"without cleaning up: {shown}{more}")
    lines += [f"netload: could not sweep {p}" for p in problems]
    controller = config.pluginmanager.get_plugin("netload-xdist")
    if controller is not None:
        lines += controller.header_lines(config)
    return lines


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    from .selection import maybe_netload

    if not maybe_netload(metafunc):
        return  # not a netload test: the marker parsers stay unloaded
    from .markers import check_markers, parametrize_frame_sizes
    from .topologies import parametrize_topologies

    from .rfc2889 import parse_rfc2889
    from .y1564 import parse_y1564

    check_markers(metafunc, (("y1564", parse_y1564), ("rfc2889", parse_rfc2889)))
    parametrize_topologies(metafunc)
    parametrize_frame_sizes(metafunc)


def _write_capture(item: pytest.Item, record: Any) -> None:
    """A failed netload verdict: the last frames the RX ports saw, as a pcap in
    <report dir>/captures/, named after the test."""
    from .fixtures import report_dir

    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", item.nodeid).strip("_") + ".pcap"
    path = report_dir(item.config) / "captures" / name
    try:
        record.last_run.write_pcap(path)
    except OSError as exc:
        item.warn(pytest.PytestWarning(f"netload: could not write the capture {path}: {exc}"))
        return
    record.captures.append(str(path))
    item.user_properties.append(("netload.capture", str(path)))


def _allure(item: pytest.Item, data: dict[str, Any], live_steps: bool = False) -> None:
    from ..reports import allure

    if allure.active(item.config):
        from .keys import DUT_FACTS_KEY, SETTINGS_KEY, TOPOLOGY_KEY

        topo = item.config.stash.get(TOPOLOGY_KEY, None)
        dut = {**(dict(topo.dut) if topo is not None else {}),
               **item.config.stash.get(DUT_FACTS_KEY, {})}
        try:
            allure.attach(data, dut, item.config.stash[SETTINGS_KEY].topology,
                          live_steps=live_steps)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            # a report add-on must never turn a DUT verdict into an error
            item.warn(pytest.PytestWarning(f"netload: allure attachments failed: {exc!r}"))


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    if not active(session.config):
        return
    from ..reports import allure

    config = session.config
    handler = config.stash.get(SIGTERM_KEY, None)
    if handler is not None:  # fixtures are torn down next: a SIGTERM must not cut that short
        handler.finishing = True
    if allure.active(config) and not hasattr(config, "workerinput"):
        from ..reports.json import package_version
        from .keys import SETTINGS_KEY, TOPOLOGY_KEY

        settings = config.stash[SETTINGS_KEY]
        topo = config.stash.get(TOPOLOGY_KEY, None)
        values: dict[str, Any] = {"pytest-netload": package_version(),
                                  "topology": settings.topology,
                                  "backend": settings.backend, "engine": settings.engine}
        if topo is not None:
            values.update({f"dut.{k}": v for k, v in topo.dut.items()})
        allure.write_environment(config.option.allure_report_dir, values)


def _attach(item: pytest.Item, record: Any) -> None:
    """The test's record: whole and JSON-able in the item's stash (the report carries
    it as `report.netload`), its key figures flat in user_properties for JUnit
    (reports/junit.py names them)."""
    if not (record.measurements or record.verdicts):
        return
    if record.failed and record.last_run is not None and record.last_run.captured:
        _write_capture(item, record)
    from ..reports.junit import properties

    data = json.loads(json.dumps(record.as_dict(), default=str))
    item.stash[RECORD_STASH] = data
    item.user_properties.extend(properties(data["measurements"]))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    from .selection import is_netload_test

    if not is_netload_test(item):
        return (yield)
    from ..measure.recording import recording
    from .live import live

    shown = None
    with recording(item.nodeid) as record:
        try:
            with live(item) as shown:
                result = yield
        finally:
            _attach(item, record)
            if RECORD_STASH in item.stash:
                _allure(item, item.stash[RECORD_STASH],
                        live_steps=bool(shown is not None and shown.allure_steps))
    _check_baseline(item)
    return result


def _check_baseline(item: pytest.Item) -> None:
    """With --netload-baseline: fail a test whose figures regressed beyond their noise (and
    beyond --netload-regression's threshold, when given)."""
    from .keys import BASELINE_KEY, SETTINGS_KEY

    baseline = item.config.stash.get(BASELINE_KEY, None)
    if baseline is None or RECORD_STASH not in item.stash:
        return
    from ..reports.baseline import compare

    data = item.stash[RECORD_STASH]
    doc = {"schema_version": baseline["schema_version"], "created": "now", "tests": [
        {"nodeid": item.nodeid, "outcome": "passed", "measurements": data["measurements"],
         "verdicts": data["verdicts"]}]}
    settings = item.config.stash[SETTINGS_KEY]
    regressed = compare(doc, baseline, threshold=settings.regression).regressions_for(item.nodeid)
    if regressed:
        from ..reports.baseline import Comparison
        from ..reports.threshold import threshold_text

        name = settings.baseline
        table = Comparison(tuple(regressed), name=name).table_lines()
        beyond = "" if settings.regression is None else \
            f" and worse than the {threshold_text(settings.regression)} regression threshold"
        pytest.fail("\n".join([(f"regressed against baseline {name!r} beyond measurement "
                               f"noise (the bands do not overlap){beyond}:"), *table]),
                    pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item,
                              call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    report = yield
    from .selection import is_netload_test

    if is_netload_test(item):
        # A plain attribute, so xdist carries it: the summary counts netload tests only.
        report.netload_test = True
    if call.when == "call" and RECORD_STASH in item.stash:
        # A plain JSON-able attribute: xdist serialises it with the report.
        report.netload = item.stash[RECORD_STASH]
    if call.excinfo is not None and report.failed:
        from ..errors import EngineCrashed, GeneratorLimit, InvalidTrial, NetloadHookError

        if call.excinfo.errisinstance((EngineCrashed, InvalidTrial, NetloadHookError,
                                       GeneratorLimit)):
            # A harness problem, not a DUT verdict (the engine host died, the generator
            # failed every trial, or a requirement is above what the generator could offer):
            # pytest_report_teststatus files the report as an error; the text (with the
            # engine's log tail, or the trials' reasons) goes to results.
            report.netload_harness_error = str(call.excinfo.value)
            if call.excinfo.errisinstance(EngineCrashed):
                report.netload_engine_crash = report.netload_harness_error
            if call.excinfo.errisinstance(NetloadHookError):
                report.netload_hook_error = report.netload_harness_error
            if call.excinfo.errisinstance(GeneratorLimit):
                report.netload_generator_limit = report.netload_harness_error
    return report


class JunitCrashAsError:
    """JUnit XML files a failed call as <failure>, a DUT verdict; a test in which the
    engine host died, every trial was invalid or a requirement was above the generator's
    ceiling is an <error> there, as in the summary. Runs after pytest's
    junitxml writer (trylast) and retags the element it just wrote; without --junitxml
    it does nothing."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call" or not report.failed or \
                not getattr(report, "netload_harness_error", None):
            return
        why = "engine crashed" if getattr(report, "netload_engine_crash", None) else \
            "a DUT hook failed" if getattr(report, "netload_hook_error", None) else \
            "the generator's ceiling" if getattr(report, "netload_generator_limit", None) \
            else "every trial invalid"
        try:  # pytest's writer is private: a pytest without it keeps its <failure>
            from _pytest.junitxml import xml_key
        except ImportError:
            return
        xml = self.config.stash.get(xml_key, None)
        if xml is None:
            return
        for node in reversed(xml.node_reporter(report).nodes):
            if node.tag == "failure":
                node.tag = "error"
                node.set("message", f"{why} (not a DUT verdict): " + node.get("message", ""))
                xml.stats["failure"] -= 1
                xml.stats["error"] += 1
                return


def pytest_report_teststatus(report: pytest.TestReport,
                             config: pytest.Config) -> tuple[str, str, str] | None:
    """A test in which the engine host died, whose every trial the generator failed
    (InvalidTrial), or whose requirement is above a figure the generator bounded
    (GeneratorLimit), is an ERROR, not a FAILED: the DUT was not judged. (pytest files a
    failed call as "failed"; this hook is how a plugin files a report in another category,
    and the summary line, exit status and -r listings follow.)"""
    if report.when == "call" and report.failed and \
            getattr(report, "netload_harness_error", None):
        return "error", "E", "ERROR"
    return None
