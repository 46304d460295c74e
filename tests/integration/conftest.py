"""Shared fixtures of the engine integration tests: one engine host per module, fresh vdevs.

Each engine host runs DPDK with ``--no-huge`` and about 1 GiB of virtual memory, so a module
shares one (module scope) and no test holds more than two at a time.
"""

from __future__ import annotations

import itertools
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import calm
from netutil import sh, veth_pair

if TYPE_CHECKING:
    from pytest_netload.engine.client import Engine, Port

# Vdev names must be unique within an engine host: one counter for the whole session.
_VDEV_IDS = itertools.count(100)


@pytest.fixture(autouse=True)
def _calm_item(request: pytest.FixtureRequest) -> Iterator[None]:
    """Lets calm.excuse_failure reach the running test."""
    calm.CURRENT.append(request.node)
    try:
        yield
    finally:
        calm.CURRENT.remove(request.node)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item,
                              call: pytest.CallInfo[None]) -> Iterator[pytest.TestReport]:
    """A failed test whose generator the machine was measured to disturb (calm.py) is a
    skip naming that proof and the failure, not a FAIL: it tested the machine."""
    report: pytest.TestReport = yield
    proof = item.stash.get(calm.BUSY_KEY, None)
    if proof is not None and call.when == "call" and report.failed:
        crash = getattr(report.longrepr, "reprcrash", None)
        failed = (getattr(crash, "message", "") or str(report.longrepr)).splitlines()[0]
        path, line, _ = item.location
        report.outcome = "skipped"
        report.longrepr = (path, (line or 0) + 1,
                           f"busy machine: {proof}; the check that failed: {failed[:300]}")
    return report


@pytest.fixture
def ctrl_c() -> Iterator[None]:
    """Ctrl-C as a user's terminal delivers it, whatever this process inherited: a job
    started in the background of a non-interactive shell has SIGINT ignored, and then
    `_thread.interrupt_main()` does nothing (a test that stops a 24 h run with it would
    run 24 h). Python's own handler for the test's duration; the old one after."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


@pytest.fixture(scope="session")
def vdev_name() -> Callable[[str], str]:
    """Makes vdev names no other port of this session has used: ``vdev_name("net_pcap")``."""
    return lambda driver: f"{driver}{next(_VDEV_IDS)}"


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    """One engine host for the whole module; its log goes to a pytest temp dir."""
    from pytest_netload.engine.client import Engine

    log_dir = tmp_path_factory.mktemp("engine-log")
    with Engine(log_dir=str(log_dir)) as e:
        yield e


@pytest.fixture
def ring(engine: Engine, vdev_name: Callable[[str], str]) -> Iterator[Callable[..., Port]]:
    """Opens fresh net_ring ports (TX loops back to their own RX); closes them after the test."""
    opened: list[Port] = []

    def open_ring(**options: object) -> Port:
        port = engine.port(vdev_name("net_ring"), **options)
        opened.append(port)
        return port

    yield open_ring
    for port in opened:
        port.close()


@pytest.fixture
def empty_pcap(tmp_path: Path) -> Path:
    """A pcap file without packets: the RX side of a TX-only net_pcap port."""
    from scapy.utils import wrpcap

    path = tmp_path / "empty.pcap"
    wrpcap(str(path), [])
    return path


@pytest.fixture
def veth() -> Iterator[tuple[str, str]]:
    """A veth pair, both ends here and up, IPv6 and ARP off (netutil.veth_pair)."""
    with veth_pair() as pair:
        yield pair
    assert pair[0] not in sh("ip", "-o", "link", "show")
