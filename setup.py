"""setuptools needs this file only to build the cffi extension (API mode).

NETLOAD_CLIENT_ONLY=1 builds without it: a client-only install (a CI runner driving an
engine on another host) needs neither DPDK nor a compiler. Otherwise what the build needs
is checked first, so a missing piece is one sentence naming the fix, not a compiler's
traceback. Making an sdist or the metadata needs none of it.
"""

import os
import shutil
import subprocess
import sys
import sysconfig

from setuptools import setup

CLIENT_ONLY = os.environ.get("NETLOAD_CLIENT_ONLY", "0") not in ("", "0")
# the commands that compile; metadata (egg_info, dist_info) and sdist never do
BUILD_COMMANDS = {"build", "build_ext", "bdist", "bdist_wheel", "bdist_egg", "install", "develop",
                  "editable_wheel"}
CLIENT_FIX = "; or set NETLOAD_CLIENT_ONLY=1 for a client-only install (no engine on this host)"


def missing_for_the_extension():
    """What building the extension lacks on this machine: one reason per missing piece."""
    reasons = []
    try:
        subprocess.run(["pkg-config", "--exists", "libdpdk"], check=True)
    except (OSError, subprocess.CalledProcessError):
        reasons.append("DPDK 22.11's development files (pkg-config libdpdk finds none: "
                       "apt-get install libdpdk-dev pkg-config)")
    compiler = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None:
        reasons.append(f"a C compiler ({compiler} is not on PATH: apt-get install build-essential)")
    include = sysconfig.get_paths()["include"]
    if not os.path.exists(os.path.join(include, "Python.h")):
        reasons.append(f"Python's headers ({include}/Python.h: apt-get install python3-dev)")
    return reasons


if CLIENT_ONLY or not BUILD_COMMANDS.intersection(sys.argv[1:]):
    setup()
else:
    missing = missing_for_the_extension()
    if missing:
        sys.exit("pytest-netload's native engine cannot be built here; it needs "
                 + "; ".join(missing) + " (scripts/setup.sh installs them all)" + CLIENT_FIX)
    setup(cffi_modules=["pytest_netload/engine/_build.py:ffibuilder"])
