"""The acceptance report as a paginated PDF: the HTML report's own page, paged.

`render(document)` builds the page with `html.render(document, pdf=True)` (the same
sections, tables and SVG plots as report.html, plus print.css: A4 landscape pages, a
cover, a table of contents whose entries carry their page numbers, "Page n of m" on every
page, rows never split across pages, table headers repeated, a signature block) and lays
it out with WeasyPrint, which draws the plots as vectors and makes the PDF's outline from
the headings. WeasyPrint comes with the `pdf` extra (pytest-netload[pdf]) and needs
Pango from the system (Debian: libpango-1.0-0, libpangoft2-1.0-0); without either, the
error names what to install.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from ..atomic import write_atomic
from ..errors import MissingExtra, NetloadEnvironmentError
from ..extras import require

__all__ = ["render", "renderer", "write"]

SYSTEM_PACKAGES = "libpango-1.0-0 libpangoft2-1.0-0"  # Debian's names (WeasyPrint's docs)


def renderer() -> ModuleType:
    """WeasyPrint, imported; MissingExtra naming pytest-netload[pdf] when it is not
    installed, NetloadEnvironmentError naming the system packages when it is but Pango
    is missing (WeasyPrint raises OSError on import then)."""
    try:
        return require("weasyprint", "pdf", "the PDF report")
    except OSError as exc:
        if isinstance(exc, MissingExtra):
            raise
        raise NetloadEnvironmentError(
            f"the PDF report needs WeasyPrint's system libraries, which did not load "
            f"({exc}); install Pango: apt-get install {SYSTEM_PACKAGES} (Debian, Ubuntu), "
            "or see WeasyPrint's installation notes for other systems") from None


class _SvgStyleNoise(logging.Filter):
    """WeasyPrint reads the style attributes of the plots' inline SVG as CSS too, and warns
    about every SVG property there (fill, stroke, text-anchor: thousands per report) that
    CSS does not know; its SVG renderer draws them all the same. Those warnings are
    dropped, every other one is kept."""

    NOISE = re.compile(r"^Ignored `(fill|stroke|text-anchor)[a-z-]*:.*unknown property")

    def filter(self, record: logging.LogRecord) -> bool:
        return not self.NOISE.match(record.getMessage())


def render(document: Mapping[str, Any], **sections: Any) -> bytes:
    """The report of `document` (a results document, as html.render takes it) as PDF;
    `sections`: html.render's baseline `comparison`, `history` and `threshold`."""
    weasyprint = renderer()
    from . import html  # jinja2, matplotlib: the `html` extra, which `pdf` includes

    page = html.render(document, pdf=True, **sections)
    logger, noise = logging.getLogger("weasyprint"), _SvgStyleNoise()
    logger.addFilter(noise)
    try:
        pdf: bytes = weasyprint.HTML(string=page, base_url=None).write_pdf()
    finally:
        logger.removeFilter(noise)
    return pdf


def write(document: Mapping[str, Any], path: str | os.PathLike[str], **sections: Any) -> Path:
    """Render `document` as PDF and write it to `path` (atomically); returns the path."""
    return write_atomic(path, render(document, **sections))
