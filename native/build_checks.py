"""What building pytest-netload-engine needs, checked before the compiler runs.

A missing piece, or a DPDK other than 22.11, is one sentence naming the fix instead of a
compiler's traceback. setup.py calls these for the commands that compile; making an sdist
or the metadata needs none of it. No side effects at import (tests load this file).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sysconfig
from collections.abc import Mapping

SUPPORTED_DPDK = "22.11"
"""The DPDK release the native core is written and tested against (its LTS series)."""
ALLOW_ENV = "NETLOAD_ALLOW_ANY_DPDK"
"""Set to 1 to build against another DPDK release: a warning instead of the error."""


def dpdk_version() -> str | None:
    """DPDK's version as `pkg-config --modversion libdpdk` says it, e.g. '22.11.11'; None
    when pkg-config finds no libdpdk."""
    try:
        done = subprocess.run(["pkg-config", "--modversion", "libdpdk"], check=True,
                              capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return done.stdout.strip() or None


def check_dpdk_version(found: str, env: Mapping[str, str] = os.environ) -> str | None:
    """None when `found` is a 22.11 release; a warning's text when it is another release and
    NETLOAD_ALLOW_ANY_DPDK=1; otherwise SystemExit naming the version and the fixes."""
    if found == SUPPORTED_DPDK or found.startswith(SUPPORTED_DPDK + "."):
        return None
    where = env.get("PKG_CONFIG_PATH", "")
    source = f" (PKG_CONFIG_PATH={where})" if where else ""
    if env.get(ALLOW_ENV, "0") not in ("", "0"):
        return (f"warning: building pytest-netload-engine against DPDK {found}{source}, not "
                f"the supported {SUPPORTED_DPDK} ({ALLOW_ENV}=1): the native core is untested "
                "there; a failure in it is not a DUT's")
    raise SystemExit(
        f"pytest-netload-engine supports DPDK {SUPPORTED_DPDK}, but pkg-config libdpdk found "
        f"DPDK {found}{source}. Install DPDK {SUPPORTED_DPDK} (Debian 12: apt-get install "
        f"libdpdk-dev) or point PKG_CONFIG_PATH at a {SUPPORTED_DPDK} build; or set "
        f"{ALLOW_ENV}=1 to build against {found} anyway (a warning instead of this error)")


def missing_for_the_extension() -> list[str]:
    """What building the extension lacks on this machine: one reason per missing piece."""
    reasons = []
    if dpdk_version() is None:
        reasons.append(f"DPDK {SUPPORTED_DPDK}'s development files (pkg-config libdpdk finds "
                       "none: apt-get install libdpdk-dev pkg-config)")
    compiler = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None:
        reasons.append(f"a C compiler ({compiler} is not on PATH: apt-get install build-essential)")
    include = sysconfig.get_paths()["include"]
    if not os.path.exists(os.path.join(include, "Python.h")):
        reasons.append(f"Python's headers ({include}/Python.h: apt-get install python3-dev)")
    return reasons
