"""What vhost-user and memif ports need from the engine, checked without starting DPDK:
the EAL's memory (hugepages only where enough are free, in few segment files; else memfd
memory), the error that names the fix when hugepages were asked for and are missing, and
the sockets such a port listens on (stale ones removed, live ones never)."""

from __future__ import annotations

import ctypes
import errno
import os
import signal
import socket
import time
from pathlib import Path

import pytest

from pytest_netload import errors, hugepages
from pytest_netload.engine import facade


def _memory(monkeypatch: pytest.MonkeyPatch, *, mounted: int, free_mb: int,
            total_mb: int) -> None:
    monkeypatch.setattr(hugepages, "hugepage_memory",
                        lambda: {"mounted": mounted, "free_mb": free_mb, "total_mb": total_mb})


def test_hugepages_by_default_only_where_the_whole_memory_is_free(
        monkeypatch: pytest.MonkeyPatch) -> None:
    _memory(monkeypatch, mounted=1, free_mb=2048, total_mb=2048)
    args = facade.default_eal_args(memory_mb=1024, lcores=[0, 1])
    # a vhost-user peer maps at most 8 regions: one file per segment list, not per page
    assert "--single-file-segments" in args and "--no-huge" not in args
    _memory(monkeypatch, mounted=1, free_mb=600, total_mb=2048)  # a DPDK DUT holds the rest
    args = facade.default_eal_args(memory_mb=1024, lcores=[0, 1])
    assert "--no-huge" in args and "--single-file-segments" not in args
    _memory(monkeypatch, mounted=0, free_mb=2048, total_mb=2048)
    assert "--no-huge" in facade.default_eal_args(memory_mb=1024, lcores=[0, 1])


def test_hugepages_asked_for_but_short_name_the_cause_and_the_fix(
        monkeypatch: pytest.MonkeyPatch) -> None:
    _memory(monkeypatch, mounted=1, free_mb=600, total_mb=1024)
    with pytest.raises(errors.NetloadEnvironmentError) as info:
        facade.default_eal_args(memory_mb=1024, lcores=[0, 1], hugepages=True)
    text = str(info.value)
    assert "1024 MiB of hugepages" in text and "only 600 MiB of 1024 MiB are free" in text
    assert "424 MiB held by other processes" in text
    assert "setup.sh --hugepages" in text and "hugepages=False" in text
    _memory(monkeypatch, mounted=0, free_mb=0, total_mb=0)
    with pytest.raises(errors.NetloadEnvironmentError, match="no hugetlbfs is mounted"):
        facade.default_eal_args(memory_mb=64, lcores=[0], hugepages=True)


def test_hugepage_memory_reads_this_machine() -> None:
    found = hugepages.hugepage_memory()
    assert set(found) == {"mounted", "free_mb", "total_mb"}
    assert 0 <= found["free_mb"] <= found["total_mb"]


@pytest.mark.parametrize(("device", "path"), [
    ("net_virtio_user0,path=/run/x/p0.sock,server=1,queues=2", "/run/x/p0.sock"),
    ("net_virtio_user0,path=/run/x/p0.sock,queues=2", None),  # a client: it connects
    ("net_virtio_user0,path=/run/x/p0.sock,server=0", None),
    ("net_memif0,role=server,socket=/run/m.sock,id=0", "/run/m.sock"),
    ("net_memif0,role=server", "/run/memif.sock"),  # DPDK's default socket
    ("net_memif0,role=client,socket=/run/m.sock", None),
    ("net_memif0", None),  # client by default
    ("net_af_packet0,iface=veth0", None),
    ("0000:01:00.0", None),
])
def test_which_ports_listen_for_their_peer(device: str, path: str | None) -> None:
    assert facade.listening_socket(device) == path


def test_a_stale_socket_is_removed_a_live_one_and_other_files_never(tmp_path: Path) -> None:
    stale = tmp_path / "stale.sock"
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(str(stale))
    s.close()  # the file stays, nothing listens: what a killed process leaves
    assert stale.exists()
    assert facade.remove_stale_socket(str(stale)) is True
    assert not stale.exists()

    live = tmp_path / "live.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(live))
    server.listen(1)
    try:
        assert facade.remove_stale_socket(str(live)) is False
        assert live.exists()
    finally:
        server.close()

    plain = tmp_path / "plain.sock"
    plain.write_text("not a socket")
    assert facade.remove_stale_socket(str(plain)) is False and plain.exists()
    assert facade.remove_stale_socket(str(tmp_path / "missing.sock")) is False


def test_a_blocking_native_call_is_interrupted_after_its_bound() -> None:
    """As DPDK's accept in a vhost-user server's probe: a C call blocked in a system call
    returns EINTR once the bound has passed, and the alarm is off afterwards."""
    libc = ctypes.CDLL(None, use_errno=True)
    r, w = os.pipe()
    buf = ctypes.create_string_buffer(1)
    try:
        start = time.monotonic()
        with facade._interrupt_after(0.2) as fired:
            got = libc.read(r, buf, 1)  # nothing is ever written: blocks until interrupted
        took = time.monotonic() - start
        assert got == -1 and ctypes.get_errno() == errno.EINTR
        assert fired and 0.19 <= took < 5.0
        assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
        assert signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, signal.default_int_handler,
                                                     None)
        with facade._interrupt_after(0) as fired:  # unbounded: no alarm at all
            assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
        assert fired == []
    finally:
        os.close(r)
        os.close(w)
