"""pytest-xdist: parallel tests on several DUTs, one DUT per worker, one set of results.

Under `pytest -n N`:
- **One topology, one worker.** Every test that builds a topology is put in the
  xdist group of that topology (`netload:<topology>`), and the controller's `--dist
  load` (what `-n` gives) becomes `loadgroup`: the tests of one DUT run one after
  another in one worker, on its one engine, and different DUTs run in parallel
  (the `netload_topology` marker gives tests their topologies: topologies.py). A
  test's own `xdist_group` marker is left alone. The group suffix xdist appends to
  node ids for scheduling is taken off again once the controller has the collection,
  so reports, JUnit and results.json name tests as a plain run does.
- **CPUs of its own.** With a local engine, the controller gives each worker a
  disjoint share of the CPUs pytest may use, and the worker runs on it (its engine
  host inherits it): each engine busy-polls its own CPUs (`cpu_slices`). With fewer
  CPUs than workers, a worker's netload tests error naming the numbers and the fix.
- **One set of results.** Records travel with the test reports, so the controller's
  summary writes results.json, report.html and the table for every worker's tests;
  each worker sends what the controller cannot see (its engine and ports, the DUTs it
  built, its CPUs) as `workeroutput["netload"]`, merged into results' `environment`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Generator, Sequence
from typing import Any

import pytest

from ..errors import NetloadConfigError
from .topologies import BUILT_FIXTURE, topology_of

GROUP_PREFIX = "netload:"
OUTPUT_KEY = "netload"  # workeroutput's key
EXTRA_KEY = pytest.StashKey[dict[str, Any]]()  # results' environment: workers, topologies
ACTIVE_DIST = ("load", "loadgroup")  # modes in which the tests of one topology share a worker


def cpu_slices(cpus: Sequence[int], workers: int) -> list[list[int]]:
    """Each of `workers` workers' CPUs out of `cpus`, no worker CPU in two slices. The
    engine's main lcore is the lowest CPU of a slice, and only waits; its workers
    busy-poll the others. With at least two CPUs a worker, each slice has its own main;
    with fewer, the mains share the lowest CPU and each worker gets the rest's share;
    with as many CPUs as workers, main and worker share one CPU. NetloadConfigError
    with fewer CPUs than workers."""
    from ..engine.client import cpu_ranges

    cpus = sorted(set(cpus))
    n = len(cpus)
    if workers > n:
        raise NetloadConfigError(
            f"pytest -n {workers}: each worker's engine busy-polls CPUs of its own, and "
            f"pytest may use {n} CPU{'s' if n > 1 else ''} ({cpu_ranges(cpus)}): run at most "
            f"{n} workers (-n {n}), give pytest more CPUs, or run the netload tests apart "
            "(-p no:xdist)")
    if n >= 2 * workers:
        main, rest = [], cpus
    elif n > workers:
        main, rest = cpus[:1], cpus[1:]
    else:
        return [[c] for c in cpus[:workers]]
    k = len(rest) // workers
    slices = [main + rest[i * k:(i + 1) * k] for i in range(workers)]
    slices[-1] += rest[workers * k:]
    return slices


def _local(settings: Any) -> bool:
    """Whether the session's engines run on this machine (a popen gateway, not fake)."""
    return settings.fake_dut is None and settings.engine.startswith("popen")


def _plain(value: Any) -> Any:
    """`value` as plain JSON types (execnet sends nothing else)."""
    return json.loads(json.dumps(value, default=str))


class Controller:
    """On the xdist controller: hands workers their mode and CPUs, and merges what they
    send back into the results' environment."""

    def __init__(self, config: pytest.Config, settings: Any) -> None:
        self.config = config
        self.grouping = config.option.dist in ACTIVE_DIST
        if config.option.dist == "load":
            config.option.dist = "loadgroup"  # xdist makes its scheduler after configure
        self.slices: list[list[int]] = []
        self.problem: str | None = None
        self.slots: dict[str, int] = {}  # worker id -> its slice, while it is up
        self.outputs: list[dict[str, Any]] = []
        self._progress: Any = None
        topology = None
        if _local(settings) and not settings.builtin_topology:
            from .keys import TOPOLOGY_KEY

            topology = config.stash.get(TOPOLOGY_KEY, None)
        # a topology file that names its lcores says where engines run: the locks keep
        # two workers off the same ones (locks.py)
        if _local(settings) and not (topology and any(p.lcores for p in topology.ports)):
            local = sum(_count(spec) for spec in config.option.tx if "popen" in spec)
            if local > 1:
                try:
                    self.slices = cpu_slices(os.sched_getaffinity(0), local)
                except NetloadConfigError as exc:
                    self.problem = str(exc)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput["netload_grouping"] = self.grouping
        node.workerinput["netload_progress"] = self.progress().mode
        if self.problem:
            node.workerinput["netload_cpu_problem"] = self.problem
        elif self.slices and "popen" in str(node.gateway.spec):
            used = set(self.slots.values())
            slot = next(i for i in range(len(self.slices)) if i not in used) \
                if len(used) < len(self.slices) else len(used) % len(self.slices)
            self.slots[node.gateway.id] = slot
            node.workerinput["netload_cpus"] = self.slices[slot]

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        self.slots.pop(node.gateway.id, None)  # a replacement worker may take its CPUs
        out = getattr(node, "workeroutput", {}).get(OUTPUT_KEY)
        if out:
            self.outputs.append(out)
            self._merge()

    def progress(self) -> Any:
        """The controller's progress display (terminal.TerminalProgress), made once."""
        if self._progress is None:
            from .live import TerminalProgress

            reporter = self.config.pluginmanager.get_plugin("terminalreporter")
            self._progress = TerminalProgress(reporter, self.config.get_verbosity(),
                                              mode=None if reporter is not None else "off")
        return self._progress

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        from .live import PROGRESS_ATTR

        status = getattr(report, PROGRESS_ATTR, None)
        if status is None:
            return
        from ..bench.progress_model import Status, status_line

        worker = getattr(report, "worker_id", None)
        self.progress().show((f"[{worker}] " if worker else "") + status_line(Status.of(status)))
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        stats = getattr(reporter, "stats", {}).get("", [])
        if stats and stats[-1] is report:  # not a test's outcome: keep the stats lean
            stats.pop()

    def _merge(self) -> None:
        from .environment import environment_of
        from .keys import DUT_KEY, ENVIRONMENT_KEY

        outputs = sorted(self.outputs, key=lambda o: _worker_number(o["worker"]))
        with_engine = [o for o in outputs if o.get("environment")]
        if with_engine:
            self.config.stash[ENVIRONMENT_KEY] = with_engine[0]["environment"]
        duts = [o["dut"] for o in outputs if o.get("dut")]
        if duts and all(d == duts[0] for d in duts):
            self.config.stash[DUT_KEY] = duts[0]
        summary = self.config.pluginmanager.get_plugin("netload-summary")
        if summary is not None:  # the controller collects nothing: its workers count
            summary.netload_tests = max(summary.netload_tests,
                                        max(o.get("netload_tests", 0) for o in outputs))
        self.config.stash[EXTRA_KEY] = {
            "workers": [{"worker": o["worker"], "cpus": o.get("cpus"),
                         "topologies": [t["topology"] for t in o.get("topologies", ())],
                         **({"environment": environment_of(o["environment"])}
                            if o.get("environment") else {})} for o in outputs],
            "topologies": [t for o in outputs for t in o.get("topologies", ())]}

    def header_lines(self, config: pytest.Config) -> list[str]:
        """The controller's part of the netload header (plugin.header_lines)."""
        parts = []
        if self.grouping:
            parts.append("tests of one topology run in one worker (--dist loadgroup)")
        else:
            parts.append(f"--dist {config.option.dist}: tests of one topology may run in "
                         "several workers at once (--dist loadgroup keeps them in one)")
        if self.slices:
            parts.append("worker CPUs " + "; ".join(",".join(map(str, s)) for s in self.slices))
        line = "netload: xdist: " + ", ".join(parts)
        return [line] + ([f"netload: {self.problem}"] if self.problem else [])


def _count(spec: str) -> int:
    """Workers of one --tx spec ('2*popen' is two)."""
    head, star, _ = spec.partition("*")
    return int(head) if star and head.isdigit() else 1


def _worker_number(worker: str) -> int:
    digits = "".join(c for c in worker if c.isdigit())
    return int(digits) if digits else 0


class Recorder:
    """In every session that is not the xdist controller: the topologies built and, on an
    xdist worker, the grouping by topology, the worker's CPUs and what it sends back."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.workerinput: dict[str, Any] | None = getattr(config, "workerinput", None)
        self.built: list[dict[str, Any]] = []
        self.renamed: dict[str, str] = {}  # grouped node id -> the test's own
        self.netload_tests = 0
        self.cpus: list[int] | None = None
        self.problem: str | None = None
        winput = self.workerinput or {}
        if winput.get("netload_grouping"):
            config.option.loadgroup = True  # xdist's worker appends the groups to node ids
        self.problem = winput.get("netload_cpu_problem")
        if winput.get("netload_cpus"):
            self.cpus = [int(c) for c in winput["netload_cpus"]]
            for tid in os.listdir("/proc/self/task"):  # its engine hosts inherit them
                try:
                    os.sched_setaffinity(int(tid), self.cpus)
                except OSError:
                    continue

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        """Before xdist's worker names the groups: each topology's tests in its group."""
        if self.workerinput is None or not self.config.getoption("loadgroup", False):
            return
        for item in items:
            topology = topology_of(item)
            if topology is None or item.get_closest_marker("xdist_group") is not None:
                continue
            self.renamed[f"{item.nodeid}@{GROUP_PREFIX}{topology}"] = item.nodeid
            item.add_marker(pytest.mark.xdist_group(GROUP_PREFIX + topology))

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """After the controller got the grouped ids: tests keep their own node ids."""
        from .selection import is_netload_test

        self.netload_tests = sum(1 for item in session.items if is_netload_test(item))
        for item in session.items:
            own = self.renamed.get(item.nodeid)
            if own is not None:
                item._nodeid = own

    @pytest.hookimpl(wrapper=True)
    def pytest_fixture_setup(self, fixturedef: Any,
                             request: pytest.FixtureRequest) -> Generator[None, Any, Any]:
        if fixturedef.argname == "netload_engine" and self.problem:
            pytest.fail(f"netload: the engine did not start: {self.problem}", pytrace=False)
        result = yield
        if fixturedef.argname == BUILT_FIXTURE:
            self._note_built(request, result)
        return result

    def _note_built(self, request: pytest.FixtureRequest, built: Any) -> None:
        from .keys import SETTINGS_KEY

        topology, dut = built
        spec = getattr(request, "param", None) or self.config.stash[SETTINGS_KEY].topology
        info = getattr(dut, "info", None) if dut is not None else None
        meta = {**(info or dict(topology.dut))}
        entry = {"topology": str(spec), "name": topology.name,
                 "dut": {k: str(v) for k, v in meta.items()}}
        if self.workerinput is not None:
            entry["worker"] = self.workerinput["workerid"]
        if entry not in self.built:
            self.built.append(entry)
        if self.workerinput is None and len(self.built) > 1:
            self.config.stash[EXTRA_KEY] = {"topologies": list(self.built)}

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.workerinput is None:
            return
        from .keys import DUT_KEY, ENVIRONMENT_KEY

        self.config.workeroutput[OUTPUT_KEY] = _plain({  # type: ignore[attr-defined]
            "worker": self.workerinput["workerid"], "cpus": self.cpus,
            "environment": self.config.stash.get(ENVIRONMENT_KEY, None),
            "dut": self.config.stash.get(DUT_KEY, None),
            "netload_tests": self.netload_tests, "topologies": self.built})


def configure(config: pytest.Config, settings: Any) -> None:
    """Register the controller's or the session's part (plugin/__init__.py calls this)."""
    if hasattr(config, "workerinput") or not _distributing(config):
        if not config.pluginmanager.has_plugin("netload-recorder"):
            config.pluginmanager.register(Recorder(config), "netload-recorder")
    elif not config.pluginmanager.has_plugin("netload-xdist"):
        config.pluginmanager.register(Controller(config, settings), "netload-xdist")


def _distributing(config: pytest.Config) -> bool:
    """This process is an xdist controller (xdist's own test, _is_distribution_mode)."""
    return getattr(config.option, "dist", "no") != "no" and bool(getattr(config.option, "tx",
                                                                           None))


def extra_environment(config: pytest.Config) -> dict[str, Any]:
    """What results' environment adds for several topologies or workers ({} otherwise)."""
    return dict(config.stash.get(EXTRA_KEY, {}))
