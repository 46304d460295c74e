"""`netload`: the command line. Sub-commands: demo, methods, ports, report, compare, trend.

- `netload demo`: build a built-in DUT, send counted traffic through it in
  both directions, print one result line per stream (pps, Mbit/s with its
  layer, loss) in the manner of Linux pktgen.
- `netload methods`: TX pps and Mbit/s for each DPDK backend usable on a
  veth pair (or on one interface), with the RX side counted.
- `netload ports DEVICE...`: open DPDK devices (vdevs, or NICs by PCI address) and print
  what they can do.
- `netload report results.json -o report.html`: rebuild the HTML acceptance report
  from a saved results file (docs/reports.md); with `--pdf`, the paginated PDF, with
  `--customer`, `--operator`, `--site` and `--test-plan` on its cover; with --baseline
  and --history its comparison with a baseline and the trends of a history
  (docs/baselines.md).
- `netload compare results.json baseline.json`: each figure against its baseline.
- `netload trend runs/*.json` (or a directory of them): change points over a history.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import format as fmt
from .errors import NetloadError
from .measure.results import RunResult
from .units import LAYER_TEXT

LAYER = "l2"


def _print_result(result: RunResult, out: Any = sys.stdout) -> None:
    for s in result.streams:
        print(
            f"  {s.name:<12} tx {fmt.count(s.tx_packets):>13} pkts "
            f"{fmt.rate_pps_exact(s.tx_pps):>17} {fmt.bitrate(s.tx_bps(LAYER)):>12}  "
            f"rx {fmt.count(s.rx_packets):>13}  lost {fmt.count(s.lost)} "
            f"({fmt.loss_ratio(s.loss_ratio)})  dup {fmt.count(s.duplicates)}  "
            f"reordered {fmt.count(s.reordered)}",
            file=out,
        )
    print(f"result: {result.summary_line(LAYER)}", file=out)


def cmd_demo(args: argparse.Namespace) -> int:
    from .engine.client import Engine
    from .engine.neighbours import bring_up
    from .topology.builtin import build, sweep_stale
    from .traffic.streams import flow_stream

    for name in sweep_stale():
        print(f"removed {name}, left behind by a netload process that has ended")
    print(f"netload demo: building {args.topology} ({args.backend}) ...")
    with build(args.topology, backend=args.backend) as built, Engine() as engine:
        ports = {p.name: engine.port(str(p.device), name=p.name) for p in built.topology.ports}
        # the generator answers ARP/ND and resolves the DUT's MACs (no static neighbours)
        topo, _ = bring_up(built.topology, ports)
        streams = [
            engine.load(ports[f.tx.name], flow_stream(f, size=args.size, flows=args.flows))
            for f in topo.flows()
        ]
        print(f"sending {fmt.count(args.count)} frames of {fmt.frame_size(args.size)} per "
              f"direction over {', '.join(s.name for s in streams)} "
              f"(rates count {LAYER_TEXT[LAYER]})")
        result = engine.run(streams, list(ports.values()), count=args.count)
        _print_result(result)
        if built.dut is not None:
            print(f"DUT {topo.name} counters: {json.dumps(built.dut.counters())}")
        if args.json:
            _write_json(args.json, {"topology": topo.name, "backend": args.backend,
                                    "size": args.size, **result.as_dict()})
    return 0 if result.lost == 0 or args.allow_loss else 1


def _write_json(path: str, data: dict[str, Any]) -> None:
    """Write results; a path that cannot be written is an error naming it (the
    results were printed already, so nothing measured is lost)."""
    from .atomic import write_atomic

    try:
        write_atomic(path, json.dumps(data, indent=2))
    except OSError as exc:
        raise NetloadError(f"--json {path!r} cannot be written ({exc.strerror}); "
                           "give a writable path") from None
    print(f"results written to {path}")


def _methods_rows(args: argparse.Namespace) -> list[tuple[str, ...]]:
    from .engine.client import Engine
    from .topology.builtin import build, vdev_string
    from .traffic.packets import UDP, Eth, IPv4
    from .traffic.streams import Stream

    rows: list[tuple[str, ...]] = []
    template = (Eth() / IPv4() / UDP()).build()
    with build("loopback") as built, Engine() as engine:
        tx_if = str(args.iface or built.topology.port("p0").iface)
        rx_if = None if args.iface else built.topology.port("p1").iface
        for n, backend in enumerate(args.backends):
            if backend == "tap":
                rows.append(("tap", "-", "-", "-", "n/a: net_tap makes its own interface"))
                continue
            ports = []
            try:
                tx = engine.port(_device(backend, f"m{n}t", tx_if, vdev_string))
                ports.append(tx)
                rx = engine.port(_device(backend, f"m{n}r", rx_if, vdev_string)) if rx_if else None
                if rx is not None:
                    ports.append(rx)
                stream = engine.load(tx, Stream(template, size=args.size, name=backend))
                engine.run([stream], [rx] if rx else [], duration_s=0.2)
                r = engine.run([stream], [rx] if rx else [], duration_s=args.duration)
                s = r.streams[0]
                rows.append((backend, fmt.rate_pps(s.tx_pps), fmt.bitrate(s.tx_bps(LAYER)),
                             fmt.count(s.rx_packets) if rx else "-",
                             f"lost {s.lost}" if rx else "TX only"))
                stream.free()
            except NetloadError as exc:
                rows.append((backend, "-", "-", "-", f"unusable: {str(exc).splitlines()[0][:70]}"))
            finally:
                for p in ports:
                    p.close()
    return rows


def _device(backend: str, vid: str, iface: str, vdev_string: Any) -> str:
    if backend in ("af_xdp", "af_packet"):
        return str(vdev_string(backend, vid, iface))
    if backend == "pcap":
        return f"net_pcap_{vid},iface={iface}"
    raise NetloadError(f"backend {backend!r}: use af_xdp, af_packet, pcap or tap")


def cmd_methods(args: argparse.Namespace) -> int:
    rows = _methods_rows(args)
    header = ("backend", "TX rate", f"TX bit rate ({LAYER_TEXT[LAYER]})", "RX pkts", "note")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    where = args.iface or "a veth pair (loopback topology)"
    print(f"netload methods: {fmt.frame_size(args.size)} frames for "
          f"{fmt.time_s_exact(args.duration)} on {where}")
    for r in [header, *rows]:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)))
    return 0


def cmd_ports(args: argparse.Namespace) -> int:
    from .engine.client import Engine
    from .engine.pci import check_pci_device, looks_like_pci, probe_hint
    from .errors import NetloadEnvironmentError

    # PCI devices are checked here first (absent, or bound to the kernel: the EAL is never
    # started), then given to the EAL (-a ADDRESS), which probes only those
    pci = [d.split(",", 1)[0] for d in args.devices if looks_like_pci(d.split(",", 1)[0])]
    for address in pci:
        check_pci_device(address)
    with Engine(pci=pci) as engine:
        for device in args.devices:
            try:
                port = engine.port(device)
            except NetloadEnvironmentError as exc:
                address = device.split(",", 1)[0]
                if address not in pci:
                    raise
                raise NetloadEnvironmentError(f"{exc}; {probe_hint(address)}") from exc
            print(json.dumps({"device": device, **port.info}, indent=2))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from .errors import NetloadConfigError
    from .reports.load import load
    from .reports.signoff import FIELDS, check_field, with_sign_off

    given = {k: getattr(args, k) for k in FIELDS}
    for key, value in given.items():
        try:
            check_field(key, value or "")
        except NetloadConfigError as exc:
            raise NetloadConfigError(f"--{key.replace('_', '-')}: {exc}") from None
    document = with_sign_off(load(args.results), given)
    comparison = None
    if args.baseline:
        from .reports.baseline import compare

        comparison = compare(document, _baseline(args.baseline, args.results),
                             name=_baseline_label(args.baseline), threshold=args.regression)
    history = _documents(args.history, "--history") if args.history else None
    if args.pdf:
        from .reports import pdf

        pdf.renderer()  # a missing WeasyPrint or Pango: said before anything is rendered
        write = pdf.write
    else:
        from .reports import html  # matplotlib: only once the file is known to be good

        write = html.write

    name = "report.pdf" if args.pdf else "report.html"
    output = args.output or os.path.join(os.path.dirname(args.results) or ".", name)
    try:
        path = write(document, output, comparison=comparison, history=history,
                     threshold=args.regression)
    except OSError as exc:
        raise NetloadError(f"{output}: cannot be written ({exc.strerror or exc}); give a "
                           "writable path with -o") from None
    print(f"report written to {path}")
    if comparison is not None:
        print(comparison.summary_line())
    return 0


def _baseline(given: str, results: str) -> dict[str, Any]:
    """A baseline by file path, or by NAME: <results dir>/baselines/NAME.json."""
    from .reports.baseline import baseline_dir, load_baseline
    from .reports.load import load

    if os.path.sep in given or given.endswith(".json") or os.path.exists(given):
        return load(given)
    return load_baseline(given, baseline_dir(os.path.dirname(results) or "."))


def _baseline_label(given: str) -> str:
    return os.path.basename(given).removesuffix(".json")


def _documents(paths: Sequence[str], what: str) -> list[dict[str, Any]]:
    """The results documents of `paths` (reports.load.load_history)."""
    from .reports.load import load_history

    return load_history(tuple(paths), what)


def cmd_compare(args: argparse.Namespace) -> int:
    """Each figure of a results file against a baseline results file."""
    from .reports.baseline import compare
    from .reports.load import load

    current = load(args.results)
    comparison = compare(current, load(args.baseline), name=_baseline_label(args.baseline),
                         threshold=args.regression)
    print(comparison.summary_line())
    for line in comparison.table_lines(changes_only=not args.all):
        print(line)
    return 1 if comparison.regressions else 0


def cmd_trend(args: argparse.Namespace) -> int:
    """Change points of every figure over a history of results files (oldest first by
    their `created` time), grouped by minimum description length (reports/trend.py)."""
    from .reports.threshold import threshold_text
    from .reports.trend import analyse, counts_as_regression

    documents = _documents(args.results, "trend")
    if len(documents) < 2:
        raise NetloadError("give at least two results files: a trend needs a history")
    trends = analyse(documents)
    changes = regressions = 0
    for key, trend in sorted(trends.items(), key=lambda kv: (kv[0].nodeid, kv[0].metric)):
        if not trend.changes and not args.all:
            continue
        size = "" if key.frame_size is None else f" {fmt.frame_size(key.frame_size)}"
        print(f"{key.nodeid} {key.metric}{size}: {len(trend.points)} runs, "
              f"{len(trend.groups)} group(s)")
        for c in trend.changes:
            changes += 1
            rel = c.relative_change
            counted = counts_as_regression(c, args.regression)
            regressions += counted
            within = c.kind == "regression" and not counted
            print(f"  {c.kind} at run {c.index} ({trend.points[c.index].created}): "
                  f"{fmt.figure(c.before.mean, trend.unit)} -> "
                  f"{fmt.figure(c.after.mean, trend.unit)}"
                  + (f" ({fmt.change(rel)})" if rel is not None else "")
                  + (f", within the {threshold_text(args.regression)} threshold"
                     if within else ""))
    print(f"{changes} change point(s) in {len(trends)} figure(s) over {len(documents)} runs")
    return 1 if args.fail_on_regression and regressions else 0


def _regression(text: str) -> float | None:
    """argparse's reading of --regression: the threshold, or a message naming the fix."""
    from .errors import NetloadConfigError
    from .reports.threshold import parse_threshold

    try:
        return parse_threshold(text)
    except NetloadConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


REGRESSION_HELP = ("Regression threshold, e.g. 5%%: a figure regresses only when it is "
                   "outside its noise band and more than this worse than the baseline "
                   "(docs/baselines.md). Default: none (the noise band alone)")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="netload", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    d = sub.add_parser("demo", help="Counted traffic through a built-in DUT, with a result line")
    d.add_argument("--topology", default="netns-router", help="Built-in topology. Default: %(default)s")
    d.add_argument("--backend", default="af_xdp", choices=["af_xdp", "af_packet"],
                   help="DPDK backend on the veths. Default: %(default)s")
    d.add_argument("--count", type=int, default=1_000_000, help="Frames per direction. Default: %(default)s")
    d.add_argument("--size", type=int, default=64, help="Frame size with FCS. Default: %(default)s")
    d.add_argument("--flows", type=int, default=256, help="UDP source ports per direction. Default: %(default)s")
    d.add_argument("--json", help="Write the results to this JSON file")
    d.add_argument("--allow-loss", action="store_true", help="Exit 0 even when frames were lost")
    d.set_defaults(func=cmd_demo)
    m = sub.add_parser("methods", help="Compare DPDK backends on a veth pair or an interface")
    m.add_argument("--iface", help="Measure TX on this existing interface instead of a veth pair")
    m.add_argument("--duration", type=float, default=2.0, help="Seconds per backend. Default: %(default)s")
    m.add_argument("--size", type=int, default=64, help="Frame size with FCS. Default: %(default)s")
    m.add_argument("--backends", nargs="+", default=["af_xdp", "af_packet", "pcap", "tap"],
                   help="Backends to try. Default: %(default)s")
    m.set_defaults(func=cmd_methods)
    ports = sub.add_parser("ports", help="Open DPDK devices and print their capabilities")
    ports.add_argument("devices", nargs="+",
                       help="Device strings, e.g. net_null0, or a NIC's PCI address such as "
                            "0000:01:00.0 (bound to vfio-pci)")
    ports.set_defaults(func=cmd_ports)
    r = sub.add_parser("report",
                       help="Rebuild the acceptance report (HTML, or PDF) from a saved "
                            "results file")
    r.add_argument("results", help="A results.json a test session wrote (--netload-report-dir)")
    r.add_argument("-o", "--output",
                   help="The file to write. Default: report.html (report.pdf with --pdf) "
                        "beside the results file")
    r.add_argument("--pdf", action="store_true",
                   help="Write the paginated PDF (cover, contents, page numbers, signature "
                        "block) instead of the HTML page; needs pytest-netload[pdf]")
    for field, what in (("customer", "The customer the DUT is accepted for"),
                        ("operator", "Who ran the tests"),
                        ("site", "Where the tests ran"),
                        ("test-plan", "The test plan's name or reference")):
        r.add_argument(f"--{field}", metavar="TEXT",
                       help=f"{what}, on the report's cover (overrides the results file's "
                            f"netload_{field.replace('-', '_')} setting)")
    r.add_argument("--baseline", help="A baseline to compare with: a results.json path, or "
                   "a NAME saved with --netload-save-baseline (<results dir>/baselines/"
                   "NAME.json)")
    r.add_argument("--history", nargs="+", metavar="PATH",
                   help="results.json files of earlier sessions, or directories of them: the "
                        "report shows each figure's trend with its change points")
    r.add_argument("--regression", type=_regression, default=None, help=REGRESSION_HELP)
    r.set_defaults(func=cmd_report)
    c = sub.add_parser("compare", help="Each figure of a results file against a baseline")
    c.add_argument("results", help="The results.json to judge")
    c.add_argument("baseline", help="The baseline: an earlier results.json (or a saved "
                   "baselines/NAME.json)")
    c.add_argument("--regression", type=_regression, default=None, help=REGRESSION_HELP)
    c.add_argument("--all", action="store_true", help="List unchanged figures too")
    c.set_defaults(func=cmd_compare)
    t = sub.add_parser("trend", help="Change points of a DUT's figures over saved results")
    t.add_argument("results", nargs="+",
                   help="results.json files of earlier sessions, or directories of them")
    t.add_argument("--all", action="store_true", help="List figures without changes too")
    t.add_argument("--fail-on-regression", action="store_true",
                   help="Exit 1 when any change point is a regression (beyond --regression)")
    t.add_argument("--regression", type=_regression, default=None,
                   help="Regression threshold, e.g. 5%%: a change point counts as a "
                        "regression only when the figure got worse by more than this. "
                        "Default: none (every change point for the worse)")
    t.set_defaults(func=cmd_trend)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except NetloadError as exc:
        print(f"netload {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"netload {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
