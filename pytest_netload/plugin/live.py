"""One test's live progress: its events through the progress model to every display.

The procedures' events (bench/progress.py) go to one `Live` per netload test, which
feeds them to the model (bench/progress_model.Tracker) and hands each Status to the
displays: the terminal's line (`TerminalProgress`), on an xdist worker the
forwarding to the controller's terminal (`WorkerProgress`, see xdist.py), and allure's steps
(reports/allure.LiveSteps), opened and closed as the trials run. A display that
fails is dropped with a warning: progress never changes a verdict.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

import pytest

from ..bench import progress
from ..bench.progress_model import Cadence, Status, Tracker, status_line

Display = Callable[[Status], None]
PROGRESS_ATTR = "netload_progress"  # an xdist worker's progress report: its Status


def progress_mode(reporter: Any, verbosity: int) -> str:
    """How a terminal shows progress: "off" with -q, "live" (one line rewritten in
    place) on a terminal, "lines" (one a trial, and every 30 s) elsewhere (CI logs)."""
    if verbosity < 0:
        return "off"
    return "live" if getattr(reporter, "isatty", False) else "lines"


class TerminalProgress:
    """The live line: the Statuses of the progress model (bench/progress_model.py)
    that its cadence lets through, rewritten in place on a terminal, one line each
    elsewhere, nothing with -q. An xdist controller shows its workers' with `show`.
    A test's output is captured while it runs: the line is written with pytest's
    capture suspended (`capture`, the capture manager), as pytest's live logging is."""

    def __init__(self, reporter: Any, verbosity: int, clock: Callable[[], float] | None = None,
                 mode: str | None = None, capture: Any = None) -> None:
        self.reporter = reporter
        self.capture = capture
        self.mode = mode or progress_mode(reporter, verbosity)
        self.cadence = Cadence(self.mode, clock or progress.now)

    @property
    def live(self) -> bool:
        return self.mode == "live"

    def __call__(self, status: Status) -> None:
        if self.cadence.due(status):
            self.show(status_line(status))

    def show(self, text: str) -> None:
        if self.mode == "off":
            return
        with self.capture.global_and_fixture_disabled() if self.capture is not None \
                else nullcontext():
            self.reporter.ensure_newline()
            if self.mode == "live":
                # erase: a shorter line leaves nothing of the longer one before it
                self.reporter.rewrite(text[: self.reporter._tw.fullwidth - 1], erase=True)
            else:
                self.reporter.write_line(text)


class WorkerProgress:
    """On an xdist worker: the Statuses its controller's terminal shows (`mode`: "live"
    or "lines", its cadence) sent as passed setup reports of the running test, the one
    message xdist relays while a test runs (Controller.pytest_runtest_logreport)."""

    def __init__(self, item: pytest.Item, mode: str) -> None:
        self.item = item
        self.cadence = Cadence(mode, progress.now)

    def __call__(self, status: Status) -> None:
        if not self.cadence.due(status):
            return
        report = pytest.TestReport(self.item.nodeid, self.item.location, {}, "passed", None,
                                   "setup", duration=0.0)
        setattr(report, PROGRESS_ATTR, json.loads(json.dumps(status.as_dict(), default=str)))
        self.item.ihook.pytest_runtest_logreport(report=report)


class Live:
    """The sink of one test: events -> Tracker -> each display."""

    def __init__(self, item: pytest.Item, displays: list[Display]) -> None:
        self.item = item
        self.tracker = Tracker(progress.now, test=item.nodeid.split("::", 1)[-1])
        self.displays = displays

    @property
    def allure_steps(self) -> bool:
        """Whether allure's steps of this test's trials were written as they ran."""
        return any(getattr(d, "wrote", False) for d in self.displays)

    def __call__(self, event: dict[str, Any]) -> None:
        self._show(self.tracker.feed(event))

    def _show(self, statuses: list[Status]) -> None:
        for status in statuses:
            for display in list(self.displays):
                try:
                    display(status)
                except Exception as exc:  # a display's bug: drop it, keep measuring
                    self.displays.remove(display)
                    self.item.warn(pytest.PytestWarning(
                        f"netload: progress display {display!r} failed and was turned off: "
                        f"{exc!r}"))

    def close(self, exc: BaseException | None = None) -> None:
        """The test ended (passed, failed or interrupted by `exc`): the last procedure's
        end, and displays that hold something open (allure's steps) close it."""
        self._show(self.tracker.finish())
        for display in self.displays:
            close = getattr(display, "close", None)
            if close is not None:
                close(exc)


def _displays(item: pytest.Item) -> list[Display]:
    from ..reports import allure

    config = item.config
    out: list[Display] = []
    winput = getattr(config, "workerinput", None)
    if winput is not None:
        mode = winput.get("netload_progress", "off")
        if mode != "off":
            out.append(WorkerProgress(item, mode))
    else:
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            out.append(TerminalProgress(reporter, config.get_verbosity(),
                                        capture=config.pluginmanager.get_plugin(
                                            "capturemanager")))
    if allure.active(config):
        out.append(allure.LiveSteps())
    return out


@contextmanager
def live(item: pytest.Item) -> Iterator[Live | None]:
    """Progress of `item`'s call to its displays (none: no sink at all)."""
    displays = _displays(item)
    if not displays:
        yield None
        return
    sink = Live(item, displays)
    with progress.sink(sink):
        try:
            yield sink
        except BaseException as exc:  # Ctrl-C included: what was open closes with it
            sink.close(exc)
            raise
        sink.close()
