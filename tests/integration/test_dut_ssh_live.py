"""A DUT reached over real ssh (`[dut] ssh` in a topology file, issue 15 item 7).

The DUT is `sshhost.ssh_host()`: a network namespace running Debian's openssh-server,
reached with a key made for the test, through the Host alias of its own ssh_config.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_netload.errors import NetloadEnvironmentError
from pytest_netload.topology import DutSsh
from pytest_netload.topology.ssh import CONNECT_TIMEOUT_S
from sshhost import SshHost, ssh_host

pytest_plugins = ["pytester"]

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="namespaces and sshd need root (CI runs as root)"),
]

BOUND_S = CONNECT_TIMEOUT_S + 8.0  # every refusal comes within this

TOPOLOGY = """\
[topology]
name = "remote-dut"

[dut]
name = "ssh-dut"
ssh = "{alias}"
ssh_config = "{config}"

[[ports]]
name = "p0"
device = "net_null0"
mac = "02:00:00:00:00:01"

[[wires]]
tx = "p0"
rx = "p0"
"""

SUITE = """\
import json

import pytest

from pytest_netload.errors import NetloadConfigError, NetloadEnvironmentError


def test_links_of_the_dut(dut):
    out = dut.run(["ip", "-o", "link"]).stdout
    assert ": lo:" in out
    # the DUT's namespace holds its end of the link to this machine, and nothing of ours
    assert out.count("\\n") == 2, out


def test_arguments_arrive_verbatim(dut):
    arg = "a b; rm -rf {marker} $(id) `id` * \\"q\\" 'q' \\\\ ~ && exit 7"
    proc = dut.run(["echo", arg])
    assert proc.stdout == arg + "\\n"
    assert proc.args == ["echo", arg]


def test_a_failure_names_the_dut(dut):
    with pytest.raises(NetloadEnvironmentError) as info:
        dut.run(["sh", "-c", "echo counters unavailable >&2; exit 4"])
    assert "on the DUT at {alias} failed with exit status 4: counters unavailable" \\
        in str(info.value)


def test_a_str_is_refused(dut):
    with pytest.raises(NetloadConfigError, match="give a list of arguments"):
        dut.run("ip -o link")


def test_the_reports_show_the_destination_not_the_config(dut):
    assert dut.info == {{"name": "ssh-dut", "ssh": "{alias}"}}
"""


@pytest.fixture(scope="module")
def host() -> Iterator[SshHost]:
    with ssh_host() as made:
        yield made


def test_dut_run_over_ssh_in_a_pytest_session(pytester: pytest.Pytester, host: SshHost,
                                              tmp_path: Path) -> None:
    marker = tmp_path / "x"
    marker.write_text("still here")
    topology = pytester.path / "lab.toml"
    topology.write_text(TOPOLOGY.format(alias=host.alias, config=host.config))
    pytester.makepyfile(test_remote_dut=SUITE.format(alias=host.alias, marker=marker))
    result = pytester.runpytest_subprocess(f"--netload-topology={topology}",
                                           "--netload-engine=fake")
    result.assert_outcomes(passed=5)
    assert marker.read_text() == "still here"  # `rm -rf` in an argument ran nowhere
    results = (pytester.path / "netload-results" / "results.json").read_text()
    assert host.alias in results and str(host.config) not in results


def test_a_refused_key_is_named_within_a_bound(host: SshHost) -> None:
    dut = DutSsh(host.alias.replace("gen-", "wrong-key-"), str(host.config))
    started = time.monotonic()
    with pytest.raises(NetloadEnvironmentError) as info:
        dut.run(["true"])
    assert time.monotonic() - started < BOUND_S
    text = str(info.value)
    assert f"the DUT at {dut.destination} refused this machine's ssh key" in text
    assert "authorized_keys" in text and f"-F {host.config}" in text


@pytest.mark.parametrize("where", ["closed port", "no such address"])
def test_an_unreachable_dut_is_named_within_a_bound(host: SshHost, tmp_path: Path,
                                                    where: str) -> None:
    # a port where nothing listens (refused at once) and TEST-NET-1, which nobody answers
    # (no route, or silence until ConnectTimeout)
    hostname, port = (host.address, 2) if where == "closed port" else ("192.0.2.1", 22)
    config = tmp_path / "ssh_config"
    config.write_text(f"Host gone\n  HostName {hostname}\n  Port {port}\n  User root\n")
    dut = DutSsh("gone", str(config))
    started = time.monotonic()
    with pytest.raises(NetloadEnvironmentError) as info:
        dut.run(["true"], timeout_s=60)
    took = time.monotonic() - started
    assert took < BOUND_S, took
    assert "the DUT at gone cannot be reached over ssh" in str(info.value)
    assert "HostName, Port" in str(info.value)
