"""cffi builder (API mode, out-of-line) for the native core: pytest_netload_engine._netload_native.

The cdef is include/netload_api.h itself, read verbatim: the one source of truth for the
C API. DPDK's flags come from `pkg-config libdpdk`. NETLOAD_NATIVE_CFLAGS and
NETLOAD_NATIVE_LDFLAGS add flags after ours (scripts/sanitize.sh builds an ASan/UBSan copy
with them). Importing this module only reads files and asks pkg-config; setup.py checks
what the build needs (DPDK's version among it) before cffi runs it.
"""

from __future__ import annotations

import os
import pathlib
import shlex
import subprocess

from cffi import FFI  # type: ignore[import-untyped]

HERE = pathlib.Path(__file__).resolve().parent
# relative to this directory, where setup.py runs (setuptools wants relative sources)
SOURCES = sorted(str(p.relative_to(HERE)) for p in (HERE / "src").glob("*.c"))


def _pkg_config(*args: str) -> list[str]:
    try:
        out = subprocess.run(
            ["pkg-config", *args, "libdpdk"], check=True, capture_output=True, text=True
        ).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        raise SystemExit(
            "pytest-netload-engine needs DPDK 22.11's development files: apt-get install "
            "libdpdk-dev pkg-config (or run the checkout's scripts/setup.sh); a host that "
            "only drives engines elsewhere needs only `pip install pytest-netload`"
        ) from exc
    return shlex.split(out)


HEADER = (HERE / "include" / "netload_api.h").read_text()

ffibuilder = FFI()
ffibuilder.cdef(HEADER)
ffibuilder.set_source(
    "pytest_netload_engine._netload_native",
    '#include "netload.h"',
    sources=SOURCES,
    include_dirs=["include"],
    # rte_eth_read_clock (the NIC clock behind hardware timestamps) is
    # experimental in DPDK 22.11.
    define_macros=[("ALLOW_EXPERIMENTAL_API", None)],
    extra_compile_args=["-O3", "-Wall", "-Wno-address-of-packed-member", *_pkg_config("--cflags"),
                        *shlex.split(os.environ.get("NETLOAD_NATIVE_CFLAGS", ""))],
    extra_link_args=[*_pkg_config("--libs"),
                     *shlex.split(os.environ.get("NETLOAD_NATIVE_LDFLAGS", ""))],
)

if __name__ == "__main__":
    os.chdir(HERE)
    ffibuilder.compile(tmpdir=str(HERE / "build" / "cffi"), verbose=True)
