"""Hugepages on this machine: how many are free, and the error that names the fix.

The engine uses them only where its whole memory is free in them (else memfd memory,
--no-huge); a DPDK DUT asked to run in them checks first, so that DPDK's bare "Cannot
allocate memory" never stands alone. Reads /proc and /sys only.
"""

from __future__ import annotations

import glob

from .errors import NetloadEnvironmentError

__all__ = ["HUGEPAGE_FIX", "check_hugepages", "hugepage_memory", "hugepages_available"]


def hugepage_memory() -> dict[str, int]:
    """Hugepages on this machine: `mounted` (1 when a hugetlbfs is mounted), and in
    MiB, summed over the page sizes, `free_mb` and `total_mb`."""
    try:
        with open("/proc/mounts", encoding="ascii") as f:
            mounted = any(len(parts) > 2 and parts[2] == "hugetlbfs"
                          for parts in (line.split() for line in f))
    except OSError:
        mounted = False
    free_mb = total_mb = 0
    for folder in glob.glob("/sys/kernel/mm/hugepages/hugepages-*kB"):
        size_kb = int(folder.rsplit("-", 1)[1][:-2])
        try:
            with open(f"{folder}/free_hugepages", encoding="ascii") as f:
                free = int(f.read().strip() or 0)
            with open(f"{folder}/nr_hugepages", encoding="ascii") as f:
                total = int(f.read().strip() or 0)
        except (OSError, ValueError):
            continue
        free_mb += free * size_kb // 1024
        total_mb += total * size_kb // 1024
    return {"mounted": int(mounted), "free_mb": free_mb, "total_mb": total_mb}


HUGEPAGE_FIX = ("reserve and mount them (as root: `bash scripts/setup.sh --hugepages=2048`, or "
                "`echo 1024 > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages` and "
                "`mount -t hugetlbfs nodev /dev/hugepages`), give the engine less memory "
                "(memory_mb=, --netload-engine-memory), or run it without hugepages "
                "(hugepages=False: vhost-user and memif ports work on its memfd memory)")


def hugepages_available(memory_mb: int = 1) -> bool:
    """True when hugetlbfs is mounted and at least `memory_mb` of hugepages are free."""
    found = hugepage_memory()
    return bool(found["mounted"]) and found["free_mb"] >= memory_mb


def check_hugepages(memory_mb: int, who: str = "the engine") -> None:
    """NetloadEnvironmentError naming the fix when hugepages were asked for but
    `memory_mb` of them are not free and mounted (what DPDK reports as "Cannot
    allocate memory", without the cause)."""
    found = hugepage_memory()
    if not found["mounted"]:
        raise NetloadEnvironmentError(
            f"{who} was asked to use hugepages (-m {memory_mb} MiB), but no hugetlbfs "
            f"is mounted: {HUGEPAGE_FIX}")
    if found["free_mb"] < memory_mb:
        held = found["total_mb"] - found["free_mb"]
        raise NetloadEnvironmentError(
            f"{who} asks for {memory_mb} MiB of hugepages (-m {memory_mb}), but only "
            f"{found['free_mb']} MiB of {found['total_mb']} MiB are free ({held} MiB held by "
            f"other processes, e.g. a DPDK DUT such as ovs-vswitchd or testpmd): {HUGEPAGE_FIX}")
