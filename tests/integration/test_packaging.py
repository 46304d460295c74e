"""The two distributions as users install them, built from a clean copy of the tree.

`python -m build` makes pytest-netload's sdist and a pure wheel (py3-none-any, no native
code; `pip wheel .` makes the same), and pytest-netload-engine's sdist and a wheel that
holds only the extension, compiled from that sdist. Both wheels installed into a fresh
virtual environment start an engine on net_null and count a TX run; the pure wheel alone
runs the plugin on the fake engine and refuses a local engine, naming the pip command.
The engine's build refuses a DPDK other than 22.11, naming it, unless told otherwise.

Nothing is downloaded: the temporary venvs see this interpreter's site-packages (a .pth
file, so its other .pth files, this checkout's editable installs among them, are not
read), pip installs with --no-deps --no-build-isolation --no-index, and pytest_netload and
pytest_netload_engine must come from the venv, which every check asserts.
"""

from __future__ import annotations

import email.parser
import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="the engine needs root (run as root or in CI)"),
]

ROOT = Path(__file__).resolve().parents[2]
JUNK = (".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", "*.so", "*.o",
        ".pytest_cache", ".hypothesis", "netload-results", "_netload_native.c")
WHERE = ("import json, pytest_netload, pytest_netload.plugin, pytest_netload.engine.client; "
         "out = {'package': pytest_netload.__file__}\n"
         "try:\n"
         "    import pytest_netload_engine._netload_native as m\n"
         "    out['native'] = m.__file__\n"
         "except ImportError as exc:\n"
         "    out['missing'] = str(exc)\n"
         "print(json.dumps(out))")
TX_RUN = """
from pytest_netload.engine.client import Engine
from pytest_netload.traffic.packets import UDP, Eth, IPv4
from pytest_netload.traffic.streams import Stream
with Engine(memory_mb=256) as engine:
    port = engine.port("net_null0")
    stream = engine.load(port, Stream((Eth() / IPv4() / UDP()).build(), size=64, name="s"))
    (result,) = engine.run([stream], count=10_000).streams
    print("dpdk", engine.hello.get("dpdk_version"), "tx_packets", result.tx_packets)
"""


def run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None,
        timeout: float = 240, check: bool = True) -> subprocess.CompletedProcess[str]:
    out = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True,
                         timeout=timeout, check=False, env={**os.environ, **(env or {})})
    if check:
        assert out.returncode == 0, f"{args}: exit {out.returncode}\n{out.stdout}\n{out.stderr}"
    return out


def venv(path: Path) -> Path:
    """A venv without pip whose site-packages read this interpreter's (pip, setuptools,
    cffi, the dependencies) after its own; its python."""
    run(sys.executable, "-m", "venv", "--without-pip", path, cwd=path.parent)
    python = path / "bin" / "python"
    purelib = run(python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))",
                  cwd=path.parent).stdout.strip()
    ours = [p for p in sys.path if p.endswith(("site-packages", "dist-packages"))]
    (Path(purelib) / "outer-site-packages.pth").write_text("\n".join(ours) + "\n")
    return python


def pip_install(python: Path, *targets: Path, cwd: Path) -> None:
    run(python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps",
        "--no-build-isolation", "--ignore-installed", "--no-index", *targets, cwd=cwd)


def where(python: Path, cwd: Path) -> dict[str, str]:
    """Where the venv's python imports the two packages from (-I: not from the working
    directory)."""
    out: dict[str, str] = json.loads(run(python, "-I", "-c", WHERE, cwd=cwd).stdout)
    return out


def names(archive: Path) -> set[str]:
    if archive.suffix == ".whl":
        with zipfile.ZipFile(archive) as whl:
            return set(whl.namelist())
    with tarfile.open(archive) as tar:
        return {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}


def metadata(wheel: Path) -> email.message.Message:
    with zipfile.ZipFile(wheel) as whl:
        (meta,) = [n for n in whl.namelist() if n.endswith(".dist-info/METADATA")]
        return email.parser.Parser().parsestr(whl.read(meta).decode())


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`python -m build` of both distributions in a clean copy of the tree: each sdist,
    then each wheel built from its sdist (the engine's compiles the extension)."""
    pytest.importorskip("build", reason="the test extras install build (pip install -e .[test])")
    top = tmp_path_factory.mktemp("dist")
    shutil.copytree(ROOT, top / "src", ignore=shutil.ignore_patterns(*JUNK))
    for project in (top / "src", top / "src" / "native"):
        run(sys.executable, "-m", "build", "--no-isolation", "--outdir", top / "dist", project,
            cwd=top)
    return top / "dist"


def one(dist: Path, pattern: str) -> Path:
    (found,) = dist.glob(pattern)
    return found


def test_the_client_wheel_is_pure(dist: Path) -> None:
    wheel = one(dist, "pytest_netload-*.whl")
    assert wheel.name.endswith("-py3-none-any.whl"), wheel.name
    inside = names(wheel)
    assert not [n for n in inside if n.endswith((".so", ".c", ".h", ".o"))], inside
    assert not [n for n in inside if n.startswith(("native/", "pytest_netload_engine"))]
    assert {"pytest_netload/reports/results.schema.json", "pytest_netload/_native_facts.py",
            "pytest_netload/plugin/__init__.py"} <= inside
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in inside), inside
    meta = metadata(wheel)
    required = [r for r in meta.get_all("Requires-Dist") if "extra ==" not in r]
    assert not [r for r in required if r.split()[0].split(">")[0].lower() in
                {"cffi", "matplotlib", "jinja2", "scapy", "hdrhistogram"}], required
    assert {"engine", "html", "plots", "scapy", "hdr"} <= set(meta.get_all("Provides-Extra"))
    assert meta["License-Expression"] == "MIT"
    assert "Framework :: Pytest" in meta.get_all("Classifier")
    sdist = names(one(dist, "pytest_netload-*.tar.gz"))
    assert {"LICENSE", "CHANGELOG.md", "README.md", "pyproject.toml"} <= sdist
    assert not [n for n in sdist if n.startswith("native/") or n.endswith(".so")], sdist


def test_pip_wheel_makes_the_same_pure_wheel(dist: Path, tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(dist.parent / "src", src, ignore=shutil.ignore_patterns("native"))
    run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
        "--no-index", "-w", tmp_path / "out", src, cwd=tmp_path,
        env={"PKG_CONFIG_PATH": "/nonexistent", "CC": "no-cc"})
    (wheel,) = (tmp_path / "out").glob("*.whl")
    assert wheel.name == one(dist, "pytest_netload-*.whl").name
    assert names(wheel) == names(one(dist, "pytest_netload-*.whl"))


def test_the_engine_sdist_and_wheel(dist: Path) -> None:
    sdist = names(one(dist, "pytest_netload_engine-*.tar.gz"))
    native = ROOT / "native"
    needed = {str(p.relative_to(native)) for p in native.rglob("*") if p.suffix in (".c", ".h")
              and p.relative_to(native).parts[0] in ("include", "src")}
    assert "include/netload_api.h" in needed and "src/tx.c" in needed
    assert needed <= sdist, sorted(needed - sdist)
    assert {"setup.py", "pyproject.toml", "netload_build.py", "build_checks.py", "LICENSE",
            "README.md", "pytest_netload_engine/__init__.py"} <= sdist
    assert not [n for n in sdist if n.endswith((".so", ".o"))]
    wheel = one(dist, "pytest_netload_engine-*.whl")
    assert "-cp311-abi3-linux_" in wheel.name, wheel.name  # one wheel for CPython 3.11+
    code = {n for n in names(wheel) if ".dist-info/" not in n}
    (so,) = [n for n in code if n.endswith(".so")]
    assert so.startswith("pytest_netload_engine/_netload_native."), so
    assert code == {"pytest_netload_engine/__init__.py", so}, code  # no C, no pytest_netload


def test_both_wheels_in_a_clean_venv_run_an_engine(dist: Path, tmp_path: Path) -> None:
    python = venv(tmp_path / "venv")
    pip_install(python, one(dist, "pytest_netload-*.whl"),
                one(dist, "pytest_netload_engine-*.whl"), cwd=tmp_path)
    found = where(python, tmp_path)
    site = str(tmp_path / "venv")
    assert found["package"].startswith(site) and found.get("native", "").startswith(site), found
    out = run(python, "-I", "-c", TX_RUN, cwd=tmp_path, timeout=120).stdout
    assert "tx_packets 10000" in out and "22.11" in out, out


def test_the_client_wheel_alone_runs_the_fake_engine_and_names_the_engine_extra(
        dist: Path, tmp_path: Path) -> None:
    python = venv(tmp_path / "venv")
    pip_install(python, one(dist, "pytest_netload-*.whl"), cwd=tmp_path)
    found = where(python, tmp_path)
    assert found["package"].startswith(str(tmp_path / "venv")), found
    assert "native" not in found and "pytest_netload_engine" in found["missing"], found

    (tmp_path / "test_fake.py").write_text(
        "import pytest\nfrom pytest_netload import assert_throughput\n\n"
        "@pytest.mark.rfc2544(frame_sizes=[64])\ndef test_throughput(rfc2544):\n"
        "    assert_throughput(rfc2544.throughput(), at_least='45kpps')\n")
    out = run(python, "-I", "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_fake.py",
              "--netload-engine=fake:capacity_pps=50000", cwd=tmp_path).stdout
    assert "1 passed" in out, out

    local = ("from pytest_netload import errors\n"
             "from pytest_netload.engine.client import Engine\n"
             "try:\n    Engine(memory_mb=256).start()\n"
             "except errors.NetloadEnvironmentError as exc:\n    print(exc)\n"
             "else:\n    raise SystemExit('a local engine started on a client-only install')")
    message = run(python, "-I", "-c", local, cwd=tmp_path, timeout=60).stdout
    assert "a client-only install" in message, message
    assert "pip install 'pytest-netload[engine]'" in message, message


def fake_pkg_config(bin_dir: Path, version: str) -> dict[str, str]:
    """A pkg-config on PATH that reports DPDK `version` and answers the rest truly."""
    bin_dir.mkdir()
    real = shutil.which("pkg-config")
    assert real, "pkg-config is needed to build the engine"
    script = bin_dir / "pkg-config"
    script.write_text("#!/bin/sh\n"
                      f'if [ "$1" = --modversion ]; then echo {version}; exit 0; fi\n'
                      f'exec {real} "$@"\n')
    script.chmod(0o755)
    return {"PATH": f"{bin_dir}:{os.environ['PATH']}"}


def test_the_engine_build_refuses_another_dpdk(dist: Path, tmp_path: Path) -> None:
    with tarfile.open(one(dist, "pytest_netload_engine-*.tar.gz")) as tar:
        if hasattr(tarfile, "data_filter"):  # 3.11.4 and later; Debian 12 has 3.11.2
            tar.extractall(tmp_path, filter="data")
        else:
            tar.extractall(tmp_path)
    (src,) = tmp_path.glob("pytest_netload_engine-*")
    env = fake_pkg_config(tmp_path / "bin", "23.11.0")
    refused = run(sys.executable, "setup.py", "build_ext", cwd=src, env=env, check=False)
    assert refused.returncode != 0
    assert ("pytest-netload-engine supports DPDK 22.11, but pkg-config libdpdk found DPDK "
            "23.11.0") in refused.stderr, refused.stderr
    assert "NETLOAD_ALLOW_ANY_DPDK=1" in refused.stderr
    assert not list(src.rglob("*.o")), "the compiler ran"
    # overridden: a warning, and the build goes on (--help: it stops before compiling)
    allowed = run(sys.executable, "setup.py", "build_ext", "--help", cwd=src,
                  env={**env, "NETLOAD_ALLOW_ANY_DPDK": "1"})
    assert ("warning: building pytest-netload-engine against DPDK 23.11.0, not the "
            "supported 22.11") in allowed.stderr, allowed.stderr
