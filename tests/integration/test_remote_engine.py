"""The engine on another host, launched through real ssh (issue 15).

`sshhost.ssh_host()` is that host: a network namespace running openssh-server,
reached with a key made for the test. The generator ends of a netns-router are
moved into it, so the engine host that ssh starts there sees them as its own
NICs and this process sees none of them, as a CI runner driving a lab generator.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_netload import errors
from pytest_netload.engine import remote
from pytest_netload.engine.client import Engine
from netutil import veth_pair
from sshhost import SshHost, ssh_host

pytest_plugins = ["pytester"]

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="namespaces and sshd need root (CI runs as root)"),
]

BOUND_S = 20.0  # every refusal comes within this (ssh's ConnectTimeout is 10 s)


@pytest.fixture(scope="module")
def host() -> Iterator[SshHost]:
    with ssh_host() as made:
        yield made


def _runtime_dirs() -> set[str]:
    root = Path("/var/run/dpdk")
    return {p.name for p in root.iterdir()} if root.exists() else set()


def _gone(host: SshHost, timeout_s: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while host.processes():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def test_a_whole_rfc2544_suite_runs_on_an_engine_started_through_ssh(
        pytester: pytest.Pytester, host: SshHost) -> None:
    """The example router suite (throughput both ways, latency, loss) with the engine
    on the ssh host: the same outcome as with a local engine (test_plugin_e2e)."""
    from test_plugin_e2e import _check, _run, _toml_of

    from pytest_netload.topology.builtin import netns_router

    with netns_router() as built:
        for port in built.topology.ports:
            host.move_in(port.iface)
        path = pytester.path / "lab.toml"
        path.write_text(_toml_of(built.topology))
        started = time.monotonic()
        result = _run(pytester, f"--netload-topology={path}",
                      f"--netload-engine={host.spec()}")
        took = time.monotonic() - started
        _check(result, pytester.path)
    from pytest_netload.reports.load import load

    doc = load(pytester.path / "netload-results" / "results.json")
    assert doc["environment"]["engine"] == host.spec()
    assert doc["environment"]["engine_host"]
    print(f"ssh-launched example suite: {took:.1f} s")
    assert _gone(host), f"left running on {host.ns}: {host.processes()}"


def test_the_remote_host_picks_its_cpus_and_keeps_its_log_there(host: SshHost) -> None:
    before = _runtime_dirs()
    with Engine(host.spec()) as engine:
        assert engine.remote and engine.remote_info["package"].endswith("__init__.py")
        log = Path(engine.log_path)
        assert log.name.startswith(f"engine-{engine.hello['pid']}-")  # named by the host
        assert log.exists() and "EAL" in log.read_text(errors="replace")
        assert engine.hello["worker_cpus"]
        assert set(engine.hello["worker_cpus"]) <= os.sched_getaffinity(0)
        assert engine.environment()["gateway"] == host.spec()
    assert not log.parent.exists(), "a clean close removes the remote log dir"
    assert _gone(host)
    assert _runtime_dirs() <= before


def test_a_remote_crash_brings_its_log_tail_back(host: SshHost) -> None:
    before = _runtime_dirs()
    engine = Engine(host.spec())
    try:
        engine.start()
        log = engine.log_path
        with pytest.raises(errors.EngineCrashed) as err:
            engine._call("crash")
        assert f"its log is {log} on ssh {host.alias}" in str(err.value)
        assert "Fatal Python error" in err.value.log_tail or "Segmentation" in \
            err.value.log_tail, err.value.log_tail
        assert (Path(log).parent / "crashed").exists()  # kept for the bug report, marked
        # the next call starts a fresh host there
        assert engine.port("net_null0").driver == "net_null"
    finally:
        engine.close()
    assert _gone(host)
    assert _runtime_dirs() <= before


def test_a_killed_client_leaves_nothing_running_on_the_host(host: SshHost,
                                                            tmp_path: Path) -> None:
    script = tmp_path / "client.py"
    script.write_text(textwrap.dedent(f"""
        import sys, time
        from pytest_netload.engine.client import Engine
        e = Engine({host.spec()!r}).start()
        e.port("net_null0")
        print("ready", flush=True)
        time.sleep(600)
    """))
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        assert host.processes(), "the engine host runs there"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert _gone(host, 20.0), f"left running on {host.ns}: {host.processes()}"
    finally:
        proc.kill()


def _refused(spec: str, *needles: str) -> str:
    started = time.monotonic()
    with pytest.raises(errors.NetloadEnvironmentError) as err:
        Engine(spec).start()
    assert time.monotonic() - started < BOUND_S
    text = str(err.value)
    for needle in needles:
        assert needle in text, text
    return text


def test_an_unreachable_host_is_refused_naming_it(host: SshHost) -> None:
    # the host's address, but a port where nothing listens: refused at once
    spec = f"ssh=-p 2 root@{host.address}//ssh_config={host.config}//python={sys.executable}"
    _refused(spec, f"engine host on ssh root@{host.address} could not start",
             "without a password prompt")


def test_a_refused_key_is_refused_naming_the_host(host: SshHost) -> None:
    text = _refused(host.spec(alias=f"wrong-key-{host.alias[4:]}"), "could not start",
                    "accept this machine's key")
    assert "wrong-key-" in text


def test_a_host_without_the_package_is_refused(host: SshHost) -> None:
    # Debian's own Python there has no pytest_netload (nor numpy)
    _refused(host.spec("/usr/bin/python3"),
             f"engine host on ssh {host.alias}: /usr/bin/python3 cannot import pytest_netload",
             "install it there")


def test_a_host_with_another_version_is_refused(host: SshHost,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(remote, "local_version", lambda: "0.0.1")
    _refused(host.spec(), f"engine host on ssh {host.alias} has pytest-netload",
             "this client has 0.0.1", "install the same version on both")
    assert _gone(host)


def test_a_host_without_the_native_engine_is_refused(host: SshHost, tmp_path: Path) -> None:
    """A client-only install there: the package without its extension."""
    import shutil

    import pytest_netload

    copy = tmp_path / "client-only"
    shutil.copytree(Path(pytest_netload.__file__).parent, copy / "pytest_netload",
                    ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    # ahead of this venv's editable pytest-netload-engine: as if it were not installed
    (copy / "pytest_netload_engine.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'pytest_netload_engine'\", "
        "name='pytest_netload_engine')\n")
    python = f"env PYTHONPATH={copy} {sys.executable}"
    _refused(host.spec(python), f"engine host on ssh {host.alias}: pytest-netload is "
             "installed there", "without its native engine",
             "pip install 'pytest-netload[engine]' there")


TWO_ENGINES = """
import pytest
from pytest_netload import assert_loss, assert_throughput


@pytest.mark.rfc2544(frame_sizes=[128], trial_duration="500ms", drain="100ms", max_trials=3,
                     resolution=0.5, max_rate="20kpps", wire={wire})
def test_throughput_on_wire_{wire}(rfc2544, netload_ports):
    tx, rx = netload_ports.wire({wire})
    assert tx.engine is rx.engine
    assert_throughput(rfc2544.throughput(), at_least="10kpps")
"""


def test_a_topology_spans_a_local_and_an_ssh_engine(pytester: pytest.Pytester,
                                                    host: SshHost) -> None:
    """p0 -> p1 on the session's engine (here), p2 -> p3 on engine gen-b (through ssh,
    whose veth lives in the ssh host's namespace): each wire runs on its own engine."""
    with veth_pair("nlme") as here, veth_pair("nlme", up=False) as there:
        try:
            for end in there:
                host.move_in(end)
            _two_engine_session(pytester, host, [*here, *there])
        finally:
            host.run("ip", "link", "del", there[0])  # moved there: gone with it
    assert _gone(host)


def _two_engine_session(pytester: pytest.Pytester, host: SshHost, ifaces: list[str]) -> None:
    lines = ["[topology]", 'name = "two-generators"', ""]
    for i, iface in enumerate(ifaces):
        lines += ["[[ports]]", f'name = "p{i}"', f'iface = "{iface}"',
                  f'mac = "02:00:00:00:0{i // 2}:0{i % 2 + 1}"',
                  f'peer_mac = "02:00:00:00:0{i // 2}:0{(i + 1) % 2 + 1}"']
        lines += ['engine = "gen-b"', ""] if i >= 2 else [""]
    lines += ["[[wires]]", 'tx = "p0"', 'rx = "p1"', "", "[[wires]]", 'tx = "p2"',
              'rx = "p3"', ""]
    path = pytester.path / "two.toml"
    path.write_text("\n".join(lines))
    pytester.makepyfile(test_wire0=TWO_ENGINES.format(wire=0),
                        test_wire1=TWO_ENGINES.format(wire=1))
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-rA", f"--netload-topology={path}",
        f"--netload-engines=gen-b={host.spec()}", timeout=300)
    from calm import judged_unless_the_machine_was_busy

    with judged_unless_the_machine_was_busy(result):
        result.assert_outcomes(passed=2)
    from pytest_netload.reports.load import load

    doc = load(pytester.path / "netload-results" / "results.json")
    env = doc["environment"]
    assert env["engines"]["gen-b"]["gateway"] == host.spec()
    assert [p.get("engine") for p in env["ports"]] == [None, None, "gen-b", "gen-b"]


def test_a_client_only_install_drives_a_remote_engine(host: SshHost, tmp_path: Path) -> None:
    """The CI runner's side without the native engine (`pip install pytest-netload`, no
    `[engine]`) starts the engine through ssh, runs traffic there and counts it."""
    import shutil

    import pytest_netload

    copy = tmp_path / "client-only"
    shutil.copytree(Path(pytest_netload.__file__).parent, copy / "pytest_netload",
                    ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    script = tmp_path / "client.py"
    script.write_text(textwrap.dedent(f"""
        import sys
        sys.modules["pytest_netload_engine"] = None  # not installed, as on a client-only host
        import pytest_netload
        assert pytest_netload.__file__.startswith({str(copy)!r}), pytest_netload.__file__
        try:
            import pytest_netload_engine._netload_native
        except ImportError:
            pass
        else:
            raise SystemExit("the client copy has the native extension")
        from pytest_netload.engine.client import Engine
        from pytest_netload.traffic.packets import UDP, Eth, IPv4
        from pytest_netload.traffic.streams import Stream
        with Engine({host.spec()!r}) as engine:
            port = engine.port("net_ring_cl0")  # loops its TX back to its RX
            template = (Eth() / IPv4() / UDP()).build()
            stream = engine.load(port, Stream(template, size=128, name="client-only"))
            (result,) = engine.run([stream], [port], count=10_000).streams
            print("sent", result.tx_packets, "received", result.rx_packets)
        assert "pytest_netload_engine._netload_native" not in sys.modules
    """))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(copy)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "sent 10000 received 10000" in proc.stdout
    assert _gone(host)
