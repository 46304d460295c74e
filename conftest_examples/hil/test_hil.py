"""Hardware-in-the-loop acceptance: RFC 2544 throughput and latency of the DUT in
lab.toml, both directions at once, at the RFC's durations (60 s trials, 2 s drain,
20 latency trials). README.md says how to run and adapt it; .gitlab-ci.yml is the
CI job. HIL_QUICK=1 makes it a smoke run for merge requests: two frame sizes, a short
drain and 3 latency trials (give --netload-trial-duration=2s with it).

The requirements are the DUT's datasheet figures: change them here.
"""

import os

import pytest

from pytest_netload import assert_latency, assert_loss, assert_throughput

QUICK = os.environ.get("HIL_QUICK") == "1"
SIZES = [64, 1518] if QUICK else [64, 128, 256, 512, 1024, 1280, 1518]  # RFC 2544 §9.1
RUN = dict(drain="200ms") if QUICK else dict(trial_duration="60s", drain="2s")
LATENCY_TRIALS = 3 if QUICK else 20

THROUGHPUT = "95%"  # of the topology's line_rate, every size, each direction
LATENCY_P99 = "< 2ms"  # at the measured throughput


@pytest.mark.netload_requires(line_rate=True)  # THROUGHPUT is a share of it
@pytest.mark.rfc2544(frame_sizes=SIZES, direction="both", loss_tolerance=0, **RUN)
def test_throughput_and_latency(rfc2544, frame_size):
    throughput = rfc2544.throughput()
    assert_throughput(throughput, at_least=THROUGHPUT)
    latency = rfc2544.latency(throughput=throughput, trials=LATENCY_TRIALS)[0]
    assert_latency(latency, p99=LATENCY_P99)
    assert_loss(latency, at_most=0.001)
