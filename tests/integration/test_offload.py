"""Checksum offload: used where the port has it (net_tap), and still right."""

from __future__ import annotations

import os
import socket
import subprocess
import threading

import pytest

from pytest_netload import TCP, UDP, Engine, Eth, IPv4, IPv6, Stream, field

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="the engine needs root (run as root or in CI)"),
]


def _capture(sock: socket.socket, stop: threading.Event, out: list[bytes]) -> None:
    sock.settimeout(0.2)
    try:
        while not stop.is_set():
            try:
                out.append(sock.recv(4096))
            except TimeoutError:
                continue
    finally:
        sock.close()


@pytest.mark.parametrize(
    "layers",
    [
        lambda: Eth() / IPv4() / UDP(),
        lambda: Eth() / IPv4() / TCP(),
        lambda: Eth() / IPv6() / UDP(),
    ],
    ids=["ipv4-udp", "ipv4-tcp", "ipv6-udp"],
)
def test_tap_offloads_checksums_and_frames_are_right(layers) -> None:  # type: ignore[no-untyped-def]
    from scapy.layers.inet import IP
    from scapy.layers.inet6 import IPv6 as SIPv6
    from scapy.layers.l2 import Ether

    iface = f"nltap{os.getpid() % 100000}"
    tmpl = layers().build()
    mods = [field(tmpl, "l4.sport", "inc", min=1000, max=1009)]
    if tmpl.l3_proto == 4:
        mods.append(field(tmpl, "ip.src", "random", min="198.18.0.1", max="198.18.0.200"))
    with Engine() as engine:
        port = engine.port(f"net_tap_nl0,iface={iface}")
        assert port.info["tx_csum_offload"]["udp"] and port.info["tx_csum_offload"]["tcp"]
        subprocess.run(["ip", "link", "set", iface, "up"], check=True)
        sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
        sock.bind((iface, 0))  # bound before any frame is sent
        stop, frames = threading.Event(), []
        thread = threading.Thread(target=_capture, args=(sock, stop, frames))
        thread.start()
        try:
            stream = engine.load(port, Stream(tmpl, size=128, fields=mods))
            assert stream.csum_offloaded
            result = engine.run([stream], [], count=50, drain_s=0.3)
        finally:
            stop.set()
            thread.join()
    assert result.tx_packets == 50
    ours = [Ether(f) for f in frames if len(f) == 124 and f[-16:-14] == b"\x4c\x4e"]
    assert len(ours) == 50
    for pkt in ours:
        l3 = pkt[IP] if IP in pkt else pkt[SIPv6]
        l4 = l3.payload
        sent = (getattr(l3, "chksum", None), l4.chksum)
        if IP in pkt:
            del l3.chksum
        del l4.chksum
        rebuilt = Ether(bytes(pkt))
        l3b = rebuilt[IP] if IP in rebuilt else rebuilt[SIPv6]
        assert sent == (getattr(l3b, "chksum", None), l3b.payload.chksum)
