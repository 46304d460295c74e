"""pytest-netload's pytest plugin: options, header and the engine fixture.

Thin on purpose: importing this module never loads the cffi extension or
DPDK; the engine host process starts only when a test asks for it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from .engine.client import Engine

# Help texts: start with a capital letter; a single phrase has no final period.
ENGINE_DESC = "Where the engine host runs: 'popen' (local, default) or an execnet spec such as 'ssh=gen-host//python=python3'"
ENGINE_MEMORY_DESC = "Memory for the engine's EAL, in MiB"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("netload", "network device conformance testing (pytest-netload)")
    group.addoption("--netload-engine", dest="netload_engine", default=None, help=ENGINE_DESC)
    group.addoption("--netload-engine-memory", dest="netload_engine_memory", type=int,
                    default=None, help=ENGINE_MEMORY_DESC)
    parser.addini("netload_engine", ENGINE_DESC, default="popen")
    parser.addini("netload_engine_memory", ENGINE_MEMORY_DESC, default="1024")


def _setting(config: pytest.Config, name: str) -> str:
    """Precedence: CLI > env (PYTEST_NETLOAD_<NAME>) > ini > default."""
    cli = config.getoption(name)
    if cli is not None:
        return str(cli)
    env = os.environ.get(f"PYTEST_{name.upper()}")
    if env:
        return env
    return str(config.getini(name))


def pytest_report_header(config: pytest.Config) -> str:
    return f"netload: engine {_setting(config, 'netload_engine')}"


@pytest.fixture(scope="session")
def netload_engine(pytestconfig: pytest.Config) -> Iterator[Engine]:
    """The session's traffic engine (its host process starts on first use)."""
    from .engine.client import Engine

    memory = _setting(pytestconfig, "netload_engine_memory")
    try:
        memory_mb = int(memory)
    except ValueError:
        raise pytest.UsageError(
            f"netload_engine_memory {memory!r} is not a whole number of MiB"
        ) from None
    engine = Engine(_setting(pytestconfig, "netload_engine"), memory_mb=memory_mb)
    try:
        yield engine.start()
    finally:
        engine.close()
