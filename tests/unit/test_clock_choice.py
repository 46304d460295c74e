"""Which clock a stream's latency is timed on: pure logic over port capabilities."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from pytest_netload import NetloadConfigError, NetloadEnvironmentError
from pytest_netload.engine.client import check_clock, hardware_clock
from pytest_netload.measure.histogram import LogHistogram
from pytest_netload.measure.results import StreamResult, clock_fields


def port(device: str, hw: bool, **caps: bool) -> SimpleNamespace:
    info = {"hw_timestamps": hw, "nic_clock_hz": 1_000_000_000 if hw else 0, **caps}
    return SimpleNamespace(device=device, driver="mlx5_pci" if hw else "net_null", info=info)


def stream(clock: str, tx: SimpleNamespace) -> SimpleNamespace:
    return SimpleNamespace(name="s", clock=clock, port=tx)


def test_auto_uses_hardware_only_when_every_port_has_it() -> None:
    a, b, c = port("A", True), port("B", True), port("C", False)
    assert hardware_clock(stream("auto", a), [b]) is True
    assert hardware_clock(stream("auto", a), [b, c]) is False
    assert hardware_clock(stream("auto", c), [a]) is False
    assert hardware_clock(stream("auto", a), []) is False
    assert hardware_clock(stream("tsc", a), [b]) is False


def test_hardware_on_a_run_with_a_port_lacking_it_names_the_port() -> None:
    a, c = port("A", True), port("C", False)
    assert hardware_clock(stream("hardware", a), [a]) is True
    with pytest.raises(NetloadEnvironmentError, match=r"\['C'\].*clock='tsc' or 'auto'"):
        hardware_clock(stream("hardware", a), [c])


def test_load_refuses_hardware_naming_what_the_port_has() -> None:
    check_clock("hardware", port("A", True))
    check_clock("auto", port("C", False))
    with pytest.raises(NetloadEnvironmentError, match="only IEEE 1588 timesync;"):
        check_clock("hardware", port("T", False, has_timesync=True))
    with pytest.raises(NetloadEnvironmentError,
                       match="RX timestamp offload, and it was opened without hw_timestamps"):
        check_clock("hardware", port("R", False, has_rx_timestamp=True))
    with pytest.raises(NetloadConfigError, match="'sundial'.*'auto', 'tsc', 'hardware'"):
        check_clock("sundial", port("A", True))


def test_a_hardware_timed_result_reports_its_clock_and_tick() -> None:
    fields = clock_fields(("nic-hardware", 1.0), tsc_hz=2_000_000_000)
    assert fields == {"clock": "nic-hardware", "clock_resolution_ns": 1.0}
    assert clock_fields(None, 2_000_000_000) == {"clock": "tsc-software",
                                                 "clock_resolution_ns": 0.5}
    lower = np.arange(16, dtype=np.uint64)
    counts = np.zeros(16, dtype=np.uint64)
    counts[5] = 3
    s = StreamResult(name="s", stream_id=0, tx_packets=3, tx_bytes=0, tx_unsent=0,
                     tx_alloc_failures=0, tx_first_ns=0, tx_last_ns=0, rx_packets=3,
                     rx_bytes=0, duplicates=0, reordered=0, rx_first_ns=0, rx_last_ns=0,
                     latency_min_ns=5, latency_max_ns=5, latency_sum_ns=15,
                     latency=LogHistogram(counts, lower), latency_samples=3, **fields)
    lat = s.latency_result()
    assert lat.clock == "nic-hardware" and lat.resolution_ns == 1.0
