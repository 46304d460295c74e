"""Machine-wide locks (locks.py): one holder at a time, named when busy, released
by the kernel when the holder dies; worker CPUs planned around other engines' locks."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pytest_netload import locks
from pytest_netload.errors import NetloadEnvironmentError, ResourceBusy

Holder = Callable[..., "subprocess.Popen[str]"]
HoldCpus = Callable[..., None]
HOLD = """
import sys, time
from pytest_netload.locks import claim, holder_info
lock = claim(sys.argv[1], holder_info("test lock", for_pid=1, for_cmdline="pytest --demo"))
print("held", flush=True)
time.sleep(float(sys.argv[2]))
"""


def _holder(path: Path, seconds: float = 60.0) -> subprocess.Popen[str]:
    """A subprocess that claims `path` and keeps it `seconds`."""
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(path), str(seconds)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "held"
    return proc


@pytest.fixture
def holder() -> Iterator[Holder]:
    procs: list[subprocess.Popen[str]] = []

    def start(path: Path, seconds: float = 60.0) -> subprocess.Popen[str]:
        procs.append(_holder(path, seconds))
        return procs[-1]

    yield start
    for p in procs:
        if p.poll() is None:
            p.kill()
        p.wait()


def test_a_lock_has_one_holder_even_within_one_process(tmp_path: Path) -> None:
    path = tmp_path / "cpu-1.lock"
    first = locks.try_claim(path, locks.holder_info("first"))
    assert first is not None and first.held
    assert locks.try_claim(path, locks.holder_info("second")) is None  # another open file
    first.release()
    first.release()  # idempotent
    with locks.claim(path, locks.holder_info("third")) as again:
        assert again.held
        assert locks.read_holder(path)["what"] == "third"  # type: ignore[index]
    assert not again.held


def test_a_busy_lock_names_its_holder(tmp_path: Path, holder: Holder) -> None:
    path = tmp_path / "port-0000:01:00.0.lock"
    proc = holder(path)
    info = json.loads(path.read_text())
    assert info["pid"] == proc.pid and info["for_pid"] == 1
    with pytest.raises(ResourceBusy) as exc:
        locks.claim(path, locks.holder_info("me"), what="port 0000:01:00.0", fix="use another")
    text = str(exc.value)
    assert isinstance(exc.value, NetloadEnvironmentError)
    assert text.startswith(f"port 0000:01:00.0 is held by pid {proc.pid} (")
    assert "for pid 1 (pytest --demo)" in text and f"lock {path}" in text
    assert text.endswith("; use another")


def test_the_kernel_releases_the_lock_of_a_killed_holder(tmp_path: Path, holder: Holder) -> None:
    path = tmp_path / "cpu-3.lock"
    proc = holder(path)
    assert locks.try_claim(path, {}) is None
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    lock = locks.try_claim(path, locks.holder_info("after"))
    assert lock is not None
    lock.release()


def test_a_claim_waits_for_a_holder_that_lets_go(tmp_path: Path, holder: Holder) -> None:
    path = tmp_path / "cpu-2.lock"
    holder(path, seconds=0.5)
    started = time.monotonic()
    with locks.claim(path, {}, wait_s=10.0):
        assert 0.2 < time.monotonic() - started < 8.0
    holder(path, seconds=30.0)
    with pytest.raises(ResourceBusy, match="waited 0.3 s"):
        locks.claim(path, {}, wait_s=0.3)


def test_lock_dir_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(locks.LOCK_DIR_ENV, str(tmp_path))
    assert locks.lock_dir() == tmp_path
    assert locks.cpu_lock_path(7) == tmp_path / "cpu-7.lock"
    monkeypatch.delenv(locks.LOCK_DIR_ENV)
    if os.geteuid() == 0:
        assert locks.lock_dir() == Path("/var/run/netload")


# ---- worker CPUs -----------------------------------------------------------------------


@pytest.fixture
def hold_cpus(tmp_path: Path) -> Iterator[HoldCpus]:
    """Holds CPU locks in tmp_path as another engine would (released after the test)."""
    held: list[locks.HostLock] = []

    def hold(*cpus: int) -> None:
        for c in cpus:
            lock = locks.try_claim(locks.cpu_lock_path(c, tmp_path),
                                   locks.holder_info(f"worker CPU {c}", for_pid=4242))
            assert lock is not None
            held.append(lock)

    yield hold
    for lock in held:
        lock.release()


def _free(path: Path) -> bool:
    """Whether `path` can be claimed now (released again at once)."""
    lock = locks.try_claim(path, {})
    if lock is None:
        return False
    lock.release()
    return True


def test_free_cpus_are_all_claimed(tmp_path: Path) -> None:
    plan = locks.claim_worker_cpus([3, 1, 2], {}, explicit=False, directory=tmp_path)
    assert (plan.main, plan.workers, plan.lcores) == (1, [2, 3], [1, 2, 3])
    assert plan.note() is None
    assert locks.try_claim(locks.cpu_lock_path(2, tmp_path), {}) is None
    assert _free(locks.cpu_lock_path(1, tmp_path))  # the main lcore's CPU: not locked
    plan.release()
    assert _free(locks.cpu_lock_path(2, tmp_path))


def test_a_held_worker_cpu_is_skipped_and_named(tmp_path: Path, hold_cpus: HoldCpus) -> None:
    hold_cpus(2)
    plan = locks.claim_worker_cpus([1, 2, 3], {}, explicit=False, directory=tmp_path)
    assert plan.workers == [3] and list(plan.skipped) == [2]
    assert "CPU 2 by pid" in (plan.note() or "") and "for pid 4242" in (plan.note() or "")
    plan.release()


def test_with_every_worker_cpu_held_the_worker_shares_the_main_cpu(
        tmp_path: Path, hold_cpus: HoldCpus) -> None:
    hold_cpus(1)
    plan = locks.claim_worker_cpus([0, 1], {}, explicit=False, directory=tmp_path)
    assert (plan.main, plan.workers, plan.lcores) == (0, [0], [0])
    assert "runs its worker on CPU 0, beside its own main lcore" in (plan.note() or "")
    plan.release()


def test_with_every_cpu_held_the_claim_fails_naming_the_holders(
        tmp_path: Path, hold_cpus: HoldCpus) -> None:
    hold_cpus(0, 1)
    with pytest.raises(ResourceBusy) as exc:
        locks.claim_worker_cpus([0, 1], {}, explicit=False, wait_s=0.2, directory=tmp_path)
    text = str(exc.value)
    assert "every CPU this process may use (0, 1)" in text
    assert f"CPU 0 by pid {os.getpid()}" in text and "CPU 1 by pid" in text
    assert "waited 0.2 s" in text and "taskset" in text


def test_cpus_asked_for_are_claimed_as_asked_or_not_at_all(
        tmp_path: Path, hold_cpus: HoldCpus) -> None:
    hold_cpus(2)
    with pytest.raises(ResourceBusy, match=r"worker CPU\(s\) 2, 3 asked for: .*CPU 2 by pid"):
        locks.claim_worker_cpus([1, 2, 3], {}, explicit=True, directory=tmp_path)
    # nothing stays held by the failed claim
    assert _free(locks.cpu_lock_path(3, tmp_path))
    single = locks.claim_worker_cpus([5], {}, explicit=True, directory=tmp_path)
    assert single.lcores == [5] and single.workers == [5]
    with pytest.raises(ResourceBusy, match=r"worker CPU\(s\) 5 asked for"):
        locks.claim_worker_cpus([5], {}, explicit=True, directory=tmp_path)
    single.release()


def test_a_main_cpu_given_is_kept_first(tmp_path: Path) -> None:
    """EAL arguments of the caller's may put the main lcore on any CPU."""
    plan = locks.claim_worker_cpus([1, 3], {}, explicit=True, directory=tmp_path, main=3)
    assert (plan.main, plan.workers) == (3, [1])
    assert _free(locks.cpu_lock_path(3, tmp_path))  # mains are not locked
    plan.release()


def test_a_main_that_shares_a_worker_cpu_leaves_every_cpu_to_a_worker(
        tmp_path: Path, hold_cpus: HoldCpus) -> None:
    """Engine(main_cpu=0) on CPUs 0 and 1: two workers, the main lcore beside the first."""
    plan = locks.claim_worker_cpus([1, 0], {}, explicit=False, directory=tmp_path, main=0,
                                   main_shares=True)
    assert (plan.main, plan.workers) == (0, [0, 1]) and plan.note() is None
    assert not _free(locks.cpu_lock_path(0, tmp_path))  # a worker's CPU: locked
    plan.release()
    assert _free(locks.cpu_lock_path(0, tmp_path))
    hold_cpus(1)  # as asked for, or not at all: never fewer workers than CPUs named
    with pytest.raises(ResourceBusy, match=r"worker CPU\(s\) 0, 1 asked for: .*CPU 1 by pid"):
        locks.claim_worker_cpus([0, 1], {}, explicit=False, directory=tmp_path, main=0,
                                main_shares=True)
    assert _free(locks.cpu_lock_path(0, tmp_path))
    with pytest.raises(ValueError, match="main_shares needs main"):
        locks.claim_worker_cpus([0, 1], {}, explicit=True, directory=tmp_path,
                                main_shares=True)


# ---- ports ----------------------------------------------------------------------------


@pytest.mark.parametrize(("device", "name"), [
    ("0000:01:00.0", "pci-0000:01:00.0"),
    ("01:00.1", "pci-0000:01:00.1"),
    ("0000:AF:00.0,txq_inline=128", "pci-0000:af:00.0"),
    ("net_af_packet0,iface=veth0,qpairs=1", "iface-veth0"),
    ("net_af_xdp_nl1p0,iface=nl1g0,start_queue=0,queue_count=1", "iface-nl1g0"),
    ("net_pcap0,iface=eth1", "iface-eth1"),
    ("net_null0", None),
    ("net_ring_refin1", None),
    ("net_pcap1,rx_pcap=/tmp/a.pcap,tx_pcap=/tmp/b.pcap", None),
])
def test_a_port_is_locked_by_what_another_process_could_open(device: str,
                                                            name: str | None) -> None:
    assert locks.port_lock_name(device) == name


def test_a_held_port_names_its_holder_and_is_taken_over_after_its_death(
        tmp_path: Path, holder: Holder) -> None:
    path = tmp_path / "port-iface-veth7.lock"
    proc = holder(path)
    with pytest.raises(ResourceBusy) as err:
        locks.claim_port("net_af_packet3,iface=veth7", {"pid": os.getpid()}, directory=tmp_path)
    text = str(err.value)
    assert text.startswith("port veth7 (net_af_packet3,iface=veth7) is held by pid ")
    assert "for pid 1 (pytest --demo)" in text and "--netload-port-wait=SECONDS" in text
    os.kill(proc.pid, signal.SIGKILL)  # a dead holder leaves no lock: the kernel dropped it
    proc.wait()
    lock = locks.claim_port("net_af_packet3,iface=veth7", {"pid": os.getpid()},
                            directory=tmp_path)
    assert lock is not None and json.loads(path.read_text())["pid"] == os.getpid()
    lock.release()
    assert locks.claim_port("net_null0", {}, directory=tmp_path) is None
