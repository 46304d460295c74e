"""The DUT hooks at work: calling them safely, around every trial, and the built-in
DUTs' own implementations.

`HookRunner` calls each implementation of a pytest_netload_* hook itself, in
pluggy's order, in a thread it waits for at most the hook timeout: an exception, a
wrong return type or a timeout becomes a `NetloadHookError` naming the hook and its
plugin (the test is an ERROR, the engine untouched: hooks run between runs).
`PluginTrialHooks` is the measurer's `TrialHooks` over them (bench/dut_trial.py):
the DUT's counters before and after each trial, the loss attributed, the health
checked when it is on. `BuiltinDutHooks` is the built-in DUTs' plugin.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import pytest

from .. import format as fmt
from ..errors import DutHealthFailure, NetloadHookError
from ..measure.dut import DutCounter, DutHealth

__all__ = ["BUILTIN_PLUGIN", "BuiltinDutHooks", "HookRunner", "PluginTrialHooks",
           "check_sections"]

BUILTIN_PLUGIN = "netload-builtin-dut"


BUILTIN_DUT_MODULES = ("pytest_netload.topology.builtin.dut",
                       "pytest_netload.topology.builtin.testpmd",
                       "pytest_netload.topology.builtin.ovs")


def _is_builtin(dut: Any) -> bool:
    # by module, so that the plugin never imports pyroute2 for a DUT that is not built-in
    return type(dut).__module__ in BUILTIN_DUT_MODULES


class HookRunner:
    """Calls the implementations of one pytest_netload_* hook, one at a time."""

    def __init__(self, config: pytest.Config, timeout_s: float) -> None:
        self.config = config
        self.timeout_s = timeout_s

    def has(self, name: str) -> bool:
        return bool(getattr(self.config.hook, name).get_hookimpls())

    def call(self, name: str, **kwargs: Any) -> list[tuple[str, Any]]:
        """(plugin name, result) of each implementation that returned something other
        than None, in pluggy's call order; only the first with firstresult hooks."""
        caller = getattr(self.config.hook, name)
        first = bool(caller.spec and caller.spec.opts.get("firstresult"))
        out: list[tuple[str, Any]] = []
        for impl in reversed(caller.get_hookimpls()):
            if impl.hookwrapper or getattr(impl, "wrapper", False):
                raise NetloadHookError(
                    f"{name} of plugin {impl.plugin_name!r} is a hook wrapper; pytest-netload "
                    "calls each implementation of its hooks itself (so that an error names "
                    "its plugin and a slow one is bounded): make it a plain "
                    "@pytest.hookimpl")
            args = {a: kwargs[a] for a in impl.argnames if a in kwargs}
            result = self._bounded(name, impl, args)
            if result is not None:
                out.append((impl.plugin_name, result))
                if first:
                    break
        return out

    def _bounded(self, name: str, impl: Any, args: dict[str, Any]) -> Any:
        box: dict[str, Any] = {}

        def target() -> None:
            try:
                box["value"] = impl.function(**args)
            except (Exception, pytest.fail.Exception, pytest.skip.Exception) as exc:
                box["error"] = exc

        thread = threading.Thread(target=target, name=f"netload-hook-{name}", daemon=True)
        thread.start()
        thread.join(self.timeout_s)
        if thread.is_alive():
            raise NetloadHookError(
                f"{name} of plugin {impl.plugin_name!r} did not return within "
                f"{fmt.time_s_exact(self.timeout_s)} (the hook timeout); it is left running "
                "in the background. Make it faster, or raise --netload-hook-timeout (ini "
                "netload_hook_timeout)")
        if "error" in box:
            exc = box["error"]
            raise NetloadHookError(
                f"{name} of plugin {impl.plugin_name!r} raised {type(exc).__name__}: {exc}"
            ) from exc
        return box.get("value")


def _wrong(name: str, plugin: str, value: Any, want: str) -> NetloadHookError:
    return NetloadHookError(f"{name} of plugin {plugin!r} returned {type(value).__name__} "
                            f"{value!r:.200}: return {want}")


def dut_info(runner: HookRunner, dut: Any) -> dict[str, str]:
    """Every implementation's DUT facts, merged (later plugins' keys win)."""
    facts: dict[str, str] = {}
    name = "pytest_netload_dut_info"
    for plugin, value in runner.call(name, config=runner.config, dut=dut):
        if not isinstance(value, Mapping) or not all(
                isinstance(k, str) and isinstance(v, (str, int, float)) and
                not isinstance(v, bool) for k, v in value.items()):
            raise _wrong(name, plugin, value, "a mapping of str to str (the DUT's facts), "
                         "or None")
        facts.update({k: str(v) for k, v in value.items()})
    return facts


def dut_reset(runner: HookRunner, dut: Any) -> Any:
    """The reset callable rfc2544.reset() uses when it is given none: the first
    pytest_netload_dut_reset implementation that answers."""
    name = "pytest_netload_dut_reset"
    if not runner.has(name):
        raise NetloadHookError(
            "rfc2544.reset() was given no callable and no plugin implements "
            f"{name}: pass one (rfc2544.reset(lambda: dut.run([...]))), or implement the "
            "hook in a conftest.py (docs/hooks.md)")

    def reset() -> None:
        answers = runner.call(name, dut=dut)
        if not answers:
            raise NetloadHookError(
                f"no {name} implementation reset this DUT ({dut!r}): each returned None; "
                "pass a callable to rfc2544.reset(), or implement the hook for it")
        plugin, value = answers[0]
        if value is not True:
            raise _wrong(name, plugin, value, "True once the DUT is reset, or None")

    return reset


def dut_flush_addresses(runner: HookRunner, dut: Any) -> Any:
    """The address table flush RFC 2889's address trials call (bench/rfc2889.py): True
    when a pytest_netload_dut_flush_addresses implementation emptied the table, False
    when none answered (the trial then waits out the marker's age time)."""
    name = "pytest_netload_dut_flush_addresses"

    def flush(trial: Any) -> bool:
        answers = runner.call(name, trial=trial, dut=dut)
        if not answers:
            return False
        plugin, value = answers[0]
        if value is not True:
            raise _wrong(name, plugin, value, "True once the address table is empty, or None")
        return True

    return flush


def check_sections(plugin: str, value: Any) -> list[dict[str, str]]:
    """A pytest_netload_report_sections answer as results.json keeps it."""
    name = "pytest_netload_report_sections"
    want = "a list of (title, text) pairs, or None"
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise _wrong(name, plugin, value, want)
    out = []
    for item in value:
        if isinstance(item, Mapping):
            item = (item.get("title"), item.get("text"))
        if not isinstance(item, (tuple, list)) or len(item) != 2 or \
                not all(isinstance(x, str) for x in item) or not item[0]:
            raise _wrong(name, plugin, value, want + " (each title non-empty)")
        out.append({"title": item[0], "text": item[1], "plugin": plugin})
    return out


def report_sections(runner: HookRunner, results: Mapping[str, Any]) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for plugin, value in runner.call("pytest_netload_report_sections", config=runner.config,
                                     results=results):
        out.extend(check_sections(plugin, value))
    return out


class PluginTrialHooks:
    """The measurer's TrialHooks over the session's pytest_netload_* hooks."""

    def __init__(self, runner: HookRunner, dut: Any, *, health: bool = False) -> None:
        self.runner = runner
        self.dut = dut
        self.health_on = health
        self._before: dict[str, list[DutCounter]] = {}

    def _counters(self, ctx: Any) -> dict[str, list[DutCounter]]:
        name = "pytest_netload_dut_counters"
        out: dict[str, list[DutCounter]] = {}
        for plugin, value in self.runner.call(name, trial=ctx, dut=self.dut):
            if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence) \
                    or not all(isinstance(c, DutCounter) for c in value):
                raise _wrong(name, plugin, value, "a list of pytest_netload.DutCounter, or None")
            out[plugin] = list(value)
        return out

    def before(self, ctx: Any) -> None:
        name = "pytest_netload_before_trial"
        for plugin, value in self.runner.call(name, trial=ctx, dut=self.dut):
            raise _wrong(name, plugin, value, "None (it configures the DUT; its answer is "
                         "not used)")
        self._before = self._counters(ctx)

    def after(self, ctx: Any, trial: Any, run: Any) -> Any:
        from ..bench.dut_trial import attribute_trial

        trial = attribute_trial(trial, run, self._before, self._counters(ctx))
        if not self.health_on:
            return trial
        why = self.health(ctx, trial)
        if why is None:
            return replace(trial, dut_health="ok")
        if not trial.valid:  # the generator's reason stays first
            return replace(trial, dut_health=why)
        return replace(trial, valid=False, invalid_reason=f"DUT health: {why}", dut_health=why)

    def health(self, ctx: Any, trial: Any) -> str | None:
        if not self.health_on:
            return None
        name = "pytest_netload_dut_health"
        reasons: list[str] = []
        for plugin, value in self.runner.call(name, trial=ctx, dut=self.dut, result=trial):
            if isinstance(value, str):
                value = DutHealth.invalid(value) if value else DutHealth.ok()
            if not isinstance(value, DutHealth):
                raise _wrong(name, plugin, value, "None, a DutHealth (DutHealth.ok(), "
                             ".invalid(reason), .failed(reason)) or a reason string")
            if value.state == "fail":
                from ..measure.recording import record_measurement

                record_measurement("dut_health", {
                    "plugin": plugin, "reason": value.reason, "trial": ctx.as_dict(),
                    "result": trial.as_dict() if hasattr(trial, "as_dict") else None})
                raise DutHealthFailure(
                    f"DUT health check of {plugin} failed after {ctx.procedure} trial "
                    f"{ctx.number} ({fmt.frame_size(ctx.frame_size)} at "
                    f"{fmt.rate_pps_exact(ctx.offered_pps)}): {value.reason}")
            if value.state == "invalid":
                reasons.append(value.reason)
        return "; ".join(reasons) or None


class BuiltinDutHooks:
    """The built-in DUTs' implementations: their counters around every trial (Dut.
    trial_counters), their facts, their health where they can judge it (OvsDut.health:
    the machine took the DUT's CPU), their reset (Dut.reset) and the bridge's address
    table flush (Dut.flush_fdb). Each answers None for any other DUT, and runs after the
    user's (trylast)."""

    @pytest.hookimpl(trylast=True)
    def pytest_netload_dut_info(self, dut: Any) -> dict[str, str] | None:
        if not _is_builtin(dut):
            return None
        return {"dut_counters": dut.info.get("dut_counters") or
                "interfaces (drops, errors), root qdisc drops, nftables drop rules, IPv4 "
                "forwarding drops: read around every trial"}

    @pytest.hookimpl(trylast=True)
    def pytest_netload_dut_counters(self, dut: Any) -> list[DutCounter] | None:
        return dut.trial_counters() if _is_builtin(dut) else None

    @pytest.hookimpl(trylast=True)
    def pytest_netload_dut_health(self, dut: Any, result: Any) -> str | None:
        # a built-in DUT that can tell when the machine took its CPU (ovs-dpdk): that
        # trial is invalid, retried like one the generator failed
        check = getattr(dut, "health", None) if _is_builtin(dut) else None
        return check(result) if callable(check) else None

    @pytest.hookimpl(trylast=True)
    def pytest_netload_dut_reset(self, dut: Any) -> bool | None:
        if not _is_builtin(dut):
            return None
        dut.reset()
        return True

    @pytest.hookimpl(trylast=True)
    def pytest_netload_dut_flush_addresses(self, dut: Any) -> bool | None:
        if not _is_builtin(dut) or not callable(getattr(dut, "flush_fdb", None)) or \
                not dut.info.get("bridge"):
            return None
        dut.flush_fdb()
        return True
