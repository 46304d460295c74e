"""The catalogue of built-in topologies: their names and :func:`build`, the one entry by name.

``BUILTIN`` maps each topology's name (as ``--netload-topology`` and
``build()`` take it) to its function in its own module; :func:`build` checks
the name, then the parameters against that function's signature, then root,
all before anything is created.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable
from typing import Any

from pytest_netload.errors import NetloadConfigError
from pytest_netload.topology.builtin.bridge import netns_bridge
from pytest_netload.topology.builtin.dut import BuiltTopology
from pytest_netload.topology.builtin.kernel import _require_root
from pytest_netload.topology.builtin.loopback import loopback
from pytest_netload.topology.builtin.lossy import netns_lossy
from pytest_netload.topology.builtin.ovs import ovs_dpdk
from pytest_netload.topology.builtin.policed import netns_policed
from pytest_netload.topology.builtin.router import netns_router
from pytest_netload.topology.builtin.shaped import netns_shaped
from pytest_netload.topology.builtin.testpmd import dpdk_testpmd

__all__ = ["BUILTIN", "build"]


BUILTIN: dict[str, Callable[..., contextlib.AbstractContextManager[BuiltTopology]]] = {
    "loopback": loopback,
    "netns-router": netns_router,
    "netns-shaped": netns_shaped,
    "netns-policed": netns_policed,
    "netns-lossy": netns_lossy,
    "netns-bridge": netns_bridge,
    "dpdk-testpmd": dpdk_testpmd,
    "ovs-dpdk": ovs_dpdk,
}


def build(name: str, **params: Any) -> contextlib.AbstractContextManager[BuiltTopology]:
    """The built-in topology ``name`` as a context manager: ``with build("netns-router") as b:``.

    ``params`` are the keyword parameters of the topology's function
    (``backend``, ``prefix`` and, for example, ``rate_bps`` of ``netns-shaped``).
    They are checked before anything else, root included.
    """
    factory = BUILTIN.get(name)
    if factory is None:
        raise NetloadConfigError(
            f"topology = {name!r} is not a built-in topology; use one of {sorted(BUILTIN)}"
        )
    allowed = inspect.signature(factory).parameters
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        takes = ", ".join(f"`{key}`={p.default!r}" for key, p in allowed.items())
        raise NetloadConfigError(
            f"built-in topology {name!r} takes {takes} (the defaults), not {unknown}"
        )
    cm = factory(**params)  # validates every parameter, creates nothing yet
    _require_root()
    return cm
