"""Built-in topologies: real DUTs made of network namespaces and veth pairs.

Each topology is a context manager that builds everything with pyroute2,
yields a :class:`BuiltTopology` and removes everything it made on exit, also
on an exception or Ctrl-C inside the ``with`` block. A process that leaves
without unwinding is covered too: live topologies are torn down from an
``atexit`` hook and from a SIGTERM handler, and whatever a killed process
(SIGKILL, ``os._exit``, a crash) left behind is found and removed by
:func:`sweep_stale`, which keys on the creator's pid recorded in the
interface alias and in the namespace name.

Names: every instance gets a tag ``nl`` + 6 random hex digits; interfaces are
``<tag><role>`` (``g0``/``g1`` generator side, ``d0``/``d1`` DUT side, 10
characters), the DUT namespace ``<tag>-dut-<pid>.<start>``. Only objects with
these names (and, for interfaces, the ``pytest-netload`` alias) are touched.

The generator-side interfaces live in the caller's namespace with no
addresses, IPv6 and ARP off and IPv4 forwarding off, so the kernel neither
sends anything on them nor routes what arrives on them anywhere else.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import inspect
import math
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from types import FrameType
from typing import Any, TypeVar

from pyroute2 import (  # type: ignore[import-untyped,import-not-found,unused-ignore]
    Ethtool,
    IPRoute,
    NetlinkError,
)
from pyroute2 import netns as _netns  # type: ignore[import-untyped,import-not-found,unused-ignore]
from pyroute2.netlink.rtnl import (  # type: ignore[import-untyped,import-not-found,unused-ignore]
    ifinfmsg,
)

from pytest_netload.errors import (
    NetloadConfigError,
    NetloadEnvironmentError,
    NetloadWarning,
)
from pytest_netload.topology.facts import LINE_RATE_BPS, MTU, WIRES
from pytest_netload.topology.model import PortSpec, Topology, Wire
from pytest_netload.topology.nft import RANDOM_SCALE, NftDropRule, drop_random
from pytest_netload.units import FCS_BYTES, MIN_FRAME_BYTES

__all__ = [
    "BACKENDS",
    "BUILTIN",
    "BuiltTopology",
    "Dut",
    "build",
    "loopback",
    "mac_for",
    "netns_bridge",
    "netns_lossy",
    "netns_router",
    "netns_shaped",
    "new_tag",
    "shaper_capacity_pps",
    "sweep_stale",
    "vdev_string",
]

T = TypeVar("T")

PREFIX = "nl"
ALIAS_MARK = "pytest-netload"
BACKENDS = ("af_packet", "af_xdp")

# netns-router addressing (RFC 2544 benchmarking range 198.18.0.0/15)
ROUTER_PREFIXLEN = 24
ROUTER_DUT_IPS = ("198.18.0.1", "198.19.0.1")
ROUTER_GEN_IPS = ("198.18.0.2", "198.19.0.2")
# beyond the /24s, whole /16s are routed to the generator ports so that
# multi-flow streams can vary addresses without the DUT needing ARP
ROUTER_ROUTED = ("198.18.0.0/16", "198.19.0.0/16")

# netns-bridge: both generator ports in one subnet, the DUT has no address at all
BRIDGE_GEN_IPS = ("198.18.0.2", "198.18.0.3")
BRIDGE_AGEING_S = 300  # the kernel's default; learning is off, the static entries never age

# netns-shaped: the shaper on the DUT's egress towards p1
SHAPER_QDISCS = ("tbf", "htb")
SHAPER_RATE_BPS = 50_000_000  # default
SHAPER_RATE_RANGE_BPS = (8_000, 10_000_000_000)
SHAPER_BURST_S = 0.004  # default bucket: 4 ms of tokens (one tick at HZ=250) ...
SHAPER_MIN_BURST_BYTES = 2 * (MTU + 14)  # ... but at least two full-size frames
SHAPER_QUEUE_S = 0.020  # default queue: 20 ms at the rate on top of the bucket (tc's latency)
SHAPER_MAX_LIMIT_BYTES = 1 << 30
SHAPER_ACCOUNTING = "l2-nofcs"  # the skb at the qdisc: Ethernet header + IP packet, no FCS

LOSS_RATIO = 0.01  # netns-lossy default

_LOOPBACK_CODE = 1
_ROUTER_CODE = 2
_SHAPED_CODE = 3
_LOSSY_CODE = 4
_BRIDGE_CODE = 5
_NUD_NOARP = 0x40  # a static forwarding-table entry (`bridge fdb add ... static`)
_GEN_SIDE, _DUT_SIDE = 0, 1

# GRO / GSO / TSO: off so that every frame crosses the veth on its own


def _is_coalescing_offload(feature: str) -> bool:
    return feature.endswith("-segmentation") or "-gro" in feature


_PREFIX_RE = re.compile(r"^[a-z][a-z0-9]{0,6}$")
_ALIAS_RE = re.compile(rf"^{ALIAS_MARK} pid=(\d+) start=(\d+) tag=([a-z0-9]+)$")


# --------------------------------------------------------------------- names


def _check_prefix(prefix: str) -> str:
    if not isinstance(prefix, str) or not _PREFIX_RE.match(prefix):
        raise NetloadConfigError(
            f"prefix = {prefix!r} must be 1-7 lower-case letters or digits starting with a "
            f"letter (default {PREFIX!r}), so that names stay within 15 characters"
        )
    return prefix


def new_tag(prefix: str = PREFIX) -> str:
    """A fresh instance tag: ``prefix`` + 6 random hex digits (e.g. ``nl3fa09c``)."""
    return _check_prefix(prefix) + secrets.token_hex(3)


def mac_for(topology_code: int, side: int, index: int) -> str:
    """The fixed, locally administered MAC ``02:6e:6c:<code>:<side>:<index>``.

    ``6e:6c`` is "nl"; ``side`` is 0 for generator ends, 1 for DUT ends. The
    same topology always gets the same MACs, so captures and results repeat.
    """
    for key, value in (("topology_code", topology_code), ("side", side), ("index", index)):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 0xFF:
            raise NetloadConfigError(f"{key} = {value!r} must be an integer in 0..255")
    return f"02:6e:6c:{topology_code:02x}:{side:02x}:{index:02x}"


def vdev_string(backend: str, vdev_id: str, iface: str) -> str:
    """The DPDK ``--vdev`` string that opens kernel interface ``iface``.

    ``af_packet``: ``net_af_packet_<id>,iface=<if>,qpairs=1``;
    ``af_xdp``: ``net_af_xdp_<id>,iface=<if>,start_queue=0,queue_count=1``.
    """
    if backend == "af_packet":
        return f"net_af_packet_{vdev_id},iface={iface},qpairs=1"
    if backend == "af_xdp":
        return f"net_af_xdp_{vdev_id},iface={iface},start_queue=0,queue_count=1"
    raise NetloadConfigError(
        f"backend = {backend!r} is not supported by the built-in topologies; "
        f"use one of {list(BACKENDS)}"
    )


def _process_start(pid: int) -> int | None:
    """Start time of ``pid`` in clock ticks since boot, or None if it does not exist."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            stat = f.read()
    except (FileNotFoundError, ProcessLookupError):
        return None
    # fields after the ")" closing the command name; starttime is field 22
    return int(stat.rsplit(")", 1)[1].split()[19])


def _alive(pid: int, start: int) -> bool:
    return _process_start(pid) == start


def _owner() -> tuple[int, int]:
    pid = os.getpid()
    start = _process_start(pid)
    assert start is not None  # our own /proc entry exists
    return pid, start


def _alias(tag: str) -> str:
    pid, start = _owner()
    return f"{ALIAS_MARK} pid={pid} start={start} tag={tag}"


def _netns_name(tag: str) -> str:
    pid, start = _owner()
    return f"{tag}-dut-{pid}.{start}"


def _netns_re(prefix: str) -> re.Pattern[str]:
    return re.compile(rf"^{re.escape(prefix)}[0-9a-f]{{6}}-dut-(\d+)\.(\d+)$")


# ------------------------------------------------------------- root, sysctl


def _require_root() -> None:
    if os.geteuid() != 0:
        raise NetloadEnvironmentError(
            "the built-in topologies create network namespaces and veth interfaces, which "
            "needs root (or CAP_NET_ADMIN and CAP_SYS_ADMIN); run pytest as root, e.g. "
            "`sudo -E python -m pytest ...`"
        )


def _sysctl_path(*parts: str) -> str:
    return os.path.join("/proc/sys", *parts)


def _write_sysctls(settings: Sequence[tuple[tuple[str, ...], str]]) -> None:
    """Write ``/proc/sys`` entries of the calling thread's network namespace.

    IPv6 entries are skipped where the kernel has IPv6 disabled altogether.
    """
    ipv6 = os.path.isdir(_sysctl_path("net", "ipv6"))
    for parts, value in settings:
        if parts[:2] == ("net", "ipv6") and not ipv6:
            continue
        with open(_sysctl_path(*parts), "w", encoding="ascii") as f:
            f.write(value)


def _call_in_netns(namespace: str, fn: Callable[[], T]) -> T:
    """Run ``fn`` in a short-lived thread that has joined ``namespace``.

    setns(CLONE_NEWNET) changes only the calling thread, and the thread ends
    with the call, so the rest of the process never leaves its namespace.
    """
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            _netns.setns(namespace, flags=0)
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller below
            box["error"] = exc

    thread = threading.Thread(target=target, name=f"netload-netns-{namespace}", daemon=True)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]


# ------------------------------------------------------------ teardown book


_LOCK = threading.RLock()
_LIVE: dict[str, _Resources] = {}
_ATEXIT_SET = False
_SIGTERM_SET = False
_PREVIOUS_SIGTERM: Any = None


class _Resources:
    """The undo list of one topology instance, registered for exit-time cleanup."""

    def __init__(self, tag: str) -> None:
        self.tag = tag
        self.owner_pid = os.getpid()
        self._undo: list[tuple[str, Callable[[], None]]] = []
        self._closed = False
        with _LOCK:
            _LIVE[tag] = self
        _install_exit_hooks()

    def add(self, what: str, undo: Callable[[], None]) -> None:
        """Record how to undo ``what``; call it *before* creating the object."""
        if self._closed:
            undo()
            raise NetloadEnvironmentError(
                f"topology {self.tag} was torn down (SIGTERM) while it was being set up"
            )
        self._undo.append((what, undo))

    def release(self) -> list[str]:
        """Undo everything in reverse order; returns the steps that failed.

        Every step is idempotent. A KeyboardInterrupt during a step retries it
        once and is re-raised after the last step, so Ctrl-C cannot leave half
        a topology behind.
        """
        problems: list[str] = []
        interrupted: BaseException | None = None
        while self._undo:
            item = self._undo[-1]
            what, undo = item
            for _attempt in range(2):
                try:
                    undo()
                    break
                except KeyboardInterrupt as exc:
                    interrupted = exc
                except (OSError, NetlinkError, subprocess.SubprocessError) as exc:
                    problems.append(f"{what}: {exc}")
                    break
            # a re-entrant release (SIGTERM handler) may have popped it already
            if self._undo and self._undo[-1] is item:
                self._undo.pop()
        self._closed = True
        with _LOCK:
            _LIVE.pop(self.tag, None)
        if interrupted is not None:
            raise interrupted
        return problems


def _forget_in_child() -> None:
    # A forked child (pyroute2 forks for netns work, so may the user's code)
    # inherits the registry and the SIGTERM handler; the topologies are the
    # parent's to remove, so the child must never tear them down.
    global _LOCK
    _LOCK = threading.RLock()
    _LIVE.clear()


os.register_at_fork(after_in_child=_forget_in_child)


def _release_all() -> None:
    with _LOCK:
        live = [res for res in _LIVE.values() if res.owner_pid == os.getpid()]
    for resources in live:
        for problem in resources.release():
            print(
                f"pytest-netload: could not remove {problem}; "
                "run pytest_netload.topology.sweep_stale() as root to clean up",
                file=sys.stderr,
            )


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    _release_all()
    previous = _PREVIOUS_SIGTERM
    if callable(previous):
        previous(signum, frame)
        return
    # default action: die of SIGTERM, as if we had never been here
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)


def _install_exit_hooks() -> None:
    global _ATEXIT_SET, _SIGTERM_SET, _PREVIOUS_SIGTERM
    with _LOCK:
        if not _ATEXIT_SET:
            atexit.register(_release_all)
            _ATEXIT_SET = True
        if _SIGTERM_SET or threading.current_thread() is not threading.main_thread():
            return  # signal handlers can only be set from the main thread: next time
        _SIGTERM_SET = True
        previous = signal.getsignal(signal.SIGTERM)
        if previous is signal.SIG_IGN or previous is None:
            return  # ignored, or owned by non-Python code: leave it alone
        _PREVIOUS_SIGTERM = previous
        signal.signal(signal.SIGTERM, _on_sigterm)


def _delete_link(name: str) -> None:
    with IPRoute() as ipr:
        for index in ipr.link_lookup(ifname=name):
            try:
                ipr.link("del", index=index)
            except NetlinkError as exc:
                if exc.code != errno.ENODEV:
                    raise


def _remove_netns(name: str) -> None:
    if name in _netns.listnetns():
        with contextlib.suppress(FileNotFoundError):
            _netns.remove(name)


# ------------------------------------------------------------------ the DUT


class Dut:
    """Handle on a built-in DUT: its namespace and interfaces.

    ``loss_rule`` is the nftables rule of ``netns-lossy`` (its ``dropped()``
    reads the rule's own counter); None on the other DUTs.
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


@dataclass(frozen=True)
class BuiltTopology:
    """What a built-in topology yields: the model, and the DUT handle (None without DUT)."""

    topology: Topology
    dut: Dut | None


# ----------------------------------------------------------------- building


def _disable_offloads(names: Sequence[str]) -> None:
    """Turn GRO/GSO/TSO off (pyroute2's ethtool; `ethtool -K` if that fails; else skip)."""
    try:
        with Ethtool() as ethtool:
            for name in names:
                features = ethtool.get_features(name)
                changed = False
                for key, feature in features.features.items():
                    if _is_coalescing_offload(key) and feature.available and feature.enable:
                        feature.enable = False
                        changed = True
                if changed:
                    ethtool.set_features(name, features)
        return
    except (OSError, NetlinkError):
        pass
    tool = shutil.which("ethtool")
    if tool is None:
        return  # only an optimisation: frames still pass, possibly coalesced
    for name in names:
        subprocess.run(
            [tool, "-K", name, "gro", "off", "gso", "off", "tso", "off"],
            capture_output=True,
            check=False,
        )


def _add_veth(
    ipr: Any, res: _Resources, a: str, mac_a: str, b: str, mac_b: str, alias: str
) -> None:
    clash = [name for name in (a, b) if ipr.link_lookup(ifname=name)]
    if clash:  # never adopt (and later delete) an interface we did not make
        raise NetloadEnvironmentError(
            f"interface {clash[0]} already exists; the random tag collided, build again"
        )
    res.add(f"veth {a}<->{b}", partial(_delete_link, a))
    ipr.link(
        "add",
        ifname=a,
        kind="veth",
        address=mac_a,
        mtu=MTU,
        peer={"ifname": b, "address": mac_b, "mtu": MTU},
    )
    for name in (a, b):
        (index,) = ipr.link_lookup(ifname=name)
        ipr.link("set", index=index, ifalias=alias, mtu=MTU)


def _quiet_generator_side(ipr: Any, names: Sequence[str]) -> None:
    """No IPv6, no ARP, no forwarding: the kernel stays silent on these ends."""
    settings: list[tuple[tuple[str, ...], str]] = []
    for name in names:
        settings.append((("net", "ipv6", "conf", name, "disable_ipv6"), "1"))
        settings.append((("net", "ipv4", "conf", name, "forwarding"), "0"))
    _write_sysctls(settings)
    for name in names:
        (index,) = ipr.link_lookup(ifname=name)
        ipr.link("set", index=index, flags=ifinfmsg.IFF_NOARP, change=ifinfmsg.IFF_NOARP)


def _set_up(ipr: Any, names: Sequence[str]) -> None:
    for name in names:
        (index,) = ipr.link_lookup(ifname=name)
        ipr.link("set", index=index, state="up")


def _build_loopback(res: _Resources, backend: str) -> BuiltTopology:
    tag = res.tag
    g0, g1 = f"{tag}g0", f"{tag}g1"
    mac0 = mac_for(_LOOPBACK_CODE, _GEN_SIDE, 0)
    mac1 = mac_for(_LOOPBACK_CODE, _GEN_SIDE, 1)
    with IPRoute() as ipr:
        _add_veth(ipr, res, g0, mac0, g1, mac1, _alias(tag))
        _quiet_generator_side(ipr, (g0, g1))
        _disable_offloads((g0, g1))
        _set_up(ipr, (g0, g1))
    ports = (
        PortSpec("p0", vdev_string(backend, f"{tag}p0", g0), g0, mac0, peer_mac=mac1),
        PortSpec("p1", vdev_string(backend, f"{tag}p1", g1), g1, mac1, peer_mac=mac0),
    )
    topology = Topology(
        name="loopback",
        ports=ports,
        wires=tuple(Wire(tx, rx) for tx, rx in WIRES),
        line_rate_bps=LINE_RATE_BPS,
        dut={"name": "none", "model": "veth pair (no DUT)", "kernel": os.uname().release},
        namespace=None,
    )
    return BuiltTopology(topology, None)


@dataclass(frozen=True)
class _Pair:
    """A DUT namespace joined to the caller's by two veth pairs: ``g<i>`` here, ``d<i>`` there."""

    tag: str
    ns: str
    gens: tuple[str, str]
    duts: tuple[str, str]
    gen_macs: tuple[str, str]
    dut_macs: tuple[str, str]


def _dut_namespace(res: _Resources, code: int, *, forward: bool) -> _Pair:
    """The namespace and both veth pairs, DUT ends moved in (still down); IPv6 and rp_filter off."""
    tag = res.tag
    pair = _Pair(
        tag,
        _netns_name(tag),
        (f"{tag}g0", f"{tag}g1"),
        (f"{tag}d0", f"{tag}d1"),
        (mac_for(code, _GEN_SIDE, 0), mac_for(code, _GEN_SIDE, 1)),
        (mac_for(code, _DUT_SIDE, 0), mac_for(code, _DUT_SIDE, 1)),
    )
    ns = pair.ns
    if ns in _netns.listnetns():
        raise NetloadEnvironmentError(f"network namespace {ns} already exists; build again")
    res.add(f"network namespace {ns}", partial(_remove_netns, ns))
    _netns.create(ns)
    alias = _alias(tag)
    with IPRoute() as ipr:
        for i in range(2):
            _add_veth(ipr, res, pair.gens[i], pair.gen_macs[i], pair.duts[i], pair.dut_macs[i],
                      alias)
        _quiet_generator_side(ipr, pair.gens)
        _disable_offloads(pair.gens + pair.duts)
        for name in pair.duts:
            (index,) = ipr.link_lookup(ifname=name)
            ipr.link("set", index=index, net_ns_fd=ns)

    # a new namespace inherits IPv4 settings (ip_forward too) from the initial one: set them all
    settings: list[tuple[tuple[str, ...], str]] = [
        (("net", "ipv4", "ip_forward"), "1" if forward else "0")
    ]
    for scope in ("all", "default", *pair.duts):
        settings.append((("net", "ipv4", "conf", scope, "rp_filter"), "0"))
        settings.append((("net", "ipv6", "conf", scope, "disable_ipv6"), "1"))
    _call_in_netns(ns, partial(_write_sysctls, settings))
    return pair


def _route(pair: _Pair) -> None:
    """The router's addresses, permanent neighbours and /16 routes; DUT ports up."""
    with IPRoute(netns=pair.ns, flags=0) as nsr:
        _set_up(nsr, ("lo",))
        for i in range(2):
            (index,) = nsr.link_lookup(ifname=pair.duts[i])
            nsr.addr("add", index=index, address=ROUTER_DUT_IPS[i], prefixlen=ROUTER_PREFIXLEN)
            nsr.link("set", index=index, state="up")
            nsr.neigh(
                "add",
                dst=ROUTER_GEN_IPS[i],
                lladdr=pair.gen_macs[i],
                ifindex=index,
                state="permanent",
            )
            net, plen = ROUTER_ROUTED[i].split("/")
            nsr.route("add", dst=net, dst_len=int(plen), gateway=ROUTER_GEN_IPS[i], oif=index)


def _generators_up(pair: _Pair) -> None:
    with IPRoute() as ipr:
        _set_up(ipr, pair.gens)


def _ports(
    pair: _Pair, backend: str, ips: Sequence[str], peer_macs: Sequence[str],
    peer_ips: Sequence[str | None],
) -> tuple[PortSpec, ...]:
    return tuple(
        PortSpec(
            f"p{i}",
            vdev_string(backend, f"{pair.tag}p{i}", pair.gens[i]),
            pair.gens[i],
            pair.gen_macs[i],
            ip=ips[i],
            peer_mac=peer_macs[i],
            peer_ip=peer_ips[i],
        )
        for i in range(2)
    )


def _build_routed(
    res: _Resources,
    backend: str,
    *,
    name: str = "netns-router",
    code: int = _ROUTER_CODE,
    configure: Callable[[Dut], None] | None = None,
) -> BuiltTopology:
    """netns-router, and the routers with something added (``configure``, before traffic)."""
    pair = _dut_namespace(res, code, forward=True)
    _route(pair)
    # netns-router names the instance; the others name the kind and add the namespace
    info = {"name": pair.ns} if name == "netns-router" else {"name": name, "namespace": pair.ns}
    info.update(
        model="Linux kernel IPv4 router (network namespace)",
        kernel=os.uname().release,
        interfaces=",".join(pair.duts),
    )
    dut = Dut(pair.ns, pair.duts, info)
    if configure is not None:
        configure(dut)
    _generators_up(pair)
    topology = Topology(
        name=name,
        ports=_ports(pair, backend, ROUTER_GEN_IPS, pair.dut_macs, ROUTER_DUT_IPS),
        wires=tuple(Wire(tx, rx) for tx, rx in WIRES),
        line_rate_bps=LINE_RATE_BPS,
        dut=dut.info,
        namespace=pair.ns,
    )
    return BuiltTopology(topology, dut)


def _build_netns_router(res: _Resources, backend: str) -> BuiltTopology:
    return _build_routed(res, backend)


# ---------------------------------------------------------------- netns-shaped


def _tc(dut: Dut, args: Sequence[str]) -> None:
    if shutil.which("tc") is None:
        raise NetloadEnvironmentError(
            "`tc` (iproute2) is not installed; netns-shaped needs it "
            "(Debian/Ubuntu: apt-get install iproute2)"
        )
    proc = dut.run(["tc", *args], check=False)
    if proc.returncode != 0:
        raise NetloadEnvironmentError(
            f"`tc {' '.join(args)}` in DUT namespace {dut.namespace} failed "
            f"(exit status {proc.returncode}): {(proc.stderr or proc.stdout).strip()}; "
            "the kernel needs sch_tbf / sch_htb and sch_fifo (CONFIG_NET_SCH_TBF, ...)"
        )


def _shape(
    dut: Dut, *, qdisc: str, rate_bps: int, burst_bytes: int, limit_bytes: int
) -> None:
    """The shaper on the egress of ``d1`` (towards p1): only p0 -> p1 is shaped."""
    iface = dut.interfaces[1]
    rate = f"{rate_bps}bit"
    if qdisc == "tbf":
        _tc(dut, ["qdisc", "add", "dev", iface, "root", "handle", "1:", "tbf", "rate", rate,
                  "burst", str(burst_bytes), "limit", str(limit_bytes)])
    else:
        # one class holding everything; its quantum only matters between classes
        _tc(dut, ["qdisc", "add", "dev", iface, "root", "handle", "1:", "htb", "default", "1"])
        _tc(dut, ["class", "add", "dev", iface, "parent", "1:", "classid", "1:1", "htb",
                  "rate", rate, "ceil", rate, "burst", str(burst_bytes),
                  "cburst", str(burst_bytes), "quantum", str(MTU + 14)])
        _tc(dut, ["qdisc", "add", "dev", iface, "parent", "1:1", "handle", "10:", "bfifo",
                  "limit", str(limit_bytes)])
    dut.info.update(
        model=f"Linux kernel IPv4 router (network namespace), {qdisc.upper()} shaper on "
        f"{iface} egress",
        shaper=qdisc,
        rate_bps=str(rate_bps),
        burst_bytes=str(burst_bytes),
        limit_bytes=str(limit_bytes),
        shaped_wire="p0->p1",
        shaped_interface=iface,
        accounting=SHAPER_ACCOUNTING,
    )


# ----------------------------------------------------------------- netns-lossy


def _make_lossy(dut: Dut, *, loss_ratio: float) -> None:
    """The nftables rule dropping ``loss_ratio`` of what is forwarded d0 -> d1 (p0 -> p1)."""
    d0, d1 = dut.interfaces
    dut.loss_rule = drop_random(dut, loss_ratio, match=f"iifname {d0} oifname {d1}")
    dut.info.update(
        model="Linux kernel IPv4 router (network namespace), nftables random drop p0->p1",
        loss_ratio=str(loss_ratio),
        loss_wire="p0->p1",
        loss_rule=dut.loss_rule.rule,
    )


# ---------------------------------------------------------------- netns-bridge


def _bridge_netfilter_off() -> None:
    # br_netfilter (if someone loaded it) would pass bridged frames through iptables
    for key in ("bridge-nf-call-iptables", "bridge-nf-call-ip6tables", "bridge-nf-call-arptables"):
        path = _sysctl_path("net", "bridge", key)
        if os.path.exists(path):
            with open(path, "w", encoding="ascii") as f:
                f.write("0")


def _build_netns_bridge(res: _Resources, backend: str) -> BuiltTopology:
    pair = _dut_namespace(res, _BRIDGE_CODE, forward=False)
    bridge = f"{pair.tag}br"
    with IPRoute(netns=pair.ns, flags=0) as nsr:
        _set_up(nsr, ("lo",))
        nsr.link(
            "add",
            ifname=bridge,
            kind="bridge",
            address=mac_for(_BRIDGE_CODE, _DUT_SIDE, 2),
            br_stp_state=0,
            br_forward_delay=0,
            br_ageing_time=BRIDGE_AGEING_S * 100,  # clock_t: 1/100 s
            br_mcast_snooping=0,
        )
        (br_index,) = nsr.link_lookup(ifname=bridge)
        for i in range(2):
            (index,) = nsr.link_lookup(ifname=pair.duts[i])
            nsr.link("set", index=index, master=br_index)
            # the forwarding table is static: nothing learned, unknown unicast not flooded
            nsr.brport("set", index=index, learning=0, unicast_flood=0)
            nsr.fdb("add", ifindex=index, lladdr=pair.gen_macs[i], master=br_index,
                    state=_NUD_NOARP)
            nsr.link("set", index=index, state="up")
        nsr.link("set", index=br_index, state="up")
    _call_in_netns(pair.ns, _bridge_netfilter_off)
    _generators_up(pair)
    info = {
        "name": "netns-bridge",
        "namespace": pair.ns,
        "model": "Linux bridge (network namespace), static FDB, no learning, no STP",
        "kernel": os.uname().release,
        "interfaces": ",".join(pair.duts),
        "bridge": bridge,
    }
    topology = Topology(
        name="netns-bridge",
        ports=_ports(pair, backend, BRIDGE_GEN_IPS, pair.gen_macs[::-1], (None, None)),
        wires=tuple(Wire(tx, rx) for tx, rx in WIRES),
        line_rate_bps=LINE_RATE_BPS,
        dut=info,
        namespace=pair.ns,
    )
    return BuiltTopology(topology, Dut(pair.ns, pair.duts, info))


# ------------------------------------------------------------------ entries


@contextlib.contextmanager
def _managed(
    builder: Callable[[_Resources, str], BuiltTopology], backend: str, prefix: str
) -> Iterator[BuiltTopology]:
    _require_root()
    res = _Resources(new_tag(prefix))
    finished = False
    try:
        yield builder(res, backend)
        finished = True
    finally:
        problems = res.release()
        if problems:
            text = (
                "could not remove all of topology "
                + res.tag
                + ": "
                + "; ".join(problems)
                + "; run pytest_netload.topology.sweep_stale() as root to clean up"
            )
            if finished:
                raise NetloadEnvironmentError(text)
            # an exception is already on its way: do not mask it
            warnings.warn(text, NetloadWarning, stacklevel=3)


def _check_backend(backend: str) -> None:
    if backend not in BACKENDS:
        raise NetloadConfigError(
            f"backend = {backend!r} is not supported by the built-in topologies; "
            f"use one of {list(BACKENDS)}"
        )


def _check_int(key: str, value: object, low: int, high: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise NetloadConfigError(
            f"{key} = {value!r} must be an integer from {low} to {high} ({what})"
        )
    return value


def _check_rate_bps(rate_bps: object) -> int:
    low, high = SHAPER_RATE_RANGE_BPS
    return _check_int("rate_bps", rate_bps, low, high, "bit/s, e.g. 20_000_000 for 20 Mbit/s")


def shaper_capacity_pps(rate_bps: int, frame_size_with_fcs: int) -> float:
    """Frames per second a ``netns-shaped`` shaper of ``rate_bps`` lets through.

    The kernel's TBF and HTB count ``qdisc_pkt_len(skb)`` = ``skb->len`` at
    the qdisc, which on a veth is the Ethernet frame without FCS (14-byte
    header + IP packet): a 64-byte frame counts 60 bytes, no preamble, no
    inter-frame gap, no FCS (no ``overhead`` or size table is configured).
    ``tc`` turns ``rate_bps`` into whole bytes per second, rounding down. So
    the capacity is ``(rate_bps // 8) / (frame_size_with_fcs - 4)``; e.g.
    20 Mbit/s at 64 B: 41,666.7 pps, at 512 B: 4,921.3 pps.
    """
    rate_bps = _check_rate_bps(rate_bps)
    size = _check_int(
        "frame_size_with_fcs", frame_size_with_fcs, MIN_FRAME_BYTES + FCS_BYTES,
        MTU + 14 + FCS_BYTES, f"bytes with the FCS; frames cross a {MTU}-byte MTU",
    )
    return (rate_bps // 8) / (size - FCS_BYTES)


def _check_shaper(
    rate_bps: object, qdisc: object, burst_bytes: object, limit_bytes: object
) -> tuple[int, str, int, int]:
    rate = _check_rate_bps(rate_bps)
    if qdisc not in SHAPER_QDISCS:
        raise NetloadConfigError(
            f"qdisc = {qdisc!r} is not a shaper netns-shaped offers; use one of "
            f"{list(SHAPER_QDISCS)}"
        )
    bytes_per_s = rate // 8
    if burst_bytes is None:
        burst = max(math.ceil(bytes_per_s * SHAPER_BURST_S), SHAPER_MIN_BURST_BYTES)
    else:
        burst = _check_int(
            "burst_bytes", burst_bytes, MTU + 14, max(bytes_per_s, SHAPER_MIN_BURST_BYTES),
            "from one full-size frame to one second of tokens at rate_bps; default "
            f"max({SHAPER_BURST_S * 1e3:g} ms at the rate, {SHAPER_MIN_BURST_BYTES})",
        )
    if limit_bytes is None:
        limit = math.ceil(bytes_per_s * SHAPER_QUEUE_S) + burst
    else:
        limit = _check_int(
            "limit_bytes", limit_bytes, MTU + 14, SHAPER_MAX_LIMIT_BYTES,
            "bytes queued before the shaper drops; default "
            f"{SHAPER_QUEUE_S * 1e3:g} ms at the rate + burst_bytes",
        )
    return rate, str(qdisc), burst, limit


def _check_loss_ratio(loss_ratio: object) -> float:
    if (
        isinstance(loss_ratio, bool)
        or not isinstance(loss_ratio, (int, float))
        or not 0.0 <= loss_ratio <= 1.0
    ):
        raise NetloadConfigError(
            f"loss_ratio = {loss_ratio!r} must be a number from 0 to 1 "
            "(the share of p0->p1 frames dropped, e.g. 0.01)"
        )
    steps = loss_ratio * RANDOM_SCALE
    if abs(steps - round(steps)) > 1e-6:
        raise NetloadConfigError(
            f"loss_ratio = {loss_ratio!r} is finer than the rule's resolution of "
            f"1/{RANDOM_SCALE}; give a multiple of {1 / RANDOM_SCALE:g}, e.g. "
            f"{round(steps) / RANDOM_SCALE:g}"
        )
    return round(steps) / RANDOM_SCALE


def loopback(
    backend: str = "af_packet", *, prefix: str = PREFIX
) -> contextlib.AbstractContextManager[BuiltTopology]:
    """Two generator ports wired straight to each other by a veth pair; no DUT.

    Ports ``p0``/``p1`` on ``<tag>g0``/``<tag>g1`` (fixed MACs, no addresses,
    MTU 1500); wires p0->p1 and p1->p0; ``dut`` is None.
    """
    _check_backend(backend)
    _check_prefix(prefix)
    return _managed(_build_loopback, backend, prefix)


def netns_router(
    backend: str = "af_packet", *, prefix: str = PREFIX
) -> contextlib.AbstractContextManager[BuiltTopology]:
    """The Linux kernel forwarding IPv4 between two subnets in its own namespace.

    ``p0`` (198.18.0.2) -- ``d0`` 198.18.0.1/24 [DUT] ``d1`` 198.19.0.1/24 -- ``p1``
    (198.19.0.2). Permanent neighbour entries for the generator addresses and
    routes for 198.18.0.0/16 and 198.19.0.0/16 via them mean the DUT never
    ARPs; rp_filter is off, so any source address is forwarded.
    """
    _check_backend(backend)
    _check_prefix(prefix)
    return _managed(_build_netns_router, backend, prefix)


def netns_shaped(
    backend: str = "af_packet",
    *,
    rate_bps: int = SHAPER_RATE_BPS,
    qdisc: str = "tbf",
    burst_bytes: int | None = None,
    limit_bytes: int | None = None,
    prefix: str = PREFIX,
) -> contextlib.AbstractContextManager[BuiltTopology]:
    """netns-router with a shaper of ``rate_bps`` on its egress towards p1 (d1).

    Only p0 -> p1 is shaped; its capacity is :func:`shaper_capacity_pps`.
    ``qdisc``: ``"tbf"`` (root TBF) or ``"htb"`` (root HTB, one class with
    rate = ceil, a ``bfifo`` leaf). ``burst_bytes`` (default: 4 ms of tokens
    at the rate, at least 3028) is the bucket; ``limit_bytes`` (default: 20 ms
    at the rate + the bucket) the queue, beyond which frames are dropped.
    """
    _check_backend(backend)
    _check_prefix(prefix)
    rate, kind, burst, limit = _check_shaper(rate_bps, qdisc, burst_bytes, limit_bytes)
    configure = partial(_shape, qdisc=kind, rate_bps=rate, burst_bytes=burst, limit_bytes=limit)
    builder = partial(_build_routed, name="netns-shaped", code=_SHAPED_CODE, configure=configure)
    return _managed(builder, backend, prefix)


def netns_lossy(
    backend: str = "af_packet", *, loss_ratio: float = LOSS_RATIO, prefix: str = PREFIX
) -> contextlib.AbstractContextManager[BuiltTopology]:
    """netns-router dropping a random ``loss_ratio`` of the frames it forwards p0 -> p1.

    An nftables rule (``numgen random``, resolution 1e-6) in the DUT's forward
    chain, with its own counter: ``dut.loss_rule.dropped()``. p1 -> p0 loses nothing.
    """
    _check_backend(backend)
    _check_prefix(prefix)
    ratio = _check_loss_ratio(loss_ratio)
    configure = partial(_make_lossy, loss_ratio=ratio)
    builder = partial(_build_routed, name="netns-lossy", code=_LOSSY_CODE, configure=configure)
    return _managed(builder, backend, prefix)


def netns_bridge(
    backend: str = "af_packet", *, prefix: str = PREFIX
) -> contextlib.AbstractContextManager[BuiltTopology]:
    """A Linux bridge joining the two generator ports at layer 2 in its own namespace.

    ``p0`` (198.18.0.2) -- ``d0`` [bridge] ``d1`` -- ``p1`` (198.18.0.3); each
    port's ``peer_mac`` is the other port's MAC. The forwarding table holds a
    static entry per generator MAC; learning, unknown-unicast flooding and STP
    are off, and the DUT has no address, so it forwards and never speaks.
    """
    _check_backend(backend)
    _check_prefix(prefix)
    return _managed(_build_netns_bridge, backend, prefix)


BUILTIN: dict[str, Callable[..., contextlib.AbstractContextManager[BuiltTopology]]] = {
    "loopback": loopback,
    "netns-router": netns_router,
    "netns-shaped": netns_shaped,
    "netns-lossy": netns_lossy,
    "netns-bridge": netns_bridge,
}


def build(name: str, **params: Any) -> contextlib.AbstractContextManager[BuiltTopology]:
    """The built-in topology ``name`` as a context manager: ``with build("netns-router") as b:``.

    ``params`` are the keyword parameters of the topology's function
    (``backend``, ``prefix`` and, for example, ``rate_bps`` of ``netns-shaped``).
    They are checked before anything else, root included.
    """
    factory = BUILTIN.get(name)
    if factory is None:
        raise NetloadConfigError(
            f"topology = {name!r} is not a built-in topology; use one of {sorted(BUILTIN)}"
        )
    allowed = inspect.signature(factory).parameters
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        takes = ", ".join(f"`{key}`={p.default!r}" for key, p in allowed.items())
        raise NetloadConfigError(
            f"built-in topology {name!r} takes {takes} (the defaults), not {unknown}"
        )
    cm = factory(**params)  # validates every parameter, creates nothing yet
    _require_root()
    return cm


# -------------------------------------------------------------------- sweep


def sweep_stale(prefix: str = PREFIX) -> list[str]:
    """Remove what earlier runs that died without cleaning up left behind.

    Only interfaces named ``<prefix>...`` that carry this project's alias,
    and namespaces named ``<prefix>XXXXXX-dut-<pid>.<start>``, are looked at;
    of those, only the ones whose creating process no longer exists are
    removed. Returns the names removed.
    """
    _check_prefix(prefix)
    _require_root()
    removed: list[str] = []
    with IPRoute() as ipr:
        for link in ipr.get_links():
            name = link.get("IFLA_IFNAME") or ""
            match = _ALIAS_RE.match(link.get("IFLA_IFALIAS") or "")
            if not name.startswith(prefix) or match is None:
                continue
            if _alive(int(match.group(1)), int(match.group(2))):
                continue
            try:
                ipr.link("del", index=link["index"])
            except NetlinkError as exc:
                if exc.code != errno.ENODEV:  # ENODEV: gone with its veth peer
                    raise
            removed.append(name)
    pattern = _netns_re(prefix)
    for ns in _netns.listnetns():
        match = pattern.match(ns)
        if match is None or _alive(int(match.group(1)), int(match.group(2))):
            continue
        _remove_netns(ns)
        removed.append(ns)
    return removed
