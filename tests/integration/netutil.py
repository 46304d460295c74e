"""Small helpers of the integration tests that make kernel interfaces: a command's
output, and a veth pair with both ends here that goes however the test ends; and a pcap
file of given frames, for the engine's net_pcap RX tests."""

from __future__ import annotations

import contextlib
import secrets
import struct
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any


def sh(*args: str, check: bool = True) -> str:
    """Run a command (no shell); its stdout. `check`: a non-zero exit raises."""
    return subprocess.run(args, capture_output=True, text=True, check=check).stdout


def present(names: set[str]) -> set[str]:
    """Which of `names` exist here now, as an interface (any namespace's veth end seen
    here) or a network namespace: what a test checks is gone after a teardown."""
    found = {line.split(":")[1].strip().split("@")[0]
             for line in sh("ip", "-o", "link", "show").splitlines()}
    found |= {line.split()[0] for line in sh("ip", "netns", "list").splitlines()
              if line.strip()}
    return names & found


@contextlib.contextmanager
def veth_pair(prefix: str = "nlv", *, up: bool = True) -> Iterator[tuple[str, str]]:
    """A veth pair named `<prefix><random>a/b`, both ends here; with `up`, up with IPv6
    and ARP off, so the kernel sends nothing on them. Deleted at the end (deleting one
    end deletes both, wherever the other end went)."""
    tag = f"{prefix}{secrets.token_hex(3)}"
    a, b = f"{tag}a", f"{tag}b"
    sh("ip", "link", "add", a, "type", "veth", "peer", "name", b)
    try:
        if up:
            for end in (a, b):
                sh("sysctl", "-qw", f"net.ipv6.conf.{end}.disable_ipv6=1", check=False)
                sh("ip", "link", "set", end, "arp", "off", "up")
        yield a, b
    finally:
        sh("ip", "link", "del", a, check=False)


@contextlib.contextmanager
def open_ports(engine: Any, built: Any) -> Iterator[dict[str, Any]]:
    """The engine's ports on a built topology's ports, by name; closed before the
    topology's interfaces go away."""
    opened = {}
    try:
        for spec in built.topology.ports:
            assert spec.device is not None
            opened[spec.name] = engine.port(spec.device)
        yield opened
    finally:
        for port in opened.values():
            port.close()


def paced(rate_pps: float, pattern: Any = None) -> tuple[Any, ...]:
    """The phases of `rate_pps` in `pattern` (default CBR), for a `Tx` entry."""
    from pytest_netload.traffic.patterns import CBR
    from pytest_netload.units import Rate

    return tuple((pattern or CBR()).phases(lambda _r: rate_pps, Rate(rate_pps, "pps"), seed=1))


def dut_drops(before: list[Any], after: list[Any]) -> int:
    """The frames a DUT's drop counters grew by between two trial_counters() readings."""
    from pytest_netload.measure.dut import DROP_KINDS, counter_deltas

    grown, why = counter_deltas(before, after)
    assert not why, why
    return sum(c.value for c in grown if c.kind in DROP_KINDS)


def dut_grown(before: list[Any], after: list[Any], name: str, where: str = "") -> int:
    """How much the DUT's counters `name` at places starting with `where` grew."""
    from pytest_netload.measure.dut import counter_deltas

    grown, _ = counter_deltas(before, after)
    return sum(c.value for c in grown if c.name == name and c.where.startswith(where))


def counted_through(engine: Any, built: Any, ports: dict[str, Any], template: bytes,
                    frames: int = 100_000, rate_pps: float = 200_000) -> tuple[Any, ...]:
    """`frames` 64 B frames p0 -> p1 through a built-in DPDK DUT at `rate_pps`, with the
    DUT's counters read around the run, on a calm generator (calm.calm_run): (the
    stream's result, the counters before, after)."""
    from calm import calm_run

    from pytest_netload.engine.client import Tx
    from pytest_netload.traffic.streams import Stream

    stream = engine.load(ports["p0"], Stream(template, size=64, name="counted"))

    def once() -> tuple[Any, list[Any], list[Any]]:
        before = built.dut.trial_counters()
        run = engine.run([Tx(stream, frames, paced(rate_pps))], [ports["p1"]], drain_s=0.5)
        return run, before, built.dut.trial_counters()

    try:
        run, before, after = calm_run(once, result_of=lambda r: r[0])
    finally:
        stream.free()
    return run.streams[0], before, after


def write_pcap(path: Path, frames: Sequence[bytes]) -> None:
    """A pcap (us timestamps, one frame per us, Ethernet) holding `frames` whole,
    zero-length ones included: what net_pcap's rx_pcap= hands the engine's RX."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, frame in enumerate(frames):
            f.write(struct.pack("<IIII", i // 1_000_000, i % 1_000_000, len(frame), len(frame)))
            f.write(frame)
