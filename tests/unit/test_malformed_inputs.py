"""A corpus of malformed inputs: each one gets ONE clear error naming the input and the fix.

Topology files, API calls (units, streams, field ops, the rate controller, engine and port
arguments that need no running engine), marker arguments, results files and baselines.
Every case asserts the exception type and fragments of its message that name the input;
every message must also say what to do (a fix word). A case that hangs fails after
DEADLINE_S (a SIGALRM interrupts even a blocking open of a FIFO), so no case can hang the
suite, and one that reads without bound meets a memory limit (MemoryError, a failure) before
it can exhaust the machine; such files are refused before they are read.

The options and markers that need a pytest session are in tests/plugin/test_malformed_settings.py.
"""

from __future__ import annotations

import json
import os
import re
import resource
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from pytest_netload.errors import NetloadConfigError

DEADLINE_S = 10
MEMORY_HEADROOM_BYTES = 1 << 30
#: Every message says what to do: one of these words starts its fix.
FIX_WORDS = re.compile(
    r"\b(give|use|write|set|remove|rename|add|drop|quote|save|upgrade|check|declare|choose|"
    r"split|pass|make|shorten|head|move|fix|list|keep|raise|lower|leave|omit|swap|create|"
    r"open|prepend|build|replace|store|put|spell|name|delete|did you mean|must)\b",
    re.IGNORECASE)


class Hang(BaseException):
    """A case ran past DEADLINE_S (BaseException: no `except Exception` swallows it)."""


def _vm_size_bytes() -> int:
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


@contextmanager
def guarded(seconds: float) -> Iterator[None]:
    """Raise Hang after `seconds`, and MemoryError past MEMORY_HEADROOM_BYTES more address
    space: a case that regresses to an unbounded read fails, and never takes the machine."""
    def expire(signum: int, frame: FrameType | None) -> None:
        raise Hang(f"still running after {seconds} s")

    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = _vm_size_bytes() + MEMORY_HEADROOM_BYTES
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass(frozen=True)
class Bad:
    id: str
    call: Callable[[Path], Any]
    """Makes what it needs under the given directory and feeds the input in."""
    fragments: tuple[str, ...]
    """Each must appear in the message: they name the input (and often the fix)."""
    error: type[BaseException] = NetloadConfigError


CASES: list[Bad] = []


def bad(id: str, *fragments: str, error: type[BaseException] = NetloadConfigError
        ) -> Callable[[Callable[[Path], Any]], Callable[[Path], Any]]:
    def register(call: Callable[[Path], Any]) -> Callable[[Path], Any]:
        CASES.append(Bad(id, call, fragments, error))
        return call
    return register


# ---- topology files --------------------------------------------------------------------

# a valid topology file the malformed cases are made from (shared with the other corpus)
GOOD_TOML = (Path(__file__).parents[1] / "data" / "lab-topology.toml").read_text()


def _load_text(tmp: Path, text: str | bytes) -> Any:
    from pytest_netload.topology.toml import load_topology

    path = tmp / "lab.toml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return load_topology(path)


def _edit(old: str, new: str, count: int = 1) -> Callable[[Path], Any]:
    assert old in GOOD_TOML, old
    return lambda tmp: _load_text(tmp, GOOD_TOML.replace(old, new, count))


TOPOLOGY_EDITS: list[tuple[str, str, str, tuple[str, ...]]] = [
    # id, old, new, fragments
    ("topology-name-integer", 'name = "lab"', "name = 5",
     ("topology.name = 5", "letters, digits")),
    ("topology-name-with-space", 'name = "lab"', 'name = "my lab"',
     ("topology.name = 'my lab'",)),
    ("topology-misspelt-table", "[topology]", "[topologie]",
     ("unknown top-level key 'topologie'", "did you mean 'topology'")),
    ("topology-line-rate-word", 'name = "lab"', 'name = "lab"\nline_rate = "fast"',
     ("topology.line_rate", "'fast'")),
    ("topology-line-rate-boolean", 'name = "lab"', 'name = "lab"\nline_rate = true',
     ("topology.line_rate = True", "a boolean")),
    ("topology-line-rate-float", 'name = "lab"', 'name = "lab"\nline_rate = 1e10',
     ("topology.line_rate = 10000000000.0", "a float")),
    ("topology-line-rate-percent", 'name = "lab"', 'name = "lab"\nline_rate = "95%"',
     ("topology.line_rate = '95%'", "bit rate")),
    ("topology-line-rate-negative", 'name = "lab"', 'name = "lab"\nline_rate = -1',
     ("topology.line_rate = -1", "not above zero")),
    ("topology-namespace-command", 'name = "lab"', 'name = "lab"\nnamespace = "x;reboot"',
     ("topology.namespace", "'x;reboot'", "namespace name")),
    ("topology-namespace-path", 'name = "lab"', 'name = "lab"\nnamespace = "../etc"',
     ("topology.namespace", "'../etc'")),
    ("topology-namespace-empty", 'name = "lab"', 'name = "lab"\nnamespace = ""',
     ("topology.namespace = ''",)),
    ("topology-table-is-array", "[topology]\nname = \"lab\"\n", "topology = [1]\n",
     ("topology = [1] is an array",)),
    ("port-misspelt-key", 'mac = "02:00:00:00:00:01"',
     'mac = "02:00:00:00:00:01"\npeer-mac = "02:00:00:00:00:09"',
     ("ports[0].peer-mac", "did you mean 'peer_mac'")),
    ("capabilities-policer-word", "[[ports]]", '[capabilities]\npolicer = "fast"\n\n[[ports]]',
     ("capabilities.policer", "'fast'")),
    ("capabilities-unknown-key", "[[ports]]", "[capabilities]\nports = 4\n\n[[ports]]",
     ("capabilities.ports is not a known key", "use one of policer, policer_cbs")),
    ("port-missing-name", 'name = "p0"\n', "", ("ports[0].name is missing",)),
    ("port-no-device-no-iface", 'device = "net_null0"\n', "",
     ("ports[0] has neither device nor iface",)),
    ("port-mac-five-octets", '"02:00:00:00:00:01"', '"02:00:00:00:00"',
     ("ports[0].mac = '02:00:00:00:00'", "not a MAC address")),
    ("port-mac-integer", 'mac = "02:00:00:00:00:01"', "mac = 2",
     ("ports[0].mac = 2", "quoted string")),
    ("port-mac-multicast", '"02:00:00:00:00:01"', '"01:00:5e:00:00:01"',
     ("ports[0]", "'01:00:5e:00:00:01' is a multicast address")),
    ("port-ip-out-of-range", 'mac = "02:00:00:00:00:01"',
     'mac = "02:00:00:00:00:01"\nip = "300.1.1.1"', ("ports[0].ip = '300.1.1.1'",)),
    ("port-ip-with-bad-prefix", 'mac = "02:00:00:00:00:01"',
     'mac = "02:00:00:00:00:01"\nip = "198.18.0.2/33"',
     ("ports[0].ip = '198.18.0.2/33'", "prefix length")),
    ("port-peer-outside-subnet", 'mac = "02:00:00:00:00:01"',
     'mac = "02:00:00:00:00:01"\nip = "198.18.0.2/24"\npeer_ip = "10.9.0.1"',
     ("peer_ip = '10.9.0.1' is not in the port's subnet 198.18.0.0/24",)),
    ("port-ip-families-mixed", 'mac = "02:00:00:00:00:01"',
     'mac = "02:00:00:00:00:01"\nip = "198.18.0.2"\npeer_ip = "2001:db8::1"',
     ("ports[0]", "mix IPv4 and IPv6")),
    ("port-queues-zero", 'mac = "02:00:00:00:00:01"', 'mac = "02:00:00:00:00:01"\nqueues = 0',
     ("ports[0]", "queues = 0")),
    ("port-queues-quoted", 'mac = "02:00:00:00:00:01"',
     'mac = "02:00:00:00:00:01"\nqueues = "2"', ("ports[0].queues = '2'", "without quotes")),
    ("port-lcores-string", 'mac = "02:00:00:00:00:01"',
     'mac = "02:00:00:00:00:01"\nlcores = "2,3"', ("ports[0].lcores = '2,3'", "array")),
    ("port-lcores-negative", 'mac = "02:00:00:00:00:01"',
     'mac = "02:00:00:00:00:01"\nlcores = [-1]', ("lcores[0] = -1",)),
    ("port-lcores-twice", 'mac = "02:00:00:00:00:01"',
     'mac = "02:00:00:00:00:01"\nlcores = [1, 1]', ("lcores lists CPU 1 twice",)),
    ("port-iface-injects-device-args", 'device = "net_null0"', 'iface = "lo,qpairs=16"',
     ("ports[0]", "iface = 'lo,qpairs=16'", "','")),
    ("port-iface-with-equals", 'device = "net_null0"', 'iface = "eth0=1"',
     ("iface = 'eth0=1'", "'='")),
    ("port-iface-too-long", 'device = "net_null0"', 'iface = "' + "a" * 16 + '"',
     ("iface = '" + "a" * 16 + "'", "15 characters")),
    ("port-iface-with-colon", 'device = "net_null0"', 'iface = "eth0:1"',
     ("iface = 'eth0:1'", "':'")),
    ("port-iface-dot", 'device = "net_null0"', 'iface = ".."', ("iface = '..'",)),
    ("port-iface-tab", 'device = "net_null0"', 'iface = "eth\\t0"', ("iface = 'eth\\t0'",)),
    ("port-device-with-space", 'device = "net_null0"', 'device = "net_null0 x"',
     ("device = 'net_null0 x'", "DPDK device")),
    ("port-device-with-semicolon", 'device = "net_null0"', 'device = "net_null0;reboot"',
     ("device = 'net_null0;reboot'",)),
    ("port-device-bad-iface-argument", 'device = "net_null0"',
     'device = "net_af_packet0,iface=a/b"', ("device = 'net_af_packet0,iface=a/b'", "'/'")),
    ("port-device-empty-key", 'device = "net_null0"', 'device = "net_null0,=1"',
     ("device = 'net_null0,=1'", "'=1'")),
    ("port-names-repeated", 'name = "p1"', 'name = "p0"',
     ("ports[1].name = 'p0' is already ports[0].name",)),
    ("ports-single-brackets", "[[ports]]\nname = \"p1\"", "[ports2]\nname = \"p1\"",
     ("unknown top-level key 'ports2'",)),
    ("wire-unknown-port", 'rx = "p1"', 'rx = "p9"',
     ("wires[0].rx = 'p9' is not a declared port", "['p0', 'p1']")),
    ("wire-missing-rx", 'rx = "p1"\n', "", ("wires[0].rx is missing",)),
    ("wire-repeated", 'tx = "p0"\nrx = "p1"\n', 'tx = "p0"\nrx = "p1"\n[[wires]]\ntx = "p0"\n'
     'rx = "p1"\n', ("wires[1] repeats wires[0]",)),
    ("wires-missing", '[[wires]]\ntx = "p0"\nrx = "p1"\n', "", ("wires is missing",)),
    ("dut-number", 'name = "lab"\n', 'name = "lab"\n[dut]\nfirmware = 12\n',
     ("dut.firmware = 12", "quote it")),
    ("toml-unclosed-string", 'name = "lab"', 'name = "lab', ("lab.toml:2", "TOML syntax")),
]

for _id, _old, _new, _fragments in TOPOLOGY_EDITS:
    CASES.append(Bad(_id, _edit(_old, _new), _fragments))


@bad("topology-empty-file", "[topology] table is missing")
def _(tmp: Path) -> Any:
    return _load_text(tmp, "")


@bad("topology-ports-single-table", "ports is a single table", "[[ports]]")
def _(tmp: Path) -> Any:
    return _load_text(tmp, GOOD_TOML.replace("[[ports]]", "[ports]", 1).replace(
        '[[ports]]\nname = "p1"\ndevice = "net_null1"\nmac = "02:00:00:00:00:02"\n', ""))


@bad("ports-as-strings", "ports[0] = 'p0' is a string", "[[ports]]")
def _(tmp: Path) -> Any:
    body = GOOD_TOML[:GOOD_TOML.index("[[ports]]")] + GOOD_TOML[GOOD_TOML.index("[[wires]]"):]
    return _load_text(tmp, 'ports = ["p0", "p1"]\n' + body)


@bad("topology-binary-garbage", "lab.toml", "not UTF-8")
def _(tmp: Path) -> Any:
    return _load_text(tmp, bytes(range(256)) * 4)


@bad("topology-control-characters", "lab.toml", "TOML syntax")
def _(tmp: Path) -> Any:
    return _load_text(tmp, "\x00\x01\x02 = 1\n")


@bad("topology-huge-file", "lab.toml", "1 MiB")
def _(tmp: Path) -> Any:
    return _load_text(tmp, GOOD_TOML + ("# padding " * 100 + "\n") * 2100)


@bad("topology-nested-arrays", "lab.toml", "nested")
def _(tmp: Path) -> Any:
    return _load_text(tmp, GOOD_TOML + "x = " + "[" * 100_000 + "]" * 100_000 + "\n")


@bad("topology-fifo", "lab.toml", "not a regular file", "FIFO")
def _(tmp: Path) -> Any:
    from pytest_netload.topology.toml import load_topology

    os.mkfifo(tmp / "lab.toml")
    return load_topology(tmp / "lab.toml")


@bad("topology-directory", "lab.toml", "directory")
def _(tmp: Path) -> Any:
    from pytest_netload.topology.toml import load_topology

    (tmp / "lab.toml").mkdir()
    return load_topology(tmp / "lab.toml")


@bad("topology-dev-zero", "/dev/zero", "not a regular file")
def _(tmp: Path) -> Any:
    from pytest_netload.topology.toml import load_topology

    return load_topology("/dev/zero")


@bad("topology-missing-file", "nothing.toml", "No such file")
def _(tmp: Path) -> Any:
    from pytest_netload.topology.toml import load_topology

    return load_topology(tmp / "nothing.toml")


# ---- the topology model and engine arguments --------------------------------------------


def _port(**kw: Any) -> Any:
    from pytest_netload.topology.model import PortSpec

    args: dict[str, Any] = {"name": "p0", "device": None, "iface": "veth0",
                            "mac": "02:00:00:00:00:01"}
    return PortSpec(**{**args, **kw})


@bad("model-iface-injects-device-args", "iface = 'lo,qpairs=16'")
def _(tmp: Path) -> Any:
    return _port(iface="lo,qpairs=16")


@bad("model-device-with-newline", "device = 'net_null0\\nx'")
def _(tmp: Path) -> Any:
    return _port(device="net_null0\nx")


@bad("model-namespace-command", "namespace", "'x;y'")
def _(tmp: Path) -> Any:
    from pytest_netload.topology.model import Topology, Wire

    return Topology("t", (_port(),), (Wire("p0", "p0"),), namespace="x;y")


@bad("engine-lcores-beyond-the-machine", "lcores", "99999", "CPUs")
def _(tmp: Path) -> Any:
    from pytest_netload.engine.client import Engine

    return Engine(lcores=[99999])


@bad("engine-lcores-text", "lcores", "'a'")
def _(tmp: Path) -> Any:
    from pytest_netload.engine.client import Engine

    return Engine(lcores=["a"])


@bad("engine-memory-negative", "memory_mb=-1")
def _(tmp: Path) -> Any:
    from pytest_netload.engine.client import Engine

    return Engine(memory_mb=-1)


@bad("engine-port-device-command", "'net_null0 ; reboot'")
def _(tmp: Path) -> Any:
    from pytest_netload.engine.client import Engine

    return Engine().port("net_null0 ; reboot")


@bad("engine-port-device-empty", "port device = ''")
def _(tmp: Path) -> Any:
    from pytest_netload.engine.client import Engine

    return Engine().port("")


@bad("engine-port-device-number", "port device = 5")
def _(tmp: Path) -> Any:
    from pytest_netload.engine.client import Engine

    return Engine().port(5)  # type: ignore[arg-type]


@bad("engine-port-device-iface-path", "'net_af_packet0,iface=a/b'", "iface")
def _(tmp: Path) -> Any:
    from pytest_netload.engine.client import Engine

    return Engine().port("net_af_packet0,iface=a/b")


@bad("reference-dut-delay-1e9s", "reference DUT delay", "24 h")
def _(tmp: Path) -> Any:
    from pytest_netload.bench.reference import ReferenceDut

    return ReferenceDut(None, delay="1e9s")  # type: ignore[arg-type]


@bad("ramp-step-1e9s", "ramp step 0 duration", "24 h")
def _(tmp: Path) -> Any:
    from pytest_netload.traffic.patterns import Ramp

    return Ramp([("1Mpps", "1e9s")])


# ---- units -------------------------------------------------------------------------------


def _units(expr: str) -> Callable[[Path], Any]:
    def call(tmp: Path) -> Any:
        from pytest_netload import units

        return eval(expr, {"Rate": units.Rate, "Duration": units.Duration,  # noqa: S307
                           "Size": units.Size})
    return call


UNIT_CASES = [
    ("rate-word", "Rate('fast')", ("rate 'fast'",)),
    ("rate-huge-exponent", "Rate('1e999pps')", ("rate '1e999pps'", "too large")),
    ("rate-nan", "Rate('nan pps')", ("rate 'nan pps'", "not finite")),
    ("rate-no-unit", "Rate(5)", ("rate 5 has no unit",)),
    ("rate-boolean", "Rate(True, 'pps')", ("rate (True, 'pps')", "bool")),
    ("rate-over-100-percent", "Rate('101%')", ("rate '101%'", "exceeds 100%")),
    ("rate-unknown-layer", "Rate('1Gbit/s@l3')", ("'1Gbit/s@l3'", "layer 'l3'")),
    ("rate-5000-digits", "Rate('9' * 5000 + 'pps')", ("rate '999", "5,003 characters")),
    ("duration-word", "Duration('forever')", ("duration 'forever'",)),
    ("duration-negative", "Duration('-1s')", ("duration '-1s' is negative",)),
    ("duration-huge-exponent", "Duration('1e999s')", ("duration '1e999s'", "too long")),
    ("duration-list", "Duration([1])", ("duration [1] is a list",)),
    ("size-kilobytes", "Size('64kB')", ("frame size '64kB'", "cannot parse")),
    ("size-below-ethernet", "Size(63)", ("frame size 63", "64..9604")),
    ("size-float", "Size(1.5)", ("frame size 1.5", "whole number")),
    ("size-5000-digits", "Size('9' * 5000)", ("frame size '999", "5,000 characters")),
]
for _id, _expr, _fragments in UNIT_CASES:
    CASES.append(Bad(_id, _units(_expr), _fragments))


# ---- streams, templates and field ops ----------------------------------------------------


def _udp(**kw: Any) -> Callable[[Path], Any]:
    def call(tmp: Path) -> Any:
        from pytest_netload.traffic.streams import udp

        return udp(**kw)
    return call


UDP_CASES = [
    ("udp-sport-70000", {"sport": 70000}, ("sport=70000", "0 to 65535")),
    ("udp-dport-negative", {"dport": -1}, ("dport=-1", "0 to 65535")),
    ("udp-flows-zero", {"flows": 0}, ("flows=0",)),
    ("udp-flows-70000", {"flows": 70000}, ("flows=70000", "64512")),
    ("udp-flows-past-last-port", {"sport": 65000, "flows": 1000}, ("flows=1000", "536")),
    ("udp-flows-text", {"flows": "8"}, ("flows='8'",)),
    ("udp-size-63", {"size": 63}, ("frame size 63",)),
    ("udp-size-preset-unknown", {"size": "jumbo"}, ("size 'jumbo' is not a preset",)),
    ("udp-size-weight-zero", {"size": {64: 0}}, ("weight 0",)),
    ("udp-src-not-an-address", {"src": "300.1.1.1"}, ("src='300.1.1.1'",)),
    ("udp-addresses-mixed", {"src": "198.18.0.2", "dst": "2001:db8::2"},
     ("src='198.18.0.2'", "dst='2001:db8::2'")),
    ("udp-stamp-every-zero", {"stamp_every": 0}, ("stamp_every=0",)),
    ("udp-name-empty", {"name": ""}, ("stream name ''",)),
]
for _id, _kw, _fragments in UDP_CASES:
    CASES.append(Bad(_id, _udp(**_kw), _fragments))


def _template() -> Any:
    from pytest_netload.traffic.packets import UDP, Eth, IPv4

    return (Eth() / IPv4() / UDP()).build()


def _stream(**kw: Any) -> Callable[[Path], Any]:
    def call(tmp: Path) -> Any:
        from pytest_netload.traffic.streams import Stream

        return Stream(kw.pop("template", None) or _template(), **kw)
    return call


STREAM_CASES = [
    ("stream-size-list-empty", {"size": []}, ("size list []",)),
    ("stream-name-newline", {"name": "a\nb"}, ("stream name 'a\\nb'", "printable")),
    ("stream-seed-negative", {"seed": -1}, ("stream seed -1",)),
    ("stream-field-not-op", {"fields": ["x"]}, ("stream field 'x' is not a FieldOp",)),
    ("stream-template-text", {"template": "eth/ip/udp"}, ("template 'eth/ip/udp'",)),
    ("stream-size-beyond-jumbo", {"size": 10000}, ("frame size 10000", "jumbo limit")),
]
for _id, _kw, _fragments in STREAM_CASES:
    CASES.append(Bad(_id, _stream(**_kw), _fragments))


def _field(*args: Any, **kw: Any) -> Callable[[Path], Any]:
    def call(tmp: Path) -> Any:
        from pytest_netload.traffic.packets import field

        return field(_template(), *args, **kw)
    return call


FIELD_CASES = [
    ("field-min-too-wide", ("udp.sport", "inc"), {"min": 70000}, ("field 'udp.sport'", "70000")),
    ("field-unknown-name", ("nope", "inc"), {}, ("field 'nope' is not in this template",)),
    ("field-unknown-op", ("udp.sport", "rotate"), {}, ("op 'rotate' is unknown",)),
    ("field-offset-huge", (10**30, "inc"), {"width": 2}, ("field at offset 1000000000000",)),
    ("field-min-above-max", ("udp.sport", "inc"), {"min": 10, "max": 5}, ("min 10 > max 5",)),
    ("field-set-text", ("udp.sport", "set"), {"value": "x"}, ("value='x'",)),
]
for _id, _args, _kw, _fragments in FIELD_CASES:
    CASES.append(Bad(_id, _field(*_args, **_kw), _fragments))


# ---- the rate controller's arguments (checked before anything is loaded) -----------------


class _FakePort:
    device = "net_null0"
    driver = "net_null"
    info: dict[str, Any] = {}


def _controller(**kw: Any) -> Any:
    from pytest_netload.bench.ratecontrol import RateController

    return RateController(None, _FakePort(), **kw)  # type: ignore[arg-type]


def _run(*args: Any, **kw: Any) -> Callable[[Path], Any]:
    def call(tmp: Path) -> Any:
        from pytest_netload.traffic.streams import Stream

        stream = Stream(_template())
        return _controller().run(*(args or (stream,)), **kw)
    return call


@bad("controller-tolerance-text", "tolerance 'x'")
def _(tmp: Path) -> Any:
    return _controller(tolerance="x")


RUN_CASES = [
    ("run-rate-word", (), {"rate": "fast"}, ("rate 'fast'",)),
    ("run-pattern-unknown", (), {"rate": "1kpps", "pattern": "zigzag"}, ("pattern 'zigzag'",)),
    ("run-duration-1e9s", (), {"rate": "1kpps", "duration": "1e9s"}, ("duration '1e9s'", "24 h")),
    ("run-count-negative", (), {"count": -1}, ("count=-1",)),
    ("run-count-text", (), {"count": "5"}, ("count='5'",)),
    ("run-drain-negative", (), {"count": 5, "drain": "-1s"}, ("drain '-1s'",)),
    ("run-seed-text", (), {"count": 5, "seed": "x"}, ("seed='x'",)),
    ("run-timing-samples-negative", (), {"count": 5, "timing_samples": -1},
     ("timing_samples=-1",)),
    ("run-no-streams", ([],), {"count": 5}, ("streams: the list is empty",)),
]
for _id, _args, _kw, _fragments in RUN_CASES:
    CASES.append(Bad(_id, _run(*_args, **_kw), _fragments))


@bad("run-weight-negative", "stream weight -1")
def _(tmp: Path) -> Any:
    from pytest_netload.traffic.streams import Stream

    return _controller().run([(Stream(_template()), -1)], count=5)


# ---- marker arguments (the plugin parses them at collection) ----------------------------


def _mark(name: str, **kw: Any) -> Callable[[Path], Any]:
    def call(tmp: Path) -> Any:
        from pytest_netload.plugin.markers import parse_netload, parse_rfc2544

        mark = getattr(pytest.mark, name)(**kw).mark
        return (parse_netload if name == "netload" else parse_rfc2544)(mark)
    return call


MARKER_CASES: list[tuple[str, str, dict[str, Any], tuple[str, ...]]] = [
    ("netload-duration-1e9s", "netload", {"duration": "1e9s"}, ("duration '1e9s'", "24 h")),
    ("rfc2544-time-budget-1e9s", "rfc2544", {"search": "mlrsearch", "time_budget": "1e9s"},
     ("time_budget", "'1e9s'", "24 h")),
    ("rfc2544-trial-duration-nan", "rfc2544", {"trial_duration": float("nan")},
     ("trial_duration nan", "not finite")),
    ("rfc2544-frame-sizes-word", "rfc2544", {"frame_sizes": "jumbo"},
     ("frame_sizes='jumbo'", "list")),
    ("rfc2544-loss-tolerance-2", "rfc2544", {"loss_tolerance": 2}, ("loss_tolerance=2",)),
    ("rfc2544-loss-tolerance-nan", "rfc2544", {"loss_tolerance": float("nan")},
     ("loss_tolerance=nan",)),
    ("rfc2544-warmup-25h", "rfc2544", {"warmup": "25h"}, ("warmup '25h'", "24 h")),
    ("rfc2544-drain-negative", "rfc2544", {"drain": -1}, ("drain -1", "negative")),
    ("rfc2544-learning-frames-negative", "rfc2544", {"learning_frames": -1},
     ("learning_frames=-1",)),
    ("rfc2544-retries-text", "rfc2544", {"retries": "2"}, ("retries='2'",)),
    ("rfc2544-flows-70000", "rfc2544", {"flows": 70000}, ("flows=70000",)),
    ("rfc2544-max-rate-word", "rfc2544", {"max_rate": "fast"}, ("max_rate 'fast'",)),
    ("rfc2544-goals-number", "rfc2544", {"search": "mlrsearch", "goals": 5}, ("goals=5",)),
    ("rfc2544-goals-tuples", "rfc2544", {"search": "mlrsearch", "goals": [("x", 0.1)]},
     ("goals", "('x', 0.1)", "LossGoal")),
    ("rfc2544-steady-state-none", "rfc2544", {"steady_state": None}, ("steady_state=None",)),
    ("rfc2544-max-trials-huge", "rfc2544", {"max_trials": 10**9}, ("max_trials=1000000000",)),
    ("rfc2544-wire-negative", "rfc2544", {"wire": -1}, ("wire=-1",)),
    ("rfc2544-resolution-huge-int", "rfc2544", {"resolution": 10**400},
     ("resolution=1000", "ratio of the lower bound")),
    ("netload-flows-boolean", "netload", {"flows": True}, ("flows=True",)),
    ("netload-pattern-number", "netload", {"pattern": 5}, ("pattern 5",)),
    ("netload-rate-nan", "netload", {"rate": float("nan")},
     ("rate nan", "not a positive finite number")),
    ("netload-rate-negative", "netload", {"rate": -1}, ("rate -1",)),
    ("netload-unknown-argument", "netload", {"bogus": 1}, ("unknown argument 'bogus'",)),
    ("netload-frame-sizes-word-inside", "netload", {"frame_sizes": [64, "jumbo"]},
     ("'jumbo' is not a frame size",)),
]
for _id, _name, _kw, _fragments in MARKER_CASES:
    CASES.append(Bad(_id, _mark(_name, **_kw), _fragments))


# ---- the RFC 2544 procedures' traffic: VLANs, streams against their wire, direction --------

CASES.append(Bad("port-vlan-4095", _edit('mac = "02:00:00:00:00:01"',
                                         'mac = "02:00:00:00:00:01"\nvlan = 4095'),
                 ("ports[0]: port 'p0': vlan = 4095", "1 to 4094")))
CASES.append(Bad("port-vlan-quoted", _edit('mac = "02:00:00:00:00:01"',
                                           'mac = "02:00:00:00:00:01"\nvlan = "100"'),
                 ("ports[0].vlan = '100' is a string",)))
for _id, _kw, _fragments in [
        ("udp-vlan-0", {"vlan": 0}, ("vlan=0", "1 to 4094")),
        ("udp-vlan-three-tags", {"vlan": (1, 2, 3)}, ("vlan=(1, 2, 3)", "(outer, inner)")),
        ("udp-dst-ips-zero", {"dst_ips": 0}, ("dst_ips=0",)),
        ("udp-src-ips-huge", {"src_ips": 1 << 20}, ("src_ips=1048576",))]:
    CASES.append(Bad(_id, _udp(**_kw), _fragments))


def _wire_flow(**p0: Any) -> Any:
    from pytest_netload.topology.model import PortSpec, Topology, Wire

    ports = (PortSpec("p0", "net_null0", None, "02:00:00:00:00:01", ip="198.18.0.2",
                      peer_mac="02:00:00:00:01:01", peer_ip="198.18.0.1", **p0),
             PortSpec("p1", "net_null1", None, "02:00:00:00:00:02", ip="198.19.0.2",
                      peer_mac="02:00:00:00:01:02", peer_ip="198.19.0.1"))
    return Topology("lab", ports, (Wire("p0", "p1"),))


def _on_wire(stream: Callable[[], Any], size: int | str = 128, **p0: Any
             ) -> Callable[[Path], Any]:
    def call(tmp: Path) -> Any:
        from pytest_netload.traffic.mix import as_mix

        topology = _wire_flow(**p0)
        return as_mix(stream()).streams_for(topology.flows()[0], size, ports=topology.ports)
    return call


def _layers(dst_mac: str = "02:00:00:00:01:01", src: str = "198.18.0.2",
            dst: str = "198.19.0.2", v6: bool = False) -> Callable[[], Any]:
    def make() -> Any:
        from pytest_netload.traffic.packets import UDP, Eth, IPv4, IPv6

        ip = IPv6(src="2001:db8::1", dst="2001:db8::2") if v6 else IPv4(src=src, dst=dst)
        return Eth(dst=dst_mac, src="02:00:00:00:00:01") / ip / UDP()
    return make


def _mix(value: Callable[[], Any]) -> Callable[[Path], Any]:
    def call(tmp: Path) -> Any:
        from pytest_netload.traffic.mix import as_mix

        return as_mix(value())
    return call


def _spec(kind: str = "udp", **kw: Any) -> Callable[[], Any]:
    def make() -> Any:
        from pytest_netload.traffic import streams

        return getattr(streams, kind)(**kw)
    return make


TRAFFIC_CASES: list[tuple[str, Callable[[Path], Any], tuple[str, ...]]] = [
    ("stream-template-wrong-dst-mac", _on_wire(_layers(dst_mac="02:00:00:00:00:02")),
     ("wire p0->p1", "02:00:00:00:00:02", "02:00:00:00:01:01", "port p0's peer_mac")),
    ("stream-ipv6-on-ipv4-wire", _on_wire(_layers(v6=True)),
     ("wire p0->p1", "IPv6", "port p0's ip 198.18.0.2 is IPv4")),
    ("stream-dst-is-the-sender", _on_wire(_layers(src="198.19.0.2", dst="198.18.0.2")),
     ("destination IP 198.18.0.2 is port p0's ip", "port p1 (198.19.0.2)")),
    ("stream-dst-is-the-dut-on-the-sending-side", _on_wire(_layers(dst="198.18.0.1")),
     ("198.18.0.1 is port p0's peer_ip",)),
    ("stream-udp-dst-ips-past-the-end",
     _on_wire(_spec(dst="255.255.255.250", dst_ips=10)),
     ("dst_ips=10 from 255.255.255.250", "end of the address space")),
    ("stream-vlan-port-64B", _on_wire(_spec(), size=64, vlan=100),
     ("wire p0->p1", "frame size 64", "VLAN 100", "at least 66 B")),
    ("stream-tcp-flags-word", _mix(_spec("tcp", flags="XYZ")), ("TCP flags='XYZ'",)),
    ("stream-imix-as-stream", _mix(lambda: "imix"),
     ("stream='imix' is a frame size", "frame_sizes=['imix']")),
    ("stream-own-size", _mix(_spec(size=128)), ("size=128", "frame sizes apply")),
    ("stream-weight-zero", _mix(lambda: [(_spec()(), 0)]), ("stream weight 0",)),
    ("stream-list-empty", _mix(lambda: []), ("stream=[] is empty",)),
    ("stream-number", _mix(lambda: 5), ("stream=5 is not a stream", "udp(...)")),
]
for _id, _call, _fragments in TRAFFIC_CASES:
    CASES.append(Bad(_id, _call, _fragments))

def _pair() -> Any:
    from pytest_netload.traffic.mix import bidirectional
    from pytest_netload.traffic.streams import udp

    return bidirectional(udp(), udp(name="back"))


for _id, _kw, _fragments in [
        ("rfc2544-direction-sideways", {"direction": "sideways"},
         ("direction='sideways'", "'one'", "'both'")),
        ("rfc2544-stream-and-flows", {"flows": 8, "stream": _spec()()},
         ("flows=8", "stream= gives the traffic")),
        ("rfc2544-stream-own-size", {"stream": _spec(size=256)()}, ("size=256",)),
        ("rfc2544-pair-one-way", {"stream": _pair()},
         ("bidirectional(...)", "direction='both'"))]:
    CASES.append(Bad(_id, _mark("rfc2544", **_kw), _fragments))


@bad("rfc2544-both-ways-on-one-wire", "direction='both'", "topology 'lab'", "p1->p0",
     "its one wire is p0->p1")
def _(tmp: Path) -> Any:
    from pytest_netload.plugin.markers import TopologyFacts, check_against_topology, parse_rfc2544

    mark = parse_rfc2544(pytest.mark.rfc2544(direction="both").mark)
    check_against_topology(mark, TopologyFacts("lab", ("p0->p1",), None, None, "the file"))


@bad("rfc2544-both-ways-on-a-hairpin", "wire 0 of topology 'loop'", "hairpin")
def _(tmp: Path) -> Any:
    from pytest_netload.bench.harness import WiredPorts
    from pytest_netload.bench.lanes import plan_wires
    from pytest_netload.topology.model import PortSpec, Topology, Wire

    topology = Topology("loop", (PortSpec("p0", "net_null0", None, "02:00:00:00:00:01"),),
                        (Wire("p0", "p0"),))
    return plan_wires(WiredPorts(topology, {"p0": object()}), 0, "both")  # type: ignore[dict-item]


# ---- results files and baselines ----------------------------------------------------------

SAMPLE = Path(__file__).parent.parent / "data" / "results-sample.json"
GOOD_RESULTS = SAMPLE.read_text()


def _replaced(key: str, text: str) -> str:
    """GOOD_RESULTS with the first number under `key` replaced by `text`."""
    out, n = re.subn(rf'("{key}": )-?[0-9][0-9.eE+-]*', lambda m: m.group(1) + text,
                     GOOD_RESULTS, count=1)
    assert n == 1, key
    return out


NESTED_ARRAYS = "[" * 100_000 + "]" * 100_000
NESTED_OBJECTS = '{"a":' * 100_000 + "1" + "}" * 100_000


def _results(text: str | bytes | None, *, make: str = "file") -> Callable[[Path], Any]:
    def call(tmp: Path) -> Any:
        from pytest_netload.reports.load import load

        path = tmp / "results.json"
        if make == "fifo":
            os.mkfifo(path)
        elif make == "directory":
            path.mkdir()
        elif make == "dev-zero":
            path = Path("/dev/zero")
        elif isinstance(text, bytes):
            path.write_bytes(text)
        elif text is not None:
            path.write_text(text)
        return load(path)
    return call


RESULTS_CASES: list[tuple[str, Callable[[Path], Any], tuple[str, ...]]] = [
    ("results-truncated", _results(GOOD_RESULTS[:200]), ("results.json", "truncated")),
    ("results-not-json", _results("schema_version: 1.0"), ("results.json", "not valid JSON")),
    ("results-empty", _results(""), ("results.json", "is empty")),
    ("results-binary", _results(bytes(range(256))), ("results.json", "not UTF-8")),
    ("results-top-level-list", _results("[1, 2]"), ("results.json", "top level is a list")),
    ("results-no-schema-version", _results('{"tests": []}'),
     ("results.json", "no schema_version")),
    ("results-newer-schema", _results(GOOD_RESULTS.replace('"1.0"', '"9.0"')),
     ("results.json", "newer", "upgrade")),
    ("results-throughput-word", _results(_replaced("throughput_pps", '"fast"')),
     ("throughput_pps", "'fast' is not of type")),
    ("results-throughput-nan", _results(_replaced("throughput_pps", "NaN")),
     ("$.tests[0].measurements[1].throughput_pps", "NaN", "finite")),
    ("results-throughput-infinity", _results(_replaced("throughput_pps", "Infinity")),
     ("throughput_pps", "Infinity", "finite")),
    ("results-duration-minus-infinity", _results(_replaced("duration_s", "-Infinity")),
     ("duration_s", "-Infinity", "finite")),
    ("results-nested-arrays", _results(NESTED_ARRAYS), ("results.json", "nested")),
    ("results-nested-objects", _results(NESTED_OBJECTS), ("results.json", "nested")),
    ("results-nested-in-a-field", _results(GOOD_RESULTS.replace(
        '"settings": {', '"settings": {"a": ' + '{"a":' * 500 + "1" + "}" * 500 + ", ")),
     ("results.json", "$.settings")),
    ("results-directory", _results(None, make="directory"), ("results.json", "directory")),
    ("results-fifo", _results(None, make="fifo"), ("results.json", "not a regular file")),
    ("results-dev-zero", _results(None, make="dev-zero"), ("/dev/zero", "not a regular file")),
    ("results-missing", _results(None), ("results.json", "no such file")),
]
for _id, _call, _fragments in RESULTS_CASES:
    CASES.append(Bad(_id, _call, _fragments))


def _baseline(text: str | None, *, name: str = "main", make: str = "file"
              ) -> Callable[[Path], Any]:
    def call(tmp: Path) -> Any:
        from pytest_netload.reports.baseline import load_baseline

        path = tmp / "main.json"
        if make == "directory":
            path.mkdir()
        elif make == "fifo":
            os.mkfifo(path)
        elif text is not None:
            path.write_text(text)
        return load_baseline(name, tmp)
    return call


BASELINE_CASES: list[tuple[str, Callable[[Path], Any], tuple[str, ...]]] = [
    ("baseline-directory", _baseline(None, make="directory"), ("main.json", "is a directory")),
    ("baseline-fifo", _baseline(None, make="fifo"), ("main.json", "not a regular file")),
    ("baseline-truncated", _baseline(GOOD_RESULTS[:200]), ("main.json", "truncated")),
    ("baseline-throughput-nan", _baseline(_replaced("throughput_pps", "NaN")),
     ("main.json", "throughput_pps", "finite")),
    ("baseline-newer-schema", _baseline(GOOD_RESULTS.replace('"1.0"', '"9.0"')),
     ("main.json", "'9.0' is newer")),
    ("baseline-nested-arrays", _baseline(NESTED_ARRAYS), ("main.json", "nested")),
    ("baseline-not-json", _baseline("{oops}"), ("main.json", "not valid JSON")),
    ("baseline-missing", _baseline(None), ("baseline 'main' not found",)),
    ("baseline-name-escapes", _baseline(None, name="../x"), ("baseline name '../x'",)),
    ("baseline-top-level-list", _baseline("[1]"), ("main.json", "not a JSON object")),
]
for _id, _call, _fragments in BASELINE_CASES:
    CASES.append(Bad(_id, _call, _fragments))


# ---- the test ----------------------------------------------------------------------------


def test_the_corpus_is_large_and_its_ids_unique() -> None:
    ids = [c.id for c in CASES]
    assert len(set(ids)) == len(ids), sorted(i for i in ids if ids.count(i) > 1)
    assert len(CASES) >= 80


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_malformed_input_gets_one_clear_error(case: Bad, tmp_path: Path) -> None:
    with guarded(DEADLINE_S):
        with pytest.raises(case.error) as info:
            case.call(tmp_path)
    message = str(info.value)
    for fragment in case.fragments:
        assert fragment in message, f"{fragment!r} not in the message: {message}"
    assert FIX_WORDS.search(message), f"the message says no fix: {message}"
    assert "Traceback" not in message and len(message) < 2000, message


# ---- free text that must be drawn as it is, not refused ---------------------------------

DOLLARS = ("rx $^$ probe", "a$_$", "$\\frac$", "cost $5")


@pytest.mark.parametrize("text", DOLLARS)
def test_dollars_in_names_are_drawn_as_text_in_the_report(text: str) -> None:
    """matplotlib reads "$...$" as TeX: a stream name or test id with '$' once killed the
    report at the end of the session. Plots take free text literally."""
    from markupsafe import escape

    from pytest_netload.reports import html

    doc = json.loads((Path(__file__).parent.parent / "data" / "results-full.json").read_text())
    for test in doc["tests"]:
        test["nodeid"] += f"[{text}]"
        for m in test["measurements"]:
            if m["kind"] == "latency":
                m["stream"] = text
    with guarded(60):
        page = html.render(doc)
    assert str(escape(text)) in page


@pytest.mark.parametrize("text", DOLLARS)
def test_dollars_in_allure_plot_titles_are_text(text: str) -> None:
    from pytest_netload.reports import allure

    trials = [{"offered_pps": 1e5 * n, "valid": True, "lost": n, "tx_packets": 10**6}
              for n in (1, 2, 3)]
    with guarded(60):
        svg = allure._plot(f"throughput {text}", trials)
    assert svg is not None and "<svg" in svg
