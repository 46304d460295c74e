"""Topologies: the model (ports, wires, addresses), topology files and the built-in netns DUTs.

Every name is imported when first used (PEP 562): the model and the TOML loader,
the built-in topologies and the nftables helpers (which pull in pyroute2). So a
light submodule (capabilities.py, which the plugin registers in every session)
costs its own import only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_netload.topology.model import Flow, PortSpec, Topology, Wire
    from pytest_netload.topology.ssh import DutSsh
    from pytest_netload.topology.toml import load_topology, parse_topology
    from pytest_netload.topology.builtin import (
        BUILTIN,
        BuiltTopology,
        Dut,
        build,
        loopback,
        netns_bridge,
        netns_lossy,
        netns_router,
        netns_shaped,
        ovs_dpdk,
        ovs_policer_capacity_pps,
        shaper_capacity_pps,
        sweep_stale,
    )
    from pytest_netload.topology.nft import NftDropRule, drop_every_nth, drop_random

__all__ = [
    "BUILTIN",
    "BuiltTopology",
    "Dut",
    "DutSsh",
    "Flow",
    "NftDropRule",
    "PortSpec",
    "Topology",
    "Wire",
    "build",
    "drop_every_nth",
    "drop_random",
    "load_topology",
    "loopback",
    "netns_bridge",
    "netns_lossy",
    "netns_router",
    "netns_shaped",
    "ovs_dpdk",
    "ovs_policer_capacity_pps",
    "parse_topology",
    "shaper_capacity_pps",
    "sweep_stale",
]

_LAZY = {
    "Flow": "model",
    "PortSpec": "model",
    "Topology": "model",
    "Wire": "model",
    "DutSsh": "ssh",
    "load_topology": "toml",
    "parse_topology": "toml",
    "BUILTIN": "builtin",
    "BuiltTopology": "builtin",
    "Dut": "builtin",
    "build": "builtin",
    "loopback": "builtin",
    "netns_bridge": "builtin",
    "netns_lossy": "builtin",
    "netns_router": "builtin",
    "netns_shaped": "builtin",
    "ovs_dpdk": "builtin",
    "ovs_policer_capacity_pps": "builtin",
    "shaper_capacity_pps": "builtin",
    "sweep_stale": "builtin",
    "NftDropRule": "nft",
    "drop_every_nth": "nft",
    "drop_random": "nft",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
