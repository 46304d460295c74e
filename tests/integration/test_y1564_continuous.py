"""The Y.1564 service performance test is one engine run: no gap between intervals.

On the built-in netns-policed DUT (a 10 Mbit/s policer, 12,500 B bucket), a 6 s SPT of a
service offered at 12.5 Mbit/s: the intervals follow each other without a pause (the
gap between interval k's last arrival and k+1's first is about one frame time at the
policed rate, never the ~0.13 s an engine run per interval left), and the policer's
bucket fills once, at the start: interval 0 passes about its 100 kbit more, the later
ones only the policed rate: over the run the policer passes its CIR and one bucket (when
each interval was its own run, each got a full bucket).
"""

from __future__ import annotations

import os

import pytest

from calm import judged_unless_the_machine_was_busy

pytest_plugins = ["pytester"]

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="built-in DUTs need root (CI runs as root)"),
]

POLICED = "netns-policed:cir_bps=10000000,cbs_bytes=12500"

SPT = """
import pytest

pytestmark = pytest.mark.netload_topology("{policed}", ids=["policed"])

@pytest.mark.y1564(services=[{{"name": "over", "cir": "12.5Mbit/s", "frame_size": 512,
                               "sac": {{"flr": "0.1%"}}}}], spt_duration="6s",
                   checkpoint=False)
def test_continuous(y1564):
    result = y1564.spt()
    (s,) = result.services
    ivs = y1564.spt_intervals
    assert len(ivs) == 6 and all(iv.valid[0] for iv in ivs), ivs
    gaps = [(b.first_rx_ns[0] - a.last_rx_ns[0]) / 1e9 for a, b in zip(ivs, ivs[1:])]
    ir = [iv.rx_unique[0] * 512 * 8 for iv in ivs]  # bits in each 1-s interval
    whole = y1564.engine.last_result.streams[0]  # every frame in exactly one interval
    assert sum(int(iv.tx_packets[0]) for iv in ivs) == whole.tx_packets
    assert sum(int(iv.rx_packets[0]) for iv in ivs) == whole.rx_packets
    assert sum(int(iv.latency_samples[0]) for iv in ivs) == whole.latency_samples
    print("GAPS_S", gaps)
    print("IR_BPS", ir)
    print("FIRST_LAST_NS", [(int(iv.first_rx_ns[0]), int(iv.last_rx_ns[0])) for iv in ivs])
    # one frame at the policed 10 Mbit/s is 0.41 ms, a pause between runs was ~130 ms;
    # a veth delivers in bursts as the machine schedules it: a few ms
    if not all(0 < g < 0.03 for g in gaps) and whole.tx_preemptions \
            and whole.tx_wait_cpu_ns > max(gaps) * 1e9:
        # the worker (TX and RX) lost its CPU longer than the gap: the machine's pause
        pytest.skip("busy machine: gaps %s; the worker waited %.0f ms for its CPU in %d "
                    "preemptions" % (gaps, whole.tx_wait_cpu_ns / 1e6, whole.tx_preemptions))
    assert all(0 < g < 0.03 for g in gaps), gaps  # RX polls in bursts on a busy veth
    # The policer passes at most its CIR plus one bucket over the whole run: its bucket
    # filled once. A run per interval refilled it in every pause (6 x 100 kbit here).
    # The sum, not each interval: which interval a frame near an end falls in moves
    # with the RX polls, the total does not.
    # 0.3 % of rate slack: the engine's TSC rate and the kernel's clock (the policer's)
    # were seen 0.15 % apart; a bucket per interval is 1 % an interval more.
    assert sum(ir) <= 6 * 10_000_000 * 1.003 + 12_500 * 8, ir
"""


def test_the_spt_intervals_follow_each_other_without_a_gap(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_spt=SPT.format(policed=POLICED))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly",
                                           "-s", "-rs", "--netload-report-dir=out",
                                           timeout=300)
    with judged_unless_the_machine_was_busy(result):
        result.assert_outcomes(passed=1)
