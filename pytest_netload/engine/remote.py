"""An engine host on another machine: execnet's ssh gateway, checked before it is trusted.

The client (engine/client.py) starts a remote host the same way as a local one,
with three differences, all here:

- :func:`ssh_options` puts ``BatchMode`` (no password prompt that would hang
  the session), ``ConnectTimeout`` and keep-alives in front of the user's ssh
  arguments, so an unreachable host or a refused key fails within seconds;
- :func:`probe` asks the remote Python, before the host is booted, for the
  package, its version, its ABI and its native extension, and refuses a host
  that lacks one or has another version, naming the host and the fix;
- the host makes its own log dir and runtime dir, and picks its own CPUs.
  After a crash its log tail comes back through a fresh gateway
  (:func:`fetch_tail`), which also removes the dead host's runtime dir there.
"""

from __future__ import annotations

import threading
from importlib import metadata
from typing import Any

from .. import errors
from .._native_facts import ABI_VERSION

SSH_OPTIONS = {
    "BatchMode": "yes",  # a key it refuses is an error, never a password prompt
    "ConnectTimeout": "10",
    "ServerAliveInterval": "5",  # a host that vanished ends the link in ~15 s
    "ServerAliveCountMax": "3",
}
TAIL_TIMEOUT_S = 20.0  # fetching a crashed remote host's log tail takes at most this

_PROBE = """
import socket, sys
out = {"python": sys.executable, "hostname": socket.gethostname()}
try:
    import pytest_netload
    from importlib import metadata
    out["package"] = pytest_netload.__file__
    try:
        out["version"] = metadata.version("pytest-netload")
    except metadata.PackageNotFoundError:
        out["version"] = "unknown"
    from pytest_netload import _native_facts
    out["abi"] = _native_facts.ABI_VERSION
    try:
        import pytest_netload_engine._netload_native
        out["native"] = ""
    except ImportError as exc:
        out["native"] = str(exc) or type(exc).__name__
except ImportError as exc:
    out["missing"] = str(exc) or type(exc).__name__
channel.send(out)
"""

_TAIL = """
import os
from pytest_netload.engine.client import _log_tail
from pytest_netload.engine.leftovers import mark_crashed, remove_runtime_dir
path, lines, eal_args = channel.receive()
remove_runtime_dir(eal_args)
if path:  # empty: the host died before it made its log
    mark_crashed(os.path.dirname(path))
channel.send(_log_tail(path, lines) if path else "")
"""


def is_remote(spec: str) -> bool:
    """Whether an execnet spec runs the host on another machine (ssh, socket, vagrant)."""
    return not spec.startswith("popen")


def target(spec: str) -> str:
    """What the spec connects to, for messages: 'root@gen-a' of 'ssh=-p 22 root@gen-a//...'."""
    first = spec.split("//", 1)[0]
    kind, _, rest = first.partition("=")
    words = [w for w in rest.split() if not w.startswith("-")]
    # the last word that is not an option's value is the host ('-o X=Y host')
    return f"{kind} {words[-1] if words else rest}".strip()


def ssh_options(spec: str) -> str:
    """`spec` with the options of SSH_OPTIONS that its ssh arguments do not set
    themselves put in front of them (only for ssh= specs)."""
    first, sep, rest = spec.partition("//")
    kind, eq, args = first.partition("=")
    if kind != "ssh" or not eq:
        return spec
    given = {w.split("=", 1)[0].lower() for w in args.split() if "=" in w}
    extra = " ".join(f"-o {k}={v}" for k, v in SSH_OPTIONS.items() if k.lower() not in given)
    return f"ssh={extra} {args.strip()}{sep}{rest}" if extra else spec


def python_of(spec: str) -> str:
    for part in spec.split("//")[1:]:
        key, _, value = part.partition("=")
        if key == "python":
            return value
    return "python (the remote's default: give //python=PATH)"


def local_version() -> str:
    try:
        return metadata.version("pytest-netload")
    except metadata.PackageNotFoundError:
        return "unknown"


def start_error(spec: str, exc: BaseException) -> errors.NetloadEnvironmentError:
    """The error for a gateway that did not come up: names the host and what to try."""
    where = target(spec)
    if spec.startswith("ssh="):
        args = spec.split("//", 1)[0].partition("=")[2].strip()
        hint = (f"check that `ssh -o BatchMode=yes {args} {python_of(spec).split()[0]} -V` "
                "works from here without a password prompt: the host must be reachable, "
                "accept this machine's key, and have that Python")
    else:
        hint = "check that the host is reachable and runs that Python"
    return errors.NetloadEnvironmentError(
        f"engine host on {where} could not start ({type(exc).__name__}: {exc}); {hint}")


def probe(gateway: Any, spec: str, timeout_s: float = 60.0) -> dict[str, Any]:
    """The remote Python's package, version, ABI and native extension; raises
    NetloadEnvironmentError naming the host and the fix when one is missing or differs."""
    where = target(spec)
    try:
        info = dict(gateway.remote_exec(_PROBE).receive(timeout=timeout_s))
    except Exception as exc:  # noqa: BLE001 - EOFError, RemoteError, TimeoutError
        raise start_error(spec, exc) from None
    python = info.get("python", python_of(spec))
    install = ("install it there (as on this machine: scripts/setup.sh in a checkout of the "
               f"same version, {local_version()}), or point //python= at the Python that has it")
    if "missing" in info:
        raise errors.NetloadEnvironmentError(
            f"engine host on {where}: {python} cannot import pytest_netload "
            f"({info['missing']}); {install}")
    if info.get("version") != local_version() or info.get("abi") != ABI_VERSION:
        raise errors.NetloadEnvironmentError(
            f"engine host on {where} has pytest-netload {info.get('version')} (ABI "
            f"{info.get('abi')}) at {info.get('package')}, this client has {local_version()} "
            f"(ABI {ABI_VERSION}): install the same version on both")
    if info.get("native"):
        raise errors.NetloadEnvironmentError(
            f"engine host on {where}: pytest-netload is installed there ({info.get('package')})"
            f" without its native engine ({info['native']}); an engine host needs it: "
            "pip install 'pytest-netload[engine]' there, with DPDK 22.11's libdpdk-dev (in a "
            "checkout: scripts/setup.sh --generator)")
    return info


def fetch_tail(spec: str, log_path: str, lines: int, eal_args: list[str], *,
               timeout_s: float = TAIL_TIMEOUT_S) -> str:
    """The last `lines` of a crashed remote host's log (client._log_tail, run there),
    through a fresh gateway to the same host; that gateway also removes the host's
    runtime dir and marks its log dir as a crash's. Bounded by `timeout_s`; on failure
    a line that says why."""
    import execnet

    answer: list[str] = []
    failure: list[str] = []
    group = execnet.Group()

    def fetch() -> None:
        try:
            channel = group.makegateway(spec).remote_exec(_TAIL)
            channel.send((log_path, lines, eal_args))
            answer.append(str(channel.receive(timeout=timeout_s)))
        except Exception as exc:  # noqa: BLE001 - anything: the tail is best effort
            failure.append(f"{type(exc).__name__}: {exc}")

    worker = threading.Thread(target=fetch, name="netload-remote-tail", daemon=True)
    worker.start()
    worker.join(timeout_s)
    try:
        group.terminate(timeout=2.0)
    except Exception:  # noqa: BLE001, S110 - the link is gone already
        pass
    if answer:
        return answer[0]
    why = failure[0] if failure else f"no answer in {timeout_s:.0f} s"
    return f"(the log on {target(spec)} at {log_path} could not be fetched: {why})\n"
