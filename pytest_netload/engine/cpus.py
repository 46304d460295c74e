"""The CPUs an engine may use: CPU numbers checked against this process's affinity,
and written as ranges ('0-3,6'). The plugin checks a topology's `lcores` here, and
`client.Engine` moves this process's threads off its workers' CPUs
(`FIRST_AFFINITY`: each thread's CPUs before any engine moved it)."""

from __future__ import annotations

import os
from collections.abc import Iterable

from .. import errors

__all__ = ["FIRST_AFFINITY", "check_cpus", "cpu_ranges"]

# Each thread's CPUs before any engine of this process moved it (thread id -> CPUs).
FIRST_AFFINITY: dict[int, set[int]] = {}


def cpu_ranges(cpus: Iterable[int]) -> str:
    """'0-3,6' for CPUs 0, 1, 2, 3 and 6."""
    runs: list[list[int]] = []
    for cpu in sorted(set(cpus)):
        if runs and runs[-1][1] == cpu - 1:
            runs[-1][1] = cpu
        else:
            runs.append([cpu, cpu])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def check_cpus(cpus: object, what: str, *, local: bool = True) -> list[int]:
    """`cpus` as a list of CPU numbers; with `local`, each one this process may run on
    (its affinity), else NetloadConfigError naming `what` and the CPUs there are."""
    if isinstance(cpus, (str, bytes)) or not isinstance(cpus, Iterable):
        raise errors.NetloadConfigError(f"{what}={cpus!r}: give a list of CPU numbers, "
                                        "e.g. [2, 3]")
    out = list(cpus)
    for cpu in out:
        if isinstance(cpu, bool) or not isinstance(cpu, int) or cpu < 0:
            raise errors.NetloadConfigError(f"{what}: {cpu!r} is not a CPU number; give "
                                            "non-negative integers, e.g. [2, 3]")
    if local:
        # (with the CPUs an engine of this process moved its threads off, which stay usable)
        allowed = os.sched_getaffinity(0).union(*FIRST_AFFINITY.values())
        missing = [cpu for cpu in out if cpu not in allowed]
        if missing:
            raise errors.NetloadConfigError(
                f"{what}={out!r}: CPU {missing[0]} is not one this machine lets the engine "
                f"use; its CPUs are {cpu_ranges(allowed)}: give some of those (or leave "
                f"{what} out)")
    return out
