"""What the plugin costs a pytest session that has no netload test: the same two plain
tests run with the plugin and with `-p no:netload` (pytest loads it from its entry
point otherwise), alternating rounds (the order flips each round), wall time of the
whole process. Also the import time of pytest_netload's own modules in such a session
(`python -X importtime`, their self times summed). Bytecode is written and used as on a
user's machine (PYTHONDONTWRITEBYTECODE is dropped for the runs; a first run compiles).
Target: the session is at most 50 ms slower with the plugin.
Usage: python benchmarks/idle_session.py [rounds]
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PLAIN = "def test_a():\n    assert sum(range(10)) == 45\n\n\ndef test_b():\n    assert 1 + 1 == 2\n"


def session(cwd: Path, env: dict[str, str]) -> float:
    """One pytest session's wall seconds; it must pass, printing nothing of ours."""
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p",
                          "no:cacheprovider", "test_plain.py"], cwd=cwd, env=env,
                         capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if out.returncode != 0 or "netload" in out.stdout:
        raise SystemExit(f"the plain session failed or printed the plugin's lines:\n"
                         f"{out.stdout}{out.stderr}")
    return elapsed


def own_import_ms(cwd: Path, env: dict[str, str]) -> float:
    out = subprocess.run([sys.executable, "-X", "importtime", "-m", "pytest", "-q", "-p",
                          "no:cacheprovider", "test_plain.py"], cwd=cwd, env=env,
                         capture_output=True, text=True, check=False)
    self_us = [int(line.split("|")[0].split(":")[1]) for line in out.stderr.splitlines()
               if line.startswith("import time:") and "pytest_netload" in line]
    return sum(self_us) / 1e3


def main() -> None:
    arg = sys.argv[1] if len(sys.argv) > 1 else "15"
    if not arg.isdigit() or int(arg) < 1:
        raise SystemExit(f"idle_session: rounds {arg!r}: give a whole number of rounds "
                         "of at least 1, e.g. 15")
    rounds = int(arg)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory(prefix="netload-idle-") as tmp:
        cwd = Path(tmp)
        (cwd / "test_plain.py").write_text(PLAIN)
        off = {**env, "PYTEST_ADDOPTS": "-p no:netload"}
        for _ in range(2):  # compile, and warm the page cache for both
            session(cwd, env), session(cwd, off)
        with_plugin, without = [], []
        for i in range(rounds):
            order = (True, False) if i % 2 == 0 else (False, True)
            for plugin in order:
                if plugin:
                    with_plugin.append(session(cwd, env))
                else:
                    without.append(session(cwd, off))
        imports = statistics.median(own_import_ms(cwd, env) for _ in range(5))
    a, b = statistics.median(with_plugin), statistics.median(without)
    print(f"session with the plugin {a * 1e3:.1f} ms, with -p no:netload {b * 1e3:.1f} ms "
          f"(medians of {rounds}); pytest_netload's own imports {imports:.1f} ms")
    print(f"idle_session_overhead_ms: {(a - b) * 1e3:.1f}")


if __name__ == "__main__":
    main()
