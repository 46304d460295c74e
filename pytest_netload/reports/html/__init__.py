"""The acceptance report: one self-contained HTML file built from a results document.

`render(document)` returns the page: a cover with the DUT and the overall verdict, the
RFC 2544 procedures (§26.1-§26.6) and MLRsearch with tables per frame size, plots as inline
SVG (matplotlib, Agg), the test conditions and every assertion verdict. The page loads
nothing: no scripts, no fonts, no images from elsewhere, no URL at all. `write(document,
path)` saves it. The page is built here; `sections` reads the document, `plots` draws,
`text` writes the numbers. reports/pdf.py pages the same page (`render(document, pdf=True)`)
into a PDF. The document is taken as it is: check a file with reports.load.load()
first (the `netload report` command does).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...atomic import write_atomic
from ...extras import require
from .plots import page_plots
from .sections import (
    _back_to_back,
    _conditions,
    _cover,
    _frame_loss,
    _latency,
    _latency_at,
    _mlrsearch,
    _other,
    _recovery,
    _reset,
    _throughput,
    _verdicts,
    overall_verdict,
    short_name,
)
from .text import (
    PERCENTILE_KEYS,
    fmt_bps,
    fmt_count,
    fmt_loss,
    fmt_ns,
    fmt_pps,
    fmt_s,
    fmt_share,
    size_label,
)
from .landing import landing_rows
from .rfc2889 import rfc2889_rows
from .y1564 import y1564_bursts, y1564_sct, y1564_spt

if TYPE_CHECKING:
    import jinja2

    from ..baseline import Comparison
else:
    jinja2 = require("jinja2", "html", "the HTML report")

from markupsafe import Markup, escape  # noqa: E402  (jinja2's own: after its check)

__all__ = ["fmt_bps", "fmt_count", "fmt_loss", "fmt_ns", "fmt_pps", "fmt_s", "fmt_share",
           "overall_verdict", "render", "short_name", "size_label", "write"]


# Where a test id may break across lines in a narrow column of the PDF: after "_", "/",
# "::", "[", "-" and "." (test_rfc2544[1518B] -> test_ rfc2544[ 1518B])
_BREAKS = re.compile(r"(::|[_/\[\-.])")


def breakable(text: str) -> Markup:
    """`text`, escaped, with <wbr> after each of its separators: a PDF table column narrower
    than a long test id breaks it there, not past the page's edge."""
    return Markup(_BREAKS.sub(r"\1<wbr>", str(escape(text))))


def _environment(pdf: bool) -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("pytest_netload.reports", "templates"),
                             autoescape=jinja2.select_autoescape(("html", "j2")),
                             undefined=jinja2.StrictUndefined, trim_blocks=True,
                             lstrip_blocks=True)
    # the screen page is left as it was: a browser's table grows to fit a test id
    env.filters["breakable"] = breakable if pdf else escape
    return env


def render(document: Mapping[str, Any], *, pdf: bool = False,
           comparison: Comparison | None = None,
           history: Sequence[Mapping[str, Any]] | None = None,
           threshold: float | None = None) -> str:
    """The report of `document` (a results document, schema 1.x) as one HTML page; with a
    baseline `comparison` and/or a `history` of earlier documents, a section of each
    figure against its baseline and of their trends (html/baseline.py). With `pdf`, the
    same page for the PDF renderer (reports/pdf.py): paged by print.css, with a table of
    contents that gives page numbers and a signature block."""
    context = {
        "pdf": pdf,
        "cover": _cover(document),
        "throughput": _throughput(document),
        "latency": _latency(document),
        "latency_at": _latency_at(document),
        "frame_loss": _frame_loss(document),
        "back_to_back": _back_to_back(document),
        "recovery": _recovery(document),
        "reset": _reset(document),
        "mlrsearch": _mlrsearch(document),
        "y1564_sct": y1564_sct(document),
        "y1564_spt": y1564_spt(document),
        "y1564_bursts": y1564_bursts(document),
        "rfc2889": rfc2889_rows(document),
        "other": _other(document),
        "landing": landing_rows(document),
        "conditions": _conditions(document),
        "sections": list(document.get("report_sections") or ()),
        "verdicts": _verdicts(document),
        "plots": page_plots(document),
        "percentile_keys": PERCENTILE_KEYS,
        "baseline": _baseline_section(document, comparison, history, threshold),
    }
    return _environment(pdf).get_template("report.html.j2").render(context)


def _baseline_section(document: Mapping[str, Any], comparison: Comparison | None,
                      history: Sequence[Mapping[str, Any]] | None,
                      threshold: float | None) -> dict[str, Any] | None:
    if comparison is None and not history:
        return None   # scipy and the trend code load only for a report that has them
    from .baseline import baseline_section

    return baseline_section(document, comparison, history, threshold)


def write(document: Mapping[str, Any], path: str | os.PathLike[str], *,
          comparison: Comparison | None = None,
          history: Sequence[Mapping[str, Any]] | None = None,
          threshold: float | None = None) -> Path:
    """Render `document` and write the page to `path` (atomically); returns the path."""
    return write_atomic(path, render(document, comparison=comparison, history=history,
                                     threshold=threshold))
