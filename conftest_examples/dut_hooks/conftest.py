"""DUT hooks for the built-in netns-lossy DUT: its facts, a kernel-log health check
after every trial, and a report section summarising the checks (docs/hooks.md).

The DUT's counters and its reset come from the built-in DUT's own hooks
(`BuiltinDutHooks`): this file adds what a lab adds for its own DUT. On a real DUT
reached over ssh (`[dut] ssh = 'user@host'` in the topology file) the same code runs
unchanged: `dut.run([...])` then runs the commands there.

`NETLOAD_EXAMPLE_INJECT=1` makes every trial write an error line to the kernel log
(/dev/kmsg, root only): the health check then fails the test with that line, which is
how tests/integration/test_dut_hooks_example.py shows that the check works.
"""

from __future__ import annotations

import os
import re

from pytest_netload import DutHealth

#: Kernel log lines that mean the DUT is not well.
ERROR = re.compile(r"\b(BUG|Oops|WARNING|segfault|netload-example-error)\b")

#: The kernel log position before the trial, and what the checks found.
_state = {"lines": 0, "last": "", "checks": 0, "new_lines": 0, "failed": ""}


def _runs_commands(dut) -> bool:
    """A DUT whose commands run here or over ssh: on another topology (a file with
    neither) these hooks stand aside, and the tests say what they miss."""
    return getattr(dut, "namespace", None) is not None or getattr(dut, "ssh", None) is not None


def _kernel_log(dut) -> list[str]:
    return dut.run(["dmesg"]).stdout.splitlines()


def pytest_netload_dut_info(config, dut):
    if not _runs_commands(dut):
        return None
    return {"kernel": dut.run(["uname", "-r"]).stdout.strip()}


def pytest_netload_before_trial(trial, dut):
    if not _runs_commands(dut):
        return
    lines = _kernel_log(dut)
    _state["lines"] = len(lines)
    _state["last"] = lines[-1] if lines else ""
    if os.environ.get("NETLOAD_EXAMPLE_INJECT") == "1":  # after the position: a new line
        with open("/dev/kmsg", "w", encoding="ascii") as kmsg:
            kmsg.write(f"netload-example-error: injected before {trial.procedure} trial "
                       f"{trial.number}\n")


def pytest_netload_dut_health(trial, dut, result):
    if not _runs_commands(dut):
        return None
    lines = _kernel_log(dut)
    start = _state["lines"]
    if start > len(lines) or (start and lines[start - 1] != _state["last"]):
        # the kernel's ring buffer wrapped: the new lines are those after the last one seen
        start = lines.index(_state["last"]) + 1 if _state["last"] in lines else 0
    new = lines[start:]
    _state["checks"] += 1
    _state["new_lines"] += len(new)
    for line in new:
        if ERROR.search(line):
            _state["failed"] = line
            return DutHealth.failed(f"kernel log: {line.strip()}")
    return None


def pytest_netload_report_sections(config, results):
    text = (f"{_state['checks']} kernel log checks after the trials, "
            f"{_state['new_lines']} new kernel log lines, pattern {ERROR.pattern}: ")
    text += f"failed on {_state['failed']!r}" if _state["failed"] else "no error line"
    return [("DUT kernel log", text)]
