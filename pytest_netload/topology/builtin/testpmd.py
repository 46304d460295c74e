"""The ``dpdk-testpmd`` topology: DPDK's testpmd as a DUT that forwards at DPDK speed.

testpmd runs on a CPU of its own (locked as an engine's worker CPU is, locks.py) and
forwards between its two ports, each wired to one generator port over shared memory,
as CSIT and NFVbench wire a VPP or OVS-DPDK DUT to TRex:

- ``transport="vhost"``: each generator port is a vhost-user *server*
  (``net_virtio_user...,server=1``), and testpmd's ``net_vhost`` ports connect to it as
  clients, reconnecting when a generator port comes back (OVS's
  ``dpdkvhostuserclient`` is wired the same way);
- ``transport="memif"``: testpmd's ``net_memif`` ports are the servers, the generator's
  the clients.

``mode`` is testpmd's forwarding mode: ``io`` (frames unchanged), ``mac`` (the DUT's
MAC as source, the receiving generator port's as destination, as a router rewrites
them) or ``macswap`` (source and destination swapped). Frames from p0 leave on p1 and
back (wires p0->p1 and p1->p0). The ports are virtual: no line rate.

The DUT's counters (:class:`TestpmdDut`) come from testpmd itself, read around every
trial through the built-in DUT hooks: per port its RX misses and errors, no-mbuf
drops and TX errors, and the forwarding engine's TX drops. A TX drop towards a
generator port is the generator's: over shared memory, testpmd's TX ring *is* that
port's RX ring, full because the generator did not take frames as fast.

Nothing is left behind: testpmd is quit (then killed) when the ``with`` block ends,
dies with its owner (parent-death signal) when that is killed, and what a killed
owner leaves (the socket dir, DPDK's runtime dir) is swept by name and pid.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from functools import partial

from pytest_netload.errors import NetloadConfigError, NetloadEnvironmentError
from pytest_netload.hugepages import check_hugepages
from pytest_netload.measure.dut import DutCounter
from pytest_netload.topology.builtin.cleanup import _managed, _Resources
from pytest_netload.topology.builtin.dut import RESET_OUTAGE_S, BuiltTopology
from pytest_netload.topology.builtin.names import (
    _DUT_SIDE,
    _GEN_SIDE,
    _TESTPMD_CODE,
    PREFIX,
    _check_backend,
    _check_prefix,
    mac_for,
    socket_dir,
)
from pytest_netload.topology.builtin.testpmd_proc import Testpmd, claim_dut_cpu
from pytest_netload.topology.facts import WIRES
from pytest_netload.topology.model import PortSpec, Topology, Wire

__all__ = ["MODES", "TRANSPORTS", "TestpmdDut", "dpdk_testpmd"]

MODES = ("io", "mac", "macswap")
TRANSPORTS = ("vhost", "memif")
MAX_QUEUES = 8
RING_SIZE = 1024  # a vhost-user queue's descriptors (virtio-user's default: 256), as CSIT's


class TestpmdDut:
    """Handle on the testpmd DUT: its facts (``info``), its counters, commands at its
    prompt (:meth:`command`), and its reset (forwarding stopped and started)."""

    namespace = None
    """No namespace: the DUT is a process (the netns DUTs' field, for the reports)."""

    def __init__(self, proc: Testpmd, info: dict[str, str], ports: tuple[str, ...]) -> None:
        self.proc = proc
        self.info = dict(info)
        self.interfaces = ports
        """The generator port each testpmd port faces, by testpmd port id ("p0", "p1")."""
        self._fwd_base: dict[int, dict[str, int]] = {}
        self._reset_dropped: dict[int, int] = {}

    def __repr__(self) -> str:
        return f"TestpmdDut(cpu={self.proc.cpu}, mode={self.info.get('mode')!r})"

    def command(self, text: str, timeout_s: float = 10.0) -> str:
        """One command at testpmd's prompt (e.g. "show port xstats 0"); its output."""
        return self.proc.command(text, timeout_s)

    def _fwd_stats(self) -> dict[int, dict[str, int]]:
        """Forwarding counters since the DUT started: testpmd clears its own at every
        `start`, so those counted before a reset are carried over."""
        now = self.proc.fwd_stats()
        return {port: {k: v + self._fwd_base.get(port, {}).get(k, 0) for k, v in counts.items()}
                for port, counts in now.items()}

    def counters(self) -> dict[str, dict[str, int]]:
        """Per DUT port (named by the generator port it faces): rx/tx packets and bytes,
        and its drops."""
        out: dict[str, dict[str, int]] = {}
        fwd = self._fwd_stats()
        for port, s in sorted(self.proc.port_stats().items()):
            name = self.interfaces[port] if port < len(self.interfaces) else str(port)
            out[name] = {"rx_packets": s.get("RX-packets", 0), "tx_packets": s.get("TX-packets", 0),
                         "rx_bytes": s.get("RX-bytes", 0), "tx_bytes": s.get("TX-bytes", 0),
                         "rx_dropped": s.get("RX-missed", 0) + s.get("RX-nombuf", 0),
                         "tx_dropped": fwd.get(port, {}).get("TX-dropped", 0)}
        return out

    def trial_counters(self) -> list[DutCounter]:
        """The counters a trial's loss attribution reads, before and after it."""
        out: list[DutCounter] = []
        fwd = self._fwd_stats()
        for port, s in sorted(self.proc.port_stats().items()):
            faces = self.interfaces[port] if port < len(self.interfaces) else str(port)
            where = f"testpmd port {port} (to {faces})"
            out += [DutCounter("RX-missed", s.get("RX-missed", 0), "ingress_drop", where),
                    DutCounter("RX-errors", s.get("RX-errors", 0), "ingress_drop", where),
                    DutCounter("RX-nombuf", s.get("RX-nombuf", 0), "ingress_drop", where),
                    DutCounter("TX-errors", s.get("TX-errors", 0), "tx_error", where),
                    DutCounter("RX-packets", s.get("RX-packets", 0), "info", where),
                    DutCounter("TX-packets", s.get("TX-packets", 0), "info", where)]
            out.append(DutCounter("reset_dropped", self._reset_dropped.get(port, 0),
                                  "other_drop", f"testpmd port {port} (from {faces}), while "
                                  "its forwarding was reset"))
            dropped = fwd.get(port, {}).get("TX-dropped", 0)
            out.append(DutCounter(
                "TX-dropped", dropped, "generator_drop",
                f"testpmd port {port}: its TX ring into generator port {faces} was full "
                f"({self.info.get('transport')} shares the ring: the generator did not take "
                "frames as fast)"))
        return out

    def restart(self) -> None:
        """Quit testpmd and start it again (its ports reconnect; the generator's vhost-user
        ports wait for it as servers): a DUT that goes away and comes back. Counters
        read before and after it are not comparable."""
        self.proc.restart()
        self._fwd_base = {}
        self._reset_dropped = {}

    def reset(self, outage_s: float = RESET_OUTAGE_S) -> None:
        """RFC 2544 §26.6 on this DUT: for ``outage_s`` testpmd receives and drops every
        frame (its ``rxonly`` mode), then forwards again; its links stay up. It keeps
        receiving, as a device whose forwarding restarts does: over shared memory a DUT
        that stopped receiving would hold the generator back instead of losing frames.
        The frames it dropped are counted ("reset_dropped", every port)."""
        if isinstance(outage_s, bool) or not isinstance(outage_s, (int, float)) or \
                not 0 <= outage_s <= 60:
            raise NetloadConfigError(f"outage_s = {outage_s!r}: give seconds from 0 to 60")
        mode = self.info.get("mode", "io")
        self.proc.command("stop")  # counters are read stopped: none grows unseen
        self._absorb(self.proc.fwd_stats())
        self.proc.commands(["set fwd rxonly", "start"])
        try:
            time.sleep(outage_s)
        finally:
            self.proc.command("stop")
            during = self.proc.fwd_stats()
            self._absorb(during)
            for port, counts in during.items():  # what rxonly received, it dropped
                self._reset_dropped[port] = self._reset_dropped.get(port, 0) + \
                    counts.get("RX-packets", 0)
            self.proc.commands([f"set fwd {mode}", "start"])

    def _absorb(self, counts: dict[int, dict[str, int]]) -> None:
        """Keep forwarding counters read with forwarding stopped, before `start` clears
        testpmd's own."""
        for port, values in counts.items():
            base = self._fwd_base.setdefault(port, {})
            for key, value in values.items():
                base[key] = base.get(key, 0) + value


def _check(transport: str, mode: str, queues: int, memory_mb: int) -> None:
    if transport not in TRANSPORTS:
        raise NetloadConfigError(f"transport = {transport!r}: use one of {list(TRANSPORTS)}")
    if mode not in MODES:
        raise NetloadConfigError(f"mode = {mode!r}: use one of testpmd's forwarding modes "
                                 f"{list(MODES)}")
    if isinstance(queues, bool) or not isinstance(queues, int) or not 1 <= queues <= MAX_QUEUES:
        raise NetloadConfigError(f"queues = {queues!r}: give 1 to {MAX_QUEUES} queues a port")
    if isinstance(memory_mb, bool) or not isinstance(memory_mb, int) or memory_mb < 256:
        raise NetloadConfigError(f"memory_mb = {memory_mb!r}: give at least 256 (MiB)")


def _build(res: _Resources, backend: str, *, transport: str, mode: str, queues: int,
           cpu: int | None, memory_mb: int, hugepages: bool) -> BuiltTopology:
    if hugepages:  # DPDK alone would say "Cannot allocate memory", and not why
        check_hugepages(memory_mb, who="the dpdk-testpmd DUT")
    tag = res.tag
    folder = socket_dir(tag)
    res.add(f"socket dir {folder}", lambda: shutil.rmtree(folder, ignore_errors=True))
    os.makedirs(folder, mode=0o700)
    gen_macs = [mac_for(_TESTPMD_CODE, _GEN_SIDE, i) for i in range(2)]
    dut_macs = [mac_for(_TESTPMD_CODE, _DUT_SIDE, i) for i in range(2)]
    dut_vdevs, gen_devices = [], []
    for i in range(2):
        sock = os.path.join(folder, f"p{i}.sock")
        if transport == "vhost":
            dut_vdevs.append(f"net_vhost{i},iface={sock},client=1,queues={queues}")
            gen_devices.append(f"net_virtio_user_{tag}p{i},path={sock},server=1,"
                               f"queues={queues},queue_size={RING_SIZE},mac={gen_macs[i]}")
        else:
            dut_vdevs.append(f"net_memif{i},role=server,socket={sock},id=0,mac={dut_macs[i]}")
            gen_devices.append(f"net_memif_{tag}p{i},role=client,socket={sock},id=0,"
                               f"mac={gen_macs[i]}")
    chosen, lock = claim_dut_cpu(cpu, f"dpdk-testpmd DUT {tag}")
    extra: list[str] = []
    if mode == "mac":  # towards each generator port, that port's MAC
        extra = [f"--eth-peer={i},{gen_macs[i]}" for i in range(2)]
    try:
        proc = Testpmd(dut_vdevs, cpu=chosen, lock=lock, forward_mode=mode, queues=queues,
                       memory_mb=memory_mb, hugepages=hugepages, extra=extra)
    except BaseException:
        lock.release()
        raise
    res.add("dpdk-testpmd", proc.stop)
    if transport == "vhost":
        # net_vhost takes no mac= argument: its ports' MACs are testpmd's to report
        for i in range(2):
            text = proc.command(f"show port info {i}")
            for line in text.splitlines():
                if "MAC address:" in line:
                    dut_macs[i] = line.split("MAC address:", 1)[1].strip().lower()
    # what each generator port sends to: the DUT port it faces (mac mode forwards only
    # frames for its own MAC in a real router; testpmd forwards all, but it is the
    # address a lab's DUT would have); io and macswap deliver the frames unchanged or
    # swapped, so p0 addresses p1 and p1 p0, as over a straight wire
    peers = dut_macs if mode == "mac" else [gen_macs[1], gen_macs[0]]
    ports = tuple(PortSpec(f"p{i}", gen_devices[i], None, gen_macs[i], peer_mac=peers[i],
                           queues=queues) for i in range(2))
    info = {"name": "dpdk-testpmd", "model": f"testpmd ({proc.version}), {mode} forwarding",
            "mode": mode, "transport": {"vhost": "vhost-user", "memif": "memif"}[transport],
            "cpu": str(chosen), "queues": str(queues), "dpdk_version": proc.version,
            "dut_counters": "testpmd port stats and forwarding stats, read around every trial",
            "memory": "hugepages" if hugepages else "memfd (--no-huge)"}
    topology = Topology(name="dpdk-testpmd", ports=ports,
                        wires=tuple(Wire(tx, rx) for tx, rx in WIRES), line_rate_bps=None,
                        dut=dict(info), namespace=None)
    return BuiltTopology(topology, TestpmdDut(proc, info, ("p0", "p1")))  # type: ignore[arg-type]


def dpdk_testpmd(
    backend: str = "af_packet",
    *,
    transport: str = "vhost",
    mode: str = "io",
    queues: int = 1,
    cpu: int | None = None,
    memory_mb: int = 512,
    hugepages: bool = False,
    prefix: str = PREFIX,
) -> contextlib.AbstractContextManager[BuiltTopology]:
    """testpmd forwarding between two generator ports over ``transport`` ("vhost" or
    "memif"), in forwarding ``mode`` ("io", "mac", "macswap"), ``queues`` queues a port,
    on ``cpu`` (default: the highest CPU no engine's worker holds). ``backend`` is unused
    (the ports are vhost-user or memif, not kernel interfaces). testpmd's memory is
    memfd memory unless ``hugepages``."""
    _check_backend(backend)
    _check_prefix(prefix)
    _check(transport, mode, queues, memory_mb)
    if cpu is not None and (isinstance(cpu, bool) or not isinstance(cpu, int) or cpu < 0):
        raise NetloadConfigError(f"cpu = {cpu!r}: give a CPU number, or leave it out")
    if shutil.which("dpdk-testpmd") is None:
        raise NetloadEnvironmentError(
            "dpdk-testpmd is not installed: the dpdk-testpmd DUT runs it (Debian: apt-get "
            "install dpdk, which scripts/setup.sh installs)")
    builder = partial(_build, transport=transport, mode=mode, queues=queues, cpu=cpu,
                      memory_mb=memory_mb, hugepages=bool(hugepages))
    return _managed(builder, backend, prefix)

