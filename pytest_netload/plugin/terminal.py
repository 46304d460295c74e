"""Terminal output: the end-of-session summary table (the live progress line: live.py).

Rows come from the records tests attach to their reports (`report.netload`),
so the table is the same with or without xdist.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from .history import add_to_history, session_history
from .selection import is_netload_test

# The formatter and the rows' notes (rfc2544/, measure/) are imported where used: a session that measured nothing never loads them.

COLUMNS = ("test", "frame size", "throughput", "p50", "p99", "loss", "verdict", "notes")


def _colours(steps: list[dict[str, Any]]) -> str:
    """A colour-aware SCT's green and yellow frames (received/sent) at its CIR+EIR step,
    else at its last step with yellow frames; "" when colour-blind."""
    from .. import format as fmt

    coloured = [s for s in steps if s.get("yellow")]
    if not coloured:
        return ""
    s = next((s for s in coloured if s.get("kind") == "eir"), coloured[-1])
    y = s["yellow"]
    return (f" ({s['name']}: green {fmt.count(s['rx_frames'])}/{fmt.count(s['tx_frames'])}, "
            f"yellow {fmt.count(y['rx_frames'])}/{fmt.count(y['tx_frames'])})")


def _rate(pps: Any, lower_bound: bool) -> str:
    """A throughput column's figure: ``241.5 kpps``, or ``>= 241.5 kpps`` when it is only a
    lower bound the generator set."""
    from .. import format as fmt

    text = fmt.rate_pps(pps)
    return fmt.at_least(text) if lower_bound else text


def _lost(lost: int, sent: int) -> str:
    from .. import format as fmt

    return f"{fmt.count(lost)}/{fmt.count(sent)}"


def _percentile(latency: dict[str, Any] | None, label: str) -> str:
    from .. import format as fmt

    if not latency:
        return "-"
    p = (latency.get("percentiles") or {}).get(label)
    return fmt.time_ns(p["value_ns"]) if p else "-"


def latency_at_note(at: dict[str, Any] | None) -> str | None:
    """A throughput record's latency at loads (its `latency_at`), for the row's notes:
    ``latency p50/p99 at % of throughput: no load 11.0us/19.8us, 50% 12.1us/25.0us``."""
    from .. import format as fmt

    if not at:
        return None
    of = "throughput" if at["of"] == "throughput" else at["of"]
    if not at.get("loads"):
        return f"no latency at loads: the {of} is 0"
    parts = []
    for x in at["loads"]:
        where = "no load" if x["fraction"] == 0 else fmt.percent(x["fraction"])
        lat = x.get("latency")
        if lat is not None and x["load_pps"] < x.get("asked_pps", x["load_pps"]):
            where += f" (held {fmt.rate_pps(x['load_pps'])})"  # below the generator's ceiling
        parts.append(f"{where} invalid" if lat is None else
                     f"{where} {_percentile(lat, 'p50')}/{_percentile(lat, 'p99')}")
    return f"latency p50/p99 at % of {of}: " + ", ".join(parts)


def _note(m: dict[str, Any]) -> str | None:
    """One-line result of the procedures that have no throughput column."""
    from .. import format as fmt
    from ..rfc2544.lower_bound import LOWER_BOUND_NOTE

    kind = m.get("kind")
    if kind == "frame_loss" and m.get("points"):
        top = m["points"][0]
        return (f"frame loss {fmt.loss_ratio(top['loss_ratio'])} at "
                f"{fmt.percent(top['load_ratio'])}"
                + (" (the generator's ceiling)" if m.get("max_source") == "generator" else ""))
    if kind == "back_to_back":
        return f"back-to-back {fmt.count(m['spread']['mean'])} frames"
    if kind == "recovery":
        rec = m.get("recovery_s")
        if rec:
            return f"recovery {fmt.time_s(rec['mean'])}"
        return "recovery: no overload loss" + (
            " (the throughput is the generator's ceiling: the DUT was not overloaded)"
            if m.get("throughput_lower_bound_by_generator") else "")
    if kind == "reset":
        reset = m.get("reset_s")
        return f"reset {fmt.time_s(reset['mean'])}" if reset else "reset: did not recover"
    if kind == "y1564_sct":
        steps = m.get("steps") or []
        bad = [s["name"] for s in steps if s.get("passed") is not True]
        return (f"Y.1564 SCT {m['service']['name']!r}: "
                + (f"{len(steps) - len(bad)}/{len(steps)} steps passed, not {', '.join(bad)}"
                   if bad else f"all {len(steps)} steps passed") + _colours(steps))
    if kind == "y1564_bursts":
        parts = [f"{s['name']} {s['rx_frames']}/{s['tx_frames']}"
                 + ("" if s.get("passed") is True else
                    " FAIL" if s.get("passed") is False else " not measured")
                 if s.get("measured") else f"{s['name']} not measured"
                 for s in m.get("steps") or []]
        return f"Y.1564 bursts {m['service']['name']!r}: " + ", ".join(parts)
    if kind == "rfc2889_address_caching_capacity":
        return f"RFC 2889 address capacity {fmt.count(m['capacity'])}"
    bounded = bool(m.get("lower_bound_by_generator"))
    why = f" ({LOWER_BOUND_NOTE})" if bounded else ""
    if kind == "rfc2889_address_learning_rate":
        return (f"RFC 2889 learning rate {_rate(m['learning_rate_fps'] or 0.0, bounded)}"
                f"{why}")
    if kind in ("rfc2889_fully_meshed", "rfc2889_broadcast_forwarding"):
        key = "throughput_pps_per_port" if kind == "rfc2889_fully_meshed" else "throughput_pps"
        what = "mesh" if kind == "rfc2889_fully_meshed" else "broadcast"
        return f"RFC 2889 {what} throughput {_rate(m.get(key) or 0.0, bounded)}{why}"
    if kind == "rfc2889_congestion_control":
        return "RFC 2889 congestion: " + (", ".join(m.get("observed") or ()) or "-")
    if kind == "y1564_spt":
        parts = [f"{s['service']['name']} "
                 f"{fmt.share(s['availability'].get('availability_ratio') or 0.0)} avail, "
                 f"FLR {fmt.loss_ratio(s['flr'] or 0.0)}" for s in m.get("services") or []]
        return f"Y.1564 SPT {fmt.time_s(m['duration_s'])}: " + "; ".join(parts)
    return None


def _mlr_row(name: str, m: dict[str, Any], verdict: str) -> list[str]:
    """The row of an MLRsearch at one frame size: its first goal's lower bound as the
    throughput (what `throughput()` reports), the latency and loss of the valid trials at
    that load, and every goal with its bounds in the notes (NDR and PDR)."""
    from .. import format as fmt
    from ..measure.dut import loss_note
    from ..rfc2544.lower_bound import LOWER_BOUND_NOTE
    from ..rfc2544.mlr_text import goals_note
    from ..rfc2544.trial import steady_summary

    goals = m.get("goals") or [{}]
    lower = goals[0].get("lower_bound_pps")
    at = [t for t in m.get("trials", ()) if lower is not None and t.get("valid")
          and t.get("offered_pps") == lower]
    lat = next((t["latency"] for t in reversed(at) if t.get("latency")), None)
    sent = sum(t.get("tx_packets", 0) for t in at)
    bounded = bool(goals[0].get("lower_bound_by_generator"))
    notes = [LOWER_BOUND_NOTE if bounded else "", goals_note(m.get("goals") or ()),
             steady_summary(m.get("trials", ())) or "", loss_note(m.get("trials", ())) or ""]
    return [name, fmt.frame_size(m.get("frame_size")), _rate(lower or 0.0, bounded),
            _percentile(lat, "p50"), _percentile(lat, "p99"),
            _lost(sum(t.get("lost", 0) for t in at), sent) if sent else "-", verdict,
            "; ".join(n for n in notes if n)]


def rows_of(nodeid: str, outcome: str, record: dict[str, Any]) -> list[tuple[str, ...]]:
    """Summary rows of one test: one per frame size measured, else one per measurement."""
    from .. import format as fmt
    from ..measure.dut import loss_note
    from ..rfc2544.lower_bound import LOWER_BOUND_NOTE
    from ..rfc2544.trial import steady_summary

    rows: list[list[str]] = []
    verdict = {"passed": "PASS", "failed": "FAIL"}.get(outcome, outcome.upper())
    name = nodeid.split("::", 1)[-1]

    def row_for(size: Any) -> list[str] | None:
        for r in rows:
            if r[1] == fmt.frame_size(size):
                return r
        return None

    searched: set[str] = set()  # frame sizes whose MLRsearch row awaits its throughput record
    for m in record.get("measurements", ()):
        kind = m.get("kind")
        label = fmt.frame_size(m.get("frame_size"))
        if kind == "mlrsearch":
            rows.append(_mlr_row(name, m, verdict))
            searched.add(label)
        elif kind == "throughput" and m.get("method") == "mlrsearch" and label in searched:
            searched.discard(label)  # throughput() by MLRsearch: its search's row shows it
            if (note := latency_at_note(m.get("latency_at"))) is not None and \
                    (row := row_for(m.get("frame_size"))) is not None:
                row[7] = f"{row[7]}; {note}" if row[7] else note
        elif kind == "throughput":
            best = None
            for t in m.get("trials", ()):
                if t.get("valid") and t.get("offered_pps") == m.get("throughput_pps"):
                    best = t
            lat = (best or {}).get("latency")
            loss = "0 at throughput" if m.get("throughput_pps") else "-"
            if best is not None and best.get("lost"):  # within a loss tolerance
                loss = _lost(best["lost"], best["tx_packets"]) + " at throughput"
            bounded = bool(m.get("lower_bound_by_generator"))
            notes = [LOWER_BOUND_NOTE if bounded else None, steady_summary(m.get("trials", ())),
                     loss_note(m.get("trials", ())), latency_at_note(m.get("latency_at"))]
            rows.append([name, fmt.frame_size(m.get("frame_size")),
                         _rate(m.get("throughput_pps"), bounded), _percentile(lat, "p50"),
                         _percentile(lat, "p99"), loss, verdict,
                         "; ".join(n for n in notes if n)])
        elif kind == "latency_rfc2544":
            row = row_for(m.get("frame_size"))
            if row is None:
                row = [name, fmt.frame_size(m.get("frame_size")), *["-"] * 4, verdict, ""]
                rows.append(row)
            if m.get("throughput_lower_bound_by_generator") and LOWER_BOUND_NOTE not in row[7]:
                # the throughput it ran at came from elsewhere: say what that rate is
                ran_at = "latency at the generator's ceiling (DUT not saturated)"
                row[7] = f"{row[7]}; {ran_at}" if row[7] else ran_at
            row[3], row[4] = _percentile(m["latency"], "p50"), _percentile(m["latency"], "p99")
            row[5] = _lost(m["lost"], m["tx_packets"]) if m.get("tx_packets") else row[5]
        elif kind == "latency":
            lat = m.get("latency")
            tx, lost = m.get("tx_packets", 0), m.get("lost", 0)
            loss = _lost(lost, tx) if tx else "-"
            if rows and rows[-1][3] == "-" and rows[-1][2] != "-":
                # the traffic run this meter watched: one row with its latency
                rows[-1][3:6] = [_percentile(lat, "p50"), _percentile(lat, "p99"), loss]
            else:
                rows.append([name, "-", "-", _percentile(lat, "p50"), _percentile(lat, "p99"),
                             loss, verdict, ""])
        elif kind == "traffic":
            streams = m.get("streams", ())
            tx = sum(s["tx_packets"] for s in streams)
            lost = sum(s["lost"] for s in streams)
            sizes = {round(s["mean_frame_size"]) for s in streams}
            rows.append([name, fmt.frame_size(sizes.pop()) if len(sizes) == 1 else "mix",
                         fmt.rate_pps(sum(s["achieved_rx_pps"] for s in streams)), "-", "-",
                         _lost(lost, tx) if tx else "-", verdict, ""])
        elif (note := _note(m)) is not None:
            row = row_for(m.get("frame_size"))
            if row is None:
                row = [name, fmt.frame_size(m.get("frame_size")), *["-"] * 4, verdict, ""]
                rows.append(row)
            row[7] = f"{row[7]}; {note}" if row[7] else note
        if kind in ("latency_rfc2544", "frame_loss") and \
                (note := steady_summary(m.get("trials", ()))) is not None and \
                (row := row_for(m.get("frame_size"))) is not None:
            row[7] = f"{row[7]}; {note}" if row[7] else note
    return [tuple(r) for r in rows]


def format_table(rows: Iterable[tuple[str, ...]]) -> list[str]:
    rows = list(rows)
    widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(COLUMNS)]
    line = "  ".join(c.ljust(w) for c, w in zip(COLUMNS, widths)).rstrip()
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in rows]
    return out


def _error_text(report: pytest.TestReport) -> str:
    """What made a setup or teardown fail, in a few lines (the results' `error`)."""
    crash = getattr(report.longrepr, "reprcrash", None)
    text = getattr(crash, "message", None) or str(report.longrepr or "")
    return text[-4000:]


class Summary:
    """Collects the netload records from test reports; writes the results file and
    prints the table at the end."""

    def __init__(self, config: pytest.Config,
                 activate: Callable[[pytest.Config], list[str]]) -> None:
        self.config = config
        self.activate = activate
        """Makes the session netload's, giving the header's lines (plugin.activate_late)."""
        self.rows: list[tuple[str, ...]] = []
        self.tests: list[dict[str, Any]] = []
        self.written: str | None = None
        self.captures: list[tuple[str, str]] = []
        self.comparison: Any = None
        self.saved: str | None = None
        self.reports: list[str] = []  # report.html, report.pdf: those written
        self.measured = 0
        self.write_errors: list[str] = []
        self.crashes: list[tuple[str, str]] = []  # (nodeid, EngineCrashed text)
        self.harness_errors = 0  # tests that ended in EngineCrashed, InvalidTrial, ...
        self.collected = 0
        self.netload_tests = 0  # collected tests that use a netload fixture or marker
        self.stop_reason: str | None = None
        self.verdict: str | None = None
        self.order: dict[str, int] = {}  # xdist: node id -> collection index

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not getattr(report, "netload_test", False):
            return  # not a netload test: neither a row nor a count of the verdict
        if not self.active:  # an xdist controller: its workers collected
            self._activate_late()
        record = getattr(report, "netload", None)
        crash = getattr(report, "netload_engine_crash", None)
        if crash and report.failed:
            self.crashes.append((report.nodeid, crash))
        harness = getattr(report, "netload_harness_error", None) or crash
        if harness and report.failed:
            self.harness_errors += 1
        if report.when == "call":
            # an engine crash or a test whose trials were all invalid is a harness
            # problem: ERROR, not the DUT's FAIL
            outcome = "error" if harness and report.failed else report.outcome
            if isinstance(record, dict):
                self.rows += rows_of(report.nodeid, outcome, record)
                self.captures += [(report.nodeid, c) for c in record.get("captures", ())]
                self.measured += 1
            self._test(report.nodeid, outcome, report.duration, record or {},
                       error=harness or None)
        elif report.failed or (report.skipped and report.when == "setup"):
            # listed too, so a report's verdict is never PASS over a test that errored
            self._test(report.nodeid, "error" if report.failed else "skipped",
                       report.duration, {},
                       error=(harness or _error_text(report)) if report.failed else None)

    def _test(self, nodeid: str, outcome: str, duration: float,
              record: dict[str, Any], error: str | None = None) -> None:
        for t in self.tests:
            if t["nodeid"] == nodeid:  # a teardown error after the call: keep its figures
                t["outcome"] = outcome
                if error:
                    t["error"] = error
                return
        self.tests.append({"nodeid": nodeid, "outcome": outcome, "duration_s": duration,
                           "measurements": record.get("measurements", []),
                           "verdicts": record.get("verdicts", []),
                           "captures": record.get("captures", []),
                           **({"error": error} if error else {})})

    @pytest.hookimpl
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        # the verdict's "N of M" counts netload tests only (selection.py)
        self.netload_tests = sum(1 for item in session.items if is_netload_test(item))
        self.collected = self.netload_tests

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        # The controller collects nothing: its workers' netload test counts arrive with
        # their output (xdist.py); a worker's ids carry xdist's group suffix,
        # `test_x[64B]@group`, which reports do not. A test grouped by its topology is a
        # netload test: the session is netload's before any test ran.
        from .xdist import GROUP_PREFIX

        for n, i in enumerate(ids):
            self.order[i] = self.order[i[:i.rfind("@")]] = n
        if not self.active and any("@" + GROUP_PREFIX in i for i in ids):
            self._activate_late()

    @property
    def active(self) -> bool:
        from .keys import ACTIVE_KEY

        return self.config.stash.get(ACTIVE_KEY, False)

    def _activate_late(self) -> None:
        """On an xdist controller, which collects nothing: its workers' first netload
        test makes the session netload's (plugin.activate), and the header shows then."""
        lines = self.activate(self.config)  # as a plain run shows them
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None and lines:
            reporter.ensure_newline()
            if getattr(getattr(reporter, "_tw", None), "width_of_current_line", 0):
                reporter.line("")  # after xdist's progress dots, on a line of its own
            for line in lines:
                reporter.write_line(line)

    @pytest.hookimpl
    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        self.stop_reason = excinfo.exconly().strip() or excinfo.typename

    def _session(self, session: pytest.Session, exitstatus: int) -> dict[str, Any]:
        """How the session ended: what results.json records as `session`."""
        try:
            name: str | None = pytest.ExitCode(exitstatus).name
        except ValueError:
            name = None
        reason = self.stop_reason or (session.shouldfail or session.shouldstop or None)
        return {"exit_status": int(exitstatus), "exit_status_name": name,
                "interrupted": exitstatus == pytest.ExitCode.INTERRUPTED,
                "stop_reason": str(reason) if reason else None,
                "collected": max(self.collected, self.netload_tests, len(self.tests)),
                "ran": len(self.tests),
                "engine_crashes": list(dict.fromkeys(n for n, _ in self.crashes))}

    def _document(self, session_info: dict[str, Any] | None = None) -> dict[str, Any]:
        from ..reports import json as json_report
        from .environment import environment_of
        from .keys import DUT_FACTS_KEY, DUT_KEY, ENVIRONMENT_KEY, SETTINGS_KEY, TOPOLOGY_KEY
        from .options import BUILTIN_NOTE

        settings = self.config.stash[SETTINGS_KEY]
        topo = self.config.stash.get(TOPOLOGY_KEY, None)
        topology: dict[str, Any] = {"name": settings.topology}
        if topo is not None:
            topology.update(name=topo.name, dut=dict(topo.dut), source=topo.source,
                            line_rate_bps=topo.line_rate_bps)
        elif DUT_KEY in self.config.stash:
            topology["dut"] = {k: str(v) for k, v in self.config.stash[DUT_KEY].items()}
        facts = self.config.stash.get(DUT_FACTS_KEY, None)
        if facts:  # the pytest_netload_dut_info hooks'
            topology["dut"] = {**topology.get("dut", {}), **facts}
        doc = json_report.session_document(
            self.tests, topology=topology,
            settings={"topology": settings.topology, "backend": settings.backend,
                      "engine": settings.engine, "trial_duration_s": settings.trial_duration_s,
                      **dict(settings.sign_off),  # customer, operator, site, test plan
                      **({"topology_note": BUILTIN_NOTE} if settings.builtin_in_ci else {})})
        env = self.config.stash.get(ENVIRONMENT_KEY, None)
        if env is not None:
            doc["environment"] = environment_of(env)
        from .xdist import extra_environment  # xdist workers, the topologies built

        if extra := extra_environment(self.config):
            doc["environment"] = {**doc.get("environment", environment_of({})), **extra}
        if self.order:  # xdist: in collection order, whichever worker finished first
            doc["tests"].sort(key=lambda t: self.order.get(t["nodeid"], len(self.order)))
        if session_info is not None:
            doc["session"] = session_info
        return doc

    @pytest.hookimpl
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        # Written whenever the session was about netload, measured or not: a session whose
        # engine crashed in its first test, or that was interrupted, says so in its results.
        if not self.active or not (self.measured or self.netload_tests or self.harness_errors) \
                or self.config.option.collectonly:
            return
        from ..reports import json as json_report
        from ..reports.verdict import verdict_line
        from .fixtures import report_dir
        from .keys import SETTINGS_KEY

        history = self.config.stash[SETTINGS_KEY].history
        doc = self._document(self._session(session, exitstatus))
        self._sections(doc)
        self.verdict = verdict_line(doc)
        base = report_dir(self.config)
        path = base / "results.json"
        try:
            self.written = str(json_report.write(doc, path))
        except OSError as exc:
            # measured results are never lost: they go to a fresh temporary directory
            import tempfile

            try:
                base = Path(tempfile.mkdtemp(prefix="netload-results-"))
                self.written = str(json_report.write(doc, base / "results.json"))
            except OSError as second:
                # nowhere to write (a full disk): the figures stay in this summary's table
                where = tempfile.tempdir or os.environ.get("TMPDIR") or "the temporary directory"
                self.write_errors.append(
                    f"could not write {path} ({exc.strerror or exc}) nor a results file in a "
                    f"temporary directory under {where} ({second.strerror or second}): the "
                    "results are only in the table above; free some space, or give a "
                    "writable --netload-report-dir (or TMPDIR)")
                return
            self.write_errors.append(
                f"could not write {path}: {exc.strerror or exc}; the results went to {base} "
                "instead; give a writable --netload-report-dir")
        self._compare(doc, base)
        self._reports(doc, base, session_history(history, doc, self.write_errors))
        self._save_baseline(doc, base)
        add_to_history(history, doc, self.write_errors)

    def _sections(self, doc: dict[str, Any]) -> None:
        """The pytest_netload_report_sections hooks' sections, into the document; a hook
        that fails is named among the write errors, and the results are still written."""
        from ..errors import NetloadHookError
        from .dut_hooks import HookRunner, report_sections
        from .keys import SETTINGS_KEY

        runner = HookRunner(self.config, self.config.stash[SETTINGS_KEY].hook_timeout_s)
        try:
            sections = report_sections(runner, doc)
        except NetloadHookError as exc:
            self.write_errors.append(f"report sections left out: {exc}")
            return
        if sections:
            doc["report_sections"] = sections

    def _reports(self, doc: dict[str, Any], base: Any,
                 history: list[dict[str, Any]] | None = None) -> None:
        """The acceptance reports --netload-report asks for (report.html, report.pdf),
        from a document the schema accepts (else: why not), with the baseline comparison
        when the session has one and the trends over --netload-history's sessions."""
        from ..errors import NetloadConfigError
        from .keys import SETTINGS_KEY

        settings = self.config.stash[SETTINGS_KEY]
        for kind in settings.reports:
            name = f"report.{kind}"
            try:
                from ..reports import html, pdf, schema  # MissingExtra: an OSError, below

                schema.validate(doc, "results.json")
                write = pdf.write if kind == "pdf" else html.write
                self.reports.append(str(write(doc, base / name, comparison=self.comparison,
                                              history=history,
                                              threshold=settings.regression)))
            except NetloadConfigError as exc:
                self.write_errors.append(f"{name} not written: {exc}")
            except OSError as exc:
                self.write_errors.append(f"{name} not written: {exc.strerror or exc}")

    def _compare(self, doc: dict[str, Any], base: Any) -> None:
        """With --netload-baseline: the comparison, for the summary, the report and
        baseline-comparison.json."""
        from ..reports import json as json_report
        from ..reports.baseline import compare
        from .keys import BASELINE_KEY, SETTINGS_KEY

        settings = self.config.stash[SETTINGS_KEY]
        baseline = self.config.stash.get(BASELINE_KEY, None)
        if baseline is not None:
            self.comparison = compare(doc, baseline, name=settings.baseline,
                                      threshold=settings.regression)
            try:
                json_report.write(self.comparison.as_dict(), base / "baseline-comparison.json")
            except OSError as exc:
                self.write_errors.append(f"could not write the baseline comparison: {exc}")

    def _save_baseline(self, doc: dict[str, Any], base: Any) -> None:
        from ..reports.baseline import baseline_dir, save_baseline
        from .keys import SETTINGS_KEY

        settings = self.config.stash[SETTINGS_KEY]
        if settings.save_baseline:
            try:
                self.saved = str(save_baseline(doc, settings.save_baseline, baseline_dir(base)))
            except OSError as exc:
                self.write_errors.append(
                    f"could not save baseline {settings.save_baseline!r}: {exc}; give a "
                    "writable --netload-report-dir")

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if terminalreporter.verbosity < -1:  # shown with -q, not -qq
            return
        if self.rows:
            terminalreporter.write_sep("=", "netload summary")
            for line in format_table(self.rows):
                terminalreporter.write_line(line)
        if self.written:
            terminalreporter.write_line(f"netload: results written to {self.written}")
        for report in self.reports:
            terminalreporter.write_line(f"netload: report written to {report}")
        if self.comparison is not None:
            terminalreporter.write_sep("=", "netload baseline comparison")
            terminalreporter.write_line(self.comparison.summary_line())
            for line in self.comparison.table_lines(
                    changes_only=terminalreporter.verbosity < 1):
                terminalreporter.write_line(line)
        if self.saved:
            terminalreporter.write_line(f"netload: baseline saved to {self.saved}")
        for nodeid, path in self.captures:
            terminalreporter.write_line(f"netload: last packets of failed {nodeid}: {path}")
        for nodeid, text in self.crashes:
            terminalreporter.write_line(
                f"netload: the engine host died in {nodeid} (ERROR, not a DUT verdict): "
                f"{text.splitlines()[0]}; later tests ran on a fresh engine host", red=True)
        if self.verdict:
            terminalreporter.write_line(f"netload: overall verdict {self.verdict}",
                                        red=not self.verdict.startswith("PASS"),
                                        green=self.verdict.startswith("PASS"))
        for error in self.write_errors:
            terminalreporter.write_line(f"netload: {error}", red=True)
