"""cffi builder (API mode, out-of-line) for the native core.

The cdef is netload_api.h itself, read verbatim: the one source of truth for
the C API. DPDK's flags come from `pkg-config libdpdk`. NETLOAD_NATIVE_CFLAGS and
NETLOAD_NATIVE_LDFLAGS add flags after ours (scripts/sanitize.sh builds an
ASan/UBSan copy with them).
"""

from __future__ import annotations

import os
import pathlib
import runpy
import shlex
import subprocess

from cffi import FFI  # type: ignore[import-untyped]

ROOT = pathlib.Path(__file__).resolve().parents[2]
NATIVE = ROOT / "native"
SOURCES = sorted(str(p.relative_to(ROOT)) for p in (NATIVE / "src").glob("*.c"))



def _pkg_config(*args: str) -> list[str]:
    try:
        out = subprocess.run(
            ["pkg-config", *args, "libdpdk"], check=True, capture_output=True, text=True
        ).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        raise SystemExit(
            "pytest-netload's native engine needs DPDK 22.11's development files: "
            "run scripts/setup.sh (apt-get install libdpdk-dev pkg-config), or set "
            "NETLOAD_CLIENT_ONLY=1 for a client-only install (no engine on this host)"
        ) from exc
    return shlex.split(out)


HEADER = (NATIVE / "include" / "netload_api.h").read_text()


# the C facts Python reads without the extension: rewritten from the header on every build
runpy.run_path(str(NATIVE / "gen_facts.py"))["write"]()
ffibuilder = FFI()
ffibuilder.cdef(HEADER)
ffibuilder.set_source(
    "pytest_netload.engine._netload_native",
    '#include "netload.h"',
    sources=SOURCES,
    include_dirs=[str(NATIVE / "include")],
    # rte_eth_read_clock (the NIC clock behind hardware timestamps) is
    # experimental in DPDK 22.11.
    define_macros=[("ALLOW_EXPERIMENTAL_API", None)],
    extra_compile_args=["-O3", "-Wall", "-Wno-address-of-packed-member", *_pkg_config("--cflags"),
                        *shlex.split(os.environ.get("NETLOAD_NATIVE_CFLAGS", ""))],
    extra_link_args=[*_pkg_config("--libs"),
                     *shlex.split(os.environ.get("NETLOAD_NATIVE_LDFLAGS", ""))],
)

if __name__ == "__main__":
    ffibuilder.compile(tmpdir=str(ROOT / "build" / "cffi"), verbose=True)
