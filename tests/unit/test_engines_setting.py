"""Topologies on several engines: `engine = "NAME"` per port, `--netload-engines`
naming them, and a wire between two engines refused, saying why."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_netload.errors import NetloadConfigError
from pytest_netload.plugin.options import _engines
from pytest_netload.topology import PortSpec, Topology, Wire, load_topology

pytest_plugins = ["pytester"]

SPEC = "ssh=ci@gen-a//python=/opt/netload/.venv/bin/python"


def _port(name: str, engine: str | None, n: int) -> PortSpec:
    return PortSpec(name, f"net_null{n}", None, f"02:00:00:00:00:0{n + 1}", engine=engine)


def test_each_port_may_name_its_engine() -> None:
    topo = Topology("two", (_port("p0", None, 0), _port("p1", None, 1), _port("p2", "gen-a", 2),
                            _port("p3", "gen-a", 3)),
                    (Wire("p0", "p1"), Wire("p2", "p3")))
    assert [p.engine for p in topo.ports] == [None, None, "gen-a", "gen-a"]


@pytest.mark.parametrize("engines", [(None, "gen-a"), ("gen-a", "gen-b")])
def test_a_wire_between_two_engines_is_refused_saying_why(engines: tuple[str | None, ...]) -> None:
    with pytest.raises(NetloadConfigError) as err:
        Topology("x", (_port("p0", engines[0], 0), _port("p1", engines[1], 1)),
                 (Wire("p0", "p1"),))
    text = str(err.value)
    assert "wire p0->p1 joins port 'p0' on engine" in text
    assert "clock, which another engine (another host) does not share" in text
    assert "wire both ends of a DUT path to ports of one engine" in text


def test_an_engine_name_is_checked() -> None:
    with pytest.raises(NetloadConfigError, match="engine"):
        _port("p0", "gen a/b", 0)


def test_a_topology_file_names_engines(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text('[topology]\nname = "t"\n[[ports]]\nname = "p0"\ndevice = "net_null0"\n'
                    'mac = "02:00:00:00:00:01"\nengine = "gen-a"\n[[ports]]\nname = "p1"\n'
                    'device = "net_null1"\nmac = "02:00:00:00:00:02"\nengine = "gen-a"\n'
                    '[[wires]]\ntx = "p0"\nrx = "p1"\n')
    assert {p.engine for p in load_topology(path).ports} == {"gen-a"}


def test_engines_setting_parses_names_and_specs() -> None:
    assert _engines("") == ()
    assert _engines(f"gen-a={SPEC}; gen-b=popen\n") == (("gen-a", SPEC), ("gen-b", "popen"))
    assert _engines(f"\n  gen-a = {SPEC}\n  gen-b = popen\n") == \
        (("gen-a", SPEC), ("gen-b", "popen"))


@pytest.mark.parametrize(("value", "needle"), [
    ("gen-a", "names no engine spec; write NAME=SPEC"),
    ("gen-a=", "names no engine spec"),
    (f"gen-a={SPEC};gen-a=popen", "engine 'gen-a' is named twice"),
    ("gen-a=telnet=x", "engine 'gen-a': 'telnet=x' is not an execnet gateway"),
    ("gen-a=fake", "the fake engine models one DUT of its own"),
    ("gen a=popen", "engine name"),
])
def test_bad_engines_settings_name_the_entry_and_the_fix(value: str, needle: str) -> None:
    with pytest.raises(NetloadConfigError, match=None) as err:
        _engines(value)
    assert needle in str(err.value)


def test_a_port_on_an_unnamed_engine_stops_the_session(pytester: pytest.Pytester) -> None:
    path = pytester.path / "t.toml"
    path.write_text('[topology]\nname = "t"\n[[ports]]\nname = "p0"\ndevice = "net_null0"\n'
                    'mac = "02:00:00:00:00:01"\nengine = "gen-x"\n[[ports]]\nname = "p1"\n'
                    'device = "net_null1"\nmac = "02:00:00:00:00:02"\nengine = "gen-x"\n'
                    '[[wires]]\ntx = "p0"\nrx = "p1"\n')
    pytester.makepyfile("def test_nothing():\n    pass\n")
    result = pytester.runpytest_subprocess(f"--netload-topology={path}",
                                           "--netload-engines=gen-a=popen")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([
        "*ports[[]0[]] (p0) runs on engine 'gen-x', which --netload-engines (ini "
        "netload_engines) does not name (gen-a); add gen-x=SPEC there*"])
