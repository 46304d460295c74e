"""A second "host" for the remote-engine tests: a network namespace running Debian's
openssh-server on its own address, reached with a key made for the test.

The namespace shares this machine's files and CPUs, so the engine installed here is
the one found there; what it does not share is the network: the engine launched
through ssh sees only the interfaces moved into the namespace, as a generator host
sees only its own NICs. `ssh_host()` removes everything it made, also on failure;
the leftovers of a killed session (namespace, sshd) go at the next one's start.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SSHD = "/usr/sbin/sshd"
PREFIX = "nlssh-"


def sh(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(list(args), capture_output=True, text=True, check=False)
    if check and proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: {proc.stderr.strip() or proc.stdout.strip()}")
    return proc


@dataclass(frozen=True)
class SshHost:
    ns: str
    alias: str  # the Host entry of `config`
    address: str
    config: Path  # an ssh_config with the key, the host key and BatchMode
    directory: Path

    def spec(self, python: str | None = None, *, alias: str | None = None) -> str:
        """The execnet spec that reaches this host (--netload-engine=...)."""
        import sys

        return (f"ssh={alias or self.alias}//ssh_config={self.config}"
                f"//python={python or sys.executable}")

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        """A command on the host, in its namespace."""
        return sh("ip", "netns", "exec", self.ns, *args, check=False)

    def move_in(self, iface: str) -> None:
        """Hand a local interface to the host (it comes up there, IPv6 and ARP off)."""
        sh("ip", "link", "set", iface, "netns", self.ns)
        sh("ip", "netns", "exec", self.ns, "sysctl", "-qw",
           f"net.ipv6.conf.{iface}.disable_ipv6=1", check=False)
        sh("ip", "-n", self.ns, "link", "set", iface, "arp", "off", "up")

    def processes(self) -> list[int]:
        """Pids of the processes in the namespace other than its sshd."""
        out = sh("ip", "netns", "pids", self.ns, check=False).stdout.split()
        sshd = self._sshd_pids()
        return [int(p) for p in out if int(p) not in sshd]

    def _sshd_pids(self) -> set[int]:
        try:
            main = int((self.directory / "sshd.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return set()
        return {main}


def _sweep_stale() -> None:
    """Namespaces and sshds of test sessions that were killed."""
    for name in sh("ip", "netns", "list", check=False).stdout.split():
        if not name.startswith(PREFIX):
            continue
        owner = name[len(PREFIX):].split("-")[0]
        if owner.isdigit() and Path(f"/proc/{owner}").exists():
            continue
        for pid in sh("ip", "netns", "pids", name, check=False).stdout.split():
            with contextlib.suppress(OSError):
                os.kill(int(pid), signal.SIGKILL)
        sh("ip", "netns", "del", name, check=False)


@contextlib.contextmanager
def ssh_host() -> Iterator[SshHost]:
    if not Path(SSHD).exists():
        raise RuntimeError(f"{SSHD} is missing: scripts/setup.sh installs openssh-server")
    _sweep_stale()
    tag = secrets.token_hex(2)
    ns = f"{PREFIX}{os.getpid()}-{tag}"
    here, there = f"nls{tag}h", f"nls{tag}t"
    # 198.51.100.0/24 (TEST-NET-2): a /30 of it per host, so as not to clash
    octet = secrets.randbelow(63) * 4
    local, address = f"198.51.100.{octet + 1}", f"198.51.100.{octet + 2}"
    directory = Path(tempfile.mkdtemp(prefix="netload-sshhost-"))
    sshd: subprocess.Popen[bytes] | None = None
    try:
        sh("ip", "netns", "add", ns)
        sh("ip", "-n", ns, "link", "set", "lo", "up")
        sh("ip", "link", "add", here, "type", "veth", "peer", "name", there)
        sh("ip", "link", "set", there, "netns", ns)
        sh("ip", "addr", "add", f"{local}/30", "dev", here)
        sh("ip", "link", "set", here, "up")
        sh("ip", "-n", ns, "addr", "add", f"{address}/30", "dev", there)
        sh("ip", "-n", ns, "link", "set", there, "up")
        key, host_key = directory / "id", directory / "host_key"
        sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "netload-test", "-f", str(key))
        sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(host_key))
        shutil.copy(f"{key}.pub", directory / "authorized_keys")
        (directory / "known_hosts").write_text(
            f"{address} {(directory / 'host_key.pub').read_text().split(' ', 2)[0]} "
            f"{(directory / 'host_key.pub').read_text().split(' ', 2)[1]}\n")
        (directory / "sshd_config").write_text(
            f"ListenAddress {address}\nHostKey {host_key}\n"
            f"AuthorizedKeysFile {directory}/authorized_keys\nPidFile {directory}/sshd.pid\n"
            "PermitRootLogin prohibit-password\nPasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n"
            "AcceptEnv none\nLogLevel ERROR\n")
        alias = f"gen-{tag}"
        config = directory / "ssh_config"
        config.write_text(
            f"Host {alias} wrong-key-{tag}\n  HostName {address}\n  User root\n"
            f"  UserKnownHostsFile {directory}/known_hosts\n  StrictHostKeyChecking yes\n"
            "  IdentitiesOnly yes\n  BatchMode yes\n  LogLevel ERROR\n"
            f"Host {alias}\n  IdentityFile {key}\n"
            f"Host wrong-key-{tag}\n  IdentityFile {host_key}\n")
        Path("/run/sshd").mkdir(exist_ok=True)  # sshd's privilege separation dir
        sshd = subprocess.Popen(
            ["ip", "netns", "exec", ns, SSHD, "-D", "-e", "-f", str(directory / "sshd_config")],
            stdout=subprocess.DEVNULL, stderr=open(directory / "sshd.log", "wb"))  # noqa: SIM115
        host = SshHost(ns, alias, address, config, directory)
        deadline = time.monotonic() + 15
        while True:
            probe = sh("ssh", "-F", str(config), alias, "true", check=False)
            if probe.returncode == 0:
                break
            if sshd.poll() is not None or time.monotonic() > deadline:
                log = (directory / "sshd.log").read_text(errors="replace")
                raise RuntimeError(f"sshd in {ns} did not come up: {probe.stderr} {log}")
            time.sleep(0.1)
        yield host
    finally:
        # everything in the namespace goes: sshd, and any engine host left in it
        for pid in sh("ip", "netns", "pids", ns, check=False).stdout.split():
            with contextlib.suppress(OSError):
                os.kill(int(pid), signal.SIGKILL)
        if sshd is not None:
            sshd.kill()
            sshd.wait()
        sh("ip", "link", "del", here, check=False)
        sh("ip", "netns", "del", ns, check=False)
        shutil.rmtree(directory, ignore_errors=True)
