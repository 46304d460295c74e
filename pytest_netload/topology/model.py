"""The topology model: ports, how they are wired through the DUT, addresses.

Pure data, no I/O: frozen dataclasses validated on construction. Every
validation error is a ``NetloadConfigError`` that names the offending key and
says how to fix it, so the same classes serve the TOML loader, the built-in
topologies and hand-written ``conftest.py`` code.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import NamedTuple

from pytest_netload.errors import NetloadConfigError
from pytest_netload.topology.capabilities import DECLARED
from pytest_netload.topology.ssh import DutSsh

__all__ = ["MAX_VLAN", "MIN_VLAN", "Flow", "PortSpec", "Topology", "Wire", "check_device",
           "check_ifname", "check_netns_name", "normalize_mac", "split_interface"]

_MAC_RE = re.compile(r"^[0-9a-f]{2}([:-])[0-9a-f]{2}(\1[0-9a-f]{2}){4}$")
_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]+$")
_MAC_EXAMPLE = "'02:00:00:00:00:01'"
_MAX_QUEUES = 64
MIN_VLAN, MAX_VLAN = 1, 4094  # 802.1Q: 0 is priority-only, 4095 reserved


def normalize_mac(value: object, key: str) -> str:
    """Return ``value`` as a lower-case, colon-separated MAC or raise naming ``key``."""
    if not isinstance(value, str) or not _MAC_RE.match(value.lower()):
        raise NetloadConfigError(
            f"{key} = {value!r} is not a MAC address; write six hex octets "
            f"separated by ':' such as {_MAC_EXAMPLE}"
        )
    return value.lower().replace("-", ":")


def split_interface(value: object, key: str) -> tuple[str, str | None]:
    """A port's ``ip``, with or without a prefix length: (the address, its subnet or None).
    The subnet lets the peer_ip be checked against it before any frame is sent."""
    if isinstance(value, str) and "/" in value:
        try:
            iface = ipaddress.ip_interface(value)
        except ValueError:
            raise NetloadConfigError(
                f"{key} = {value!r} is not an address with a prefix length; write one such "
                "as '198.18.0.2/24' or '2001:2::2/64', or the bare address") from None
        return str(iface.ip), str(iface.network)
    return _normalize_ip(value, key), None


def _normalize_ip(value: object, key: str) -> str:
    if not isinstance(value, str):
        raise NetloadConfigError(
            f"{key} = {value!r} is not an IP address; write it as a string such as '198.18.0.2'"
        )
    if "/" in value:
        raise NetloadConfigError(
            f"{key} = {value!r} has a prefix length; give the bare address "
            f"({value.split('/', 1)[0]!r}): the subnet belongs to the DUT's configuration"
        )
    try:
        return str(ipaddress.ip_address(value))
    except ValueError:
        raise NetloadConfigError(
            f"{key} = {value!r} is not an IPv4 or IPv6 address; write one such as "
            "'198.18.0.2' or '2001:db8::2'"
        ) from None


_IFNAME_MAX = 15  # IFNAMSIZ - 1
_DEVICE_NAME_RE = re.compile(r"^[A-Za-z0-9_.:-]+$")
_DEVARG_KEY_RE = re.compile(r"^[A-Za-z0-9_]+$")
_NETNS_RE = re.compile(r"^[A-Za-z0-9_.@+-]{1,255}$")
_NEVER_IN_DEVICES = ";|&`$<>\"'\\"
_IFNAME_RULE = "use at most 15 characters, without '/', ':', ',', '=' or whitespace (e.g. 'veth0')"


def _ifname_problem(value: str) -> str | None:
    """Why the kernel (dev_valid_name) or a DPDK device string refuses ``value``; None: fine."""
    if not value:
        return "it is empty"
    if len(value) > _IFNAME_MAX:
        return f"it has {len(value)} characters, more than the kernel's {_IFNAME_MAX}"
    if value in (".", ".."):
        return "the kernel refuses '.' and '..'"
    bad = next((c for c in value if c in "/:,=" or c.isspace() or not c.isprintable()), None)
    if bad is not None:
        where = " (',' and '=' would add DPDK device arguments)" if bad in ",=" else ""
        return f"it contains {bad!r}{where}"
    return None


def check_ifname(value: object, key: str) -> str:
    """``value`` if the kernel accepts it as an interface name and it cannot add arguments
    to a DPDK device string; else NetloadConfigError naming ``key``."""
    if not isinstance(value, str):
        raise NetloadConfigError(f"{key} = {value!r} is not a string; {_IFNAME_RULE}")
    problem = _ifname_problem(value)
    if problem is not None:
        raise NetloadConfigError(
            f"{key} = {value!r} is not a Linux interface name: {problem}; {_IFNAME_RULE}")
    return value


def check_device(value: object, key: str) -> str:
    """``value`` if it reads as a DPDK device string: a name (PCI address or vdev name),
    then ``,key=value`` arguments, an ``iface`` argument a valid interface name; else
    NetloadConfigError naming ``key``."""
    fix = ("write a PCI address such as '0000:01:00.0' or a vdev such as "
           "'net_af_packet0,iface=veth0' (a name, then ,key=value arguments)")
    if not isinstance(value, str) or not value:
        raise NetloadConfigError(f"{key} = {value!r} is not a DPDK device string; {fix}")
    problem = None
    bad = next((c for c in value if c.isspace() or not c.isprintable()
                or c in _NEVER_IN_DEVICES), None)
    name, _, args = value.partition(",")
    if bad is not None:
        problem = f"it contains {bad!r}"
    elif not _DEVICE_NAME_RE.match(name):
        problem = f"its name {name!r} is not a PCI address or a vdev name"
    else:
        for arg in filter(None, args.split(",")):
            arg_key, eq, arg_value = arg.partition("=")
            if not _DEVARG_KEY_RE.match(arg_key):
                problem = f"argument {arg!r} has no key (letters, digits, '_')"
            elif arg_key == "iface" and (why := _ifname_problem(arg_value)) is not None:
                problem = f"its iface={arg_value} is not a Linux interface name ({why})"
            if problem is not None:
                break
    if problem is not None:
        raise NetloadConfigError(f"{key} = {value!r} is not a DPDK device string: {problem}; "
                                 f"{fix}")
    return value


def check_netns_name(value: object, key: str) -> str:
    """``value`` if it is a network namespace name (a file name under /run/netns)."""
    if not isinstance(value, str) or not _NETNS_RE.match(value) or value in (".", ".."):
        raise NetloadConfigError(
            f"{key} = {value!r} is not a network namespace name; give the name `ip netns "
            "list` shows: 1 to 255 letters, digits, '_', '.', '-', '@' or '+' (e.g. 'dut')")
    return value


def _check_name(value: object, key: str) -> str:
    if not isinstance(value, str) or not _NAME_RE.match(value):
        raise NetloadConfigError(
            f"{key} = {value!r} is not a valid name; use letters, digits, '_', '.' or '-' "
            "(for example 'p0')"
        )
    return value


def _optional_str(value: object, key: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise NetloadConfigError(f"{key} = {value!r} must be a non-empty string or left out")
    return value


@dataclass(frozen=True)
class PortSpec:
    """One generator port.

    ``device`` is what the engine opens (a PCI address or a DPDK vdev string),
    ``iface`` the kernel interface behind it where there is one. ``mac`` and
    ``ip`` are the port's own source addresses (``mac`` ``None``: the device's
    own, known once the port opens: `Topology.with_macs`); ``peer_mac`` is the
    MAC frames must be sent to (the DUT interface's MAC, or the far end on a
    straight wire) and ``peer_ip`` the gateway on the DUT. ``queues`` is how many RX and
    TX queues the engine opens on the port (1 to 64); ``lcores`` lists the CPUs
    the engine may use for this port's worker (empty: the engine chooses).
    ``vlan`` is the 802.1Q VLAN id (1 to 4094) of the DUT interface this port
    faces: streams made for a wire from this port carry that tag, and the
    engine answers and sends ARP/ND on it; ``None`` (the default): untagged.
    """

    name: str
    device: str | None
    iface: str | None
    mac: str | None = None
    ip: str | None = None
    peer_mac: str | None = None
    peer_ip: str | None = None
    queues: int = 1
    lcores: tuple[int, ...] = ()
    vlan: int | None = None
    network: str | None = None
    """The port's subnet, from an ``ip`` given with its prefix length ('198.18.0.2/24'):
    ``peer_ip`` must lie in it."""
    engine: str | None = None
    """The engine that opens this port: a name of the ini's ``netload_engines`` (a
    generator host); ``None``: the session's engine (--netload-engine)."""

    def __post_init__(self) -> None:
        name = _check_name(self.name, "port name")
        where = f"port {name!r}"
        device = _optional_str(self.device, f"{where}: device")
        iface = _optional_str(self.iface, f"{where}: iface")
        if device is None and iface is None:
            raise NetloadConfigError(
                f"{where}: neither `device` nor `iface` is set; set `device` to a PCI "
                "address or DPDK vdev string (e.g. 'net_af_packet0,iface=veth0') or "
                "`iface` to a kernel interface name"
            )
        if iface is not None:
            check_ifname(iface, f"{where}: iface")
        if device is not None:
            check_device(device, f"{where}: device")
        if self.mac is not None:
            mac = normalize_mac(self.mac, f"{where}: mac")
            if int(mac[:2], 16) & 1:
                raise NetloadConfigError(
                    f"{where}: mac = {mac!r} is a multicast address; a port's own MAC must "
                    f"be unicast (lowest bit of the first octet clear), e.g. {_MAC_EXAMPLE}"
                )
            object.__setattr__(self, "mac", mac)
        if self.peer_mac is not None:
            object.__setattr__(self, "peer_mac", normalize_mac(self.peer_mac, f"{where}: peer_mac"))
        ip, network = (None, None) if self.ip is None else \
            split_interface(self.ip, f"{where}: ip")
        network = network or self.network
        peer_ip = None if self.peer_ip is None else _normalize_ip(self.peer_ip, f"{where}: peer_ip")
        if ip is not None and peer_ip is not None:
            if ipaddress.ip_address(ip).version != ipaddress.ip_address(peer_ip).version:
                raise NetloadConfigError(
                    f"{where}: ip = {ip!r} and peer_ip = {peer_ip!r} mix IPv4 and IPv6; "
                    "give both in the same family"
                )
            if ip == peer_ip:
                raise NetloadConfigError(
                    f"{where}: ip and peer_ip are both {ip!r}; peer_ip is the DUT's "
                    "gateway address and must differ from the port's own"
                )
        if network is not None and (ip is None or
                                    ipaddress.ip_address(ip) not in ipaddress.ip_network(network)):
            raise NetloadConfigError(
                f"{where}: network = {network!r} does not hold ip = {ip!r}; give the port's "
                "address with its prefix length, e.g. ip = '198.18.0.2/24'")
        if network is not None and peer_ip is not None and \
                ipaddress.ip_address(peer_ip) not in ipaddress.ip_network(network):
            raise NetloadConfigError(
                f"port {name!r}: peer_ip = {peer_ip!r} is not in the port's subnet {network} "
                f"(ip = {ip!r}); give the DUT interface's address on that subnet, or fix the "
                "prefix length")
        object.__setattr__(self, "ip", ip)
        object.__setattr__(self, "network", network)
        object.__setattr__(self, "peer_ip", peer_ip)
        queues = self.queues
        if isinstance(queues, bool) or not isinstance(queues, int) or not 0 < queues <= _MAX_QUEUES:
            raise NetloadConfigError(
                f"{where}: queues = {queues!r} is not a queue count; give an integer from 1 to "
                f"{_MAX_QUEUES} (the RX and TX queues the engine opens on the port)"
            )
        object.__setattr__(self, "lcores", _check_lcores(self.lcores, where))
        if self.engine is not None:
            _check_name(self.engine, f"{where}: engine")
        vlan = self.vlan
        if vlan is not None and (isinstance(vlan, bool) or not isinstance(vlan, int)
                                 or not MIN_VLAN <= vlan <= MAX_VLAN):
            raise NetloadConfigError(
                f"{where}: vlan = {vlan!r} is not a VLAN id; give an integer from {MIN_VLAN} "
                f"to {MAX_VLAN} (0 and 4095 are reserved by 802.1Q), or leave it out for "
                "untagged frames"
            )


def _check_lcores(value: object, where: str) -> tuple[int, ...]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise NetloadConfigError(
            f"{where}: lcores = {value!r} is not a list of CPU numbers; "
            "give non-negative integers such as (2, 3), or leave it empty"
        )
    lcores = tuple(value)
    for i, cpu in enumerate(lcores):
        if isinstance(cpu, bool) or not isinstance(cpu, int) or cpu < 0:
            raise NetloadConfigError(
                f"{where}: lcores[{i}] = {cpu!r} is not a CPU number; "
                "give non-negative integers such as (2, 3)"
            )
        if cpu in lcores[:i]:
            raise NetloadConfigError(
                f"{where}: lcores lists CPU {cpu} twice; list each CPU once"
            )
    return tuple(int(cpu) for cpu in lcores)


def _known_mac(port: PortSpec) -> str:
    if port.mac is None:
        raise NetloadConfigError(
            f"port {port.name!r} has no mac in the topology: its MAC is the device's, read "
            "when the port opens; take the flows of the opened ports (netload_ports.topology"
            ", or Topology.with_macs() with the MACs the ports report)")
    return port.mac


@dataclass(frozen=True)
class Wire:
    """Frames sent on port ``tx`` arrive at port ``rx`` (through the DUT, if any)."""

    tx: str
    rx: str

    def __post_init__(self) -> None:
        _check_name(self.tx, "wire tx")
        _check_name(self.rx, "wire rx")


class Flow(NamedTuple):
    """One wire resolved to ports; unpacks as ``(tx, rx)``.

    The address properties are what a stream on this wire should use.
    """

    tx: PortSpec
    rx: PortSpec

    @property
    def src_mac(self) -> str:
        return _known_mac(self.tx)

    @property
    def dst_mac(self) -> str:
        """``tx.peer_mac`` (the DUT's MAC); the rx port's MAC on a straight wire without one."""
        return self.tx.peer_mac if self.tx.peer_mac is not None else _known_mac(self.rx)

    @property
    def src_ip(self) -> str | None:
        return self.tx.ip

    @property
    def dst_ip(self) -> str | None:
        return self.rx.ip


@dataclass(frozen=True)
class Topology:
    """Ports, wires through the DUT, nominal line rate and DUT metadata.

    ``line_rate_bps`` is ``None`` where the medium has none (veth): rates are
    then given in pps or bit/s only. ``namespace`` is the network namespace of
    the DUT where it runs on this machine (a built-in one or a local netns),
    ``None`` for external devices. ``dut_ssh`` is how to run commands on an
    external DUT over ssh (``[dut] ssh``), ``None`` without. ``source`` is the
    file the topology was loaded from, for messages; it takes no part in equality.
    ``capabilities`` is what the file declares its DUT does (``[capabilities]``:
    ``policer_bps``, ``policer_cbs_bytes``, ``shaper_bps``, ``shaper_queue_bytes``,
    ``loss_ratio``; topology/capabilities.py), for tests that need it
    (``netload_requires``).
    """

    name: str
    ports: tuple[PortSpec, ...]
    wires: tuple[Wire, ...]
    line_rate_bps: int | None = None
    dut: Mapping[str, str] = field(default_factory=dict, hash=False)
    namespace: str | None = None
    source: str | None = field(default=None, compare=False)
    dut_ssh: DutSsh | None = None
    capabilities: Mapping[str, float | int] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        name = _check_name(self.name, "topology name")
        where = f"topology {name!r}"
        ports = _as_tuple(self.ports, f"{where}: ports")
        if not ports:
            raise NetloadConfigError(f"{where}: `ports` is empty; declare at least one port")
        seen: dict[str, PortSpec] = {}
        for port in ports:
            if not isinstance(port, PortSpec):
                raise NetloadConfigError(
                    f"{where}: ports contains {port!r}; every entry must be a PortSpec"
                )
            if port.name in seen:
                raise NetloadConfigError(
                    f"{where}: port name {port.name!r} is used twice in `ports`; "
                    "give every port its own name"
                )
            seen[port.name] = port
        wires = _as_tuple(self.wires, f"{where}: wires")
        if not wires:
            raise NetloadConfigError(
                f"{where}: `wires` is empty; add at least one Wire(tx=..., rx=...) "
                "saying which port's frames reach which port"
            )
        pairs: set[tuple[str, str]] = set()
        for wire in wires:
            if not isinstance(wire, Wire):
                raise NetloadConfigError(
                    f"{where}: wires contains {wire!r}; every entry must be a Wire"
                )
            for end in ("tx", "rx"):
                port_name = getattr(wire, end)
                if port_name not in seen:
                    raise NetloadConfigError(
                        f"{where}: wire {wire.tx}->{wire.rx}: {end} = {port_name!r} is not "
                        f"a declared port; use one of {sorted(seen)}"
                    )
            if (wire.tx, wire.rx) in pairs:
                raise NetloadConfigError(
                    f"{where}: wire {wire.tx}->{wire.rx} is listed twice in `wires`; "
                    "remove the duplicate"
                )
            pairs.add((wire.tx, wire.rx))
            tx_engine, rx_engine = seen[wire.tx].engine, seen[wire.rx].engine
            if tx_engine != rx_engine:
                raise NetloadConfigError(
                    f"{where}: wire {wire.tx}->{wire.rx} joins port {wire.tx!r} on engine "
                    f"{tx_engine or '(the session engine)'} to port {wire.rx!r} on engine "
                    f"{rx_engine or '(the session engine)'}; a receiving engine counts loss, "
                    "order and latency against the sending engine's stream signatures and "
                    "its clock, which another engine (another host) does not share: wire "
                    "both ends of a DUT path to ports of one engine")
            tx_ip, rx_ip = seen[wire.tx].ip, seen[wire.rx].ip
            tx_ver = None if tx_ip is None else ipaddress.ip_address(tx_ip).version
            rx_ver = None if rx_ip is None else ipaddress.ip_address(rx_ip).version
            if tx_ver is not None and rx_ver is not None and tx_ver != rx_ver:
                raise NetloadConfigError(
                    f"{where}: wire {wire.tx}->{wire.rx} joins an IPv{tx_ver} port to an "
                    f"IPv{rx_ver} port; give both ports `ip` values of one family"
                )
        rate = self.line_rate_bps
        if rate is not None and (isinstance(rate, bool) or not isinstance(rate, int) or rate <= 0):
            raise NetloadConfigError(
                f"{where}: line_rate_bps = {rate!r} must be a positive integer in bit/s "
                "(e.g. 10_000_000_000 for 10GbE) or None where the medium has no line rate"
            )
        if not isinstance(self.dut, Mapping):
            raise NetloadConfigError(
                f"{where}: dut = {self.dut!r} must be a mapping of strings, "
                "e.g. {'name': 'edge-1', 'model': 'X100'}"
            )
        for key, value in self.dut.items():
            if not isinstance(key, str) or not isinstance(value, str):
                raise NetloadConfigError(
                    f"{where}: dut[{key!r}] = {value!r}; DUT metadata keys and values must "
                    "be strings (quote numbers such as firmware versions)"
                )
        namespace = _optional_str(self.namespace, f"{where}: namespace")
        if namespace is not None:
            check_netns_name(namespace, f"{where}: namespace")
        _optional_str(self.source, f"{where}: source")
        if self.dut_ssh is not None:
            if not isinstance(self.dut_ssh, DutSsh):
                raise NetloadConfigError(
                    f"{where}: dut_ssh = {self.dut_ssh!r} must be a DutSsh('admin@dut') or None")
            if namespace is not None:
                raise NetloadConfigError(
                    f"{where}: the DUT has both a namespace here ({namespace!r}) and ssh "
                    f"({self.dut_ssh.destination!r}); keep the one that reaches it: namespace "
                    "for a DUT on this machine, [dut] ssh for a remote one")
        object.__setattr__(self, "ports", ports)
        object.__setattr__(self, "wires", wires)
        object.__setattr__(self, "dut", MappingProxyType(dict(self.dut)))
        fields = set(DECLARED.values())
        if not isinstance(self.capabilities, Mapping) or not set(self.capabilities) <= fields:
            raise NetloadConfigError(
                f"{where}: capabilities = {self.capabilities!r} must map some of "
                f"{sorted(fields)} to numbers (topology/capabilities.py)")
        object.__setattr__(self, "capabilities", MappingProxyType(dict(self.capabilities)))
        object.__setattr__(self, "namespace", namespace)

    def port(self, name: str) -> PortSpec:
        """The port called ``name``."""
        for port in self.ports:
            if port.name == name:
                return port
        raise NetloadConfigError(
            f"topology {self.name!r} has no port {name!r}; its ports are "
            f"{[p.name for p in self.ports]}"
        )

    def with_macs(self, macs: Mapping[str, str]) -> Topology:
        """This topology with each port that has no ``mac`` given the one in ``macs``
        (port name -> MAC, e.g. what the opened ports report); a port with a ``mac``
        keeps it."""
        ports = tuple(p if p.mac is not None or p.name not in macs
                      else replace(p, mac=macs[p.name]) for p in self.ports)
        return self if ports == self.ports else replace(self, ports=ports)

    def flows(self) -> list[Flow]:
        """One ``(tx, rx)`` flow per wire, in wire order, with the addresses to use."""
        return [Flow(self.port(w.tx), self.port(w.rx)) for w in self.wires]


def _as_tuple(value: object, key: str) -> tuple[object, ...]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise NetloadConfigError(f"{key} = {value!r} must be a sequence")
    return tuple(value)
