"""The DUT hooks on the built-in netns-lossy DUT (about 20 s, root needed):
`.venv/bin/python -m pytest conftest_examples/dut_hooks`.

netns-lossy drops 1 % of the frames p0 -> p1 with an nftables rule; the built-in DUT's
counters hook reads that rule's counter around every trial, so every lost frame is
attributed to it, with 0 unaccounted. conftest.py checks the kernel log after every
trial (dut_health=True), and the reset comes from the built-in DUT's reset hook
(forwarding off for 0.5 s). results.json gets each trial's "loss_attribution" and
"dut_health", and conftest.py's "DUT kernel log" section (docs/hooks.md).

netns-lossy is the suite's own topology: a topology given to the session
(--netload-topology) replaces it. There the tests need what they check -- a DUT that
runs commands (the kernel log), its counters and a known loss, its reset -- and are
skipped, naming what is missing, where it lacks them.
"""

import pytest

from pytest_netload import assert_throughput

pytestmark = [
    pytest.mark.netload_topology("netns-lossy:loss_ratio=0.01", ids=["lossy"], default=True),
    pytest.mark.netload_requires(dut=True),  # conftest.py reads the DUT's kernel log
]

# 1 % of the frames are lost at every load: a 2 % tolerance lets the search climb to
# 50 kpps, and every trial still loses frames for the attribution to account for.
# 4 trials reach a bracket within 25 % (5 % would take 7).
SHORT = dict(dut_health=True, trial_duration="1s", drain="200ms", max_trials=4,
             resolution=0.25, frame_sizes=[64], loss_tolerance=0.02, max_rate="50kpps")


@pytest.mark.netload_requires(dut_counters=True, loss=True)
@pytest.mark.rfc2544(**SHORT)
def test_every_lost_frame_is_attributed(rfc2544):
    result = rfc2544.throughput()
    assert_throughput(result, at_least="10kpps")
    lossy = [t for t in result[64].trials if t.valid and t.lost > 0]
    assert lossy, "netns-lossy lost no frames"
    for trial in lossy:
        table = trial.attribution
        print(table.text())
        assert table.lost == trial.lost
        assert table.unaccounted == 0, table.as_dict()
        assert trial.dut_health == "ok"


@pytest.mark.netload_requires(dut_reset=True)
@pytest.mark.rfc2544(**SHORT, retries=4)  # a busy CPU's lag invalidates a reset trial
def test_reset_by_the_dut_hook(rfc2544):
    # no callable: the built-in DUT's pytest_netload_dut_reset stops it forwarding 0.5 s
    result = rfc2544.reset(load="20kpps", at="1s", duration="3s")[0]
    assert result.recovered
    assert 0.3 <= result.reset_s.mean <= 1.5
