"""An AF_PACKET socket's drops are found among the process's own sockets and counted.

DPDK 22.11's AF_PACKET PMD reports no RX drop; the engine host reads its packet
sockets' PACKET_STATISTICS instead (engine/ringdrops.py). The truth here: a socket
on a veth end with a small receive buffer that nobody reads, fed a known number
of frames from the other end; every frame is either still queued in the socket
or one the kernel dropped there.
"""

from __future__ import annotations

import os
import socket

import pytest

from pytest_netload.engine.ringdrops import RingDrops, packet_socket_fds, read_ring_drops
from pytest_netload.topology.builtin import build

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="veth pairs and raw sockets need root"),
]

ETH_P_ALL = 0x0003
SENT = 2_000


def _mac(text: str) -> bytes:
    return bytes.fromhex(text.replace(":", ""))


def _frame(src: str, dst: str, seq: int) -> bytes:
    return _mac(dst) + _mac(src) + b"\x88\xb5" + seq.to_bytes(4, "big") + bytes(50)


def _drain(sock: socket.socket) -> int:
    sock.setblocking(False)
    got = 0
    while True:
        try:
            sock.recv(2048)
        except BlockingIOError:
            return got
        got += 1


def test_drops_of_a_full_socket_are_read_and_reset() -> None:
    with build("loopback") as built:
        p0, p1 = built.topology.port("p0"), built.topology.port("p1")
        assert p0.iface and p1.iface
        rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
        try:
            rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a few frames
            rx.bind((p1.iface, ETH_P_ALL))
            tx.bind((p0.iface, 0))
            assert packet_socket_fds(p1.iface) == [rx.fileno()]
            assert packet_socket_fds(p0.iface) == [tx.fileno()]
            assert read_ring_drops(p1.iface) == 0  # nothing yet (and the counter reset)
            totals = RingDrops()
            for seq in range(SENT):
                tx.send(_frame(p0.mac, p1.mac, seq))
            dropped = totals.total(p1.iface)
            queued = _drain(rx)
            assert queued > 0 and dropped > 0, (queued, dropped)
            assert queued + dropped == SENT, (queued, dropped)
            assert read_ring_drops(p1.iface) == 0  # reading reset the kernel's count
            assert totals.total(p1.iface) == dropped  # the running total keeps it
        finally:
            rx.close()
            tx.close()
        assert read_ring_drops(p1.iface) is None  # no socket of ours on it any more


def test_sockets_of_other_kinds_are_not_read() -> None:
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        assert packet_socket_fds("lo") == []
        assert read_ring_drops("lo") is None
    finally:
        udp.close()
