"""The engine's memory for vhost-user ports in hugepages: in a page a file, more memory
regions than a vhost-user peer maps, which DPDK only logs (the port is an error with
DPDK's reason, never "open"); with --single-file-segments, traffic flows. A module of
its own: its engines need a CPU that no other engine of the session holds."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from netutil import open_ports, paced

from pytest_netload import errors
from pytest_netload.bench.link import wait_link_up
from pytest_netload.engine.client import Engine, Tx
from pytest_netload.topology.builtin import build
from pytest_netload.traffic.packets import UDP, Eth, IPv4
from pytest_netload.traffic.streams import Stream

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="hugepages and DUTs need root (CI runs as root)"),
]

T4 = (Eth() / IPv4() / UDP()).build()



PAGES = Path("/sys/kernel/mm/hugepages/hugepages-2048kB")


@pytest.fixture
def hugepages(tmp_path: Path) -> Iterator[str]:
    """At least 600 MiB of free 2 MiB hugepages and a hugetlbfs mount of this test's own
    (its path); what the test reserved and mounted is given back after it."""
    total = int((PAGES / "nr_hugepages").read_text())
    free = int((PAGES / "free_hugepages").read_text())
    raised = max(0, 300 - free)
    if raised:
        (PAGES / "nr_hugepages").write_text(str(total + raised))
    mount = tmp_path / "huge"
    mount.mkdir()
    subprocess.run(["mount", "-t", "hugetlbfs", "-o", "pagesize=2M", "nodev", str(mount)],
                   check=True)
    try:
        assert int((PAGES / "free_hugepages").read_text()) >= 300, "the kernel gave too few"
        yield str(mount)
    finally:
        subprocess.run(["umount", str(mount)], check=False)
        if raised:
            (PAGES / "nr_hugepages").write_text(str(total))


def _eal(dut: Any, *extra: str) -> list[str]:
    """EAL arguments of an engine whose worker shares its main lcore's CPU, one that the
    DUT does not busy-poll."""
    cpu = min(os.sched_getaffinity(0) - {dut.proc.cpu})
    return ["netload", f"--lcores=0@{cpu},1@{cpu}", "--file-prefix",
            f"netload-{os.getpid()}-{os.urandom(3).hex()}", "--no-telemetry", "-m", "256",
            "--no-pci", *extra]


def test_a_vhost_user_port_that_did_not_start_is_an_error_with_dpdks_reason(
        hugepages: str) -> None:
    """In hugepages a page a file: more memory regions than a vhost-user peer maps. DPDK's
    start returns success and only logs it; the port is an error naming the reason and the
    fix, never "open"."""
    with build("dpdk-testpmd", transport="vhost") as built, \
            Engine(eal_args=_eal(built.dut, "--huge-dir", hugepages)) as engine:
        with pytest.raises(errors.NetloadEnvironmentError) as info:
            engine.port(built.topology.ports[0].device)
    text = str(info.value)
    assert "did not start" in text and "Too many memory regions" in text, text
    assert "--single-file-segments" in text, text


def test_in_hugepages_the_engine_takes_few_segment_files_and_forwards(hugepages: str) -> None:
    with build("dpdk-testpmd", transport="vhost") as built, \
            Engine(eal_args=_eal(built.dut, "--huge-dir", hugepages,
                                 "--single-file-segments")) as engine, \
            open_ports(engine, built) as ports:
        for port in ports.values():
            wait_link_up(port, 10.0)
        stream = engine.load(ports["p0"], Stream(T4, size=64, name="huge"))
        try:
            run = engine.run([Tx(stream, 10_000, paced(100_000))], [ports["p1"]], drain_s=0.3)
        finally:
            stream.free()
    assert run.streams[0].rx_packets == 10_000, run.streams[0]
