"""The plugin's fixtures. Session-scoped where they hold the engine, the
topology or open ports (the EAL starts once per session); function-scoped
where they carry a test's marker settings.

Harness problems become a skip (no root for a built-in topology) or an
error whose message names the cause and the fix, never a deep traceback.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..errors import EngineCrashed, NetloadConfigError, NetloadEnvironmentError, NetloadHookError
from .keys import DUT_FACTS_KEY, DUT_KEY, ENVIRONMENT_KEY, SETTINGS_KEY, TOPOLOGY_KEY

if TYPE_CHECKING:  # imported where used: registering the fixtures loads none of it
    from ..bench.harness import BoundController, LatencyMeter, WiredPorts
    from ..bench.landing import FrameCounter
    from ..bench.link import LinkPolicy
    from ..bench.runner import Calibration, Rfc2544Runner
    from ..bench.settings import NetloadMark, Rfc2544Mark
    from ..bench.validity import BurstLimit
    from ..engine.client import Engine, Port
    from ..topology.model import Topology
    from .options import Settings

CAPTURE_FRAMES = 256  # frames each RX port keeps of every run, for failure captures


def _settings(config: pytest.Config) -> Settings:
    return config.stash[SETTINGS_KEY]


def report_dir(config: pytest.Config) -> Path:
    """The session's report directory; a relative one is under the rootdir."""
    path = Path(config.stash[SETTINGS_KEY].report_dir)
    return path if path.is_absolute() else config.rootpath / path


def engine_resources(topology: Topology | None, engine: str | None = None, *,
                     local: bool = True) -> dict[str, Any]:
    """What a topology file asks of one of its engines (`engine`: a name of
    --netload-engines, None: the session's): the PCI ports it opens (the EAL probes only
    those) and the CPUs their workers may use, after a main lcore that only waits; on a
    remote engine (not `local`) that host picks the main lcore among its own CPUs."""
    if topology is None:
        return {}
    from ..engine.client import PCI_ADDRESS

    ports = [p for p in topology.ports if p.engine == engine]
    out: dict[str, Any] = {}
    pci = [p.device.split(",", 1)[0] for p in ports
           if p.device and PCI_ADDRESS.fullmatch(p.device.split(",", 1)[0])]
    if pci:
        out["pci"] = pci
    workers = sorted({c for p in ports for c in p.lcores})
    if workers and not local:
        out.update(lcores=workers, auto_main=True)
    elif workers:
        free = sorted(os.sched_getaffinity(0) - set(workers))
        out["lcores"] = [free[0] if free else workers[0], *workers]
    return out


def _harness_failure(what: str, exc: Exception) -> None:
    pytest.fail(f"netload: {what}: {exc}", pytrace=False)


@pytest.fixture(scope="session")
def netload_engine(pytestconfig: pytest.Config) -> Iterator[Engine]:
    """The session's traffic engine (its host process starts on first use)."""
    from ..engine.client import Engine
    from ..measure.recording import note_run

    settings = _settings(pytestconfig)
    topology = pytestconfig.stash.get(TOPOLOGY_KEY, None)
    dut = settings.fake_dut
    resources = engine_resources(topology, local=settings.gateway.startswith("popen"))
    if dut is not None:  # the fake engine host has no CPUs to claim
        resources.pop("lcores", None)
    engine = Engine(settings.gateway, memory_mb=settings.engine_memory_mb, fake=dut,
                    port_wait_s=settings.port_wait_s,
                    **resources)
    try:
        engine.start()
    except (NetloadEnvironmentError, NetloadConfigError) as exc:
        engine.close()
        _harness_failure("the engine did not start", exc)
    engine.capture_default = CAPTURE_FRAMES
    engine.observers.append(note_run)
    pytestconfig.stash[ENVIRONMENT_KEY] = {"engine": engine.environment(), "ports": []}
    try:
        yield engine
    finally:
        engine.close()


@pytest.fixture(scope="session")
def netload_engines(pytestconfig: pytest.Config,
                    netload_engine: Engine) -> Iterator[dict[str | None, Engine]]:
    """Every engine of the session by name: None is the session's (--netload-engine);
    the others are those of --netload-engines that the topology file's ports name
    (`engine = "gen-a"`), each started with its own ports' PCI devices and CPUs."""
    from ..engine.client import Engine
    from ..measure.recording import note_run

    settings = _settings(pytestconfig)
    topology = pytestconfig.stash.get(TOPOLOGY_KEY, None)
    used = {p.engine for p in topology.ports if p.engine} if topology is not None else set()
    engines: dict[str | None, Engine] = {None: netload_engine}
    try:
        for name, spec in settings.engines:
            if name not in used:
                continue
            engine = engines[name] = Engine(
                spec, memory_mb=settings.engine_memory_mb, port_wait_s=settings.port_wait_s,
                **engine_resources(topology, name, local=spec.startswith("popen")))
            try:
                engine.start()
            except (NetloadEnvironmentError, NetloadConfigError) as exc:
                _harness_failure(f"engine {name!r} did not start", exc)
            engine.capture_default = CAPTURE_FRAMES
            engine.observers.append(note_run)
        env = pytestconfig.stash.get(ENVIRONMENT_KEY, None)
        if env is not None and len(engines) > 1:
            env["engines"] = {name: e.environment() for name, e in engines.items() if name}
        yield engines
    finally:
        for name, engine in engines.items():
            if name is not None:
                engine.close()


@pytest.fixture(scope="session")
def _netload_built(pytestconfig: pytest.Config,
                   request: pytest.FixtureRequest) -> Iterator[tuple[Topology, Any]]:
    from .topologies import for_request  # a netload_topology marker may name the topology

    settings, topology = for_request(pytestconfig, request, _settings(pytestconfig))
    if topology is not None:
        from ..bench.harness import ExternalDut

        external = ExternalDut(topology)
        _dut_facts(pytestconfig, external)
        yield topology, external
        return
    from ..topology.builtin import build

    if os.geteuid() != 0:  # found at collection (a usage error) but on an xdist worker
        from .selection import unavailable_text

        text = unavailable_text(1, [settings.topology.partition(":")[0]])
        if settings.skip_unavailable:
            pytest.skip(text)
        pytest.fail(text, pytrace=False)
    with ExitStack() as stack:
        try:
            name, params = settings.builtin()
            built = stack.enter_context(build(name, backend=settings.backend, **params))
        except (NetloadEnvironmentError, NetloadConfigError) as exc:
            _harness_failure(f"building topology {settings.topology}", exc)
        if built.dut is not None:
            pytestconfig.stash[DUT_KEY] = {**built.dut.info,
                                           "name": settings.topology.partition(":")[0],
                                           "namespace": built.dut.namespace}
            _dut_facts(pytestconfig, built.dut)
        yield built.topology, built.dut


def _hook_runner(config: pytest.Config) -> Any:
    from .dut_hooks import HookRunner

    return HookRunner(config, _settings(config).hook_timeout_s)


def _dut_facts(config: pytest.Config, dut: Any) -> None:
    """The pytest_netload_dut_info hooks' facts, kept for the reports (DUT_FACTS_KEY)."""
    from .dut_hooks import dut_info

    try:
        config.stash[DUT_FACTS_KEY] = dut_info(_hook_runner(config), dut)
    except NetloadHookError as exc:
        _harness_failure("reading the DUT's facts (pytest_netload_dut_info)", exc)


@pytest.fixture(scope="session")
def netload_topology(_netload_built: tuple[Topology, Any]) -> Topology:
    """The session's topology: ports, wires, addresses, line rate, DUT metadata."""
    return _netload_built[0]


@pytest.fixture(scope="session")
def dut(_netload_built: tuple[Topology, Any]) -> Any:
    """The topology's DUT: run commands in it and read its counters (built-in DUTs;
    a topology file's DUT runs commands when it names a namespace here)."""
    handle = _netload_built[1]
    if handle is None:
        pytest.skip(f"topology {_netload_built[0].name!r} has no DUT (ports wired straight)")
    return handle


def _open_port(engine: Engine, spec: Any, backend: str, link: LinkPolicy | None = None) -> Port:
    """Open the topology's port `spec`, under its name; then, with a `link` policy, wait
    for its link (bounded) and compare its speed with the line rate (bench/link.py: a
    link still down is a NetloadEnvironmentError naming the port and what to check)."""
    device = spec.device
    if device is None:
        from ..topology.builtin import vdev_string

        device = vdev_string(backend, spec.name, spec.iface)
    queues = int(getattr(spec, "queues", 1) or 1)
    if link is not None:
        # also bounds the wait after a lost link, and a vhost-user server's for its peer
        engine.link_timeout_s = link.timeout_s
    port = engine.port(device, name=spec.name, rx_queues=queues, tx_queues=queues)
    if link is not None:
        try:
            from ..bench.link import check_port_link

            state = check_port_link(port, spec.name, link)
        except BaseException:
            port.close()
            raise
        # what the results' environment records: the real speed, or none (0)
        port.info.update(link_speed_mbps=state.get("speed_mbps") or 0,
                         link_speed_note=state.get("speed_note"))
    return port


def _link_policy(config: pytest.Config, topology: Topology) -> LinkPolicy:
    from ..bench.link import LinkPolicy

    settings = _settings(config)
    return LinkPolicy(settings.link_timeout_s, settings.link_strict, topology.line_rate_bps)


def _open_ports(config: pytest.Config, engines: dict[str | None, Engine],
                topology: Topology, wired: WiredPorts) -> None:
    """Open every port of the topology on its engine (`engines`, by the port's `engine`
    name) into `wired.ports` (as far as it gets: the caller closes what is there), bring
    up their addresses (ARP/ND answered, peer MACs resolved: `wired.topology` gets
    them) and note them for the results' environment."""
    from ..engine.neighbours import bring_up

    opened = wired.ports
    engine = engines[None]
    backend = _settings(config).backend
    for spec in topology.ports:
        try:
            opened[spec.name] = _open_port(engines.get(spec.engine, engine), spec, backend,
                                           _link_policy(config, topology))
        except (NetloadEnvironmentError, NetloadConfigError) as exc:
            _harness_failure(f"opening port {spec.name!r} of topology {topology.name!r}", exc)
    try:
        wired.topology, neighbours = bring_up(
            topology, opened, resolve_timeout_s=_settings(config).resolve_timeout_s)
    except (NetloadEnvironmentError, NetloadConfigError) as exc:
        _harness_failure(f"addresses of topology {topology.name!r}", exc)
    by_name = {n["name"]: n for n in neighbours}
    env = config.stash.get(ENVIRONMENT_KEY, None)
    if env is not None:
        env["engine"] = engine.environment()  # a fresh host may run on other CPUs
        env["ports"] = [{"name": name, "device": p.device, "driver": p.driver,
                         "mac": p.mac, "mtu": p.info.get("mtu"),
                         "link_speed_mbps": p.info.get("link_speed_mbps"),
                         "hw_timestamps": p.info.get("hw_timestamps"),
                         "link_speed_note": p.info.get("link_speed_note"),
                         **({"engine": topology.port(name).engine}
                            if topology.port(name).engine else {}),
                         **({f"{k}": v for k, v in by_name[name].items() if k != "name"}
                            if name in by_name else {})}
                        for name, p in opened.items()]


@pytest.fixture(scope="session")
def netload_ports(pytestconfig: pytest.Config, netload_engines: dict[str | None, Engine],
                  netload_topology: Topology) -> Iterator[WiredPorts]:
    """The topology's ports opened on their engines; unpacks as the first wire's (tx, rx).
    After an engine crash the next test gets them opened again on a fresh engine host."""
    from ..bench.harness import WiredPorts

    wired = WiredPorts(netload_topology, {}, reopen=lambda into: _open_ports(
        pytestconfig, netload_engines, netload_topology, wired))
    try:
        try:
            _open_ports(pytestconfig, netload_engines, netload_topology, wired)
        except EngineCrashed as exc:
            # Raising here would make pytest cache the error for the whole session; the
            # test being set up gets it (ERROR), later ones a fresh host (see refresh).
            wired.ports.clear()
            wired.pending_crash = exc
        yield wired
    finally:
        for port in wired.ports.values():
            port.close()


@pytest.fixture(autouse=True)
def _netload_fresh_ports(request: pytest.FixtureRequest) -> None:
    """Before a test that uses the ports: open them again if the engine host they were
    opened on died (in an earlier test, which errored); the engine restarts on use."""
    if "netload_ports" in request.fixturenames:
        request.getfixturevalue("netload_ports").refresh()


def _netload_mark(request: pytest.FixtureRequest) -> NetloadMark:
    from ..bench.settings import NetloadMark
    from .markers import parse_netload

    mark = request.node.get_closest_marker("netload")
    return parse_netload(mark) if mark is not None else NetloadMark()


def _rfc2544_mark(request: pytest.FixtureRequest) -> Rfc2544Mark:
    from ..bench.settings import Rfc2544Mark
    from .markers import parse_rfc2544

    mark = request.node.get_closest_marker("rfc2544")
    return parse_rfc2544(mark) if mark is not None else Rfc2544Mark()


class TrafficBuilder:
    """Streams for the test's wires: `traffic.udp(size=128, flows=1024)`, `traffic.tcp()`."""

    def __init__(self, ports: WiredPorts, mark: NetloadMark) -> None:
        self.ports = ports
        self.mark = mark

    def udp(self, src: str | None = None, dst: str | None = None, *, wire: int | None = None,
            **kw: Any) -> Any:
        """A UDP stream bound to wire `wire` (default: the marker's, else 0)."""
        from ..traffic.streams import udp

        tx, rx = self.ports.wire(self.mark.wire if wire is None else wire)
        kw.setdefault("flows", self.mark.flows)
        return udp(src, dst, **kw).for_flow(self.ports.flow(tx, rx))

    def tcp(self, src: str | None = None, dst: str | None = None, *, wire: int | None = None,
            **kw: Any) -> Any:
        """A TCP stream bound to wire `wire` (default: the marker's, else 0)."""
        from ..traffic.streams import tcp

        tx, rx = self.ports.wire(self.mark.wire if wire is None else wire)
        kw.setdefault("flows", self.mark.flows)
        return tcp(src, dst, **kw).for_flow(self.ports.flow(tx, rx))


@pytest.fixture
def traffic(request: pytest.FixtureRequest, netload_ports: WiredPorts) -> TrafficBuilder:
    """Stream builder whose addresses and MACs come from the topology's wires."""
    return TrafficBuilder(netload_ports, _netload_mark(request))


@pytest.fixture
def rate_controller(request: pytest.FixtureRequest, netload_engine: Engine,
                    netload_ports: WiredPorts) -> Callable[..., BoundController]:
    """Factory: `rate_controller(tx, rate='100kpps', pattern='poisson').run(stream, duration='5s')`."""
    mark = _netload_mark(request)
    settings = _settings(request.config)

    def make(tx: Port | None = None, *, rate: Any = None, pattern: Any = None,
             hardware: bool = False) -> BoundController:
        from ..bench.harness import BoundController

        port = tx if tx is not None else netload_ports.wire(mark.wire)[0]
        return BoundController(port.engine, netload_ports, port, rate=rate, pattern=pattern,
                               mark=mark, duration_override_s=settings.trial_duration_s,
                               hardware=hardware, test=request.node.name)

    return make


@pytest.fixture
def expect_frames(rate_controller: Callable[..., BoundController]) -> Callable[..., Any]:
    """`expect_frames(stream, expect(ttl="sent-1", src="dut_mac"), rate="1000pps",
    duration="1s", tx=None)`: a short low-rate run whose every received frame is
    compared in the engine's RX path; returns the stream's `FrameCheck` (recorded) for
    `assert_frames_match`."""

    def check(stream: Any, expect: Any, *, rate: Any = "1000pps", duration: Any = "1s",
              tx: Port | None = None) -> Any:
        return rate_controller(tx).expect_frames(stream, expect, rate=rate, duration=duration)

    return check


@pytest.fixture
def latency_meter(netload_engine: Engine, netload_ports: WiredPorts) -> Callable[..., LatencyMeter]:
    """Factory of context managers: `with latency_meter(rx, stream) as lat:` measures the
    stream's latency and loss over every run inside the block."""

    def make(rx: Port, stream: Any) -> LatencyMeter:
        flows = [f for f in netload_ports.topology.flows()
                 if f.rx.name == netload_ports.name_of(rx)]
        if not flows:
            raise NetloadConfigError(f"port {rx.device!r} receives no wire of the topology")
        from ..bench.harness import LatencyMeter, stream_name

        return LatencyMeter(rx.engine, rx, stream_name(stream, flows[0]))

    return make


@pytest.fixture
def port_counts(request: pytest.FixtureRequest, netload_ports: WiredPorts) -> FrameCounter:
    """Where frames land: `port_counts(stream, over=[p1, p2, p3])` sends the stream from
    the marker's wire's sender at a low rate and returns its frames per port of `over`
    (a `PortCounts`; a list of streams gives a list, one run each), for assert_spread,
    assert_delivered_to and assert_not_delivered."""
    from ..bench.landing import FrameCounter

    return FrameCounter(netload_ports, wire=_netload_mark(request).wire)


def _engine_of_wire(ports: WiredPorts, wire: int, default: Engine) -> Engine:
    """The engine whose ports the topology's wire `wire` joins (a wire never joins two
    engines: topology.model refuses it); `default` before the ports are open."""
    try:
        return ports.wire(wire)[0].engine
    except (KeyError, NetloadConfigError):
        return default


def trial_hooks(request: pytest.FixtureRequest, dut: Any, health: bool | None = None) -> Any:
    """The DUT hooks every procedure's trials run between (plugin/dut_hooks.py): the
    session's pytest_netload_* hooks on `dut`, health checks on where `health` (a
    marker's dut_health) or else the session's setting says so."""
    from .dut_hooks import PluginTrialHooks

    on = _settings(request.config).dut_health if health is None else health
    return PluginTrialHooks(_hook_runner(request.config), dut, health=on)


def declared_burst_limit(config: pytest.Config,
                         built: tuple[Topology, Any]) -> BurstLimit | None:
    """What the DUT takes of a burst before it drops, where the topology declares it (a
    built-in's info or a topology file's [capabilities]): its policer (CIR and CBS),
    else its shaper (rate and queue); None otherwise (validity.BurstLimit.declared). Every
    procedure's trials weigh the generator's catch-up bursts against it."""
    from ..bench.validity import BurstLimit
    from .capabilities import capabilities_of

    return BurstLimit.declared(capabilities_of(config, built[0], built[1]))


@pytest.fixture(scope="session")
def _netload_calibration() -> Calibration:
    from ..bench.runner import Calibration

    return Calibration()


@pytest.fixture
def rfc2544(request: pytest.FixtureRequest, netload_engine: Engine, netload_ports: WiredPorts,
            _netload_calibration: Calibration,
            _netload_built: tuple[Topology, Any]) -> Rfc2544Runner:
    """RFC 2544 procedures bound to the test's `rfc2544` marker and the topology; the
    DUT's hooks (docs/hooks.md) run around every trial."""
    from ..bench.runner import Rfc2544Runner
    from .dut_hooks import PluginTrialHooks, dut_reset

    params = getattr(request.node, "callspec", None)
    size = params.params.get("frame_size") if params is not None else None
    mark = _rfc2544_mark(request)
    settings = _settings(request.config)
    runner = _hook_runner(request.config)
    dut = _netload_built[1]
    health = settings.dut_health if mark.dut_health is None else mark.dut_health
    limit = declared_burst_limit(request.config, _netload_built)
    return Rfc2544Runner(_engine_of_wire(netload_ports, mark.wire, netload_engine),
                         netload_ports, mark,
                         duration_override_s=settings.trial_duration_s,
                         frame_size=size, test=request.node.name,
                         calibration=_netload_calibration,
                         hooks=PluginTrialHooks(runner, dut, health=health),
                         reset_hook=lambda: dut_reset(runner, dut), burst_limit=limit)
