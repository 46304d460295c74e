"""The `config.stash` keys the plugin's modules share.

The session's settings (set at configure), a topology file's model, the
baseline document, and the generator's and the DUT's metadata for the results
file. Here, not in fixtures.py, so markers.py and terminal.py read them without
importing the fixtures.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from ..topology.model import Topology
    from .options import Settings

__all__ = ["ACTIVE_KEY", "BASELINE_KEY", "DUT_FACTS_KEY", "DUT_KEY", "ENVIRONMENT_KEY", "SETTINGS_KEY",
           "TOPOLOGY_KEY"]

SETTINGS_KEY = pytest.StashKey["Settings"]()
ACTIVE_KEY = pytest.StashKey[bool]()  # the session collected a netload test (plugin.activate)
TOPOLOGY_KEY = pytest.StashKey["Topology"]()  # a topology file's model, loaded at configure
BASELINE_KEY = pytest.StashKey[dict[str, Any]]()  # --netload-baseline's document
ENVIRONMENT_KEY = pytest.StashKey[dict[str, Any]]()  # the generator and its ports, for results
DUT_KEY = pytest.StashKey[dict[str, Any]]()  # a built-in DUT's metadata, for results
DUT_FACTS_KEY = pytest.StashKey[dict[str, str]]()  # the pytest_netload_dut_info hooks' facts
