"""A corpus of malformed options, ini keys, environment variables and marker arguments,
each run as a pytest session: it must end with ONE usage error (options) or collection
error (markers) naming the input and the fix, quickly, and without a traceback.

Markers are checked against the session's topology at collection: a wire it does not
have, a share of a line rate it does not declare, a frame above its MTU. Two sessions
end with measured results in hostile conditions (no directory to write to; a `$` in a
stream name and a test id, which matplotlib would read as mathtext).

The cases that could read without bound or block (/dev/zero, a FIFO) run in a child
process with a memory limit and a timeout, so the suite never hangs or swaps.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

TIMEOUT_S = 60
MEMORY_LIMIT_BYTES = 4 << 30

PLAIN_TEST = "def test_nothing():\n    pass\n"

# a valid topology file the malformed cases are made from (shared with the other corpus)
GOOD_TOML = (Path(__file__).parents[1] / "data" / "lab-topology.toml").read_text()

DATA = Path(__file__).parent.parent / "data"

MEASURED_SUITE = """
    import pytest
    from pytest_netload.measure.recording import record_measurement

    @pytest.mark.netload  # measures without a fixture: a netload test so
    def test_measured():
        record_measurement("throughput", {"frame_size": 64, "throughput_pps": 250000.0,
                                          "trials": []})
"""


@dataclass(frozen=True)
class Session:
    id: str
    args: tuple[str, ...] = ()
    fragments: tuple[str, ...] = ()
    """Each must appear in the session's output."""
    expect: str = "usage"
    """"usage" (a usage error), "collection" (a collection error) or "finish" (the session
    ends normally: its tests ran and the summary names what went wrong)."""
    setup: Callable[[pytest.Pytester], None] | None = None
    ini: str = ""
    env: dict[str, str] = field(default_factory=dict)
    test_file: str = PLAIN_TEST
    isolated: bool = False
    """Run in a child process with a memory limit (inputs that could read without bound)."""


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))


def _write(name: str, text: str | bytes) -> Callable[[pytest.Pytester], None]:
    def setup(pytester: pytest.Pytester) -> None:
        path = pytester.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text)
    return setup


def _mkfifo(name: str) -> Callable[[pytest.Pytester], None]:
    return lambda pytester: os.mkfifo(pytester.path / name)


def _mkdir(name: str) -> Callable[[pytest.Pytester], None]:
    return lambda pytester: (pytester.path / name).mkdir(parents=True)


def _marked(marker: str) -> str:
    return f"import pytest\n\n@pytest.mark.{marker}\ndef test_bad():\n    pass\n\n" \
        "def test_fine():\n    pass\n"


SAMPLE = (DATA / "results-sample.json").read_text()
BASELINES = "netload-results/baselines"

CASES = [
    # ---- --netload-topology: files and built-in names
    Session("topology-dev-zero", ("--netload-topology=/dev/zero",),
            ("--netload-topology: /dev/zero", "not a regular file"), isolated=True),
    Session("topology-fifo", ("--netload-topology=./lab.toml",),
            ("lab.toml", "not a regular file", "FIFO"), setup=_mkfifo("lab.toml"),
            isolated=True),
    Session("topology-directory", ("--netload-topology=./lab.toml",),
            ("lab.toml", "directory"), setup=_mkdir("lab.toml")),
    Session("topology-missing", ("--netload-topology=./nothing.toml",),
            ("nothing.toml", "No such file")),
    Session("topology-huge", ("--netload-topology=./lab.toml",), ("lab.toml", "1 MiB"),
            setup=_write("lab.toml", GOOD_TOML + ("#" * 1000 + "\n") * 1100)),
    Session("topology-binary", ("--netload-topology=./lab.toml",), ("lab.toml", "not UTF-8"),
            setup=_write("lab.toml", bytes(range(256)))),
    Session("topology-iface-injection", ("--netload-topology=./lab.toml",),
            ("ports[0]", "iface = 'lo,qpairs=16'"),
            setup=_write("lab.toml", GOOD_TOML.replace('device = "net_null0"',
                                                       'iface = "lo,qpairs=16"'))),
    Session("topology-lcores-beyond-the-machine", ("--netload-topology=./lab.toml",),
            ("lab.toml", "lcores", "99999", "CPUs"),
            setup=_write("lab.toml", GOOD_TOML.replace(
                'mac = "02:00:00:00:00:01"', 'mac = "02:00:00:00:00:01"\nlcores = [99999]'))),
    Session("topology-builtin-parameter-word", ("--netload-topology=netns-shaped:rate_bps=fast",),
            ("--netload-topology", "rate_bps", "'fast'")),
    Session("topology-builtin-parameter-without-value", ("--netload-topology=netns-shaped:qdisc",),
            ("--netload-topology", "name:key=value")),
    Session("topology-builtin-loss-nan", ("--netload-topology=netns-lossy:loss_ratio=nan",),
            ("--netload-topology", "loss_ratio")),
    Session("topology-empty", ("--netload-topology=",),
            ("--netload-topology", "'' is neither a built-in topology")),
    # ---- the other options
    Session("backend-upper-case", ("--netload-backend=AF_PACKET",),
            ("--netload-backend", "'AF_PACKET'", "af_packet, af_xdp")),
    Session("engine-empty", ("--netload-engine=",), ("--netload-engine", "''", "popen")),
    Session("engine-unknown-gateway", ("--netload-engine=bogus",),
            ("--netload-engine", "'bogus'", "ssh=")),
    Session("engine-memory-negative", ("--netload-engine-memory=-5",),
            ("--netload-engine-memory", "-5 MiB")),
    Session("engine-memory-float", ("--netload-engine-memory=1e9",),
            ("--netload-engine-memory", "'1e9'", "whole number")),
    Session("engine-memory-huge", ("--netload-engine-memory=99999999999",),
            ("--netload-engine-memory", "99999999999")),
    Session("report-dir-empty", ("--netload-report-dir=",), ("--netload-report-dir", "empty")),
    Session("report-dir-is-a-file", ("--netload-report-dir=out",),
            ("--netload-report-dir", "out", "not a directory"), setup=_write("out", "x")),
    Session("trial-duration-1e9s", ("--netload-trial-duration=1e9s",),
            ("--netload-trial-duration", "'1e9s'", "24 h")),
    Session("trial-duration-nan", ("--netload-trial-duration=nan",),
            ("--netload-trial-duration", "not finite")),
    Session("trial-duration-negative", ("--netload-trial-duration=-1s",),
            ("--netload-trial-duration", "negative")),
    Session("save-baseline-escapes", ("--netload-save-baseline=../x",),
            ("--netload-save-baseline", "baseline name '../x'")),
    Session("baseline-directory", ("--netload-baseline=main",),
            ("--netload-baseline", "main.json", "is a directory"),
            setup=_mkdir(f"{BASELINES}/main.json")),
    Session("baseline-truncated", ("--netload-baseline=main",),
            ("--netload-baseline", "main.json", "truncated"),
            setup=_write(f"{BASELINES}/main.json", SAMPLE[:300])),
    Session("baseline-throughput-nan", ("--netload-baseline=main",),
            ("--netload-baseline", "main.json", "finite"),
            setup=_write(f"{BASELINES}/main.json", SAMPLE.replace(
                '"throughput_pps": 630024.7837187975', '"throughput_pps": NaN', 1))),
    Session("baseline-newer-schema", ("--netload-baseline=main",),
            ("--netload-baseline", "main.json", "newer"),
            setup=_write(f"{BASELINES}/main.json", SAMPLE.replace('"1.0"', '"9.0"', 1))),
    Session("baseline-nested", ("--netload-baseline=main",),
            ("--netload-baseline", "main.json", "nested"),
            setup=_write(f"{BASELINES}/main.json", "[" * 100_000 + "]" * 100_000)),
    Session("baseline-missing", ("--netload-baseline=main",),
            ("--netload-baseline", "baseline 'main' not found")),
    # ---- ini keys and environment variables
    Session("ini-report-dir-empty", ini="netload_report_dir =",
            fragments=("ini key netload_report_dir", "empty")),
    Session("ini-engine-memory-zero", ini="netload_engine_memory = 0",
            fragments=("ini key netload_engine_memory", "0 MiB")),
    Session("ini-backend-unknown", ini="netload_backend = dpdk",
            fragments=("ini key netload_backend", "'dpdk'")),
    Session("env-trial-duration-word", env={"PYTEST_NETLOAD_TRIAL_DURATION": "forever"},
            fragments=("environment variable PYTEST_NETLOAD_TRIAL_DURATION", "'forever'")),
    Session("env-backend-unknown", env={"PYTEST_NETLOAD_BACKEND": "xdp"},
            fragments=("environment variable PYTEST_NETLOAD_BACKEND", "'xdp'")),
    # ---- link state: how long a link may take, and the speed check
    Session("link-timeout-word", ("--netload-link-timeout=soon",),
            ("--netload-link-timeout", "'soon'", "'10s'")),
    Session("link-timeout-negative", ("--netload-link-timeout=-1s",),
            ("--netload-link-timeout", "'-1s' is negative")),
    Session("link-timeout-an-hour", ("--netload-link-timeout=1h",),
            ("--netload-link-timeout", "more than the 10m a link may take", "'60s'")),
    Session("link-strict-word", ("--netload-link-strict=maybe",),
            ("--netload-link-strict", "'maybe' is not a yes/no value; give true or false")),
    Session("ini-link-timeout-nan", ini="netload_link_timeout = nan",
            fragments=("ini key netload_link_timeout", "not finite")),
    Session("env-link-strict-word", env={"PYTEST_NETLOAD_LINK_STRICT": "sometimes"},
            fragments=("environment variable PYTEST_NETLOAD_LINK_STRICT", "'sometimes'")),
    # ---- ARP/ND: how long a peer may take to answer
    Session("resolve-timeout-word", ("--netload-resolve-timeout=later",),
            ("--netload-resolve-timeout", "'later'")),
    Session("resolve-timeout-zero", ("--netload-resolve-timeout=0s",),
            ("--netload-resolve-timeout", "give more than 0 and at most 600 s")),
    Session("resolve-timeout-an-hour", ("--netload-resolve-timeout=1h",),
            ("--netload-resolve-timeout", "'1h'", "at most 600 s, e.g. 5s")),
    # ---- port locks: how long to wait for another session's port
    Session("port-wait-word", ("--netload-port-wait=forever",),
            ("--netload-port-wait", "'forever'")),
    Session("port-wait-two-hours", ("--netload-port-wait=2h",),
            ("--netload-port-wait", "'2h'", "give 0 (fail at once) to 3600 s")),
    # ---- markers against the built-in topology (2 wires, no line rate, MTU 1500)
    Session("rfc2544-wire-beyond-topology", expect="collection",
            test_file=_marked("rfc2544(wire=2)"),
            fragments=("test_bad", "@pytest.mark.rfc2544", "wire=2", "wires 0..1")),
    Session("netload-wire-beyond-topology", expect="collection",
            test_file=_marked("netload(wire=5)"),
            fragments=("test_bad", "@pytest.mark.netload", "wire=5", "wires 0..1")),
    Session("rfc2544-max-rate-percent-on-veth", expect="collection",
            test_file=_marked("rfc2544(max_rate='95%')"),
            fragments=("test_bad", "max_rate='95%'", "line rate")),
    Session("netload-rate-percent-on-veth", expect="collection",
            test_file=_marked("netload(rate='50%')"),
            fragments=("test_bad", "rate='50%'", "line rate")),
    Session("rfc2544-frame-above-mtu", expect="collection",
            test_file=_marked("rfc2544(frame_sizes=[64, 9000])"),
            fragments=("test_bad", "9000", "MTU 1500")),
    Session("netload-frame-above-mtu", expect="collection",
            test_file=_marked("netload(frame_sizes=[2000])"),
            fragments=("test_bad", "2000", "MTU 1500")),
    Session("rfc2544-time-budget-1e9s", expect="collection",
            test_file=_marked("rfc2544(search='mlrsearch', time_budget='1e9s')"),
            fragments=("test_bad", "time_budget", "24 h")),
    Session("netload-duration-1e9s", expect="collection",
            test_file=_marked("netload(duration='1e9s')"),
            fragments=("test_bad", "duration '1e9s'", "24 h")),
    # ---- markers against a topology file (1 wire, no line rate)
    Session("file-wire-beyond-topology", ("--netload-topology=./lab.toml",),
            expect="collection", test_file=_marked("rfc2544(wire=1)"),
            fragments=("test_bad", "wire=1", "wires 0..0"), setup=_write("lab.toml", GOOD_TOML)),
    Session("file-percent-without-line-rate", ("--netload-topology=./lab.toml",),
            expect="collection", test_file=_marked("netload(rate='95%')"),
            fragments=("test_bad", "rate='95%'", "line_rate"), setup=_write("lab.toml", GOOD_TOML)),
    # ---- sessions that end with results in hostile conditions
    Session("report-dir-and-tmpdir-full", ("--netload-report-dir=blocked/out",),
            expect="finish", test_file=MEASURED_SUITE, isolated=True,  # its conftest patches
            setup=lambda p: (_write("blocked", "a file")(p), p.makeconftest(
                "import errno, tempfile\n\ndef _full(*a, **k):\n"
                "    raise OSError(errno.ENOSPC, 'No space left on device')\n\n"
                "tempfile.mkdtemp = _full\n")),
            fragments=("test_measured", "250.0 kpps", "could not write",
                       "blocked/out/results.json", "No space left on device",
                       "temporary directory")),
]


def _dollar_suite() -> str:
    doc = json.loads((DATA / "results-full.json").read_text())
    test = next(t for t in doc["tests"] if t["nodeid"].endswith("test_latency_under_load"))
    latency = next(m for m in test["measurements"] if m["kind"] == "latency")
    latency = {k: v for k, v in latency.items() if k != "kind"} | {"stream": "rx $^$ probe"}
    return (f"import pytest\nfrom pytest_netload.measure.recording import record_measurement\n\n"
            f"DATA = {latency!r}\n\n"
            "@pytest.mark.netload\n@pytest.mark.parametrize('n', ['$x', 'a$_$'])\n"
            "def test_meter(n):\n    record_measurement('latency', DATA)\n")


CASES.append(Session("stream-name-with-dollar", expect="finish", test_file=_dollar_suite(),
                     fragments=("netload: report written to",)))


def _run(pytester: pytest.Pytester, case: Session,
         monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    args = ("-p", "no:cacheprovider", *case.args)
    if case.isolated:
        proc = subprocess.run([sys.executable, "-m", "pytest", *args], cwd=pytester.path,
                              capture_output=True, text=True, timeout=TIMEOUT_S,
                              preexec_fn=_limit_memory, env={**os.environ, **case.env})
        return proc.returncode, proc.stdout + proc.stderr
    for key, value in case.env.items():
        monkeypatch.setenv(key, value)
    result = pytester.runpytest(*args)
    return int(result.ret), "\n".join(result.outlines + result.errlines)


def test_the_corpus_ids_are_unique() -> None:
    ids = [c.id for c in CASES]
    assert len(set(ids)) == len(ids)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_malformed_setting_or_marker_gets_one_clear_error(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, case: Session) -> None:
    for key in [k for k in os.environ if k.startswith("PYTEST_NETLOAD_")]:
        monkeypatch.delenv(key)
    if case.ini:
        pytester.makeini(f"[pytest]\n{case.ini}\n")
    pytester.makepyfile(test_x=case.test_file)
    if case.setup is not None:
        case.setup(pytester)
    try:
        ret, out = _run(pytester, case, monkeypatch)
    except subprocess.TimeoutExpired:
        pytest.fail(f"HANG: the session ran past {TIMEOUT_S} s")
    assert "Traceback" not in out and "INTERNALERROR" not in out, f"TRACEBACK:\n{out}"
    if case.expect == "usage":
        assert ret == pytest.ExitCode.USAGE_ERROR, f"SILENT or wrong exit {ret}:\n{out}"
        assert out.count("ERROR: ") == 1, f"not one error:\n{out}"
    elif case.expect == "collection":
        assert ret == pytest.ExitCode.INTERRUPTED and "ERROR collecting" in out, \
            f"SILENT or wrong exit {ret}:\n{out}"
    else:
        assert ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), \
            f"wrong exit {ret}:\n{out}"
    for fragment in case.fragments:
        assert fragment in out, f"OBSCURE: {fragment!r} not in:\n{out}"
