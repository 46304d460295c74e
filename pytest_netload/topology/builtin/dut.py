"""What a built-in topology hands out: the DUT handle and the built topology.

:class:`Dut` is the handle on a built DUT: its namespace, its interfaces, the
facts reported about it (``info``), commands run inside its namespace
(``ip netns exec``) and its interfaces' kernel counters. :class:`BuiltTopology`
is what every topology's context manager yields: the :class:`Topology` model
for the engine, and the DUT handle (None for ``loopback``, which has no DUT).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pyroute2 import IPRoute  # type: ignore[import-untyped,import-not-found,unused-ignore]
from pyroute2 import netns as _netns  # type: ignore[import-untyped,import-not-found,unused-ignore]

from pytest_netload.errors import NetloadConfigError, NetloadEnvironmentError
from pytest_netload.topology.model import Topology
from pytest_netload.topology.nft import NftDropRule

__all__ = ["BuiltTopology", "Dut"]


class Dut:
    """Handle on a built-in DUT: its namespace and interfaces.

    ``loss_rule`` is the nftables rule of ``netns-lossy`` (its ``dropped()``
    reads the rule's own counter); None on the other DUTs.
    """

    def __init__(
        self,
        namespace: str,
        interfaces: Sequence[str],
        info: Mapping[str, str],
        loss_rule: NftDropRule | None = None,
    ) -> None:
        self.namespace = namespace
        self.interfaces = tuple(interfaces)
        self.info = dict(info)
        self.loss_rule = loss_rule

    def __repr__(self) -> str:
        return f"Dut(namespace={self.namespace!r}, interfaces={self.interfaces!r})"

    def run(
        self,
        cmd: Sequence[str],
        *,
        input: str | None = None,
        check: bool = True,
        timeout_s: float = 30.0,
    ) -> subprocess.CompletedProcess[str]:
        """Run ``cmd`` inside the DUT namespace (``ip netns exec``); text output captured.

        With ``check`` (the default) a non-zero exit raises
        ``NetloadEnvironmentError`` carrying the command's stderr.
        """
        if isinstance(cmd, str) or not cmd:
            raise NetloadConfigError(
                f"cmd = {cmd!r} must be a non-empty list of arguments, "
                "e.g. ['nft', 'list', 'ruleset']"
            )
        ip = shutil.which("ip")
        if ip is None:
            raise NetloadEnvironmentError(
                "`ip` (iproute2) is not installed; Dut.run needs `ip netns exec` "
                "(Debian/Ubuntu: apt-get install iproute2)"
            )
        full = [ip, "netns", "exec", self.namespace, *cmd]
        try:
            proc = subprocess.run(
                full, input=input, capture_output=True, text=True, timeout=timeout_s, check=False
            )
        except subprocess.TimeoutExpired as exc:
            raise NetloadEnvironmentError(
                f"{list(cmd)} in DUT namespace {self.namespace} did not finish within "
                f"{timeout_s} s; pass a larger timeout_s if it is expected to take longer"
            ) from exc
        if check and proc.returncode != 0:
            raise NetloadEnvironmentError(
                f"{list(cmd)} in DUT namespace {self.namespace} failed with exit status "
                f"{proc.returncode}: {proc.stderr.strip() or proc.stdout.strip()}"
            )
        return proc

    def counters(self) -> dict[str, dict[str, int]]:
        """Per DUT interface: rx/tx packets, bytes and drops (kernel IFLA_STATS64)."""
        if self.namespace not in _netns.listnetns():
            raise NetloadEnvironmentError(
                f"DUT namespace {self.namespace} no longer exists; read counters inside "
                "the topology's `with` block"
            )
        keys = ("rx_packets", "tx_packets", "rx_bytes", "tx_bytes", "rx_dropped", "tx_dropped")
        result: dict[str, dict[str, int]] = {}
        with IPRoute(netns=self.namespace, flags=0) as ipr:
            for link in ipr.get_links():
                name = link.get("IFLA_IFNAME")
                if name not in self.interfaces:
                    continue
                stats = link.get("IFLA_STATS64") or link.get("IFLA_STATS") or {}
                result[name] = {key: int(stats.get(key, 0)) for key in keys}
        return result


@dataclass(frozen=True)
class BuiltTopology:
    """What a built-in topology yields: the model, and the DUT handle (None without DUT)."""

    topology: Topology
    dut: Dut | None
