"""The ``ovs-dpdk`` topology: Open vSwitch with its DPDK datapath as a DUT, wired as CSIT
wires it.

A private OVS (ovs_proc.py: its own ovsdb-server and ovs-vswitchd, database, sockets
and logs, never the system's) with one netdev bridge (``datapath_type=netdev``,
``fail_mode=secure``) and two ``dpdkvhostuserclient`` ports, ``vhost-p0`` and
``vhost-p1``, each connecting to a generator port that is a vhost-user *server*
(``net_virtio_user...,server=1``). Two OpenFlow rules forward ``in_port=1`` to port 2
and back; frames cross unchanged (wires p0->p1 and p1->p0). Its poll-mode thread
busy-polls a CPU of its own (``pmd-cpu-mask``), claimed as an engine's worker CPU is
(locks.py); its other threads run on that CPU too.

A known rate: with ``policer_cir_bps`` OVS polices p0 -> p1, either on ingress
(``policer="ingress"``: ``ingress_policing_rate``/``_burst`` on ``vhost-p0``, in
kbit/s and kbit) or on egress (``policer="egress"``: an ``egress-policer`` QoS on
``vhost-p1``, ``other_config:cir`` in bytes/s and ``cbs`` in bytes). Both are DPDK's
rte_meter srTCM, color-blind, fed ``rte_pktmbuf_pkt_len(pkt) - sizeof(struct
rte_ether_hdr)``: the frame without FCS *and* without its 14-byte Ethernet header, so a
frame of ``size`` bytes (with FCS) costs ``size - 18`` bytes (46 at 64 B, 1500 at
1518 B): :func:`ovs_policer_capacity_pps`. The bucket starts full.

The DUT's counters (:class:`OvsDut`) come from OVS itself, read live around every
trial: per port the OpenFlow port statistics with DPDK's custom ones (``ovs-ofctl
dump-ports``; the database's ``statistics`` column is refreshed only every 5 s), and
the PMD's failed upcalls. A TX drop towards a generator port (``ovs_tx_failure_drops``:
the vhost ring into it was full after OVS's retries) is the generator's; policer drops
are the DUT's filter drops.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from functools import partial
from typing import Any

from pyroute2 import netns as _netns  # type: ignore[import-untyped,import-not-found,unused-ignore]

from pytest_netload.errors import NetloadConfigError, NetloadEnvironmentError
from pytest_netload.measure.dut import DutCounter
from pytest_netload.topology.builtin.cleanup import _managed, _Resources
from pytest_netload.topology.builtin.dut import RESET_OUTAGE_S, BuiltTopology
from pytest_netload.topology.builtin.kernel import _remove_netns
from pytest_netload.topology.builtin.names import (
    _GEN_SIDE,
    _OVS_CODE,
    PREFIX,
    _check_backend,
    _check_prefix,
    _netns_name,
    mac_for,
    socket_dir,
)
from pytest_netload.topology.builtin.ovs_policer import (
    POLICER_ACCOUNTING,
    POLICERS,
    check_policer,
    cir_bytes,
    default_cbs,
    meter_rate_bytes_per_s,
    ovs_policer_capacity_pps,
)
from pytest_netload.topology.builtin.ovs_proc import (
    PrivateOvs,
    installed,
    machine_took_the_pmd,
    parse_pmd_stats,
    parse_port_stats,
)
from pytest_netload.topology.builtin.testpmd_proc import claim_dut_cpu
from pytest_netload.topology.facts import WIRES
from pytest_netload.topology.model import PortSpec, Topology, Wire

__all__ = ["POLICERS", "OvsDut", "machine_took_the_pmd", "meter_rate_bytes_per_s", "ovs_dpdk",
           "ovs_policer_capacity_pps"]

RING_SIZE = 1024  # a vhost-user queue's descriptors, as CSIT's
PORTS = ("vhost-p0", "vhost-p1")
BRIDGE = "br0"  # in OVS's own namespace and run dir: no name to clash with
FLOWS = "in_port=1,actions=output:2\nin_port=2,actions=output:1\n"
MIN_MEMORY_MB = 256
READY_TIMEOUT_S = 10.0  # the generator's ports up to OVS polling them


class OvsDut:
    """Handle on the OVS-DPDK DUT: its facts (``info``), its counters, OVS commands
    (:meth:`appctl`, :meth:`vsctl`, :meth:`ofctl`), its reset and its restart."""

    namespace = None
    """No namespace to run DUT commands in: the DUT is a process (the netns DUTs' field,
    for the reports). ovs-vswitchd's own namespace, which holds only its tap devices, is
    ``info["ovs_namespace"]``."""

    def __init__(self, ovs: PrivateOvs, info: dict[str, str], qos: dict[str, str]) -> None:
        self.proc = ovs
        self.info = dict(info)
        self.interfaces = ("p0", "p1")
        """The generator port each OVS port faces, in OVS port order (PORTS)."""
        self._qos = dict(qos)  # OVS port -> its own QoS row ("" for none)
        self._reset_dropped: dict[str, int] = {}
        self._ready = False

    def __repr__(self) -> str:
        return f"OvsDut(cpu={self.proc.cpu}, ovs={self.info.get('ovs_version')!r})"

    def appctl(self, *args: str) -> str:
        """``ovs-appctl`` on this OVS (e.g. "dpif-netdev/pmd-stats-show"); its output."""
        return self.proc.appctl(*args)

    def vsctl(self, *args: str) -> str:
        """``ovs-vsctl`` on this OVS's database; its output."""
        return self.proc.vsctl(*args)

    def ofctl(self, command: str, *args: str, stdin: str | None = None) -> str:
        """``ovs-ofctl COMMAND BRIDGE ARGS`` on this OVS's bridge (e.g. "dump-flows")."""
        return self.proc.ofctl(command, BRIDGE, *args, stdin=stdin)

    def wait_ready(self, timeout_s: float = READY_TIMEOUT_S) -> None:
        """Return once OVS polls both ports' queues with their vhost-user peers connected
        (``dpif-netdev/pmd-rxq-show`` lists them enabled): some 100 ms after the
        generator's ports came up, OVS still reconfigures them, and a frame it forwards
        to a port not yet running is dropped (``tx_dropped_other``). The first
        :meth:`trial_counters` waits for it too."""
        deadline = time.monotonic() + timeout_s
        while True:
            text = self.appctl("dpif-netdev/pmd-rxq-show")
            ready = [name for name in PORTS
                     if any(name in line and "(enabled)" in line for line in text.splitlines())]
            if len(ready) == len(PORTS):
                self._ready = True
                return
            if time.monotonic() > deadline:
                raise NetloadEnvironmentError(
                    f"OVS (the DUT) does not poll {sorted(set(PORTS) - set(ready))} within "
                    f"{timeout_s:g} s: its vhost-user peers, the generator's ports, are not "
                    f"connected (open them first); dpif-netdev/pmd-rxq-show says:\n{text}")
            time.sleep(0.02)

    def port_stats(self) -> dict[str, dict[str, int]]:
        """Per OVS port (``vhost-p0``, ``vhost-p1``): its OpenFlow and custom counters,
        read live (the database's copy lags up to 5 s)."""
        stats = parse_port_stats(self.ofctl("dump-ports"))
        return {name: stats.get(str(i + 1), {}) for i, name in enumerate(PORTS)}

    def counters(self) -> dict[str, dict[str, int]]:
        """Per OVS port (named by the generator port it faces): rx/tx packets and bytes,
        and its drops."""
        keys = ("rx_packets", "tx_packets", "rx_bytes", "tx_bytes", "rx_dropped", "tx_dropped")
        return {faces: {k: s.get(k, 0) for k in keys}
                for faces, s in zip(self.interfaces, self.port_stats().values(), strict=True)}

    def trial_counters(self) -> list[DutCounter]:
        """The counters a trial's loss attribution reads, before and after it."""
        if not self._ready:
            self.wait_ready()
        out: list[DutCounter] = []
        for (name, s), faces in zip(self.port_stats().items(), self.interfaces, strict=True):
            where = f"OVS port {name} (generator port {faces})"
            rx_qos = s.get("ovs_rx_qos_drops", 0)
            tx_parts = {k: s.get(k, 0) for k in ("ovs_tx_failure_drops", "ovs_tx_qos_drops",
                                                 "ovs_tx_mtu_exceeded_drops",
                                                 "ovs_tx_invalid_hwol_drops")}
            reset = self._reset_dropped.get(name, 0)
            out += [
                DutCounter("rx_packets", s.get("rx_packets", 0), "info", where),
                DutCounter("tx_packets", s.get("tx_packets", 0), "info", where),
                DutCounter("ovs_rx_qos_drops", rx_qos, "filter_drop",
                           f"ingress policer of OVS port {name} (from {faces})"),
                DutCounter("rx_dropped_other", max(s.get("rx_dropped", 0) - rx_qos, 0),
                           "ingress_drop", where),
                DutCounter("ovs_tx_qos_drops", max(tx_parts["ovs_tx_qos_drops"] - reset, 0),
                           "filter_drop", f"egress policer of OVS port {name} (to {faces})"),
                DutCounter("reset_dropped", reset, "other_drop",
                           f"OVS port {name} (to {faces}), while its forwarding was reset"),
                DutCounter("ovs_tx_mtu_exceeded_drops", tx_parts["ovs_tx_mtu_exceeded_drops"],
                           "forwarding_drop", where),
                DutCounter("ovs_tx_invalid_hwol_drops", tx_parts["ovs_tx_invalid_hwol_drops"],
                           "tx_error", where),
                DutCounter("tx_dropped_other",
                           max(s.get("tx_dropped", 0) - sum(tx_parts.values()), 0),
                           "other_drop", f"{where}: sent while its vhost-user device was not "
                           "running"),
                DutCounter("ovs_tx_retries", s.get("ovs_tx_retries", 0), "info", where),
                DutCounter(
                    "ovs_tx_failure_drops", tx_parts["ovs_tx_failure_drops"], "generator_drop",
                    f"OVS port {name}: its vhost-user ring into generator port {faces} was "
                    "full after OVS's retries (the ring is the generator's RX ring: the "
                    "generator did not take frames as fast)"),
            ]
        for thread, counts in parse_pmd_stats(self.appctl("dpif-netdev/pmd-stats-show")).items():
            where = f"OVS datapath, {thread}"
            out.append(DutCounter("miss with failed upcall", counts.get(
                "miss with failed upcall", 0), "forwarding_drop", where))
            out.append(DutCounter("packets received", counts.get("packets received", 0),
                                  "info", where))
        for thread, (_ran, waited, preempted) in sorted(self.proc.pmd_schedstat().items()):
            where = f"OVS thread {thread} on CPU {self.proc.cpu}"
            out.append(DutCounter("cpu_wait_ns", waited, "info",
                                  f"{where}: runnable, waiting for its CPU"))
            out.append(DutCounter("cpu_preemptions", preempted, "info", where))
        return out

    def health(self, result: Any) -> str | None:
        """Why a trial measured the machine rather than OVS (:func:`machine_took_the_pmd`
        over the growth of "cpu_wait_ns" and "cpu_preemptions" among the counters of
        `result`, the trial's TrialResult), or None."""
        attribution = getattr(result, "attribution", None)
        duration_s = getattr(result, "duration_s", 0.0) or 0.0
        if attribution is None or duration_s <= 0:
            return None
        waited = sum(c.value for c in attribution.counters if c.name == "cpu_wait_ns")
        preempted = sum(c.value for c in attribution.counters if c.name == "cpu_preemptions")
        return machine_took_the_pmd(waited, preempted, duration_s, self.proc.cpu)

    def reset(self, outage_s: float = RESET_OUTAGE_S) -> None:
        """RFC 2544 §26.6 on this DUT: for ``outage_s`` OVS receives every frame and drops
        it on egress (an egress-policer with a 1-byte bucket filling at 1 byte/s on both
        ports, which no frame conforms to), then forwards again; its links stay up. Over
        shared memory a DUT that stopped receiving would hold the generator back instead
        of losing frames. The frames dropped are counted ("reset_dropped", each port)."""
        if isinstance(outage_s, bool) or not isinstance(outage_s, (int, float)) or \
                not 0 <= outage_s <= 60:
            raise NetloadConfigError(f"outage_s = {outage_s!r}: give seconds from 0 to 60")
        before = {name: s.get("ovs_tx_qos_drops", 0) for name, s in self.port_stats().items()}
        args = ["--", "--id=@reset", "create", "qos", "type=egress-policer",
                "other_config:cir=1", "other_config:cbs=1"]
        for name in PORTS:
            args += ["--", "set", "port", name, "qos=@reset"]
        reset_qos = self.vsctl(*args).split()[0]
        try:
            time.sleep(outage_s)
        finally:
            args = []
            for name in PORTS:
                own = self._qos.get(name)
                args += ["--", "set", "port", name, f"qos={own}"] if own else \
                    ["--", "clear", "port", name, "qos"]
            self.vsctl(*args, "--", "destroy", "qos", reset_qos)
            after = self.port_stats()
            for name in PORTS:
                grown = after[name].get("ovs_tx_qos_drops", 0) - before.get(name, 0)
                self._reset_dropped[name] = self._reset_dropped.get(name, 0) + max(grown, 0)

    def restart(self) -> None:
        """Stop ovs-vswitchd and start it again on the same configuration: a DUT that goes
        away and comes back (the generator's vhost-user ports wait for it as servers).
        Counters read before and after it are not comparable; its OpenFlow rules, which
        live in ovs-vswitchd and not in the database, are added again."""
        self.proc.restart_vswitchd()
        self.proc.wait_for_bridge(BRIDGE)
        self.ofctl("add-flows", "-", stdin=FLOWS)
        self._reset_dropped = {}
        self._ready = False


def _check_hugepages(memory_mb: int) -> None:
    pages = "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages"
    try:
        with open(pages, encoding="ascii") as f:
            free_mb = int(f.read()) * 2
    except (OSError, ValueError):
        free_mb = 0
    with open("/proc/mounts", encoding="ascii") as f:
        mounted = any(line.split()[2:3] == ["hugetlbfs"] for line in f)
    if free_mb < memory_mb or not mounted:
        raise NetloadEnvironmentError(
            f"ovs-dpdk with hugepages=True needs {memory_mb} MiB of free 2 MiB hugepages and "
            f"hugetlbfs mounted; this machine has {free_mb} MiB free"
            f"{'' if mounted else ' and no hugetlbfs mount'}: run `bash scripts/setup.sh "
            f"--hugepages={max(memory_mb, 1024)}` as root, or leave hugepages out (OVS then "
            "runs on ordinary memory, --no-huge)")


def _build(res: _Resources, backend: str, *, policer_cir_bps: int | None,
           policer_cbs_bytes: int | None, policer: str, cpu: int | None, memory_mb: int,
           hugepages: bool) -> BuiltTopology:
    missing = installed()  # the machine's checks: when built, not when parameters are read
    if missing:
        raise NetloadEnvironmentError(
            f"Open vSwitch with DPDK is not installed ({missing} missing): the ovs-dpdk DUT "
            "runs a private one (Debian: apt-get install openvswitch-switch-dpdk, which "
            "scripts/setup.sh installs)")
    if hugepages:
        _check_hugepages(memory_mb)
    tag = res.tag
    folder = socket_dir(tag)
    res.add(f"socket dir {folder}", lambda: shutil.rmtree(folder, ignore_errors=True))
    os.makedirs(folder, mode=0o700)
    ns = _netns_name(tag)
    if ns in _netns.listnetns():
        raise NetloadEnvironmentError(f"network namespace {ns} already exists; build again")
    res.add(f"network namespace {ns}", partial(_remove_netns, ns))
    _netns.create(ns)
    gen_macs = [mac_for(_OVS_CODE, _GEN_SIDE, i) for i in range(2)]
    socks = [os.path.join(folder, f"p{i}.sock") for i in range(2)]
    if hugepages:
        memory = ["-m", str(memory_mb)]  # OVS adds --in-memory: no hugepage files
    else:  # --no-huge is legacy memory, which --in-memory (OVS's default) refuses
        memory = ["--no-huge", "--legacy-mem", "-m", str(memory_mb)]
    # lib.eal:debug: its TSC frequency (the policers' clock) reaches the log
    extra = ["--no-pci", "--no-telemetry", "--log-level=lib.eal:debug", *memory]
    chosen, lock = claim_dut_cpu(cpu, f"ovs-dpdk DUT {tag}")
    try:
        # per-port-memory: a pool per port sized to its rings (about 20,000 mbufs), not the
        # shared 262,144 that OVS then halves until one fits, or fails to (ENOBUFS)
        ovs = PrivateOvs(os.path.join(folder, "ovs"), namespace=ns, cpu=chosen, lock=lock,
                         dpdk_extra=extra, config={"per-port-memory": "true"},
                         leftovers=(folder,))
    except BaseException:
        lock.release()
        raise
    res.add("ovs-dpdk", ovs.stop)
    args = ["--", "add-br", BRIDGE, "--", "set", "bridge", BRIDGE, "datapath_type=netdev",
            "fail_mode=secure"]
    for i, name in enumerate(PORTS):
        args += ["--", "add-port", BRIDGE, name, "--", "set", "interface", name,
                 "type=dpdkvhostuserclient", f"options:vhost-server-path={socks[i]}",
                 f"ofport_request={i + 1}"]
    ovs.vsctl(*args)
    ovs.ofctl("add-flows", BRIDGE, "-", stdin=FLOWS)
    info = {"name": "ovs-dpdk", "transport": "vhost-user", "cpu": str(chosen),
            "pmd_cpu_mask": ovs.config["pmd-cpu-mask"],
            "model": f"Open vSwitch {ovs.ovs_version} ({ovs.dpdk_version}), netdev datapath",
            "ovs_version": ovs.ovs_version, "dpdk_version": ovs.dpdk_version,
            "ports": ", ".join(f"{n} (dpdkvhostuserclient to p{i})" for i, n in
                               enumerate(PORTS)),
            "flows": FLOWS.strip().replace("\n", "; "), "ovs_namespace": ns,
            "dpdk_extra": ovs.config["dpdk-extra"],
            "memory": "hugepages" if hugepages else "ordinary memory (--no-huge)",
            "dut_counters": "OVS port statistics (ovs-ofctl dump-ports, DPDK custom "
                            "statistics) and PMD failed upcalls, read around every trial"}
    hz = ovs.tsc_hz()
    if hz:
        info["tsc_hz"] = str(hz)
    qos = {name: "" for name in PORTS}
    if policer_cir_bps is not None:
        cbs = policer_cbs_bytes if policer_cbs_bytes is not None else \
            default_cbs(policer_cir_bps)
        if policer == "ingress":
            ovs.vsctl("set", "interface", PORTS[0],
                      f"ingress_policing_rate={policer_cir_bps // 1000}",
                      f"ingress_policing_burst={cbs // 125}")
            where = f"ingress of {PORTS[0]}"
        else:
            qos[PORTS[1]] = ovs.vsctl(
                "--", "set", "port", PORTS[1], "qos=@policer", "--", "--id=@policer",
                "create", "qos", "type=egress-policer",
                f"other_config:cir={policer_cir_bps // 8}", f"other_config:cbs={cbs}"
            ).split()[0]
            where = f"egress of {PORTS[1]}"
        info.update({"policer": policer, "policer_where": f"rte_meter srTCM on the {where}",
                     "policed_wire": "p0->p1",
                     "policer_cir_bps": str(policer_cir_bps),
                     "policer_cir_bytes_per_s": str(cir_bytes(policer_cir_bps, policer)),
                     "policer_cbs_bytes": str(cbs), "accounting": POLICER_ACCOUNTING,
                     "policer_counts": "frame size - 18 (no FCS, no Ethernet header)"})
    ports = tuple(PortSpec(f"p{i}", f"net_virtio_user_{tag}p{i},path={socks[i]},server=1,"
                           f"queue_size={RING_SIZE},mac={gen_macs[i]}", None, gen_macs[i],
                           peer_mac=gen_macs[1 - i]) for i in range(2))
    topology = Topology(name="ovs-dpdk", ports=ports,
                        wires=tuple(Wire(tx, rx) for tx, rx in WIRES), line_rate_bps=None,
                        dut=dict(info), namespace=None)
    return BuiltTopology(topology, OvsDut(ovs, info, qos))  # type: ignore[arg-type]


def ovs_dpdk(
    backend: str = "af_packet",
    *,
    policer_cir_bps: int | None = None,
    policer_cbs_bytes: int | None = None,
    policer: str = "ingress",
    cpu: int | None = None,
    memory_mb: int = 512,
    hugepages: bool = False,
    prefix: str = PREFIX,
) -> contextlib.AbstractContextManager[BuiltTopology]:
    """Open vSwitch (DPDK datapath) forwarding between two generator ports over
    vhost-user, its PMD on ``cpu`` (default: the highest CPU no engine's worker holds).
    With ``policer_cir_bps`` it polices p0 -> p1 (``policer``: "ingress" on the port
    from p0, "egress" on the port to p1; bucket ``policer_cbs_bytes``, default 2 ms at
    the CIR and at least 3000 bytes). ``backend`` is unused (the ports are vhost-user).
    OVS's DPDK memory is ordinary memory (``--no-huge``) unless ``hugepages``."""
    _check_backend(backend)
    _check_prefix(prefix)
    check_policer(policer_cir_bps, policer_cbs_bytes, policer)
    if cpu is not None and (isinstance(cpu, bool) or not isinstance(cpu, int) or cpu < 0):
        raise NetloadConfigError(f"cpu = {cpu!r}: give a CPU number, or leave it out")
    if isinstance(memory_mb, bool) or not isinstance(memory_mb, int) or \
            memory_mb < MIN_MEMORY_MB:
        raise NetloadConfigError(f"memory_mb = {memory_mb!r}: give at least {MIN_MEMORY_MB} "
                                 "(MiB; OVS sizes its mbuf pool to what it gets)")
    builder = partial(_build, policer_cir_bps=policer_cir_bps,
                      policer_cbs_bytes=policer_cbs_bytes, policer=policer, cpu=cpu,
                      memory_mb=memory_mb, hugepages=bool(hugepages))
    return _managed(builder, backend, prefix)
