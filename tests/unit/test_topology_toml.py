"""Topology files: loading TOML into the model, and every class of error it reports."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_netload.errors import NetloadConfigError
from pytest_netload.topology import PortSpec, Topology, Wire, load_topology, parse_topology

DOCS = Path(__file__).resolve().parents[2] / "docs" / "topology-files.md"

FULL = """\
[topology]
name = "lab-edge-1"
line_rate = "10Gbit/s"
namespace = "dutns"

[dut]
name = "edge-1"
model = "X100"
firmware = "4.2.1"
rack = "12"

[[ports]]
name = "p0"
device = "0000:3b:00.0"
iface = "veth0"
mac = "02:00:00:00:00:01"
ip = "198.18.0.2"
peer_mac = "02:00:00:00:01:01"
peer_ip = "198.18.0.1"
queues = 4
lcores = [2, 3]
vlan = 100

[[ports]]
name = "p1"
device = "net_af_xdp0,iface=veth1"
mac = "02-00-00-00-00-0A"
ip = "198.19.0.2"
peer_mac = "02:00:00:00:01:02"
peer_ip = "198.19.0.1"

[[wires]]
tx = "p0"
rx = "p1"

[[wires]]
tx = "p1"
rx = "p0"
"""

MINIMAL = """\
[topology]
name = "wire"

[[ports]]
name = "p0"
iface = "veth0"
mac = "02:00:00:00:00:01"

[[wires]]
tx = "p0"
rx = "p0"
"""


T = 'name = "wire"'  # the [topology] name line of MINIMAL
P = 'name = "p0"'  # the [[ports]] name line of MINIMAL


def _write(tmp_path: Path, text: str, name: str = "lab.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _error(path: Path) -> str:
    with pytest.raises(NetloadConfigError) as info:
        load_topology(path)
    message = str(info.value)
    assert message.startswith(str(path)), message
    return message


def _check(tmp_path: Path, text: str, key: str, fix: str) -> str:
    message = _error(_write(tmp_path, text))
    assert key in message, message
    assert fix in message, message
    return message


# ------------------------------------------------------------------ valid files


def test_full_file_round_trips_into_the_model(tmp_path: Path) -> None:
    path = _write(tmp_path, FULL)
    topo = load_topology(path)
    assert isinstance(topo, Topology)
    assert topo.name == "lab-edge-1"
    assert topo.line_rate_bps == 10_000_000_000 and type(topo.line_rate_bps) is int
    assert topo.namespace == "dutns"
    assert dict(topo.dut) == {"name": "edge-1", "model": "X100", "firmware": "4.2.1", "rack": "12"}
    assert topo.source == str(path)
    assert topo.ports == (
        PortSpec(
            "p0", "0000:3b:00.0", "veth0", "02:00:00:00:00:01", "198.18.0.2",
            "02:00:00:00:01:01", "198.18.0.1", queues=4, lcores=(2, 3), vlan=100,
        ),
        PortSpec(
            "p1", "net_af_xdp0,iface=veth1", None, "02:00:00:00:00:0a", "198.19.0.2",
            "02:00:00:00:01:02", "198.19.0.1",
        ),
    )
    assert topo.port("p1").queues == 1 and topo.port("p1").lcores == ()
    assert topo.port("p0").vlan == 100 and topo.port("p1").vlan is None
    assert topo.wires == (Wire("p0", "p1"), Wire("p1", "p0"))
    flow = topo.flows()[0]
    assert (flow.src_mac, flow.dst_mac, flow.src_ip, flow.dst_ip) == (
        "02:00:00:00:00:01", "02:00:00:00:01:01", "198.18.0.2", "198.19.0.2"
    )


def test_minimal_file(tmp_path: Path) -> None:
    topo = load_topology(str(_write(tmp_path, MINIMAL)))
    (port,) = topo.ports
    assert (port.name, port.device, port.iface) == ("p0", None, "veth0")
    assert port.mac == "02:00:00:00:00:01"
    assert (port.ip, port.peer_mac, port.peer_ip, port.queues, port.lcores) == (
        None, None, None, 1, ()
    )
    assert topo.wires == (Wire("p0", "p0"),)
    assert topo.line_rate_bps is None and topo.namespace is None and dict(topo.dut) == {}


@pytest.mark.parametrize(
    ("value", "bps"),
    [
        ('"25Gbps"', 25_000_000_000),
        ('"2.5Gbit/s"', 2_500_000_000),
        ('"100Gbit/s@l1"', 100_000_000_000),
        ("10_000_000_000", 10_000_000_000),
    ],
)
def test_line_rate_forms(tmp_path: Path, value: str, bps: int) -> None:
    text = MINIMAL.replace('name = "wire"', f'name = "wire"\nline_rate = {value}')
    assert load_topology(_write(tmp_path, text)).line_rate_bps == bps


def test_source_is_not_part_of_equality(tmp_path: Path) -> None:
    a = load_topology(_write(tmp_path, FULL, "a.toml"))
    b = load_topology(_write(tmp_path, FULL, "b.toml"))
    assert a.source != b.source
    assert a == b and hash(a) == hash(b)


def test_parse_topology_uses_source_in_messages() -> None:
    data = {"topology": {"name": "t"}, "ports": [], "wires": []}
    with pytest.raises(NetloadConfigError, match=r"^from-memory: ports is missing"):
        parse_topology(data, "from-memory")
    with pytest.raises(NetloadConfigError, match=r"^x: the document is an array"):
        parse_topology([], "x")  # type: ignore[arg-type]


def test_docs_example_loads(tmp_path: Path) -> None:
    blocks = re.findall(r"```toml\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.DOTALL)
    assert len(blocks) == 1
    topo = load_topology(_write(tmp_path, blocks[0], "lab-edge-1.toml"))
    assert topo.name == "lab-edge-1" and topo.line_rate_bps == 10_000_000_000
    assert [p.name for p in topo.ports] == ["p0", "p1"]
    assert topo.port("p1").lcores == (3, 4) and topo.dut["site"] == "rack 12"
    assert topo.port("p0").mac == "02:00:00:00:00:01" and topo.port("p1").mac is None
    assert dict(topo.capabilities) == {"policer_bps": 10_000_000, "policer_cbs_bytes": 12_500}


_NAMES = st.from_regex(r"[A-Za-z0-9_.-]{1,12}", fullmatch=True)
_UNICAST_FIRST = st.integers(0, 255).map(lambda b: b & 0xFE)
_MACS = st.tuples(_UNICAST_FIRST, *[st.integers(0, 255)] * 5).flatmap(
    lambda octets: st.sampled_from([":", "-"]).flatmap(
        lambda sep: st.sampled_from([str.lower, str.upper]).map(
            lambda case: case(sep.join(f"{o:02x}" for o in octets))
        )
    )
)
_IPV4 = st.ip_addresses(v=4).map(str)


@st.composite
def _port_tables(draw: st.DrawFn) -> list[dict[str, object]]:
    names = draw(st.lists(_NAMES, min_size=1, max_size=4, unique=True))
    ports = []
    for name in names:
        ip, peer_ip = draw(st.lists(_IPV4, min_size=2, max_size=2, unique=True))
        port: dict[str, object] = {"name": name, "device": f"net_null_{name}", "mac": draw(_MACS)}
        if draw(st.booleans()):
            port.update(ip=ip, peer_ip=peer_ip, peer_mac=draw(_MACS))
        port["queues"] = draw(st.integers(1, 64))
        port["lcores"] = draw(st.lists(st.integers(0, 1023), max_size=4, unique=True))
        if draw(st.booleans()):
            port["vlan"] = draw(st.integers(1, 4094))
        ports.append(port)
    return ports


def _toml_value(value: object) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return str(value) if isinstance(value, int) else f'"{value}"'


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ports=_port_tables())
def test_random_valid_port_tables_load(tmp_path: Path, ports: list[dict[str, object]]) -> None:
    lines = ["[topology]", 'name = "random"', ""]
    for port in ports:
        lines.append("[[ports]]")
        lines += [f"{key} = {_toml_value(value)}" for key, value in port.items()]
        lines.append("")
    names = [str(port["name"]) for port in ports]
    for tx, rx in zip(names, names[1:] + names[:1]):
        lines += ["[[wires]]", f'tx = "{tx}"', f'rx = "{rx}"', ""]
    topo = load_topology(_write(tmp_path, "\n".join(lines)))
    assert [p.name for p in topo.ports] == names
    for spec, port in zip(topo.ports, ports):
        assert spec.mac == str(port["mac"]).lower().replace("-", ":")
        assert spec.ip == port.get("ip") and spec.peer_ip == port.get("peer_ip")
        assert spec.queues == port["queues"] and spec.lcores == tuple(port["lcores"])  # type: ignore[arg-type]
        assert spec.vlan == port.get("vlan")
    assert len(topo.wires) == len(names)


# ------------------------------------------------------------------ errors: the file


def test_missing_file(tmp_path: Path) -> None:
    message = _error(tmp_path / "nope.toml")
    assert "cannot read" in message and "check the path" in message


def test_unreadable_file(tmp_path: Path) -> None:
    (tmp_path / "dir.toml").mkdir()
    message = _error(tmp_path / "dir.toml")
    assert "cannot read" in message and "permissions" in message


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "lab.toml"
    path.write_bytes(b'[topology]\nname = "caf\xe9"\n')
    assert "save it as UTF-8" in _error(path)


def test_toml_syntax_error_gives_line_and_column(tmp_path: Path) -> None:
    path = _write(tmp_path, '[topology]\nname = "x"\nline_rate = 10 Gbit/s\n')
    message = _error(path)
    assert message.startswith(f"{path}:3:")
    assert "TOML syntax error" in message and "fix the TOML syntax" in message
    assert "(at line" not in message


# ------------------------------------------------------------------ errors: structure


@pytest.mark.parametrize(
    ("text", "key", "fix"),
    [
        (MINIMAL + "[port]\nname = 'p1'\n", "'port' (did you mean 'ports'?)", "[[wires]]"),
        ('name = "x"\n' + MINIMAL, "'name'", "move it into the [topology] table"),
        (MINIMAL.replace(T, T + '\nline-rate = 5'),
         "topology.line-rate", "did you mean 'line_rate'?"),
        (MINIMAL.replace('iface = "veth0"', 'iface = "veth0"\npeer-mac = "02:00:00:00:00:02"'),
         "ports[0].peer-mac", "did you mean 'peer_mac'?"),
        (MINIMAL.replace('tx = "p0"', 'tx = "p0"\nfrom = "p0"'), "wires[0].from",
         "rename or remove"),
    ],
)
def test_unknown_tables_and_keys(tmp_path: Path, text: str, key: str, fix: str) -> None:
    message = _check(tmp_path, text, key, fix)
    if "[[wires]]" not in fix and "[topology]" not in fix:
        assert "allowed keys:" in message


def test_unknown_port_key_lists_allowed_keys(tmp_path: Path) -> None:
    text = MINIMAL.replace('iface = "veth0"', 'iface = "veth0"\npeer-mac = "02:00:00:00:00:02"')
    _check(tmp_path, text, "ports[0].peer-mac",
           "allowed keys: name, device, iface, mac, ip, peer_mac, peer_ip, queues, lcores, vlan")


_NO_TOPOLOGY = MINIMAL.replace('[topology]\nname = "wire"\n', "")
_NO_WIRES = MINIMAL.split("[[wires]]")[0]
_NO_PORTS = '[topology]\nname = "wire"\n\n[[wires]]\ntx = "p0"\nrx = "p0"\n'


@pytest.mark.parametrize(
    ("text", "key", "fix"),
    [
        (_NO_TOPOLOGY, "[topology]", "add one"),
        (MINIMAL.replace('name = "wire"', 'namespace = "ns"'), "topology.name", "add name"),
        (_NO_PORTS, "ports is missing", "[[ports]]"),
        (_NO_WIRES, "wires is missing", "[[wires]]"),
        ("wires = []\n" + _NO_WIRES, "wires is missing", "declare at least one"),
        (MINIMAL.replace('name = "p0"\n', ""), "ports[0].name", "needs a name"),
        (MINIMAL.replace('iface = "veth0"\n', ""), "ports[0] has neither device nor iface",
         "set device"),
        (MINIMAL.replace('rx = "p0"\n', ""), "wires[0].rx", "needs tx and rx"),
        (MINIMAL.replace("[[ports]]", "[ports]"), "ports is a single table", "two brackets"),
        (MINIMAL.replace("[[wires]]", "[wires]"), "wires is a single table", "two brackets"),
    ],
)
def test_missing_required(tmp_path: Path, text: str, key: str, fix: str) -> None:
    _check(tmp_path, text, key, fix)


def test_a_port_without_a_mac_takes_the_device_s_when_it_opens(tmp_path: Path) -> None:
    # the loader never looks MACs up, even for an interface that exists (lo always does):
    # the MAC stays None until the port opens (engine/neighbours.py fills it in)
    text = MINIMAL.replace('iface = "veth0"', 'iface = "lo"')
    path = tmp_path / "t.toml"
    path.write_text(text.replace('mac = "02:00:00:00:00:01"\n', ""))
    topology = load_topology(path)
    (port,) = topology.ports
    assert port.mac is None
    with pytest.raises(NetloadConfigError, match="port 'p0' has no mac in the topology: its "
                       "MAC is the device's, read when the port opens"):
        topology.flows()[0].src_mac
    opened = topology.with_macs({"p0": "02:00:00:00:00:07"})
    assert opened.port("p0").mac == "02:00:00:00:00:07"
    assert (opened.flows()[0].src_mac, opened.flows()[0].dst_mac) == ("02:00:00:00:00:07",) * 2
    assert load_topology(path).with_macs({}) == topology  # nothing known: unchanged


def test_a_given_mac_stays_when_the_device_has_another(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text(MINIMAL)
    topology = load_topology(path)
    assert topology.with_macs({"p0": "02:00:00:00:00:07"}) is topology
    assert topology.port("p0").mac == "02:00:00:00:00:01"


CAPABILITIES = MINIMAL.replace("[[ports]]", """[capabilities]
policer = "10Mbit/s"
policer_cbs = 12500
shaper = 20_000_000
shaper_queue = 35000
loss_ratio = 0.01

[[ports]]""")


def test_capabilities_are_declared_in_their_table(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text(CAPABILITIES)
    topology = load_topology(path)
    assert dict(topology.capabilities) == {"policer_bps": 10_000_000,
                                           "policer_cbs_bytes": 12_500,
                                           "shaper_bps": 20_000_000,
                                           "shaper_queue_bytes": 35_000, "loss_ratio": 0.01}
    assert dict(load_topology(_write(tmp_path, MINIMAL, "o.toml")).capabilities) == {}


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ('policer = "10Mbit/s"', 'policer = "10kpps"', "capabilities.policer = '10kpps' is not "
         "a bit rate"),
        ('policer = "10Mbit/s"', "policer = 0", "capabilities.policer = 0: give a bit rate "
         "above zero"),
        ('policer = "10Mbit/s"', "policer = true", "capabilities.policer = True: give a bit "
         "rate"),
        ("policer_cbs = 12500", 'policer_cbs = "12500"', "capabilities.policer_cbs = '12500': "
         "give the committed burst in bytes"),
        ("loss_ratio = 0.01", "loss_ratio = 1.5", "capabilities.loss_ratio = 1.5: give the "
         "share"),
        ("loss_ratio = 0.01", "ports = 4", "capabilities.ports is not a known key; use one of "
         "policer, policer_cbs, shaper, shaper_queue, loss_ratio"),
        ('policer = "10Mbit/s"\n', "", "capabilities.policer_cbs without policer"),
        ("shaper_queue = 35000", "shaper_queue = 0", "capabilities.shaper_queue = 0: give "
         "the bytes the shaper queues before it drops"),
        ("shaper_queue = 35000", "shaper_queue = 3.5e4", "capabilities.shaper_queue = 35000.0: "
         "give the bytes"),
        ("shaper = 20_000_000\n", "", "capabilities.shaper_queue without shaper; add shaper = "
         "\"10Mbit/s\" (its rate) or remove shaper_queue"),
    ],
)
def test_a_bad_capability_names_the_key(tmp_path: Path, old: str, new: str,
                                        message: str) -> None:
    path = tmp_path / "t.toml"
    path.write_text(CAPABILITIES.replace(old, new))
    with pytest.raises(NetloadConfigError) as info:
        load_topology(path)
    assert str(info.value).startswith(f"{path}: "), info.value
    assert message in str(info.value), info.value


# ------------------------------------------------------------------ errors: types


@pytest.mark.parametrize(
    ("old", "new", "key", "fix"),
    [
        ('[topology]\nname = "wire"', 'topology = "wire"', "topology = 'wire' is a string",
         "headed [topology]"),
        ('name = "wire"', "name = 7", "topology.name = 7", "letters, digits"),
        (T, T + '\nnamespace = 3', "topology.namespace = 3 is an integer",
         "quoted string"),
        (T, T + '\nline_rate = 10e9', "topology.line_rate = 10000000000.0 is a float",
         "10_000_000_000"),
        (T, T + '\nline_rate = true', "topology.line_rate = True is a boolean",
         "10Gbit/s"),
        (T, T + '\n[dut]\nfirmware = 4.2', "dut.firmware = 4.2 is a float",
         'quote it: firmware = "4.2"'),
        (T, T + '\n[dut]\nrel = 2024-01-02', "dut.rel", "quote it"),
        (T, T + '\n[dut.board]\nrev = "a"', "dut.board", "one string per key"),
        ('mac = "02:00:00:00:00:01"', "mac = 2", "ports[0].mac = 2 is an integer", "quoted string"),
        (P, P + '\ndevice = ["a"]', "ports[0].device = ['a'] is an array",
         "quoted string"),
        (P, P + '\nqueues = "2"', "ports[0].queues = '2' is a string",
         "without quotes"),
        (P, P + '\nqueues = 2.0', "ports[0].queues = 2.0 is a float",
         "integer from 1 to 64"),
        (P, P + '\nvlan = "100"', "ports[0].vlan = '100' is a string",
         "integer from 1 to 4094 without quotes"),
        (P, P + '\nvlan = 1.5', "ports[0].vlan = 1.5 is a float", "vlan = 100"),
        (P, P + '\nlcores = 2', "ports[0].lcores = 2 is an integer",
         "lcores = [2, 3]"),
        (P, P + '\nlcores = [2, "3"]', "ports[0].lcores[1] = '3' is a string",
         "without quotes"),
        ('tx = "p0"', "tx = 0", "wires[0].tx = 0 is an integer", "quoted string"),
    ],
)
def test_wrong_types(tmp_path: Path, old: str, new: str, key: str, fix: str) -> None:
    assert old in MINIMAL
    _check(tmp_path, MINIMAL.replace(old, new, 1), key, fix)


def test_wires_that_are_not_tables(tmp_path: Path) -> None:
    _check(tmp_path, "wires = [1]\n" + _NO_WIRES, "wires[0] = 1 is an integer", "headed [[wires]]")
    _check(tmp_path, 'wires = "p0"\n' + _NO_WIRES, "wires = 'p0' is a string", "headed [[wires]]")


def test_entry_that_is_not_a_table() -> None:
    data = {"topology": {"name": "t"}, "ports": ["p0"], "wires": [{"tx": "p0", "rx": "p0"}]}
    pattern = r"^mem: ports\[0\] = 'p0' is a string.*\[\[ports\]\]"
    with pytest.raises(NetloadConfigError, match=pattern):
        parse_topology(data, "mem")


# ------------------------------------------------------------------ errors: values (model)


@pytest.mark.parametrize(
    ("old", "new", "key", "fix"),
    [
        ('name = "wire"', 'name = "has space"', "topology.name = 'has space'", "letters, digits"),
        (T, T + '\nnamespace = ""', "topology.namespace = ''", "left out"),
        ('name = "p0"', 'name = "p/0"', "ports[0].name = 'p/0'", "letters, digits"),
        ('mac = "02:00:00:00:00:01"', 'mac = "02:00:00:00:00"', "ports[0].mac = '02:00:00:00:00'",
         "six hex octets"),
        ('mac = "02:00:00:00:00:01"', 'mac = "01:00:5e:00:00:01"', "ports[0]: port 'p0': mac",
         "must be unicast"),
        (P, P + '\npeer_mac = "xx"', "ports[0].peer_mac = 'xx'", "six hex octets"),
        (P, P + '\npeer_ip = "198.18.0.1/24"', "ports[0].peer_ip", "give the bare address"),
        (P, P + '\nip = "198.18.0.2/24"\npeer_ip = "198.19.0.1"', "ports[0]",
         "is not in the port's subnet 198.18.0.0/24"),
        (P, P + '\npeer_ip = "gateway"', "ports[0].peer_ip", "write one such as"),
        (P, P + '\nip = "198.18.0.2"\npeer_ip = "2001:db8::1"',
         "ports[0]: port 'p0': ip", "same family"),
        (P, P + '\ndevice = " "', "ports[0].device", "non-empty string"),
        ('iface = "veth0"', 'iface = "a-name-longer-than-15"', "ports[0].iface",
         "at most 15 characters"),
        (P, P + '\nqueues = 0', "ports[0]: port 'p0': queues = 0",
         "integer from 1 to 64"),
        (P, P + '\nqueues = 65', "ports[0]: port 'p0': queues = 65",
         "integer from 1 to 64"),
        (P, P + '\nlcores = [1, -2]', "ports[0]: port 'p0': lcores[1] = -2",
         "non-negative integers"),
        (P, P + '\nlcores = [3, 3]', "ports[0]: port 'p0': lcores",
         "list each CPU once"),
        (P, P + '\nvlan = 0', "ports[0]: port 'p0': vlan = 0 is not a VLAN id",
         "integer from 1 to 4094"),
        (P, P + '\nvlan = 4095', "ports[0]: port 'p0': vlan = 4095 is not a VLAN id",
         "integer from 1 to 4094"),
        ('rx = "p0"', 'rx = "p9"', "wires[0].rx = 'p9' is not a declared port",
         "use one of ['p0']"),
    ],
)
def test_bad_values(tmp_path: Path, old: str, new: str, key: str, fix: str) -> None:
    assert old in MINIMAL
    _check(tmp_path, MINIMAL.replace(old, new, 1), key, fix)


@pytest.mark.parametrize(
    ("value", "key", "fix"),
    [
        ('"14.88Mpps"', "is a packet rate", "as a bit rate"),
        ('"95%"', "is a share of the line rate", "as a bit rate"),
        ('"10Gbit/s@l2"', "counts L1 bits", "drop '@l2'"),
        ('"10 parsecs"', "unknown unit 'parsecs'", "use one of"),
        ('"1.5bit/s"', "whole number of bit/s", '"10Gbit/s"'),
        ('"0Gbit/s"', "not above zero", "positive rate"),
        ("0", "not above zero", "leave it out"),
        ("-1", "not above zero", "10_000_000_000"),
    ],
)
def test_bad_line_rate(tmp_path: Path, value: str, key: str, fix: str) -> None:
    text = MINIMAL.replace('name = "wire"', f'name = "wire"\nline_rate = {value}')
    message = _check(tmp_path, text, key, fix)
    assert "topology.line_rate" in message


def test_duplicate_port_name(tmp_path: Path) -> None:
    text = MINIMAL.replace("[[wires]]", '[[ports]]\nname = "p0"\niface = "veth1"\n'
                           'mac = "02:00:00:00:00:02"\n\n[[wires]]')
    _check(tmp_path, text, "ports[1].name = 'p0' is already ports[0].name", "its own name")


def test_duplicate_wire(tmp_path: Path) -> None:
    _check(tmp_path, MINIMAL + '\n[[wires]]\ntx = "p0"\nrx = "p0"\n',
           "wires[1] repeats wires[0]", "remove the duplicate")


def test_topology_level_model_error_is_prefixed(tmp_path: Path) -> None:
    text = FULL.replace('ip = "198.19.0.2"', 'ip = "2001:db8::2"').replace(
        'peer_ip = "198.19.0.1"', 'peer_ip = "2001:db8::1"'
    )
    _check(tmp_path, text, "wire p0->p1", "of one family")


def test_config_errors_are_value_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        load_topology(_write(tmp_path, MINIMAL.replace('rx = "p0"', 'rx = "p1"')))


# ------------------------------------------------------------------ model additions


def test_portspec_queues_and_lcores_defaults_and_coercion() -> None:
    port = PortSpec("p0", "net_null0", None, "02:00:00:00:00:01", lcores=[4, 0])  # type: ignore[arg-type]
    assert port.queues == 1 and port.lcores == (4, 0)
    assert PortSpec("p0", "net_null0", None, "02:00:00:00:00:01") == PortSpec(
        "p0", "net_null0", None, "02:00:00:00:00:01", queues=1, lcores=()
    )
    hash(port)


@pytest.mark.parametrize(
    ("kw", "needle"),
    [
        ({"queues": 0}, "queues = 0"),
        ({"queues": 65}, "queues = 65"),
        ({"queues": True}, "queues = True"),
        ({"queues": 2.0}, "queues = 2.0"),
        ({"lcores": "2"}, "lcores = '2'"),
        ({"lcores": 2}, "lcores = 2"),
        ({"lcores": (1, -1)}, "lcores[1] = -1"),
        ({"lcores": (False,)}, "lcores[0] = False"),
        ({"lcores": (1, 1)}, "CPU 1 twice"),
        ({"vlan": 0}, "vlan = 0 is not a VLAN id"),
        ({"vlan": 4095}, "vlan = 4095"),
        ({"vlan": -3}, "vlan = -3"),
        ({"vlan": True}, "vlan = True"),
        ({"vlan": "100"}, "vlan = '100'"),
    ],
)
def test_portspec_rejects_bad_queues_and_lcores(kw: dict[str, object], needle: str) -> None:
    with pytest.raises(NetloadConfigError, match=re.escape(needle)) as info:
        PortSpec("p0", "net_null0", None, "02:00:00:00:00:01", **kw)  # type: ignore[arg-type]
    assert "port 'p0'" in str(info.value)


def test_topology_source_must_be_a_string() -> None:
    port = PortSpec("p0", "net_null0", None, "02:00:00:00:00:01")
    with pytest.raises(NetloadConfigError, match="source"):
        Topology("t", (port,), (Wire("p0", "p0"),), source=5)  # type: ignore[arg-type]


def test_a_topology_file_tells_the_engine_its_pci_ports_and_worker_cpus() -> None:
    import os

    from pytest_netload.plugin.fixtures import engine_resources
    from pytest_netload.topology.model import PortSpec, Topology, Wire

    ports = (PortSpec("p0", "0000:3b:00.0", None, "02:00:00:00:00:01", lcores=(2,)),
             PortSpec("p1", "0000:3b:00.1,txq_inline=0", None, "02:00:00:00:00:02", lcores=(3,)),
             PortSpec("p2", "net_null0", None, "02:00:00:00:00:03"))
    topo = Topology("lab", ports, (Wire("p0", "p1"),))
    res = engine_resources(topo)
    assert res["pci"] == ["0000:3b:00.0", "0000:3b:00.1"]
    assert res["lcores"][1:] == [2, 3]
    assert res["lcores"][0] in (os.sched_getaffinity(0) - {2, 3}) or res["lcores"][0] == 2
    assert engine_resources(None) == {}
    plain = Topology("v", ports[2:], (Wire("p2", "p2"),))
    assert engine_resources(plain) == {}
