"""Settings: one help text per setting for CLI and ini, converters, precedence.

Precedence is marker > CLI > environment (PYTEST_NETLOAD_<NAME>) > ini >
default; markers are handled in markers.py. A bad value raises
`pytest.UsageError` naming where it came from and what to write instead.
Pure: importing this never loads the engine.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

from ..errors import NetloadConfigError
from ..reports.signoff import FIELDS as SIGN_OFF_KEYS  # customer, operator, site, test plan

if TYPE_CHECKING:
    from ..engine.fake import FakeDut

# Help texts: start with a capital letter; a single phrase has no final period.
TOPOLOGY_DESC = ("Topology to test on: a built-in name (netns-router, netns-shaped, "
                 "netns-lossy, netns-bridge, loopback; parameters as "
                 "netns-shaped:rate_bps=20Mbit/s) or a TOML topology file "
                 "(docs/topology-files.md). Default: netns-router")
BACKEND_DESC = ("DPDK driver the built-in topologies use on their veth ports: af_packet, "
                "af_xdp, or auto (af_xdp where it works here, else af_packet). Default: auto")
ENGINE_DESC = ("Where the engine host runs: 'popen' (local, default) or an execnet spec "
               "such as 'ssh=gen-host//python=python3'; or 'fake' for the fake engine, a "
               "modelled DUT without DPDK or root (parameters as fake:capacity_pps=50000,"
               "loss_ratio=0,delay_s=100us,buffer_frames=1000)")
ENGINES_DESC = ("Named engines for topology files whose ports say `engine = \"NAME\"`: "
                "NAME=SPEC entries separated by ';' or new lines, each SPEC as for "
                "--netload-engine (e.g. 'gen-a=ssh=ci@gen-a//python=/opt/netload/.venv/bin/"
                "python'). Default: none (every port on --netload-engine)")
ENGINE_MEMORY_DESC = "Memory for the engine's EAL, in MiB. Default: 1024"
REPORT_DIR_DESC = "Directory the result files are written to. Default: netload-results"
REPORT_DESC = ("The acceptance reports written beside results.json: html (report.html), pdf "
               "(report.pdf: paginated, with a cover, contents, page numbers and a signature "
               "block; needs pytest-netload[pdf]), both as 'html,pdf', or none. Default: html")
SIGN_OFF_DESC = "{what}, on the acceptance report's cover and in results.json. Default: none"
TRIAL_DURATION_DESC = ("Override every trial's duration (e.g. '1s' for a quick run); "
                       "markers' durations are ignored while it is set")

SAVE_BASELINE_DESC = ("Store this session's results as baseline NAME (under <report dir>/"
                      "baselines/)")
BASELINE_DESC = ("Compare against baseline NAME: tests whose figures regressed beyond their "
                 "measurement noise fail, and a comparison table is printed")
REGRESSION_DESC = ("Regression threshold for --netload-baseline, a percentage such as 5 percent: "
                   "a figure regresses only when it lies outside its noise band AND is "
                   "worse than the baseline by more than this (docs/baselines.md). "
                   "Default: none (the noise band alone)")
HISTORY_DESC = ("A directory of earlier sessions' results files: the report shows each "
                "figure's trend over them and this session, with its change points, and this "
                "session's results.json is added to it (docs/baselines.md)")
LINK_TIMEOUT_DESC = ("How long each port's link may take to come up when the session opens "
                     "the ports, and to come back after a trial that lost it (0: look once); "
                     "a link still down then is an error naming the port. Default: 10s")
LINK_STRICT_DESC = ("Make a port whose negotiated link speed differs from the topology's "
                    "line_rate an error, not a warning (true/false; the bare flag is true). "
                    "Default: false")
PORT_WAIT_DESC = ("How long opening a port waits for another session (another pytest run, "
                  "another CI job) that holds it, before failing with its name, pid and "
                  "command line. Default: 0s (fail at once)")
DUT_HEALTH_DESC = ("Run the DUT's health hooks (pytest_netload_dut_health, docs/hooks.md) "
                   "after every RFC 2544 trial: a trial they call invalid is retried, a "
                   "failed check fails the test (true/false; the bare flag is true; a "
                   "marker's dut_health= overrides). Default: false")
HOOK_TIMEOUT_DESC = ("The longest one call of a pytest_netload_* hook implementation may "
                     "take before the test errors naming the hook and its plugin. "
                     "Default: 60s")
RESOLVE_TIMEOUT_DESC = ("How long a port may take to resolve its peer_ip's MAC by ARP / "
                        "neighbour discovery when the topology gives no peer_mac; no answer "
                        "by then is an error naming the port and what to check. Default: 5s")

SKIP_UNAVAILABLE_DESC = ("Skip the netload tests that cannot run here (a built-in topology, "
                         "which needs root, in a session that is not root) instead of "
                         "failing the session with a usage error that names the fix "
                         "(true/false; the bare flag is true). Default: false")
BUILTIN_NOTE = "built-in DUT, not your device"  # a CI job on the default topology says so

BUILTIN_TOPOLOGIES = ("netns-router", "netns-shaped", "netns-lossy", "netns-bridge",
                      "netns-policed", "loopback", "dpdk-testpmd", "ovs-dpdk")


@dataclass(frozen=True)
class Setting:
    name: str                      # netload_<noun>: ini key; --netload-<noun> on the CLI
    help: str
    default: str
    convert: Callable[[str], Any]

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def env(self) -> str:
        return "PYTEST_" + self.name.upper()


_PARAM_WORDS = {"true": True, "false": False, "none": None}  # learning=true, max_learned=none


def _param(key: str, text: str) -> Any:
    if text.lower() in _PARAM_WORDS:
        return _PARAM_WORDS[text.lower()]
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    if key.endswith("_bps"):
        from ..units import as_rate

        rate = as_rate(text, what=key)
        if rate.kind != "bps":
            raise NetloadConfigError(f"{key}={text!r}: give a bit rate such as '20Mbit/s'")
        return int(rate.value)
    return text


def split_builtin(value: str) -> tuple[str, dict[str, Any]]:
    """'netns-shaped:rate_bps=20Mbit/s,qdisc=htb' -> ('netns-shaped', {...})."""
    name, _, rest = value.partition(":")
    params: dict[str, Any] = {}
    for item in filter(None, rest.split(",")):
        key, eq, text = item.partition("=")
        if not eq or not key.strip():
            raise NetloadConfigError(
                f"{value!r}: parameters are written name:key=value,key=value, e.g. "
                "netns-shaped:rate_bps=20Mbit/s")
        params[key.strip()] = _param(key.strip(), text.strip())
    return name.strip(), params


def _topology(value: str) -> str:
    value = value.strip()
    if value.partition(":")[0] not in BUILTIN_TOPOLOGIES and (
            value.endswith(".toml") or os.sep in value):
        return value
    name, params = split_builtin(value)
    if name in BUILTIN_TOPOLOGIES:
        if params:  # checked now (creating nothing), not when the first test needs it
            from ..topology.builtin import BUILTIN

            factory = BUILTIN[name]
            unknown = sorted(set(params) - set(inspect.signature(factory).parameters))
            if unknown or {"backend", "prefix"} & set(params):
                raise NetloadConfigError(
                    f"{value!r}: {name} takes no parameter {(unknown or ['backend'])[0]!r} "
                    f"here; its parameters are "
                    f"{[k for k in inspect.signature(factory).parameters if k not in ('backend', 'prefix')]}"
                    " (the backend comes from --netload-backend)")
            factory(**params)
        return value
    raise NetloadConfigError(
        f"{value!r} is neither a built-in topology ({', '.join(BUILTIN_TOPOLOGIES)}, with "
        "parameters as netns-shaped:rate_bps=20Mbit/s) nor a TOML file path (ending in .toml)")


def _backend(value: str) -> str:
    from ..topology.backends import CHOICES, resolve_backend

    if value not in CHOICES:
        raise NetloadConfigError(f"{value!r}: use one of {', '.join(CHOICES)}")
    return resolve_backend(value)


def _memory(value: str) -> int:
    from ..engine import MAX_MEMORY_MB, MIN_MEMORY_MB

    try:
        mb = int(value)
    except ValueError:
        raise NetloadConfigError(f"{value!r} is not a whole number of MiB; give one such as "
                                 "1024") from None
    if mb < MIN_MEMORY_MB:
        raise NetloadConfigError(f"{mb} MiB is too little for the EAL; give at least "
                                 f"{MIN_MEMORY_MB}")
    if mb > MAX_MEMORY_MB:
        raise NetloadConfigError(f"{mb} MiB is more than any machine gives the EAL; give at "
                                 f"most {MAX_MEMORY_MB} (1 TiB)")
    return mb


ENGINE_KINDS = ("ssh", "socket", "vagrant_ssh")
ENGINE_KEYS = ("python", "chdir", "nice", "id", "dont_write_bytecode", "execmodel", "ssh_config")


def _engine(value: str) -> str:
    """An execnet gateway spec: 'popen' or ssh=/socket=/vagrant_ssh=, then //key=value;
    or the fake engine: 'fake' or 'fake:key=value,...' (its DUT's parameters)."""
    if value.strip().partition(":")[0].strip() == "fake":
        from ..engine.fake import parse_fake_engine  # numpy: only for the fake engine

        if parse_fake_engine(value) is not None:  # raises naming a bad DUT parameter
            return value.strip()
    fix = "write 'popen' (the engine runs here), an execnet spec such as " \
        "'ssh=gen-host//python=python3', or 'fake' (the fake engine)"
    first, *rest = value.split("//")
    kind, eq, target = first.partition("=")
    if first != "popen" and not (kind in ENGINE_KINDS and eq and target.strip()):
        raise NetloadConfigError(f"{value!r} is not an execnet gateway (it starts with neither "
                                 f"popen nor {'=, '.join(ENGINE_KINDS)}=...) nor 'fake'; "
                                 f"{fix}")
    for part in rest:
        key = part.partition("=")[0]
        if key not in ENGINE_KEYS and not key.startswith("env:"):
            raise NetloadConfigError(
                f"{value!r}: {part!r} is not an execnet spec key; use "
                f"{', '.join(k + '=' for k in ENGINE_KEYS)} or env:NAME=; {fix}")
    return value


def _engines(value: str) -> tuple[tuple[str, str], ...]:
    """'gen-a=ssh=...; gen-b=popen' as ((name, spec), ...), each spec checked."""
    if not value.strip():
        return ()  # the default: no named engines
    from ..topology.model import _check_name

    out: dict[str, str] = {}
    for entry in value.replace("\n", ";").split(";"):
        if not entry.strip():
            continue
        name, eq, spec = entry.partition("=")
        name = name.strip()
        if not eq or not spec.strip():
            raise NetloadConfigError(
                f"{entry.strip()!r} names no engine spec; write NAME=SPEC, e.g. "
                "gen-a=ssh=ci@gen-a//python=/opt/netload/.venv/bin/python")
        _check_name(name, "engine name")
        if name in out:
            raise NetloadConfigError(f"engine {name!r} is named twice; name each engine once")
        try:
            out[name] = _engine(spec.strip())
        except NetloadConfigError as exc:
            raise NetloadConfigError(f"engine {name!r}: {exc}") from None
        if out[name].partition(":")[0].strip() == "fake":
            raise NetloadConfigError(
                f"engine {name!r}: the fake engine models one DUT of its own and cannot be "
                "one of several engines; give popen or an ssh= spec")
    return tuple(out.items())


def _report_dir(value: str) -> str:
    if not value.strip():
        raise NetloadConfigError(f"{value!r} is empty; give a directory for the result files, "
                                 "e.g. netload-results (the default)")
    if "\0" in value:
        raise NetloadConfigError(f"{value!r} holds a NUL character; give a directory path")
    return value


REPORT_FORMATS = ("html", "pdf")


def _reports(value: str) -> tuple[str, ...]:
    """'html,pdf' -> ('html', 'pdf'); 'none' -> (); pdf only where its renderer loads."""
    words = [w.strip().lower() for w in value.split(",")]
    if words == ["none"]:
        return ()
    bad = [w for w in words if w not in REPORT_FORMATS]
    if bad:
        raise NetloadConfigError(f"{value!r}: {bad[0]!r} is no report format; give html, pdf, "
                                 "both as 'html,pdf', or none")
    if "pdf" in words:
        from ..errors import NetloadEnvironmentError
        from ..reports.pdf import renderer

        try:
            renderer()  # found now, not after the whole run
        except NetloadEnvironmentError as exc:
            raise NetloadConfigError(f"pdf: {exc}; or write the HTML report only "
                                     "(html)") from None
    return tuple(dict.fromkeys(words))


def _sign_off(key: str) -> Callable[[str], str | None]:
    def convert(value: str) -> str | None:
        from ..reports.signoff import check_field

        return check_field(key, value) or None
    return convert


def _duration(value: str) -> float | None:
    if value in ("", "none"):
        return None
    from ..bench.validity import trial_seconds

    return trial_seconds(value, what="trial duration")


def _link_timeout(value: str) -> float:
    from ..bench.link import link_timeout_seconds

    return link_timeout_seconds(value.strip(), what="link timeout")


def _timeout(value: str, what: str, most_s: float, example: str) -> float:
    from ..units import as_duration

    seconds = as_duration(value.strip(), what=what).seconds
    if not 0 < seconds <= most_s:
        raise NetloadConfigError(f"{what} {value!r}: give more than 0 and at most "
                                 f"{most_s:g} s, e.g. {example}")
    return seconds


def _resolve_timeout(value: str) -> float:
    return _timeout(value, "resolve timeout", 600, "5s")


def _hook_timeout(value: str) -> float:
    return _timeout(value, "hook timeout", 3600, "60s")


def _port_wait(value: str) -> float:
    from ..units import as_duration

    seconds = as_duration(value.strip(), what="port wait").seconds
    if not 0 <= seconds <= 3600:
        raise NetloadConfigError(f"port wait {value!r}: give 0 (fail at once) to 3600 s, "
                                 "e.g. 60s")
    return seconds


TRUE_WORDS, FALSE_WORDS = ("true", "1", "yes", "on"), ("false", "0", "no", "off", "")


def _flag(value: str) -> bool:
    word = value.strip().lower()
    if word in TRUE_WORDS or word in FALSE_WORDS:
        return word in TRUE_WORDS
    raise NetloadConfigError(f"{value!r} is not a yes/no value; give true or false "
                             "(also 1/0, yes/no, on/off)")


SETTINGS = (
    Setting("netload_topology", TOPOLOGY_DESC, "netns-router", _topology),
    Setting("netload_backend", BACKEND_DESC, "auto", _backend),
    Setting("netload_engine", ENGINE_DESC, "popen", _engine),
    Setting("netload_engines", ENGINES_DESC, "", _engines),
    Setting("netload_engine_memory", ENGINE_MEMORY_DESC, "1024", _memory),
    Setting("netload_report_dir", REPORT_DIR_DESC, "netload-results", _report_dir),
    Setting("netload_report", REPORT_DESC, "html", _reports),
    Setting("netload_customer", SIGN_OFF_DESC.format(what="The customer the DUT is "
                                                     "accepted for"), "", _sign_off("customer")),
    Setting("netload_operator", SIGN_OFF_DESC.format(what="Who runs the tests"), "",
            _sign_off("operator")),
    Setting("netload_site", SIGN_OFF_DESC.format(what="Where the tests run"), "",
            _sign_off("site")),
    Setting("netload_test_plan", SIGN_OFF_DESC.format(what="The test plan's name or "
                                                      "reference"), "", _sign_off("test_plan")),
    Setting("netload_trial_duration", TRIAL_DURATION_DESC, "", _duration),
    Setting("netload_save_baseline", SAVE_BASELINE_DESC, "", lambda v: _baseline_name(v)),
    Setting("netload_baseline", BASELINE_DESC, "", lambda v: _baseline_name(v)),
    Setting("netload_regression", REGRESSION_DESC, "", lambda v: _regression(v)),
    Setting("netload_history", HISTORY_DESC, "", lambda v: _history(v)),
    Setting("netload_link_timeout", LINK_TIMEOUT_DESC, "10s", _link_timeout),
    Setting("netload_link_strict", LINK_STRICT_DESC, "false", _flag),
    Setting("netload_resolve_timeout", RESOLVE_TIMEOUT_DESC, "5s", _resolve_timeout),
    Setting("netload_port_wait", PORT_WAIT_DESC, "0s", _port_wait),
    Setting("netload_dut_health", DUT_HEALTH_DESC, "false", _flag),
    Setting("netload_hook_timeout", HOOK_TIMEOUT_DESC, "60s", _hook_timeout),
    Setting("netload_skip_unavailable", SKIP_UNAVAILABLE_DESC, "false", _flag),
)
# flags: --netload-link-strict alone means true
FLAGS = frozenset({"netload_link_strict", "netload_dut_health", "netload_skip_unavailable"})


# What the converters make of the defaults, so that a session that keeps them loads
# none of the converters' modules (units, bench): every session pays for these at
# configure. tests/plugin/test_plugin.py checks each against its converter.
DEFAULT_VALUES: dict[str, Any] = {
    "netload_engine_memory": 1024, "netload_trial_duration": None,
    "netload_save_baseline": None, "netload_baseline": None, "netload_regression": None,
    "netload_history": None,
    "netload_engines": (),
    "netload_link_timeout": 10.0, "netload_resolve_timeout": 5.0, "netload_port_wait": 0.0,
    "netload_hook_timeout": 60.0, "netload_report": ("html",), "netload_customer": None,
    "netload_operator": None, "netload_site": None, "netload_test_plan": None,
}


def _regression(value: str) -> float | None:
    from ..reports.threshold import parse_threshold

    return parse_threshold(value)


def _history(value: str) -> str | None:
    """A history directory: None for none; an existing path that is not a directory is
    refused (a missing one is made when the session writes to it)."""
    if not value:
        return None
    if os.path.exists(value) and not os.path.isdir(value):
        raise NetloadConfigError(
            f"--netload-history {value}: not a directory; give a directory of earlier "
            "sessions' results files (it is made if missing)")
    return value


def _baseline_name(value: str) -> str | None:
    if not value:
        return None
    from ..reports.baseline import check_baseline_name

    return check_baseline_name(value)


@dataclass(frozen=True)
class Settings:
    """The session's resolved settings."""

    topology: str
    backend: str
    engine: str
    engine_memory_mb: int
    report_dir: str
    trial_duration_s: float | None
    save_baseline: str | None = None
    baseline: str | None = None
    link_timeout_s: float = 10.0
    link_strict: bool = False
    resolve_timeout_s: float = 5.0
    port_wait_s: float = 0.0
    engines: tuple[tuple[str, str], ...] = ()
    """Named engines (--netload-engines): (name, execnet spec) pairs."""
    dut_health: bool = False
    """Run the DUT's health hooks after every trial (a marker's dut_health overrides)."""
    hook_timeout_s: float = 60.0
    """The longest one call of a pytest_netload_* hook implementation may take."""
    skip_unavailable: bool = False
    """Skip netload tests that cannot run here (a built-in DUT without root), not fail."""
    regression: float | None = None
    """The regression threshold (a share: 0.05 for 5 %); None: the noise band alone."""
    reports: tuple[str, ...] = ("html",)
    """The acceptance reports to write beside results.json: "html", "pdf" (--netload-report)."""
    sign_off: tuple[tuple[str, str], ...] = ()
    """Customer, operator, site, test plan as given (--netload-customer ...): (key, text)."""
    history: str | None = None
    """A directory of earlier results files for the report's trends (--netload-history)."""
    builtin_in_ci: bool = False
    """A CI job (`CI` set) left at the default topology, a built-in DUT: the header and
    the report say it is not the user's device."""

    @property
    def fake_dut(self) -> FakeDut | None:
        """The modelled DUT of a fake-engine session (--netload-engine=fake:...); None
        when the engine is a real one."""
        if self.engine.partition(":")[0].strip() != "fake":
            return None  # without importing the fake engine (numpy) for a real one
        from ..engine.fake import parse_fake_engine

        return parse_fake_engine(self.engine)

    @property
    def gateway(self) -> str:
        """The execnet gateway the engine host runs behind (the fake one runs here)."""
        return "popen" if self.fake_dut is not None else self.engine

    @property
    def builtin_topology(self) -> bool:
        return self.topology.partition(":")[0] in BUILTIN_TOPOLOGIES

    def builtin(self) -> tuple[str, dict[str, Any]]:
        """The built-in topology's name and parameters."""
        return split_builtin(self.topology)

    def header(self) -> str:
        from .. import format as fmt

        topo = (f"{self.topology} ({self.backend})" if self.builtin_topology
                else self.topology)
        if self.builtin_in_ci:
            topo += f" [{BUILTIN_NOTE}]"
        parts = [f"engine {self.engine}", f"topology {topo}", f"reports {self.report_dir}"]
        if self.trial_duration_s is not None:
            parts.append(f"trial duration {fmt.time_s_exact(self.trial_duration_s)} (override)")
        if self.baseline:
            parts.append(f"baseline {self.baseline}")
        if self.regression is not None:
            parts.append(f"regression threshold {fmt.percent(self.regression)}")
        if self.link_timeout_s != 10.0:
            parts.append(f"link timeout {fmt.time_s_exact(self.link_timeout_s)}")
        if self.link_strict:
            parts.append("link speed strict")
        if self.engines:
            parts.append("engines " + ", ".join(f"{n}={s}" for n, s in self.engines))
        if self.port_wait_s:
            parts.append(f"port wait {fmt.time_s_exact(self.port_wait_s)}")
        if self.dut_health:
            parts.append("DUT health checks on")
        if self.hook_timeout_s != 60.0:
            parts.append(f"hook timeout {fmt.time_s_exact(self.hook_timeout_s)}")
        if self.resolve_timeout_s != 5.0:
            parts.append(f"resolve timeout {fmt.time_s_exact(self.resolve_timeout_s)}")
        if self.reports != ("html",):
            parts.append(f"report {','.join(self.reports) or 'none'}")
        return "netload: " + ", ".join(parts)


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("netload", "network device conformance testing (pytest-netload)")
    for s in SETTINGS:
        if s.name in FLAGS:
            group.addoption(s.flag, dest=s.name, default=None, help=s.help, nargs="?",
                            const="true", metavar="true|false")
        else:
            group.addoption(s.flag, dest=s.name, default=None, help=s.help)
        parser.addini(s.name, s.help, default=s.default)


def resolve(config: pytest.Config) -> Settings:
    """Every setting from CLI > env > ini > default; UsageError naming the source."""
    values, sources = {}, {}
    for s in SETTINGS:
        raw, where = config.getoption(s.name), s.flag
        if raw is None and os.environ.get(s.env):
            raw, where = os.environ[s.env], f"environment variable {s.env}"
        if raw is None:
            raw, where = str(config.getini(s.name)), f"ini key {s.name}"
        try:
            values[s.name] = DEFAULT_VALUES[s.name] \
                if str(raw) == s.default and s.name in DEFAULT_VALUES else s.convert(str(raw))
        except NetloadConfigError as exc:
            raise pytest.UsageError(f"{where}: {exc}") from None
        sources[s.name] = where if str(raw) != s.default else None
    if values["netload_engine"].partition(":")[0].strip() == "fake" and \
            values["netload_topology"].partition(":")[0] in BUILTIN_TOPOLOGIES:
        if sources["netload_topology"] is not None:
            raise pytest.UsageError(
                f"{sources['netload_topology']}: topology {values['netload_topology']!r} "
                "builds a real DUT of network namespaces, but the engine is the fake one "
                f"({sources['netload_engine']}), whose DUT is a model: leave the topology out "
                "(the fake topology, p0 -> DUT -> p1, is used) or give a topology file, or "
                "use a real engine ('popen')")
        from ..topology.fake import FAKE_TOPOLOGY

        values["netload_topology"] = FAKE_TOPOLOGY
    return Settings(values["netload_topology"], values["netload_backend"],
                    values["netload_engine"], values["netload_engine_memory"],
                    values["netload_report_dir"], values["netload_trial_duration"],
                    values["netload_save_baseline"], values["netload_baseline"],
                    values["netload_link_timeout"], values["netload_link_strict"],
                    values["netload_resolve_timeout"], values["netload_port_wait"],
                    values["netload_engines"], values["netload_dut_health"],
                    values["netload_hook_timeout"], values["netload_skip_unavailable"],
                    values["netload_regression"],
                    values["netload_report"],
                    tuple((key, values[f"netload_{key}"]) for key in SIGN_OFF_KEYS
                          if values[f"netload_{key}"]),
                    values["netload_history"],
                    _builtin_in_ci(config, values["netload_topology"]))


def _builtin_in_ci(config: pytest.Config, topology: str) -> bool:
    """Whether this is a CI job (`CI` set, as CI services set it, and not to a false word)
    that runs on the default built-in topology because it was given none (no
    --netload-topology, PYTEST_NETLOAD_TOPOLOGY or ini key)."""
    if os.environ.get("CI", "").strip().lower() in FALSE_WORDS:
        return False
    setting = next(s for s in SETTINGS if s.name == "netload_topology")
    given = (config.getoption(setting.name) is not None or bool(os.environ.get(setting.env))
             or str(config.getini(setting.name)) != setting.default)
    return not given and topology.partition(":")[0] in BUILTIN_TOPOLOGIES
