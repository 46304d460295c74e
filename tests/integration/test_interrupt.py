"""Ctrl-C during a run stops TX, keeps what was measured and leaves the engine usable."""

from __future__ import annotations

import _thread
import os
import threading

import pytest

from pytest_netload import UDP, Engine, Eth, IPv4, Stream

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="the engine needs root (run as root or in CI)"),
]


@pytest.mark.usefixtures("ctrl_c")
def test_ctrl_c_keeps_results_and_engine() -> None:
    tmpl = (Eth() / IPv4() / UDP()).build()
    with Engine() as engine:
        port = engine.port("net_ring0")
        stream = engine.load(port, Stream(tmpl, size=64))
        timer = threading.Timer(0.5, _thread.interrupt_main)
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            engine.run([stream], [port], duration_s=30)
        timer.cancel()
        partial = engine.last_result
        assert partial is not None and partial.interrupted
        assert partial.tx_packets > 0
        assert partial.rx_packets == partial.tx_packets  # drained, nothing lost on a ring
        again = engine.run([stream], [port], count=1000)
        assert again.tx_packets == again.rx_packets == 1000
        assert not again.interrupted


class Broken(Exception):
    pass


def test_an_error_in_the_progress_callback_stops_the_run_and_keeps_its_results() -> None:
    """A user's callback that raises must not leave a 30 s run going in the engine host
    (the next run would wait on it): the run stops, its counts are kept, the error is
    raised as it was."""
    tmpl = (Eth() / IPv4() / UDP()).build()
    with Engine() as engine:
        port = engine.port("net_ring0")
        stream = engine.load(port, Stream(tmpl, size=64))

        def progress(status: dict[str, object]) -> None:
            if status["state"] == "sending":
                raise Broken("the callback's own bug")

        with pytest.raises(Broken, match="the callback's own bug"):
            engine.run([stream], [port], duration_s=30, progress=progress)
        partial = engine.last_result
        assert partial is not None and partial.interrupted
        assert partial.streams[0].tx_end_reason == "stopped"
        assert partial.rx_packets == partial.tx_packets
        again = engine.run([stream], [port], count=1000)
        assert again.tx_packets == again.rx_packets == 1000
