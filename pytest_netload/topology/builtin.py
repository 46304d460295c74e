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
from pytest_netload.topology.model import PortSpec, Topology, Wire

__all__ = [
    "BACKENDS",
    "BUILTIN",
    "BuiltTopology",
    "Dut",
    "build",
    "loopback",
    "mac_for",
    "netns_router",
    "new_tag",
    "sweep_stale",
    "vdev_string",
]

T = TypeVar("T")

PREFIX = "nl"
ALIAS_MARK = "pytest-netload"
BACKENDS = ("af_packet", "af_xdp")
MTU = 1500

# netns-router addressing (RFC 2544 benchmarking range 198.18.0.0/15)
ROUTER_PREFIXLEN = 24
ROUTER_DUT_IPS = ("198.18.0.1", "198.19.0.1")
ROUTER_GEN_IPS = ("198.18.0.2", "198.19.0.2")
# beyond the /24s, whole /16s are routed to the generator ports so that
# multi-flow streams can vary addresses without the DUT needing ARP
ROUTER_ROUTED = ("198.18.0.0/16", "198.19.0.0/16")

_LOOPBACK_CODE = 1
_ROUTER_CODE = 2
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
    """Handle on a built-in DUT: its namespace and interfaces."""

    def __init__(self, namespace: str, interfaces: Sequence[str], info: Mapping[str, str]) -> None:
        self.namespace = namespace
        self.interfaces = tuple(interfaces)
        self.info = dict(info)

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
        wires=(Wire("p0", "p1"), Wire("p1", "p0")),
        line_rate_bps=None,
        dut={"name": "none", "model": "veth pair (no DUT)", "kernel": os.uname().release},
        namespace=None,
    )
    return BuiltTopology(topology, None)


def _build_netns_router(res: _Resources, backend: str) -> BuiltTopology:
    tag = res.tag
    ns = _netns_name(tag)
    gens = (f"{tag}g0", f"{tag}g1")
    duts = (f"{tag}d0", f"{tag}d1")
    gen_macs = tuple(mac_for(_ROUTER_CODE, _GEN_SIDE, i) for i in range(2))
    dut_macs = tuple(mac_for(_ROUTER_CODE, _DUT_SIDE, i) for i in range(2))
    alias = _alias(tag)

    if ns in _netns.listnetns():
        raise NetloadEnvironmentError(f"network namespace {ns} already exists; build again")
    res.add(f"network namespace {ns}", partial(_remove_netns, ns))
    _netns.create(ns)
    with IPRoute() as ipr:
        for i in range(2):
            _add_veth(ipr, res, gens[i], gen_macs[i], duts[i], dut_macs[i], alias)
        _quiet_generator_side(ipr, gens)
        _disable_offloads(gens + duts)
        for name in duts:
            (index,) = ipr.link_lookup(ifname=name)
            ipr.link("set", index=index, net_ns_fd=ns)

    settings: list[tuple[tuple[str, ...], str]] = [(("net", "ipv4", "ip_forward"), "1")]
    for scope in ("all", "default", *duts):
        settings.append((("net", "ipv4", "conf", scope, "rp_filter"), "0"))
        settings.append((("net", "ipv6", "conf", scope, "disable_ipv6"), "1"))
    _call_in_netns(ns, partial(_write_sysctls, settings))

    with IPRoute(netns=ns, flags=0) as nsr:
        _set_up(nsr, ("lo",))
        for i in range(2):
            (index,) = nsr.link_lookup(ifname=duts[i])
            nsr.addr("add", index=index, address=ROUTER_DUT_IPS[i], prefixlen=ROUTER_PREFIXLEN)
            nsr.link("set", index=index, state="up")
            nsr.neigh(
                "add",
                dst=ROUTER_GEN_IPS[i],
                lladdr=gen_macs[i],
                ifindex=index,
                state="permanent",
            )
            net, plen = ROUTER_ROUTED[i].split("/")
            nsr.route("add", dst=net, dst_len=int(plen), gateway=ROUTER_GEN_IPS[i], oif=index)
    with IPRoute() as ipr:
        _set_up(ipr, gens)

    ports = tuple(
        PortSpec(
            f"p{i}",
            vdev_string(backend, f"{tag}p{i}", gens[i]),
            gens[i],
            gen_macs[i],
            ip=ROUTER_GEN_IPS[i],
            peer_mac=dut_macs[i],
            peer_ip=ROUTER_DUT_IPS[i],
        )
        for i in range(2)
    )
    info = {
        "name": ns,
        "model": "Linux kernel IPv4 router (network namespace)",
        "kernel": os.uname().release,
        "interfaces": ",".join(duts),
    }
    topology = Topology(
        name="netns-router",
        ports=ports,
        wires=(Wire("p0", "p1"), Wire("p1", "p0")),
        line_rate_bps=None,
        dut=info,
        namespace=ns,
    )
    return BuiltTopology(topology, Dut(ns, duts, info))


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


BUILTIN: dict[str, Callable[..., contextlib.AbstractContextManager[BuiltTopology]]] = {
    "loopback": loopback,
    "netns-router": netns_router,
}


def build(name: str, **kw: Any) -> contextlib.AbstractContextManager[BuiltTopology]:
    """The built-in topology ``name`` as a context manager: ``with build("netns-router") as b:``."""
    factory = BUILTIN.get(name)
    if factory is None:
        raise NetloadConfigError(
            f"topology = {name!r} is not a built-in topology; use one of {sorted(BUILTIN)}"
        )
    unknown = sorted(set(kw) - {"backend", "prefix"})
    if unknown:
        raise NetloadConfigError(
            f"built-in topology {name!r} takes `backend` ({'/'.join(BACKENDS)}) and `prefix`, "
            f"not {unknown}"
        )
    _require_root()
    return factory(**kw)


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
