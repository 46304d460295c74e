"""A generator stall in an RFC 2544 search, on a shaper with a small queue and a known answer.

netns-shaped shapes p0 -> p1 to 10 Mbit/s with an 8,000-byte queue (6.4 ms at its rate)
and its default 5,000-byte bucket: 512-B frames pass at 2,460.6 pps. The engine host is
stopped (SIGSTOP) for 20 ms one second into the search's first trial between 85 % and
99 % of that capacity: its catch-up burst, about 23,000 bytes back to back, outgrows
the bucket and the queue, and the shaper drops frames a punctual sender gets through.
The lag is within the 1 % of a 3-s trial the generic lag rule grants, so before the
shaper's queue was weighed that trial failed as the DUT's and the search came out low
(1,950 pps, 21 % under; as test_replay_rfc2544's once did on a loaded machine). Now the
trial is invalid, naming the lag and the shaper's queue, it is retried at the same
load, and the search finds the shaper's capacity.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="built-in DUTs need root (CI runs as root)"),
]

RATE = 10_000_000
QUEUE = 8_000
SHAPED = f"netns-shaped:rate_bps={RATE},limit_bytes={QUEUE}"

CONFTEST = f"""
import os
import signal
import threading
import time

from pytest_netload.topology.builtin import shaper_capacity_pps

CAPACITY = shaper_capacity_pps({RATE}, 512)
STALL = {{"pid": None, "loads": []}}


def stall(pid, at_s, for_s):
    time.sleep(at_s)
    os.kill(pid, signal.SIGSTOP)
    time.sleep(for_s)
    os.kill(pid, signal.SIGCONT)


def pytest_netload_before_trial(trial, dut):
    if STALL["pid"] is None or STALL["loads"] or trial.procedure != "throughput":
        return
    if 0.85 * CAPACITY <= trial.offered_pps < 0.99 * CAPACITY:
        STALL["loads"].append(trial.offered_pps)
        threading.Thread(target=stall, args=(STALL["pid"], 1.0, 0.02), daemon=True).start()
"""

SEARCH = f"""
import pytest

from calm import excused_by_a_busy_ceiling
from conftest import CAPACITY, STALL


@pytest.mark.rfc2544(frame_sizes=[512], trial_duration="3s", drain="100ms",
                     max_rate="2600pps", resolution=0.01, max_trials=12)
def test_search_stalled(rfc2544):
    STALL["pid"] = rfc2544.engine._hello().pid
    found = rfc2544.throughput()[512]
    assert STALL["loads"], "no trial of the search was in the stall's window"
    load = STALL["loads"][0]
    at_load = [t for t in found.trials if t.offered_pps == load]
    # counts only: a reason quotes lag_cause, whose words the harness reads as proof
    print("AT_LOAD", load, [(t.valid, t.tx_packets - t.rx_packets) for t in at_load])
    print("FOUND", found.throughput_pps, "CAPACITY", CAPACITY)
    spoiled = at_load[0]
    assert not spoiled.valid and spoiled.tx_packets > spoiled.rx_packets
    if "behind its schedule" not in spoiled.invalid_reason:
        assert "late (its worst TX lag)" in spoiled.invalid_reason
        assert "more than half the queue of the DUT's shaper ({QUEUE:,} bytes)" \\
            in spoiled.invalid_reason
    # else a loaded machine stretched the 20-ms stop past the generic rule's bound (1 % of
    # the trial), which then names the lag first: the trial is invalid all the same
    print("GENERIC" if "behind its schedule" in spoiled.invalid_reason else "SHAPER")
    assert len(at_load) >= 2 and at_load[1].valid, "the spoiled trial was not retried"
    # the stall's own reason names a wait for the CPU: only the other trials may excuse
    others = [t for t in found.trials if t is not spoiled]
    with excused_by_a_busy_ceiling(others, found.generator_ceiling_pps):
        assert abs(found.throughput_pps - CAPACITY) / CAPACITY < 0.02
"""


def test_a_stall_that_overflows_the_shapers_queue_is_retried(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_search_stalled=SEARCH)
    shutil.copy(Path(__file__).with_name("calm.py"), pytester.path)  # its busy-machine skip
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly",
                                           "-s", "-rs", f"--netload-topology={SHAPED}",
                                           timeout=300)
    # Not calm.judged_unless_the_machine_was_busy: the stalled trial's own reason, on the
    # progress line, reads as its proof of a busy machine, so any failure would pass as
    # one. Only the inner test's skip (a search that hit a busy generator's ceiling in
    # its other trials) excuses.
    if result.parseoutcomes().get("skipped") == 1 and \
            any("busy machine:" in line for line in result.outlines):
        pytest.skip("busy machine: the search hit the generator's ceiling")
    result.assert_outcomes(passed=1)
