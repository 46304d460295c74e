"""Run every benchmark and write one JSON with every figure and the machine's description.

Each benchmark is a script here that prints its headline as its last line on stdout
(`name: value`, some with a second `name: value` pair on that line). This runs them
one after another (never two at once: they would share the CPUs they measure), keeps
the figures of each last line, its wall time and exit status, and writes them with
what the machine was (CPU model, CPUs, memory, kernel, DPDK, Python, the package and
its git commit), so that two runs, on two days or two machines, can be compared.

Usage: python benchmarks/run_all.py [--out FILE] [--only NAME ...] [--skip NAME ...]
                                    [--timeout SECONDS]
The default skips `soak` (10 minutes); `--only soak` runs it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
LONG = {"soak"}  # run only when named in --only
HEADLINE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*):\s+(-?[0-9][0-9.eE+-]*)")


def scripts() -> list[str]:
    return sorted(p.stem for p in HERE.glob("*.py")
                  if not p.stem.startswith("_") and p.stem != "run_all")


def headline(stdout: str) -> dict[str, float]:
    """The figures of the last non-empty line: every `name: number` pair on it."""
    lines = [ln for ln in stdout.splitlines() if ln.strip()]
    if not lines:
        return {}
    return {name: float(value) for name, value in HEADLINE.findall(lines[-1])}


def _out(cmd: list[str]) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30,
                              check=False).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    model = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            model = next((ln.split(":", 1)[1].strip() for ln in f
                          if ln.startswith("model name")), "")
    except OSError:
        pass
    memory_kib = 0
    try:
        with open("/proc/meminfo", encoding="utf-8") as f:
            memory_kib = int(next(ln.split()[1] for ln in f if ln.startswith("MemTotal")))
    except (OSError, StopIteration, ValueError):
        pass
    try:
        from importlib import metadata

        version = metadata.version("pytest-netload")
    except Exception:  # noqa: BLE001 - not installed: the figures still count
        version = "unknown"
    commit = _out(["git", "-C", str(HERE), "rev-parse", "HEAD"])
    dirty = bool(_out(["git", "-C", str(HERE), "status", "--porcelain", "--untracked-files=no"]))
    return {
        "hostname": platform.node(),
        "cpu_model": model,
        "cpus_online": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)),
        "memory_gib": round(memory_kib / 2**20, 1),
        "kernel": platform.release(),
        "os": _out(["sh", "-c", ". /etc/os-release && echo $PRETTY_NAME"]),
        "dpdk": _out(["pkg-config", "--modversion", "libdpdk"]),
        "python": platform.python_version(),
        "pytest_netload": version,
        "git_commit": commit + ("-dirty" if dirty else ""),
        "load_average": list(os.getloadavg()),
    }


def run(name: str, timeout_s: float) -> dict[str, Any]:
    started = time.monotonic()
    try:
        proc = subprocess.run([sys.executable, str(HERE / f"{name}.py")], capture_output=True,
                              text=True, timeout=timeout_s, check=False, cwd=HERE)
        status, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        status = None
        stdout = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        stderr = f"timed out after {timeout_s:.0f} s"
    took = time.monotonic() - started
    figures = headline(stdout) if status == 0 else {}
    out: dict[str, Any] = {"exit_status": status, "wall_s": round(took, 1), "figures": figures,
                           "headline": next((ln for ln in reversed(stdout.splitlines())
                                             if ln.strip()), "")}
    if status != 0 or not figures:
        out["error"] = (stderr or stdout)[-2000:] or "no headline line on stdout"
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="benchmark-results.json",
                        help="the JSON file to write (default: %(default)s)")
    parser.add_argument("--only", nargs="*", default=[], help="run only these benchmarks")
    parser.add_argument("--skip", nargs="*", default=[], help="leave these out")
    parser.add_argument("--timeout", type=float, default=900.0,
                        help="seconds one benchmark may take (default: %(default)s)")
    args = parser.parse_args()
    known = scripts()
    unknown = [n for n in [*args.only, *args.skip] if n not in known]
    if unknown:
        parser.error(f"no benchmark named {', '.join(unknown)}; there are {', '.join(known)}")
    names = args.only or [n for n in known if n not in LONG]
    names = [n for n in names if n not in args.skip]
    doc: dict[str, Any] = {
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "benchmarks": {},
    }
    failed = 0
    for name in names:
        print(f"{name} ...", end=" ", flush=True)
        result = doc["benchmarks"][name] = run(name, args.timeout)
        failed += result["exit_status"] != 0 or not result["figures"]
        print(result["headline"] if not result.get("error") else
              f"FAILED ({result['exit_status']}): {result['error'].strip().splitlines()[-1:]}",
              flush=True)
        Path(args.out).write_text(json.dumps(doc, indent=2) + "\n")  # kept after each one
    print(f"wrote {args.out}")
    print(f"benchmarks_failed: {failed}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
