"""What a built-in topology hands out: the DUT handle and the built topology.

:class:`Dut` is the handle on a built DUT: its namespace, its interfaces, the
facts reported about it (``info``), commands run inside its namespace
(``ip netns exec``) and its interfaces' kernel counters. :class:`BuiltTopology`
is what every topology's context manager yields: the :class:`Topology` model
for the engine, and the DUT handle (None for ``loopback``, which has no DUT).
"""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial

from pyroute2 import IPRoute  # type: ignore[import-untyped,import-not-found,unused-ignore]
from pyroute2 import netns as _netns  # type: ignore[import-untyped,import-not-found,unused-ignore]

from pytest_netload.errors import NetloadConfigError, NetloadEnvironmentError
from pytest_netload.measure.dut import DutCounter
from pytest_netload.topology.builtin.bpfpolice import BpfPolicer
from pytest_netload.topology.builtin.bridge_rtnl import flush_fdb as _flush_fdb
from pytest_netload.topology.builtin.bridge_rtnl import learned as _learned
from pytest_netload.topology.builtin.kernel import _call_in_netns
from pytest_netload.topology.model import Topology
from pytest_netload.topology.nft import NftDropRule, drop_rule_counters

#: IPv4 counters of the DUT's namespace (/proc/net/snmp "Ip:") that count datagrams the
#: router dropped while forwarding, with their words.
IP_DROP_COUNTERS = {
    "InHdrErrors": "IP header errors (TTL expired, bad header)",
    "InAddrErrors": "IP address errors (no route, bad destination)",
    "InUnknownProtos": "IP unknown protocol",
    "InDiscards": "IP input discards",
    "OutDiscards": "IP output discards",
    "OutNoRoutes": "IP no route out",
    "FragFails": "IP needed fragmenting, DF set",
}
_TC_H_ROOT = 0xFFFFFFFF
RESET_OUTAGE_S = 0.5  # how long a built-in DUT's reset stops it forwarding

__all__ = ["BuiltTopology", "Dut"]


class Dut:
    """Handle on a built-in DUT: its namespace and interfaces.

    ``loss_rule`` is the nftables rule of ``netns-lossy`` (its ``dropped()``
    reads the rule's own counter); None on the other DUTs. ``policer`` is the
    token-bucket policer of ``netns-policed`` (its ``counters()`` reads the frames it
    passed and dropped); None on the other DUTs.
    """

    def __init__(
        self,
        namespace: str,
        interfaces: Sequence[str],
        info: Mapping[str, str],
        loss_rule: NftDropRule | None = None,
    ) -> None:
        self.namespace = namespace
        self.interfaces = tuple(interfaces)
        self.info = dict(info)
        self.loss_rule = loss_rule
        self.policer: BpfPolicer | None = None

    def __repr__(self) -> str:
        return f"Dut(namespace={self.namespace!r}, interfaces={self.interfaces!r})"

    def run(
        self,
        cmd: Sequence[str],
        *,
        input: str | None = None,
        check: bool = True,
        timeout_s: float = 30.0,
    ) -> subprocess.CompletedProcess[str]:
        """Run ``cmd`` inside the DUT namespace (``ip netns exec``); text output captured.

        With ``check`` (the default) a non-zero exit raises
        ``NetloadEnvironmentError`` carrying the command's stderr.
        """
        if isinstance(cmd, str) or not cmd:
            raise NetloadConfigError(
                f"cmd = {cmd!r} must be a non-empty list of arguments, "
                "e.g. ['nft', 'list', 'ruleset']"
            )
        ip = shutil.which("ip")
        if ip is None:
            raise NetloadEnvironmentError(
                "`ip` (iproute2) is not installed; Dut.run needs `ip netns exec` "
                "(Debian/Ubuntu: apt-get install iproute2)"
            )
        full = [ip, "netns", "exec", self.namespace, *cmd]
        try:
            proc = subprocess.run(
                full, input=input, capture_output=True, text=True, timeout=timeout_s, check=False
            )
        except subprocess.TimeoutExpired as exc:
            raise NetloadEnvironmentError(
                f"{list(cmd)} in DUT namespace {self.namespace} did not finish within "
                f"{timeout_s} s; pass a larger timeout_s if it is expected to take longer"
            ) from exc
        if check and proc.returncode != 0:
            raise NetloadEnvironmentError(
                f"{list(cmd)} in DUT namespace {self.namespace} failed with exit status "
                f"{proc.returncode}: {proc.stderr.strip() or proc.stdout.strip()}"
            )
        return proc

    def counters(self) -> dict[str, dict[str, int]]:
        """Per DUT interface: rx/tx packets, bytes and drops (kernel IFLA_STATS64)."""
        if self.namespace not in _netns.listnetns():
            raise NetloadEnvironmentError(
                f"DUT namespace {self.namespace} no longer exists; read counters inside "
                "the topology's `with` block"
            )
        keys = ("rx_packets", "tx_packets", "rx_bytes", "tx_bytes", "rx_dropped", "tx_dropped")
        result: dict[str, dict[str, int]] = {}
        with IPRoute(netns=self.namespace, flags=0) as ipr:
            for link in ipr.get_links():
                name = link.get("IFLA_IFNAME")
                if name not in self.interfaces:
                    continue
                stats = link.get("IFLA_STATS64") or link.get("IFLA_STATS") or {}
                result[name] = {key: int(stats.get(key, 0)) for key in keys}
        return result


    def reset(self, outage_s: float = RESET_OUTAGE_S) -> None:
        """Stop the DUT forwarding for ``outage_s``, then resume: the built-in DUTs'
        reset (RFC 2544 §26.6), with no carrier change on its ports. A router turns
        IPv4 and IPv6 forwarding off and on; the bridge sets its ports to the disabled
        state and back to forwarding."""
        if isinstance(outage_s, bool) or not isinstance(outage_s, (int, float)) or \
                not 0 <= outage_s <= 60:
            raise NetloadConfigError(f"outage_s = {outage_s!r}: give seconds from 0 to 60")
        bridge = self.info.get("bridge")
        if bridge:
            off = [["bridge", "link", "set", "dev", i, "state", "0"] for i in self.interfaces]
            on = [["bridge", "link", "set", "dev", i, "state", "3"] for i in self.interfaces]
        else:
            off = [["sysctl", "-qw", "net.ipv4.ip_forward=0"]]
            on = [["sysctl", "-qw", "net.ipv4.ip_forward=1"]]
            v6 = self.run(["sysctl", "-n", "net.ipv6.conf.all.forwarding"], check=False)
            if v6.returncode == 0 and v6.stdout.strip() == "1":
                off.append(["sysctl", "-qw", "net.ipv6.conf.all.forwarding=0"])
                on.append(["sysctl", "-qw", "net.ipv6.conf.all.forwarding=1"])
        try:
            for cmd in off:
                self.run(cmd)
            time.sleep(outage_s)
        finally:
            for cmd in on:
                self.run(cmd)

    def _bridge(self, what: str) -> str:
        bridge = self.info.get("bridge")
        if not bridge:
            raise NetloadConfigError(
                f"Dut.{what}() works on a bridge's forwarding table, and DUT "
                f"{self.info.get('name', self.namespace)} has none; use it on netns-bridge")
        if self.namespace not in _netns.listnetns():
            raise NetloadEnvironmentError(
                f"DUT namespace {self.namespace} no longer exists; call Dut.{what}() inside "
                "the topology's `with` block")
        return bridge

    def fdb_learned(self) -> int:
        """How many addresses the bridge (netns-bridge) has learned: its learned forwarding
        table entries, not the static ones nor its ports' own."""
        return _call_in_netns(self.namespace, partial(_learned, self._bridge("fdb_learned")))

    def flush_fdb(self) -> None:
        """Forget every address the bridge (netns-bridge) learned; static entries stay.
        Each RFC 2889 trial starts from an empty table this way."""
        _call_in_netns(self.namespace, partial(_flush_fdb, self._bridge("flush_fdb")))

    def trial_counters(self) -> list[DutCounter]:
        """The counters a trial's loss attribution reads, before and after it: per DUT
        interface its receive drops and errors and TX errors, its root qdisc's drops,
        every nftables drop rule's counter, the namespace's IPv4 forwarding drops and,
        on netns-policed, the frames its policer dropped (a filter drop, "policer on
        <d1> egress"; the frames it passed are "info").

        A veth's tx_dropped is recorded ("info") but not attributed: a veth counts there
        the frames its peer dropped on receive (a full backlog), which the peer counts
        as its rx_dropped, the generator's counters included."""
        if self.namespace not in _netns.listnetns():
            raise NetloadEnvironmentError(
                f"DUT namespace {self.namespace} no longer exists; read counters inside "
                "the topology's `with` block")
        out: list[DutCounter] = []
        with IPRoute(netns=self.namespace, flags=0) as ipr:
            names = {}
            for link in ipr.get_links():
                name = link.get("IFLA_IFNAME")
                if name not in self.interfaces:
                    continue
                names[link["index"]] = name
                stats = link.get("IFLA_STATS64") or link.get("IFLA_STATS") or {}
                for key, kind in (("rx_dropped", "ingress_drop"), ("rx_errors", "ingress_drop"),
                                  ("tx_errors", "tx_error"), ("tx_dropped", "info"),
                                  ("rx_packets", "info"), ("tx_packets", "info")):
                    out.append(DutCounter(key, int(stats.get(key, 0)), kind, name))
            for q in ipr.get_qdiscs():
                kind = q.get_attr("TCA_KIND")
                if q["index"] not in names or q["parent"] != _TC_H_ROOT or kind == "noqueue":
                    continue
                stats = q.get_attr("TCA_STATS") or {}
                out.append(DutCounter("drops", int(stats.get("drop", 0)), "queue_drop",
                                      f"{kind} on {names[q['index']]}"))
        out.extend(DutCounter(name, value, "filter_drop", where)
                   for where, name, value in drop_rule_counters(self))
        if self.policer is not None:
            police = self.policer.counters()
            where = f"policer on {self.info.get('policed_interface', '?')} egress"
            out.append(DutCounter("exceed_packets", police["exceed_packets"], "filter_drop",
                                  where))
            out.append(DutCounter("conform_packets", police["conform_packets"], "info", where))
        snmp = _call_in_netns(self.namespace, _read_ip_snmp)
        out.extend(DutCounter(key, snmp[key], "forwarding_drop", words)
                   for key, words in IP_DROP_COUNTERS.items() if key in snmp)
        return out


def _read_ip_snmp() -> dict[str, int]:
    """The "Ip:" counters of /proc/net/snmp of this thread's network namespace."""
    with open("/proc/thread-self/net/snmp", encoding="ascii") as f:
        lines = [line.split() for line in f if line.startswith("Ip:")]
    if len(lines) < 2:
        return {}
    return {k: int(v) for k, v in zip(lines[0][1:], lines[1][1:]) if v.lstrip("-").isdigit()}


@dataclass(frozen=True)
class BuiltTopology:
    """What a built-in topology yields: the model, and the DUT handle (None without DUT)."""

    topology: Topology
    dut: Dut | None
