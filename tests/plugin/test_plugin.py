"""The plugin surface: options, ini keys, precedence, header, disabling."""

from __future__ import annotations

import re

import subprocess
import sys

import pytest

pytest_plugins = ["pytester"]

OPTIONS = ("--netload-topology", "--netload-backend", "--netload-engine",
           "--netload-engine-memory", "--netload-report-dir", "--netload-trial-duration",
           "--netload-link-timeout", "--netload-link-strict", "--netload-skip-unavailable")
# A netload test that needs nothing: the header and the results are netload tests' only.
NETLOAD_TEST = "import pytest\n\n@pytest.mark.netload\ndef test_nothing(): pass\n"
NOT_ROOT = "import os\nos.geteuid = lambda: 1000\n"  # a conftest: this session is not root


def test_importing_the_plugin_loads_no_native_code() -> None:
    code = (
        "import sys, pytest_netload, pytest_netload.plugin, pytest_netload.plugin.fixtures; "
        "bad = [m for m in sys.modules if 'cffi' in m or '_netload_native' in m]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    out = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


HEAVY = ("numpy", "scipy", "MLRsearch", "cffi", "execnet", "pyroute2", "jinja2", "matplotlib",
         "scapy", "_netload_native")


@pytest.mark.parametrize("module", [
    "pytest_netload", "pytest_netload.plugin", "pytest_netload.plugin.fixtures",
    "pytest_netload.plugin.terminal", "pytest_netload.plugin.y1564",
    "pytest_netload.plugin.rfc2889"])
def test_importing_the_plugin_is_cheap(module: str) -> None:
    """What pytest loads for the plugin in every session (the entry point, and what
    pytest_configure registers) imports none of the heavy packages; the public names
    of pytest_netload are imported on first use."""
    code = (f"import sys, {module}; "
            f"print([m for m in sys.modules if m.split('.')[0] in {HEAVY!r}])")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_the_defaults_known_in_advance_are_what_their_converters_make() -> None:
    from pytest_netload.plugin.options import DEFAULT_VALUES, SETTINGS

    by_name = {s.name: s for s in SETTINGS}
    for name, value in DEFAULT_VALUES.items():
        setting = by_name[name]
        assert setting.convert(setting.default) == value, name


def test_public_names_import_on_first_use() -> None:
    code = ("import sys, pytest_netload as p; assert 'numpy' not in sys.modules; "
            "from pytest_netload import Rate, udp, Engine; "
            "assert p.Rate is Rate and p.udp is udp and 'Engine' in dir(p); "
            "assert sorted(p.__all__) == sorted(set(p.__all__)); "
            "[getattr(p, name) for name in p.__all__]; "
            "import pytest; pytest.raises(AttributeError, getattr, p, 'nothing_here')")
    out = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_help_shows_every_option_and_ini_key_with_help(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    out = result.stdout.str()
    assert "network device conformance testing (pytest-netload)" in out
    for flag in OPTIONS:
        assert f"{flag}=" in out, flag
        ini = flag[2:].replace("-", "_")
        assert ini in out, ini
    flat = " ".join(out.split())
    assert "Topology to test on: a built-in name (netns-router, netns-shaped," in flat


def test_markers_are_registered_with_help(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--markers")
    result.stdout.fnmatch_lines([
        "@pytest.mark.netload(rate=None*Provided by pytest-netload.",
        "@pytest.mark.rfc2544(frame_sizes=*loss_tolerance=*Provided by pytest-netload.",
    ])


def test_header_names_engine_topology_and_reports(pytester: pytest.Pytester) -> None:
    from pytest_netload.topology.backends import resolve_backend

    pytester.makepyfile(NETLOAD_TEST)
    result = pytester.runpytest("--netload-engine=popen", "--netload-trial-duration=2s")
    taken = resolve_backend("auto")  # the default: af_xdp where it works here
    result.stdout.fnmatch_lines([
        (f"netload: engine popen, topology netns-router ({taken}), reports netload-results, "
         "trial duration 2s (override)")])
    result.assert_outcomes(passed=1)


def test_the_default_backend_is_af_xdp_only_where_it_works(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_netload.topology import backends

    monkeypatch.setattr(backends, "af_xdp_works", lambda: True)
    assert backends.resolve_backend("auto") == "af_xdp"
    monkeypatch.setattr(backends, "af_xdp_works", lambda: False)
    assert backends.resolve_backend("auto") == "af_packet"
    assert backends.resolve_backend("af_xdp") == "af_xdp"  # asked for: taken as given


def test_link_settings_show_in_the_header_and_the_bare_strict_flag_is_true(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(NETLOAD_TEST)
    result = pytester.runpytest("--netload-link-timeout=3s", "--netload-link-strict")
    result.stdout.fnmatch_lines(["netload: *, link timeout 3s, link speed strict"])
    result = pytester.runpytest("--netload-link-strict=false")
    assert "link speed strict" not in result.stdout.str()
    assert "link timeout" not in result.stdout.str()  # the default (10s) is not shown
    pytester.makeini("[pytest]\nnetload_link_strict = yes\nnetload_link_timeout = 500ms\n")
    result = pytester.runpytest()
    result.stdout.fnmatch_lines(["netload: *, link timeout 500ms, link speed strict"])


def test_cli_beats_env_beats_ini(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makeini("[pytest]\nnetload_backend = af_packet\nnetload_report_dir = from-ini\n")
    pytester.makepyfile(NETLOAD_TEST)
    monkeypatch.setenv("PYTEST_NETLOAD_BACKEND", "af_xdp")
    result = pytester.runpytest()
    result.stdout.fnmatch_lines(["netload: *topology netns-router (af_xdp), reports from-ini"])
    result = pytester.runpytest("--netload-backend=af_packet")
    result.stdout.fnmatch_lines(["netload: *topology netns-router (af_packet), reports from-ini"])


@pytest.mark.parametrize(("args", "ini", "message"), [
    (["--netload-engine-memory=lots"], "",
     "*--netload-engine-memory: 'lots' is not a whole number of MiB*"),
    ([], "netload_engine_memory = lots",
     "*ini key netload_engine_memory: 'lots' is not a whole number of MiB*"),
    (["--netload-backend=dpdk"], "", "*--netload-backend: 'dpdk': use one of auto, af_packet, af_xdp*"),
    (["--netload-topology=mesh"], "",
     "*--netload-topology: 'mesh' is neither a built-in topology*nor a TOML file path*"),
    (["--netload-trial-duration=soon"], "", "*--netload-trial-duration: *soon*"),
    (["--netload-trial-duration=0s"], "", "*--netload-trial-duration: *is zero; give a duration > 0*"),
    (["--netload-trial-duration=2d"], "", "*--netload-trial-duration: *unknown unit 'd'*"),
    (["--netload-trial-duration=25h"], "", "*--netload-trial-duration: *more than 24 h*"),
])
def test_bad_settings_are_usage_errors_naming_their_source(
        pytester: pytest.Pytester, args: list[str], ini: str, message: str) -> None:
    if ini:
        pytester.makeini(f"[pytest]\n{ini}\n")
    pytester.makepyfile("def test_nothing(): pass")
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_plugin_can_be_disabled(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
        import pytest

        @pytest.mark.rfc2544(nonsense=1)
        def test_nothing(): pass
    """)
    result = pytester.runpytest("-p", "no:netload", "--help")
    assert "--netload-engine" not in result.stdout.str()
    result = pytester.runpytest("-p", "no:netload")
    result.assert_outcomes(passed=1)  # the marker is nobody's business then
    assert "netload:" not in result.stdout.str()


UNAVAILABLE = ("*netload: 1 netload test could not run: it needs the built-in topology "
               "netns-router (a DUT the plugin builds of network namespaces and veth pairs, "
               "which needs root), and this session is not root (uid 1000). Give the topology "
               "of your device (--netload-topology=lab.toml*), or run as root*, or try the "
               "plugin without hardware on the fake engine (--netload-engine=fake). To skip "
               "such tests instead, pass --netload-skip-unavailable (ini: "
               "netload_skip_unavailable = true).")


def test_without_root_a_builtin_topology_is_a_usage_error_naming_the_fix(
        pytester: pytest.Pytester) -> None:
    """Never green with nothing measured: a session whose netload tests need a built-in
    DUT (root) and that is not root fails before any test runs, and leaves nothing."""
    pytester.makeconftest(NOT_ROOT)
    pytester.makepyfile("def test_ports(netload_ports): pass\ndef test_plain(): pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: " + UNAVAILABLE[1:]])
    assert "netload:" not in result.stdout.str()
    assert not (pytester.path / "netload-results").exists()


@pytest.mark.parametrize("how", ["cli", "ini"])
def test_without_root_the_user_may_skip_what_cannot_run(pytester: pytest.Pytester,
                                                         how: str) -> None:
    pytester.makeconftest(NOT_ROOT)
    pytester.makepyfile("def test_ports(netload_ports): pass")
    args = ["-rs", "-p", "no:cacheprovider"]
    if how == "cli":
        args.append("--netload-skip-unavailable")
    else:
        pytester.makeini("[pytest]\nnetload_skip_unavailable = true\n")
    result = pytester.runpytest_subprocess(*args)
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines([UNAVAILABLE])
    result.stdout.fnmatch_lines(["netload: overall verdict NO VERDICT*1 skipped*"])


def test_without_root_a_topology_file_or_the_fake_engine_runs(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(NOT_ROOT)
    pytester.makepyfile("def test_topology(netload_topology): pass")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--netload-engine=fake")
    result.assert_outcomes(passed=1)


def test_without_root_collect_only_lists_the_tests(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(NOT_ROOT)
    pytester.makepyfile("def test_ports(netload_ports): pass")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--collect-only", "-q")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*test_ports*"])


def test_an_engine_that_cannot_start_is_an_error_naming_the_gateway(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_engine(netload_engine): pass")
    result = pytester.runpytest("--netload-engine=popen//python=/nonexistent/python3")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([
        ("*netload: the engine did not start: engine host could not start with gateway "
        "'popen//python=/nonexistent/python3'*No such file*")])
    assert "Traceback" not in result.stdout.str()


def test_a_bad_topology_file_is_a_usage_error_naming_file_and_key(
        pytester: pytest.Pytester) -> None:
    path = pytester.path / "lab.toml"
    path.write_text('[topology]\nname = "lab"\n[[ports]]\nname = "p0"\ndevice = "net_null0"\n'
                    'mac = "02:00:00:00:00:01"\npeer-mac = "02:00:00:00:00:02"\n'
                    '[[wires]]\ntx = "p0"\nrx = "p0"\n')
    pytester.makepyfile(NETLOAD_TEST)
    result = pytester.runpytest(f"--netload-topology={path}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--netload-topology: {path}*ports[[]0[]].peer-mac*peer_mac*"])


def test_xdist_workers_send_records_to_the_controller_summary(pytester: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    pytester.makepyfile("""
        import pytest
        from pytest_netload.bench import progress
        from pytest_netload.measure.recording import record_measurement

        pytestmark = pytest.mark.netload  # measures without a fixture: a netload test so

        @pytest.mark.parametrize("size", [64, 128, 256, 512])
        def test_measured(size):
            progress.report(test="x", trial=1, offered_pps=1000.0)
            record_measurement("throughput", {"frame_size": size, "throughput_pps": 1000.0 * size,
                                              "trials": []})
    """)
    result = pytester.runpytest("-n", "2", "-v", "-p", "no:randomly", "-p", "no:benchmark")
    result.assert_outcomes(passed=4)
    out = result.stdout.str()
    # workers have no terminal: the controller shows their progress, a line a trial
    assert len(re.findall(r"\[gw\d\] netload: test_measured\[\d+\] \| trial 1 \| offered ", out)) == 4
    for size in (64, 128, 256, 512):
        result.stdout.fnmatch_lines([f"test_measured[[]{size}[]]*{size}B*PASS*"])


def test_builtin_topology_parameters_are_checked_at_start(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(NETLOAD_TEST)
    result = pytester.runpytest("--netload-topology=netns-shaped:rate_bps=20Mbit/s,qdisc=htb")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["netload: *topology netns-shaped:rate_bps=20Mbit/s,qdisc=htb*"])
    result = pytester.runpytest("--netload-topology=netns-shaped:rate=20Mbit/s")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([("*netns-shaped takes no parameter 'rate' here; its parameters "
                                 "are [[]'rate_bps', 'qdisc'*")])
    result = pytester.runpytest("--netload-topology=netns-lossy:loss_ratio=2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*loss_ratio*"])


@pytest.mark.parametrize("suite", ["router", "rfc2544", "rfc2544_defaults", "ecmp"])
def test_every_example_suite_collects(pytester: pytest.Pytester, suite: str) -> None:
    """The example suites' markers parse at collection (CI runs the quick ones end to end;
    rfc2544_defaults takes minutes at the RFC's 60 s trials and is only collected)."""
    import shutil
    from pathlib import Path

    shutil.copytree(Path(__file__).parents[2] / "conftest_examples" / suite,
                    pytester.path / suite)
    result = pytester.runpytest("-p", "no:cacheprovider", "--collect-only", "-q", suite)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.stdout.fnmatch_lines(["*test_*"])
