"""Atomic writes (a failed write leaves the old file and no temporary file) and the sweeps of
what dead processes left: partial report files, DPDK runtime dirs, engine log dirs."""

from __future__ import annotations

import errno
import os
import subprocess
import time
from pathlib import Path

import pytest

from pytest_netload import atomic
from pytest_netload.atomic import sweep_partial_files, write_atomic
from pytest_netload.engine import leftovers
from pytest_netload.reports import html, json as json_report
from pytest_netload.reports.baseline import save_baseline


def dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_write_atomic_replaces_the_file(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "results.json"
    assert write_atomic(target, "one") == target
    write_atomic(target, b"two")
    assert target.read_text() == "two"
    assert os.listdir(target.parent) == ["results.json"]


@pytest.mark.parametrize("failing", ["fsync", "replace", "write"])
def test_a_failed_write_leaves_the_old_file_and_no_tmp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str,
) -> None:
    target = tmp_path / "report.html"
    target.write_text("old")

    def full_disk(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    if failing == "write":
        real_fdopen = os.fdopen

        class Full:
            def __init__(self, fd: int, mode: str) -> None:
                self.f = real_fdopen(fd, mode)

            def __enter__(self) -> Full:
                return self

            def __exit__(self, *exc: object) -> None:
                self.f.close()

            def write(self, data: bytes) -> int:
                self.f.write(data[: len(data) // 2])  # half of it made it to the disk
                self.f.flush()
                full_disk()
                return 0

        monkeypatch.setattr(atomic.os, "fdopen", Full)
    else:
        monkeypatch.setattr(atomic.os, failing, full_disk)
    with pytest.raises(OSError, match="No space left"):
        write_atomic(target, "new and longer")
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["report.html"]


def test_every_report_writer_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """results.json, report.html and baselines all go through write_atomic."""
    calls: list[str] = []
    real = atomic.write_atomic

    def spy(path: str | os.PathLike[str], data: bytes | str, **kwargs: str) -> Path:
        calls.append(Path(path).name)
        return real(path, data, **kwargs)

    for module in (json_report, html):
        monkeypatch.setattr(module, "write_atomic", spy)
    from pytest_netload.reports import baseline

    monkeypatch.setattr(baseline, "write_atomic", spy)
    doc = json_report.session_document([], topology={"name": "t"}, settings={})
    json_report.write(doc, tmp_path / "results.json")
    html.write(doc, tmp_path / "report.html")
    save_baseline(doc, "base", tmp_path / "baselines")
    assert calls == ["results.json", "report.html", "base.json"]


def test_sweep_partial_files_removes_only_dead_writers(tmp_path: Path) -> None:
    dead, live = dead_pid(), os.getpid()
    (tmp_path / "captures").mkdir()
    stale = [tmp_path / f".results.json.{dead}.abcd_123.tmp",
             tmp_path / "captures" / f".t.pcap.{dead}.zz99yy88.tmp"]
    kept = [tmp_path / f".results.json.{live}.abcd_123.tmp",  # a live writer's
            tmp_path / "results.json", tmp_path / "notes.tmp",  # not ours
            tmp_path / "results.json.tmp"]  # an older writer's, but fresh
    old = tmp_path / "report.html.tmp"
    for path in [*stale, *kept, old]:
        path.write_text("x")
    an_hour_ago = time.time() - atomic.LEGACY_AGE_S - 10
    os.utime(old, (an_hour_ago, an_hour_ago))
    removed = sweep_partial_files(tmp_path, tmp_path / "captures", tmp_path / "missing")
    assert sorted(removed) == sorted(str(p) for p in [*stale, old])
    assert all(p.exists() for p in kept)


def test_sweep_runtime_dirs_removes_only_dead_hosts(tmp_path: Path) -> None:
    dead, live = dead_pid(), os.getpid()
    ours_dead = tmp_path / f"netload-{dead}-a1b2c3"
    keep = [tmp_path / f"netload-{live}-a1b2c3", tmp_path / "rte", tmp_path / "nlbench-abcdef",
            tmp_path / f"netload-{dead}-a1b2c3-x"]
    for path in [ours_dead, *keep]:
        path.mkdir()
        (path / "config").write_text("x")
    assert leftovers.sweep_runtime_dirs(str(tmp_path)) == [str(ours_dead)]
    assert all(p.exists() for p in keep)
    assert leftovers.sweep_runtime_dirs(str(tmp_path / "missing")) == []


def test_remove_host_leftovers_takes_one_dead_hosts_dirs_only(tmp_path: Path) -> None:
    """The client removes what its own engine host left, by the host's pid, once that pid
    is gone: also when the host's hello never answered with its EAL arguments."""
    dead, other_dead, live = dead_pid(), dead_pid(), os.getpid()
    mine = [tmp_path / f"netload-{dead}-a1b2c3", tmp_path / f"netload-{dead}-d4e5f6"]
    keep = [tmp_path / f"netload-{live}-a1b2c3"]
    if other_dead != dead:
        keep.append(tmp_path / f"netload-{other_dead}-a1b2c3")  # another's: the sweep's
    for path in [*mine, *keep]:
        path.mkdir()
        (path / "config").write_text("x")
    assert sorted(leftovers.remove_host_leftovers(dead, str(tmp_path))) == \
        sorted(str(p) for p in mine)
    assert all(p.exists() for p in keep)
    assert leftovers.remove_host_leftovers(live, str(tmp_path)) == []  # it runs: never


def test_remove_runtime_dir_takes_its_hugepage_files_too(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """rte_eal_cleanup leaves the hugepage files (1 GiB each with --single-file-segments):
    where an EAL ends, its runtime dir and its own hugepage files go, no one else's."""
    runtime, huge = tmp_path / "dpdk", tmp_path / "hugepages"
    monkeypatch.setattr(leftovers, "DPDK_RUNTIME_DIR", str(runtime))
    monkeypatch.setattr(leftovers, "_hugetlbfs_mounts", lambda: [str(huge)])
    mine = "netload-123-a1b2c3"
    (runtime / mine).mkdir(parents=True)
    (runtime / mine / "config").write_text("x")
    huge.mkdir()
    pages = [huge / f"{mine}map_0", huge / f"{mine}map_1"]
    others = [huge / "netload-123-d4e5f6map_0", huge / "rtemap_0"]
    for page in [*pages, *others]:
        page.write_text("")
    leftovers.remove_runtime_dir(["netload", "--file-prefix", mine])
    assert not (runtime / mine).exists()
    assert not any(p.exists() for p in pages)
    assert all(p.exists() for p in others)


def test_sweep_engine_logs_keeps_live_and_recent_crash_logs(tmp_path: Path) -> None:
    dead, live = dead_pid(), os.getpid()
    dead_new = tmp_path / f"netload-engine-{dead}-abcd1234"
    dead_legacy = tmp_path / "netload-engine-zx81qw_e"  # named by its log files only
    live_new = tmp_path / f"netload-engine-{live}-abcd1234"
    live_legacy = tmp_path / "netload-engine-q1w2e3r4"
    crashed = tmp_path / f"netload-engine-{dead}-crashed1"
    crashed_long_ago = tmp_path / f"netload-engine-{dead}-crashed2"
    empty_legacy = tmp_path / "netload-engine-emptyemp"  # no log yet: a starting client's
    for path, log in [(dead_new, f"engine-{dead}-1.log"), (dead_legacy, f"engine-{dead}-2.log"),
                      (live_new, f"engine-{live}-1.log"), (live_legacy, f"engine-{live}-1.log"),
                      (crashed, f"engine-{dead}-1.log"), (crashed_long_ago, f"engine-{dead}-1.log"),
                      (empty_legacy, None)]:
        path.mkdir()
        if log:
            (path / log).write_text("log")
    leftovers.mark_crashed(str(crashed))
    leftovers.mark_crashed(str(crashed_long_ago))
    long_ago = time.time() - leftovers.CRASH_LOG_KEEP_S - 10
    os.utime(crashed_long_ago / leftovers.CRASH_MARK, (long_ago, long_ago))
    removed = leftovers.sweep_engine_logs(str(tmp_path))
    assert sorted(removed) == sorted(str(p) for p in [dead_new, dead_legacy, crashed_long_ago])
    assert all(p.exists() for p in [live_new, live_legacy, crashed, empty_legacy])


def test_new_log_dir_carries_the_client_pid() -> None:
    path = leftovers.new_log_dir()
    try:
        name = os.path.basename(path)
        assert name.startswith(f"netload-engine-{os.getpid()}-")
        assert leftovers.LOG_DIR_RE.match(name)
    finally:
        os.rmdir(path)


@pytest.mark.parametrize(("args", "expected"), [
    (["netload", "--file-prefix", "netload-1-abcdef", "--no-pci"],
     "/var/run/dpdk/netload-1-abcdef"),
    (["netload", "--file-prefix=p1"], "/var/run/dpdk/p1"),
    (["netload", "--file-prefix", "../../etc"], None),  # never a path out of the runtime root
    (["netload", "--file-prefix", ".."], None),
    (["netload", "--file-prefix"], None),
    (["netload", "--no-pci"], None),
])
def test_runtime_dir_is_a_plain_name_under_the_runtime_root(args: list[str],
                                                            expected: str | None) -> None:
    from pytest_netload.engine.leftovers import runtime_dir

    assert runtime_dir(args) == expected
