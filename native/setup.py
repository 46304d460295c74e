"""setuptools needs this file only to build the cffi extension (API mode).

What the build needs is checked first (build_checks.py): a missing piece, or a DPDK other
than 22.11, is one sentence naming the fix, not a compiler's traceback. Making an sdist or
the metadata needs none of it.

Developers rebuild the extension in place from the repository's root with
    .venv/bin/python native/setup.py build_ext --inplace
(this file runs from its own directory, wherever it is started from).
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
os.chdir(HERE)
sys.path.insert(0, HERE)

from setuptools import setup  # noqa: E402

from build_checks import check_dpdk_version, dpdk_version, missing_for_the_extension  # noqa: E402

# the commands that compile; metadata (egg_info, dist_info) and sdist never do
BUILD_COMMANDS = {"build", "build_ext", "bdist", "bdist_wheel", "bdist_egg", "install", "develop",
                  "editable_wheel"}
CLIENT = ("; a host that only drives engines elsewhere (a CI runner) needs only "
          "`pip install pytest-netload`, without this package")


def facts_in_checkout() -> None:
    """In the repository (not in an sdist of this package), rewrite the C facts the Python
    package reads without the extension (pytest_netload/_native_facts.py) from the header:
    native/gen_facts.py; tests/unit/test_native_facts.py checks the checked-in file."""
    if os.path.isdir(os.path.join(HERE, "..", "pytest_netload")):
        import runpy

        runpy.run_path(os.path.join(HERE, "gen_facts.py"))["write"]()


if not BUILD_COMMANDS.intersection(sys.argv[1:]):
    setup()
else:
    missing = missing_for_the_extension()
    if missing:
        sys.exit("pytest-netload-engine (the native DPDK engine) cannot be built here; it needs "
                 + "; ".join(missing) + CLIENT)
    warning = check_dpdk_version(dpdk_version() or "")
    if warning:
        print(warning, file=sys.stderr)
    facts_in_checkout()
    # cffi builds the extension on the stable ABI (abi3): one wheel for CPython 3.11 and later
    setup(cffi_modules=["netload_build.py:ffibuilder"],
          options={"bdist_wheel": {"py_limited_api": "cp311"}})
