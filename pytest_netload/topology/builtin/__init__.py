"""Built-in topologies: real DUTs made of network namespaces and veth pairs.

Each topology is a context manager that builds everything with pyroute2,
yields a :class:`BuiltTopology` and removes everything it made on exit, also
on an exception or Ctrl-C inside the ``with`` block. A process that leaves
without unwinding is covered too: live topologies are torn down from an
``atexit`` hook and from a SIGTERM handler, and whatever a killed process
(SIGKILL, ``os._exit``, a crash) left behind is found and removed by
:func:`sweep_stale`, which keys on the creator's pid recorded in the
interface alias and in the namespace name.

One module per concern: ``names`` (tags, interface and namespace names, MACs,
vdev strings), ``kernel`` (root, sysctls, work inside a namespace, removals),
``cleanup`` (the teardown book, the atexit/SIGTERM hooks, the sweep), ``netns``
(veth pairs, offloads, the DUT namespace), ``dut`` (:class:`Dut`,
:class:`BuiltTopology`), one module per DUT kind (``loopback``, ``router``,
``shaped``, ``policed`` with ``bpfpolice``, ``lossy``,
``bridge``, ``testpmd`` with ``testpmd_proc``, ``ovs`` with ``ovs_proc``) and ``catalog`` (``BUILTIN``, :func:`build`).
This package re-exports the public names; a new DUT kind is a new module here,
a topology code in ``names`` and an entry in ``catalog.BUILTIN``.
"""

from __future__ import annotations

from pytest_netload.topology.builtin.bridge import netns_bridge
from pytest_netload.topology.builtin.catalog import BUILTIN, build
from pytest_netload.topology.builtin.cleanup import sweep_stale
from pytest_netload.topology.builtin.dut import BuiltTopology, Dut
from pytest_netload.topology.builtin.loopback import loopback
from pytest_netload.topology.builtin.lossy import netns_lossy
from pytest_netload.topology.builtin.names import BACKENDS, mac_for, new_tag, vdev_string
from pytest_netload.topology.builtin.ovs import ovs_dpdk, ovs_policer_capacity_pps
from pytest_netload.topology.builtin.policed import (
    netns_policed,
    policer_burst_frames,
    policer_conforming_pps,
)
from pytest_netload.topology.builtin.router import netns_router
from pytest_netload.topology.builtin.shaped import netns_shaped, shaper_capacity_pps

__all__ = [
    "BACKENDS",
    "BUILTIN",
    "BuiltTopology",
    "Dut",
    "build",
    "loopback",
    "mac_for",
    "netns_bridge",
    "netns_lossy",
    "netns_policed",
    "netns_router",
    "netns_shaped",
    "new_tag",
    "ovs_dpdk",
    "ovs_policer_capacity_pps",
    "policer_burst_frames",
    "policer_conforming_pps",
    "shaper_capacity_pps",
    "sweep_stale",
    "vdev_string",
]
