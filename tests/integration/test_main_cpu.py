"""Engine(main_cpu=...): a worker on every CPU named, the main lcore beside one of them,
so a 2-CPU machine runs two workers (benchmarks/worker_scaling.py measures them)."""

from __future__ import annotations

import os

import pytest

from pytest_netload import locks
from pytest_netload.engine.client import Engine, Tx
from pytest_netload.traffic.packets import UDP, Eth, IPv4
from pytest_netload.traffic.streams import Stream

CPUS = sorted(os.sched_getaffinity(0))[:2]
pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="the engine runs DPDK: needs root"),
    pytest.mark.skipif(len(CPUS) < 2, reason="two workers on two CPUs need two CPUs"),
]


def _stream(name: str) -> Stream:
    return Stream((Eth() / IPv4(src="198.18.0.1", dst="198.19.0.1") / UDP(dport=9)).build(),
                  size=64, name=name)


def test_two_workers_on_two_cpus_each_send_a_queue(tmp_path: pytest.TempPathFactory) -> None:
    with Engine(lcores=CPUS, main_cpu=CPUS[0]) as engine:
        env = engine.environment()
        assert (env["workers"], env["worker_cpus"]) == (2, CPUS), env
        assert engine.hello["main_cpu"] == CPUS[0]
        assert f"--lcores=0@{CPUS[0]},1@{CPUS[0]},2@{CPUS[1]}" in engine.hello["eal_args"]
        for cpu in CPUS:  # both are workers' CPUs: locked while the engine lives
            assert locks.try_claim(locks.cpu_lock_path(cpu), {}) is None
        port = engine.port("net_null0", tx_queues=2)
        a, b = (engine.load(port, _stream(n), queues=1) for n in ("a", "b"))  # 1 queue each
        run = engine.run([Tx(a, 100_000, queue=0), Tx(b, 100_000, queue=1)])
        assert [s.tx_packets for s in run.streams] == [100_000, 100_000]
        assert [s.tx_end_reason for s in run.streams] == ["count", "count"]
    for cpu in CPUS:
        lock = locks.try_claim(locks.cpu_lock_path(cpu), {})
        assert lock is not None
        lock.release()


def test_without_main_cpu_two_cpus_give_one_worker() -> None:
    with Engine(lcores=CPUS) as engine:
        env = engine.environment()
        assert (env["workers"], env["worker_cpus"]) == (1, CPUS[1:]), env
