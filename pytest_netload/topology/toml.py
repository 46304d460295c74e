"""Topology files: load a TOML file into a validated `Topology`.

The format is documented in docs/topology-files.md. Loading reads the file and
nothing else (no interface or address look-ups). Every error is a
``NetloadConfigError`` whose message starts with the file's path, names the
key (``topology.line_rate``, ``ports[1].mac``, ``wires[0].rx``) and says the
fix; errors from the model are re-raised with the file path and the entry.
"""

from __future__ import annotations

import datetime
import difflib
import os
import re
import tomllib
from collections.abc import Mapping

from pytest_netload.errors import NetloadConfigError
from pytest_netload.files import MIB, read_input_file
from pytest_netload.topology.capabilities import check_declared
from pytest_netload.topology.model import (
    PortSpec,
    Topology,
    Wire,
    _check_name,
    _normalize_ip,
    _optional_str,
    check_device,
    check_ifname,
    check_netns_name,
    normalize_mac,
    split_interface,
)
from pytest_netload.topology.ssh import DutSsh
from pytest_netload.units import as_rate

__all__ = ["load_topology", "parse_topology"]

_TABLES = ("topology", "dut", "capabilities", "ports", "wires")
_TOPOLOGY_KEYS = ("name", "line_rate", "namespace")
_PORT_KEYS = (
    "name", "device", "iface", "mac", "ip", "peer_mac", "peer_ip", "queues", "lcores", "vlan",
    "engine",
)
_PORT_STRINGS = ("name", "device", "iface", "mac", "ip", "peer_mac", "peer_ip", "engine")
_WIRE_KEYS = ("tx", "rx")
MAX_FILE_BYTES = MIB
"""The largest topology file read (a topology of hundreds of ports is a few kB)."""
_SYNTAX_AT = re.compile(r"^(.*) \(at line (\d+), column (\d+)\)$", re.DOTALL)


def load_topology(path: str | os.PathLike[str]) -> Topology:
    """The topology in the TOML file at ``path`` (format: docs/topology-files.md).

    Raises NetloadConfigError, its message starting with ``path``, for a file
    that cannot be read, is not a regular file (a FIFO, a device, a directory), is
    larger than MAX_FILE_BYTES, is not TOML or does not describe a valid topology.
    """
    source = os.fspath(path)
    try:
        raw = read_input_file(source, MAX_FILE_BYTES, what="topology file", fix=(
            "give the path of a TOML topology file (docs/topology-files.md)"))
        data = tomllib.loads(raw.decode("utf-8"))
    except RecursionError:
        raise NetloadConfigError(
            f"{source}: arrays or inline tables are nested too deeply for a topology file; "
            "write the topology as in docs/topology-files.md (tables of strings and numbers)"
        ) from None
    except OSError as exc:
        raise NetloadConfigError(
            f"{source}: cannot read the topology file ({exc.strerror or exc}); "
            "check the path (relative paths start at the current directory) and its permissions"
        ) from exc
    except UnicodeDecodeError as exc:
        raise NetloadConfigError(
            f"{source}: the topology file is not UTF-8 text ({exc.reason} at byte "
            f"{exc.start}); save it as UTF-8"
        ) from exc
    except tomllib.TOMLDecodeError as exc:
        text = str(exc)
        at = _SYNTAX_AT.match(text)
        where = f"{source}:{at.group(2)}:{at.group(3)}" if at else source
        problem = at.group(1) if at else text
        raise NetloadConfigError(
            f"{where}: TOML syntax error: {problem}; fix the TOML syntax there "
            "(strings need quotes, tables are [name], repeated tables [[name]])"
        ) from exc
    return parse_topology(data, source)


def parse_topology(data: Mapping[str, object], source: str) -> Topology:
    """The topology in ``data``, a TOML document as ``tomllib`` returns it.

    ``source`` names where ``data`` came from and starts every error message.
    """
    if not isinstance(data, Mapping):
        raise NetloadConfigError(
            f"{source}: the document is {_kind(data)}, not a table; "
            "give the parsed TOML document (a dict)"
        )
    for key in data:
        if key not in _TABLES:
            hint = (
                "; move it into the [topology] table" if key in _TOPOLOGY_KEYS
                else _did_you_mean(key, _TABLES)
            )
            raise NetloadConfigError(
                f"{source}: unknown top-level key {key!r}{hint}; the allowed tables are "
                "[topology], [dut], [capabilities], [[ports]] and [[wires]]"
            )

    table = _table(data, "topology", source, required=True)
    _check_keys(table, _TOPOLOGY_KEYS, "topology", source)
    if "name" not in table:
        raise NetloadConfigError(
            f"{source}: topology.name is missing; add name = \"...\" (letters, digits, "
            "'_', '.', '-') to the [topology] table"
        )
    name = _check_name(table["name"], f"{source}: topology.name")
    line_rate_bps = _line_rate(table.get("line_rate"), f"{source}: topology.line_rate")
    namespace = _optional_str(
        _string(table, "namespace", "topology", source), f"{source}: topology.namespace"
    )
    if namespace is not None:
        check_netns_name(namespace, f"{source}: topology.namespace")

    dut: dict[str, str] = {}
    for key, value in _table(data, "dut", source, required=False).items():
        if not isinstance(value, str):
            fix = (
                "write one string per key instead" if isinstance(value, (Mapping, list))
                else f"quote it: {key} = \"{value}\""
            )
            raise NetloadConfigError(
                f"{source}: dut.{key} = {value!r} is {_kind(value)}; every [dut] value must "
                f"be a string, so {fix}"
            )
        dut[key] = value
    dut_ssh = _dut_ssh(dut, source)
    capabilities = check_declared(_table(data, "capabilities", source, required=False), source)

    ports = tuple(
        _port(entry, f"ports[{i}]", source)
        for i, entry in enumerate(_array(data, "ports", source))
    )
    first: dict[str, int] = {}
    for i, port in enumerate(ports):
        if port.name in first:
            raise NetloadConfigError(
                f"{source}: ports[{i}].name = {port.name!r} is already ports[{first[port.name]}]"
                ".name; give every port its own name"
            )
        first[port.name] = i

    wires: list[Wire] = []
    for i, entry in enumerate(_array(data, "wires", source)):
        wire = _wire(entry, f"wires[{i}]", source, sorted(first))
        for j, earlier in enumerate(wires):
            if earlier == wire:
                raise NetloadConfigError(
                    f"{source}: wires[{i}] repeats wires[{j}] ({wire.tx} -> {wire.rx}); "
                    "remove the duplicate"
                )
        wires.append(wire)

    try:
        return Topology(
            name=name,
            ports=ports,
            wires=tuple(wires),
            line_rate_bps=line_rate_bps,
            dut=dut,
            namespace=namespace,
            source=source,
            dut_ssh=dut_ssh,
            capabilities=capabilities,
        )
    except NetloadConfigError as exc:
        raise NetloadConfigError(f"{source}: {exc}") from exc


# ---- entries ------------------------------------------------------------------------------


def _dut_ssh(dut: dict[str, str], source: str) -> DutSsh | None:
    """`[dut] ssh` (kept in the metadata: the reports show it) and `ssh_config` (taken
    out: a path on this machine is no fact about the DUT), as the DUT's ssh access.
    A relative ssh_config starts at the topology file's directory."""
    config = dut.pop("ssh_config", None)
    destination = dut.get("ssh")
    if destination is None:
        if config is not None:
            raise NetloadConfigError(
                f"{source}: dut.ssh_config = {config!r} without dut.ssh; add ssh = "
                "\"user@host\" (or a Host alias of that file) to [dut], or remove ssh_config")
        return None
    if config is not None and config:
        config = os.path.join(os.path.dirname(source), os.path.expanduser(config))
    try:
        return DutSsh(destination, config)
    except NetloadConfigError as exc:
        raise NetloadConfigError(f"{source}: {exc}") from exc


def _port(entry: Mapping[str, object], where: str, source: str) -> PortSpec:
    _check_keys(entry, _PORT_KEYS, where, source)
    if "name" not in entry:
        raise NetloadConfigError(
            f"{source}: {where}.name is missing; every [[ports]] table needs a name "
            "(e.g. name = \"p0\")"
        )
    if "device" not in entry and "iface" not in entry:
        raise NetloadConfigError(
            f"{source}: {where} has neither device nor iface; set device to a PCI address or "
            "DPDK vdev string (e.g. \"net_af_packet0,iface=veth0\") or iface to a kernel "
            "interface name"
        )
    text = {key: _string(entry, key, where, source) for key in _PORT_STRINGS}
    key_of = f"{source}: {where}.{{}}".format
    name = _check_name(text["name"], key_of("name"))
    mac = None if text["mac"] is None else normalize_mac(text["mac"], key_of("mac"))
    for key in ("device", "iface"):
        _optional_str(text[key], key_of(key))
    if text["iface"] is not None:
        check_ifname(text["iface"], key_of("iface"))
    if text["device"] is not None:
        check_device(text["device"], key_of("device"))
    if text["peer_mac"] is not None:
        normalize_mac(text["peer_mac"], key_of("peer_mac"))
    if text["ip"] is not None:
        split_interface(text["ip"], key_of("ip"))
    if text["peer_ip"] is not None:
        _normalize_ip(text["peer_ip"], key_of("peer_ip"))
    queues = entry.get("queues", 1)
    if isinstance(queues, bool) or not isinstance(queues, int):
        raise NetloadConfigError(
            f"{key_of('queues')} = {queues!r} is {_kind(queues)}; write an integer from 1 "
            "to 64 without quotes (e.g. queues = 2)"
        )
    lcores = entry.get("lcores", [])
    if not isinstance(lcores, list):
        raise NetloadConfigError(
            f"{key_of('lcores')} = {lcores!r} is {_kind(lcores)}; write an array of CPU "
            "numbers (e.g. lcores = [2, 3])"
        )
    for i, cpu in enumerate(lcores):
        if isinstance(cpu, bool) or not isinstance(cpu, int):
            raise NetloadConfigError(
                f"{key_of('lcores')}[{i}] = {cpu!r} is {_kind(cpu)}; write CPU numbers as "
                "integers without quotes (e.g. lcores = [2, 3])"
            )
    vlan = entry.get("vlan")
    if vlan is not None and (isinstance(vlan, bool) or not isinstance(vlan, int)):
        raise NetloadConfigError(
            f"{key_of('vlan')} = {vlan!r} is {_kind(vlan)}; write the VLAN id as an integer "
            "from 1 to 4094 without quotes (e.g. vlan = 100)"
        )
    try:
        return PortSpec(
            name=name,
            device=text["device"],
            iface=text["iface"],
            mac=mac,
            ip=text["ip"],
            peer_mac=text["peer_mac"],
            peer_ip=text["peer_ip"],
            queues=queues,
            lcores=tuple(lcores),
            vlan=vlan,
            engine=text["engine"],
        )
    except NetloadConfigError as exc:
        raise NetloadConfigError(f"{source}: {where}: {exc}") from exc


def _wire(entry: Mapping[str, object], where: str, source: str, ports: list[str]) -> Wire:
    _check_keys(entry, _WIRE_KEYS, where, source)
    ends: dict[str, str] = {}
    for end in _WIRE_KEYS:
        if end not in entry:
            raise NetloadConfigError(
                f"{source}: {where}.{end} is missing; every [[wires]] table needs tx and rx, "
                f"each the name of a port (one of {ports})"
            )
        value = _string(entry, end, where, source)
        if value not in ports:
            raise NetloadConfigError(
                f"{source}: {where}.{end} = {value!r} is not a declared port; use one of {ports}"
            )
        ends[end] = value
    try:
        return Wire(tx=ends["tx"], rx=ends["rx"])
    except NetloadConfigError as exc:  # pragma: no cover - names were checked as ports
        raise NetloadConfigError(f"{source}: {where}: {exc}") from exc


def _line_rate(value: object, key: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        if value <= 0:
            raise NetloadConfigError(
                f"{key} = {value!r} is not above zero; give the positive L1 line rate in bit/s "
                "(e.g. 10_000_000_000) or a string such as \"10Gbit/s\", or leave it out"
            )
        return value
    if not isinstance(value, str):
        raise NetloadConfigError(
            f"{key} = {value!r} is {_kind(value)}; write a string such as \"10Gbit/s\" or an "
            "integer in bit/s such as 10_000_000_000"
        )
    rate = as_rate(value, what=key)
    if rate.kind != "bps":
        what = "a packet rate" if rate.kind == "pps" else "a share of the line rate"
        raise NetloadConfigError(
            f"{key} = {value!r} is {what}; give the line rate as a bit rate such as \"10Gbit/s\""
        )
    if "@" in value and rate.layer != "l1":
        raise NetloadConfigError(
            f"{key} = {value!r}: a line rate counts L1 bits; drop '@{rate.layer}'"
        )
    if not rate.value.is_integer():
        raise NetloadConfigError(
            f"{key} = {value!r} is not a whole number of bit/s; give e.g. \"10Gbit/s\""
        )
    return int(rate.value)


# ---- structure ----------------------------------------------------------------------------


def _table(
    data: Mapping[str, object], key: str, source: str, *, required: bool
) -> Mapping[str, object]:
    value = data.get(key)
    if value is None:
        if required:
            raise NetloadConfigError(
                f"{source}: the [{key}] table is missing; add one with at least "
                "name = \"...\""
            )
        return {}
    if not isinstance(value, Mapping):
        raise NetloadConfigError(
            f"{source}: {key} = {value!r} is {_kind(value)}; write it as a table "
            f"headed [{key}]"
        )
    return value


def _array(data: Mapping[str, object], key: str, source: str) -> list[Mapping[str, object]]:
    value = data.get(key)
    if value is None or value == []:
        what = "port" if key == "ports" else "wire (tx = port, rx = port)"
        raise NetloadConfigError(
            f"{source}: {key} is missing; declare at least one {what} in a table headed "
            f"[[{key}]] (two brackets)"
        )
    if isinstance(value, Mapping):
        raise NetloadConfigError(
            f"{source}: {key} is a single table; head each entry [[{key}]] (two brackets), "
            f"not [{key}]"
        )
    if not isinstance(value, list):
        raise NetloadConfigError(
            f"{source}: {key} = {value!r} is {_kind(value)}; declare each entry as a table "
            f"headed [[{key}]]"
        )
    for i, entry in enumerate(value):
        if not isinstance(entry, Mapping):
            raise NetloadConfigError(
                f"{source}: {key}[{i}] = {entry!r} is {_kind(entry)}; declare each entry as a "
                f"table headed [[{key}]]"
            )
    return value


def _check_keys(
    table: Mapping[str, object], allowed: tuple[str, ...], where: str, source: str
) -> None:
    for key in table:
        if key not in allowed:
            raise NetloadConfigError(
                f"{source}: {where}.{key} is not a known key{_did_you_mean(key, allowed)}; "
                f"rename or remove it (allowed keys: {', '.join(allowed)})"
            )


def _string(table: Mapping[str, object], key: str, where: str, source: str) -> str | None:
    value = table.get(key)
    if value is None or isinstance(value, str):
        return value
    raise NetloadConfigError(
        f"{source}: {where}.{key} = {value!r} is {_kind(value)}; write it as a quoted string"
    )


def _did_you_mean(key: str, allowed: tuple[str, ...]) -> str:
    near = difflib.get_close_matches(key.replace("-", "_").lower(), allowed, n=1, cutoff=0.6)
    return f" (did you mean {near[0]!r}?)" if near else ""


def _kind(value: object) -> str:
    """The TOML name of ``value``'s type, with its article: "a string", "an integer"."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, datetime.datetime):
        return "a date-time"
    for kind, name in (
        (str, "a string"), (int, "an integer"), (float, "a float"), (Mapping, "a table"),
        (list, "an array"), (datetime.date, "a date"), (datetime.time, "a time"),
    ):
        if isinstance(value, kind):
            return name
    return f"a {type(value).__name__}"
