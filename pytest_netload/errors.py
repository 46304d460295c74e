"""Exceptions and warnings of pytest-netload.

A DUT verdict is an assertion (pytest reports FAIL); every class here is a
harness problem (pytest reports ERROR) and says what to do about it.
"""

from __future__ import annotations


class NetloadError(Exception):
    """Base of every pytest-netload error; never raised directly."""


class NetloadConfigError(NetloadError, ValueError):
    """Bad input: the message names the value and the fix."""


class NetloadEnvironmentError(NetloadError, OSError):
    """The machine lacks something: DPDK, root, a port, a kernel feature."""


class MissingExtra(NetloadEnvironmentError):
    """A feature needs an optional dependency that is not installed; the message names the
    extra that installs it: ``pip install 'pytest-netload[html]'``."""

    def __init__(self, what: str, module: str, extra: str) -> None:
        super().__init__(f"{what} needs {module}, which is not installed: "
                         f"pip install 'pytest-netload[{extra}]'")
        self.module = module
        self.extra = extra


class ResourceBusy(NetloadEnvironmentError):
    """Another engine holds what this one must own alone (a worker CPU, a port); the
    message names the holder (pid, command line) and what to do."""


class NativeError(NetloadError):
    """The native core refused a call; carries its status code and text."""

    def __init__(self, message: str, status: int = 0, detail: str = "") -> None:
        super().__init__(f"{message}: {detail}" if detail else message)
        self.status = status
        self.detail = detail


class EngineCrashed(NetloadError):
    """The engine host process died; carries the tail of its log."""

    def __init__(self, message: str, log_tail: str = "") -> None:
        text = message
        if log_tail:
            text += "\n--- last engine log lines ---\n" + log_tail
        super().__init__(text)
        self.log_tail = log_tail


class InvalidTrial(NetloadError):
    """The generator, not the DUT, failed a trial (TX short, RX drops on our side)."""


class GeneratorLimit(NetloadError):
    """A figure the generator bounded does not clear a requirement: the DUT passed the
    highest load the generator could offer, so its figure is only a lower bound (the
    generator's ceiling), and that bound is below what was required. The DUT was not
    judged (pytest: ERROR, not FAIL); the message says how far the generator got and
    what to do."""


class NetloadHookError(NetloadError):
    """A pytest_netload_* hook implementation raised, returned the wrong type or took
    longer than the hook timeout; the message names the hook and its plugin. The test
    it ran in is an ERROR (the DUT was not judged)."""


class DutHealthFailure(AssertionError):
    """A DUT health hook failed the test (``DutHealth.failed(reason)``): a DUT verdict."""


class NetloadWarning(UserWarning):
    """Base of pytest-netload warnings; each one says what to do."""


class LinkSpeedWarning(NetloadWarning):
    """A port's negotiated link speed differs from the topology's line rate."""
