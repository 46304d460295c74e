"""A DUT reached over ssh (`[dut] ssh`): the file keys, the ssh command line, the quoting
of arguments for the remote shell, and each failure's message.

ssh is replaced by a script on PATH that does what the DUT's login shell does with the
one string ssh hands it (`sh -c`), or fails as ssh does; the real ssh is used by
tests/integration/test_dut_ssh_live.py.
"""

from __future__ import annotations

import os
import stat
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_netload.bench.harness import ExternalDut
from pytest_netload.errors import NetloadConfigError, NetloadEnvironmentError
from pytest_netload.topology import DutSsh, load_topology, parse_topology
from pytest_netload.topology.ssh import CONNECT_TIMEOUT_S

TOPOLOGY = """\
[topology]
name = "lab"
{topology}
[dut]
name = "edge-1"
{dut}
[[ports]]
name = "p0"
device = "0000:3b:00.0"
mac = "02:00:00:00:00:01"

[[wires]]
tx = "p0"
rx = "p0"
"""

# What ssh says for each failure (OpenSSH 9.2), on stderr, with exit status 255.
SAID = {
    "refused": "admin@dut: Permission denied (publickey).",
    "hostkey": "No ED25519 host key is known for dut and you have requested strict "
               "checking.\r\nHost key verification failed.",
    "unreachable": "ssh: connect to host dut port 22: Connection timed out",
    "unresolved": "ssh: Could not resolve hostname dut: Name or service not known",
}

FAKE_SSH = """\
#!/bin/sh
# argv: [-F cfg] -T -o ... -- destination command; the last one is the remote command
for last; do :; done
echo "$@" > "$FAKE_SSH_ARGS"
case "$FAKE_SSH_MODE" in
  run) exec sh -c "$last" ;;
  sleep) exec sleep 30 ;;
  *) printf '%s\\n' "$FAKE_SSH_SAYS" >&2; exit 255 ;;
esac
"""


def _load(tmp_path: Path, dut: str = "", topology: str = "") -> object:
    path = tmp_path / "lab.toml"
    path.write_text(TOPOLOGY.format(dut=dut, topology=topology))
    return load_topology(path)


@pytest.fixture
def fake_ssh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake `ssh` first on PATH; returns the file it writes its arguments to."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "ssh"
    script.write_text(FAKE_SSH)
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_SSH_MODE", "run")
    monkeypatch.setenv("FAKE_SSH_ARGS", str(tmp_path / "args"))
    return tmp_path / "args"


# ---- the topology file -------------------------------------------------------------------

def test_ssh_and_ssh_config_in_the_dut_table(tmp_path: Path) -> None:
    topo = _load(tmp_path, 'ssh = "admin@dut"\nssh_config = "lab_ssh_config"')
    assert topo.dut_ssh == DutSsh("admin@dut", str(tmp_path / "lab_ssh_config"))
    # the destination is a fact the reports may show; the runner's config path is not
    assert dict(topo.dut) == {"name": "edge-1", "ssh": "admin@dut"}


def test_ssh_config_absolute_and_home(tmp_path: Path) -> None:
    assert _load(tmp_path, 'ssh = "d"\nssh_config = "/etc/x"').dut_ssh.config == "/etc/x"
    home = _load(tmp_path, 'ssh = "d"\nssh_config = "~/lab"').dut_ssh.config
    assert home == os.path.expanduser("~/lab")


def test_without_ssh(tmp_path: Path) -> None:
    assert _load(tmp_path).dut_ssh is None


@pytest.mark.parametrize(("dut", "topology", "expected"), [
    ('ssh = "-oProxyCommand=x"', "", "is not an ssh destination"),
    ('ssh = "admin@dut extra"', "", "is not an ssh destination"),
    ('ssh = ""', "", "is not an ssh destination"),
    ('ssh_config = "cfg"', "", "ssh_config = 'cfg' without dut.ssh"),
    ('ssh = "dut"\nssh_config = ""', "", "is not a path"),
    ('ssh = "dut"', 'namespace = "dutns"', "both a namespace here ('dutns') and ssh ('dut')"),
    ("ssh = 22", "", "dut.ssh = 22 is an integer"),
])
def test_bad_ssh_keys(tmp_path: Path, dut: str, topology: str, expected: str) -> None:
    with pytest.raises(NetloadConfigError) as info:
        _load(tmp_path, dut, topology)
    assert str(info.value).startswith(str(tmp_path / "lab.toml"))
    assert expected in str(info.value)


def test_parse_topology_resolves_a_relative_config_against_the_source() -> None:
    data = {"topology": {"name": "lab"}, "dut": {"ssh": "dut", "ssh_config": "c"},
            "ports": [{"name": "p0", "device": "net_null0", "mac": "02:00:00:00:00:01"}],
            "wires": [{"tx": "p0", "rx": "p0"}]}
    assert parse_topology(data, "/lab/edge.toml").dut_ssh == DutSsh("dut", "/lab/c")


# ---- the command line --------------------------------------------------------------------

def test_argv_batch_mode_timeouts_and_end_of_options() -> None:
    argv = DutSsh("admin@dut", "/lab/cfg").argv(["ip", "-o", "link"])
    assert argv[:3] == ["ssh", "-F", "/lab/cfg"]
    assert "BatchMode=yes" in argv and f"ConnectTimeout={CONNECT_TIMEOUT_S}" in argv
    assert argv[-3:] == ["--", "admin@dut", "ip -o link"]


def test_argv_quotes_every_argument() -> None:
    argv = DutSsh("dut").argv(["echo", "a b; rm -rf /tmp/x $(id)", "-n", "'", ""])
    assert argv[-1] == """echo 'a b; rm -rf /tmp/x $(id)' -n ''"'"'' ''"""


@pytest.mark.parametrize("cmd", ["ip link", "echo 'a", b"ip", [], ["ip", 3], ["a\x00b"], None])
def test_a_command_must_be_a_list_of_strings(cmd: object) -> None:
    with pytest.raises(NetloadConfigError) as info:
        DutSsh("dut").argv(cmd)  # type: ignore[arg-type]
    assert "list of arguments" in str(info.value) or "not a string" in str(info.value)


def test_a_str_command_names_the_list_to_give() -> None:
    with pytest.raises(NetloadConfigError, match=r"e\.g\. \['ip', '-s', 'link'\]"):
        DutSsh("dut").run("ip -s link")  # type: ignore[arg-type]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                        max_size=12), min_size=1, max_size=5))
def test_any_arguments_reach_a_posix_shell_verbatim(args: list[str]) -> None:
    """What the DUT's login shell does with the remote command: `sh -c STRING`."""
    remote = DutSsh("dut").argv(["printf", "%s\\0", *args])[-1]
    out = subprocess.run(["sh", "-c", remote], capture_output=True, check=True).stdout
    assert out.decode("utf-8", "surrogateescape").split("\0")[:-1] == args


# ---- running, through a fake ssh -----------------------------------------------------------

def test_run_passes_arguments_verbatim(fake_ssh: Path) -> None:
    proc = DutSsh("admin@dut").run(["echo", "a b; rm -rf /tmp/x $(id)"])
    assert proc.stdout == "a b; rm -rf /tmp/x $(id)\n"
    assert proc.args == ["echo", "a b; rm -rf /tmp/x $(id)"]
    assert "-- admin@dut" in fake_ssh.read_text()


def test_run_feeds_input(fake_ssh: Path) -> None:
    assert DutSsh("dut").run(["cat"], input="counters\n").stdout == "counters\n"


def test_a_failing_command_names_host_status_and_stderr(fake_ssh: Path) -> None:
    with pytest.raises(NetloadEnvironmentError) as info:
        DutSsh("admin@dut").run(["sh", "-c", "echo bad thing >&2; exit 3"])
    text = str(info.value)
    assert "on the DUT at admin@dut failed with exit status 3: bad thing" in text
    assert "check=False" in text
    proc = DutSsh("admin@dut").run(["sh", "-c", "echo x >&2; exit 3"], check=False)
    assert (proc.returncode, proc.stderr) == (3, "x\n")


def test_a_long_stderr_is_cut_to_its_tail(fake_ssh: Path) -> None:
    with pytest.raises(NetloadEnvironmentError) as info:
        DutSsh("dut").run(["sh", "-c", "seq 1 5000 >&2; exit 1"])
    assert "...\n" in str(info.value) and str(info.value).count("\n") < 600
    assert "5000" in str(info.value)


def test_the_remote_commands_own_255_is_its_exit(fake_ssh: Path) -> None:
    proc = DutSsh("dut").run(["sh", "-c", "echo no >&2; exit 255"], check=False)
    assert proc.returncode == 255


@pytest.mark.parametrize(("mode", "expected"), [
    ("refused", "refused this machine's ssh key"),
    ("hostkey", "host key is not known or has changed"),
    ("unreachable", "cannot be reached over ssh"),
    ("unresolved", "cannot be reached over ssh"),
])
def test_ssh_failures_name_the_host_and_the_fix(fake_ssh: Path, monkeypatch: pytest.MonkeyPatch,
                                                 mode: str, expected: str) -> None:
    monkeypatch.setenv("FAKE_SSH_MODE", mode)
    monkeypatch.setenv("FAKE_SSH_SAYS", SAID[mode])
    for check in (True, False):  # ssh's own failure is an error whatever `check`
        with pytest.raises(NetloadEnvironmentError) as info:
            DutSsh("admin@dut").run(["true"], check=check)
        text = str(info.value)
        assert "the DUT at admin@dut" in text and expected in text
        assert "`ssh -o BatchMode=yes admin@dut true`" in text


def test_a_timeout_stops_ssh_and_says_so(fake_ssh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_SSH_MODE", "sleep")
    started = time.monotonic()
    with pytest.raises(NetloadEnvironmentError) as info:
        DutSsh("dut").run(["sleep", "30"], timeout_s=0.5)
    assert time.monotonic() - started < 5
    assert "did not finish within 0.5 s" in str(info.value)
    assert "timeout_s=" in str(info.value)


def test_a_missing_config_file(fake_ssh: Path, tmp_path: Path) -> None:
    with pytest.raises(NetloadEnvironmentError, match=r"ssh_config .*/nope is not a file"):
        DutSsh("dut", str(tmp_path / "nope")).run(["true"])


def test_no_ssh_client(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(NetloadEnvironmentError, match="apt-get install openssh-client"):
        DutSsh("dut").run(["true"])


# ---- the dut fixture's handle ------------------------------------------------------------

def test_external_dut_runs_over_ssh(fake_ssh: Path, tmp_path: Path) -> None:
    dut = ExternalDut(_load(tmp_path, 'ssh = "admin@dut"'))
    assert dut.run(["echo", "$HOME"]).stdout == "$HOME\n"
    assert dut.info["ssh"] == "admin@dut"


def test_external_dut_without_access_says_how_to_give_it(tmp_path: Path) -> None:
    with pytest.raises(NetloadConfigError, match=r"set \[dut\] ssh = 'user@host'"):
        ExternalDut(_load(tmp_path)).run(["true"])


def test_the_docs_example_reaches_its_dut_over_ssh(tmp_path: Path) -> None:
    import re

    docs = Path(__file__).resolve().parents[2] / "docs" / "topology-files.md"
    block = re.findall(r"```toml\n(.*?)```", docs.read_text(encoding="utf-8"), re.DOTALL)[0]
    path = tmp_path / "lab-edge-1.toml"
    path.write_text(block)
    topo = load_topology(path)
    assert topo.dut_ssh == DutSsh("admin@edge-1", str(tmp_path / "lab_ssh_config"))
    assert "ssh_config" not in topo.dut
