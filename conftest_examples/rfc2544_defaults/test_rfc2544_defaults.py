"""RFC 2544 §26.1 throughput at the RFC's own settings, end to end.

Nothing is shortened: 60 s trials (§24), the default binary search (zero loss,
resolution 0.5 % of the figure, at most 20 trials), a 2 s drain, learning frames,
one frame size. Run it on a DUT whose answer is known (about 12 minutes):

    .venv/bin/python -m pytest conftest_examples/rfc2544_defaults \
        --netload-topology=netns-shaped:rate_bps=20Mbit/s

On netns-shaped the throughput must lie within 1 % of the shaper's capacity; on any
DUT every trial must have run its full 60 s and sent what it was offered. The
project's CI only collects this suite (it takes minutes, not seconds); the README's
quick main job is conftest_examples/rfc2544.
"""

import pytest

from pytest_netload import assert_throughput
from pytest_netload.topology.builtin import shaper_capacity_pps


@pytest.mark.rfc2544(frame_sizes=[64])
def test_throughput_at_the_rfc_defaults(rfc2544, dut):
    result = rfc2544.throughput()[64]
    print(f"throughput {result.throughput_pps:,.0f} pps, bracket {result.bracket_pps}, "
          f"{len(result.trials)} trials")
    assert all(t.duration_s == 60.0 for t in result.trials)
    for trial in result.valid_trials:  # a valid trial sent its whole schedule
        assert trial.tx_packets >= 0.99 * trial.offered_pps * 60
    assert result.resolution_reached
    if "rate_bps" in dut.info:  # netns-shaped: the answer is known
        capacity = shaper_capacity_pps(int(dut.info["rate_bps"]), 64)
        print(f"shaper capacity {capacity:,.0f} pps: {result.throughput_pps / capacity - 1:+.2%}")
        assert abs(result.throughput_pps / capacity - 1) <= 0.01
    assert_throughput(result, at_least="1kpps")
