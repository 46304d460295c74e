"""Commands on a DUT reached over ssh (``[dut] ssh = "admin@dut"`` in a topology file).

A command is a list of arguments and never goes through a local shell. ssh itself
hands the remote side one string, which the DUT account's login shell splits again;
so each argument is quoted with ``shlex.quote`` (``shlex.join``) and arrives there as
it was given: ``["echo", "a b; rm -rf /x $(id)"]`` prints ``a b; rm -rf /x $(id)``.
That needs a POSIX shell as the account's login shell (any Linux-based DUT).

ssh runs with ``BatchMode=yes`` (a refused key is an error, never a password prompt
that would hang the session), a ``ConnectTimeout`` and keep-alives, plus the user's
own ssh configuration (~/.ssh/config, or the ``ssh_config`` file the topology names)
for the key, the port, the user and any jump host. Every failure is a
``NetloadEnvironmentError`` that names the DUT's host and what to do.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import NetloadConfigError, NetloadEnvironmentError

__all__ = ["CONNECT_TIMEOUT_S", "DutSsh", "check_command"]

CONNECT_TIMEOUT_S = 10
"""ssh's ConnectTimeout: an unreachable DUT fails within this many seconds."""
SSH_OPTIONS = (
    ("BatchMode", "yes"),
    ("ConnectTimeout", str(CONNECT_TIMEOUT_S)),
    ("ServerAliveInterval", "5"),  # a DUT that vanishes mid-command ends it in ~15 s
    ("ServerAliveCountMax", "3"),
)
TAIL_CHARS = 2000  # the end of a failed command's stderr kept in the error
SSH_FAILED = 255  # ssh's own exit status for a failure of its own

# ssh's messages, in the order they are looked for; each gets its own fix
_REFUSED = re.compile(r"Permission denied|Too many authentication failures|"
                      r"no mutual signature|Authentication failed", re.IGNORECASE)
_HOST_KEY = re.compile(r"Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED|"
                       r"No [A-Z0-9-]+ host key is known", re.IGNORECASE)
_UNREACHABLE = re.compile(r"Could not resolve hostname|Connection timed out|Connection refused|"
                          r"No route to host|Network is unreachable|Operation timed out|"
                          r"Connection closed by|Connection reset|kex_exchange_identification|"
                          r"banner exchange", re.IGNORECASE)
_BAD_DESTINATION = re.compile(r"[\s\x00-\x1f\x7f]")


def check_command(cmd: object, where: str) -> list[str]:
    """`cmd` as a list of argument strings; a str or an empty list is refused."""
    if isinstance(cmd, (str, bytes)):
        try:
            example = shlex.split(cmd) if isinstance(cmd, str) and cmd.strip() else []
        except ValueError:  # an unclosed quote
            example = []
        example = example or ["ip", "link"]
        raise NetloadConfigError(
            f"{where}: cmd = {cmd!r} is a string; give a list of arguments, e.g. {example!r}"
            " (commands never go through a shell: each argument arrives as given)")
    if not isinstance(cmd, Sequence) or not cmd:
        raise NetloadConfigError(
            f"{where}: cmd = {cmd!r} must be a non-empty list of arguments, e.g. "
            "['ip', '-s', 'link']")
    args = list(cmd)
    for arg in args:
        if not isinstance(arg, str) or "\x00" in arg:
            raise NetloadConfigError(
                f"{where}: argument {arg!r} of {args!r} is not a string without NUL bytes; "
                "give every argument as a str (str(n) for numbers)")
    return args


@dataclass(frozen=True)
class DutSsh:
    """How to reach a DUT over ssh: ``destination`` as ssh takes it (``admin@dut``, a
    Host alias of the ssh configuration, or ``ssh://admin@dut:2222``), and optionally
    the ``config`` file used instead of ~/.ssh/config (``ssh -F``)."""

    destination: str
    config: str | None = None

    def __post_init__(self) -> None:
        dest = self.destination
        if not isinstance(dest, str) or not dest or _BAD_DESTINATION.search(dest) \
                or dest.startswith("-"):
            raise NetloadConfigError(
                f"dut.ssh = {dest!r} is not an ssh destination; give user@host, a Host "
                "alias of your ssh configuration or ssh://user@host:port (no whitespace, "
                "not starting with '-')")
        if self.config is not None and (not isinstance(self.config, str) or not self.config
                                        or "\x00" in self.config):
            raise NetloadConfigError(
                f"dut.ssh_config = {self.config!r} is not a path; give the path of an "
                "ssh_config file, or leave it out to use ~/.ssh/config")

    @property
    def host(self) -> str:
        """The destination, for messages."""
        return self.destination

    def argv(self, cmd: Sequence[str], ssh: str = "ssh") -> list[str]:
        """The ssh command line that runs `cmd` on the DUT, its arguments quoted for the
        remote shell. `--` ends ssh's options, so neither the destination nor the
        command can be taken for one."""
        args = check_command(cmd, f"command for the DUT at {self.destination}")
        options = [word for key, value in SSH_OPTIONS for word in ("-o", f"{key}={value}")]
        config = ["-F", self.config] if self.config is not None else []
        return [ssh, *config, "-T", *options, "--", self.destination, shlex.join(args)]

    def how_to_try(self) -> str:
        config = f"-F {shlex.quote(self.config)} " if self.config is not None else ""
        return f"`ssh {config}-o BatchMode=yes {shlex.quote(self.destination)} true`"

    def run(self, cmd: Sequence[str], *, input: str | None = None, check: bool = True,
            timeout_s: float = 30.0) -> subprocess.CompletedProcess[str]:
        """Run `cmd` on the DUT; text output captured, as `subprocess.run` returns it
        (``args`` is the list given). ssh failing to connect or log in raises
        NetloadEnvironmentError whatever `check`; with `check` (the default) so does a
        non-zero exit, with the end of the command's stderr. At most `timeout_s` seconds."""
        args = check_command(cmd, f"command for the DUT at {self.destination}")
        ssh = shutil.which("ssh")
        if ssh is None:
            raise NetloadEnvironmentError(
                f"the DUT at {self.destination} is reached with ssh, which is not installed "
                "here; install the OpenSSH client (Debian/Ubuntu: apt-get install "
                "openssh-client)")
        if self.config is not None and not os.path.isfile(self.config):
            raise NetloadEnvironmentError(
                f"the DUT at {self.destination}: its ssh_config {self.config} is not a file "
                "here; fix [dut] ssh_config in the topology file (a relative path starts at "
                "the file's directory), or leave it out to use ~/.ssh/config")
        try:
            proc = subprocess.run(
                self.argv(args, ssh), input=input, capture_output=True, text=True,
                stdin=subprocess.DEVNULL if input is None else None, timeout=timeout_s,
                check=False)
        except subprocess.TimeoutExpired as exc:
            raise NetloadEnvironmentError(
                f"{args!r} on the DUT at {self.destination} did not finish within "
                f"{timeout_s:g} s (ssh was stopped; the command may still run on the DUT); "
                "pass a larger timeout_s= if it is expected to take longer, or check that "
                f"the DUT still answers: {self.how_to_try()}") from exc
        result = subprocess.CompletedProcess(args, proc.returncode, proc.stdout, proc.stderr)
        failure = self.ssh_failure(result)
        if failure is not None:
            raise failure
        if check and result.returncode != 0:
            raise NetloadEnvironmentError(
                f"{args!r} on the DUT at {self.destination} failed with exit status "
                f"{result.returncode}: {_tail(result.stderr or result.stdout) or '(no output)'}"
                "; pass check=False to read a failing command's output yourself")
        return result

    def ssh_failure(self, proc: subprocess.CompletedProcess[str]) -> NetloadEnvironmentError | None:
        """The error for an exit of ssh's own (status 255 with one of its messages), or
        None when the command ran (whatever its status)."""
        if proc.returncode != SSH_FAILED:
            return None
        said = _tail(proc.stderr)
        where = f"the DUT at {self.destination}"
        config = (f"the ssh_config {self.config}" if self.config is not None
                  else "~/.ssh/config")
        if _REFUSED.search(said):
            return NetloadEnvironmentError(
                f"{where} refused this machine's ssh key ({said}); add its public key to "
                "the DUT account's authorized_keys, or name the key the DUT accepts "
                f"(IdentityFile, under a Host entry in {config}); then check: "
                f"{self.how_to_try()}")
        if _HOST_KEY.search(said):
            return NetloadEnvironmentError(
                f"{where}: its host key is not known or has changed ({said}); check the "
                "DUT's key and add it to known_hosts (ssh-keyscan, or UserKnownHostsFile "
                f"in {config}); then check: {self.how_to_try()}")
        if _UNREACHABLE.search(said):
            return NetloadEnvironmentError(
                f"{where} cannot be reached over ssh ({said}); check the DUT's address "
                f"and port (HostName, Port in {config}), that it is up and runs an ssh "
                f"server, and that this machine may reach it: {self.how_to_try()} (ssh "
                f"gives up after {CONNECT_TIMEOUT_S} s)")
        if said.startswith("ssh:") or "ssh_config" in said or "config" in said.split(":")[0]:
            return NetloadEnvironmentError(
                f"ssh to {where} failed ({said}); fix the ssh configuration "
                f"({config}), then check: {self.how_to_try()}")
        return None  # the remote command's own exit status 255


def _tail(text: str) -> str:
    text = text.strip()
    return text if len(text) <= TAIL_CHARS else "..." + text[-TAIL_CHARS:]
