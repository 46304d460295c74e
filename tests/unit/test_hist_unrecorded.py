"""A stream whose histograms missed values (the run's page arena ran out) refuses
percentiles, naming the stream and the fix, and keeps its exact min/max/mean."""

import numpy as np
import pytest

from pytest_netload import NetloadConfigError
from pytest_netload.measure.histogram import LogHistogram
from pytest_netload.measure.results import StreamResult


def _stream(unrecorded: int) -> StreamResult:
    counts = np.zeros(16, dtype=np.uint64)
    counts[5] = 4
    return StreamResult(name="flow-9999", stream_id=0, tx_packets=4, tx_bytes=0, tx_unsent=0,
                        tx_alloc_failures=0, tx_first_ns=0, tx_last_ns=0, rx_packets=4,
                        rx_bytes=0, duplicates=0, reordered=0, rx_first_ns=0, rx_last_ns=0,
                        latency_min_ns=5, latency_max_ns=9, latency_sum_ns=24,
                        latency=LogHistogram(counts, np.arange(16, dtype=np.uint64)),
                        latency_samples=4, hist_unrecorded=unrecorded)


def test_a_stream_with_unrecorded_values_refuses_percentiles_naming_it_and_the_fix():
    s = _stream(1)
    with pytest.raises(NetloadConfigError, match=r"flow-9999.*1 values missed.*memory"):
        s.latency_result()
    assert (s.latency_min_ns, s.latency_max_ns, s.latency_mean_ns) == (5, 9, 6.0)


def test_a_stream_with_every_value_recorded_gives_percentiles():
    assert _stream(0).latency_result().percentile(50).value_ns == 5
