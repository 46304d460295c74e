"""What every plot of the report draws with: matplotlib (Agg) loaded through the `html`
extra, the palette, a figure of the page's layout and its inline SVG. plots.py and
y1564.py draw on it."""

from __future__ import annotations

import io
import re

from ...extras import require

matplotlib = require("matplotlib", "html", "the HTML report (its plots)")
matplotlib.use("Agg")

from markupsafe import Markup  # noqa: E402  (after the backend is chosen)
from matplotlib.figure import Figure  # noqa: E402

__all__ = ["COLOURS", "PLAIN_TEXT", "figure", "matplotlib", "svg"]

COLOURS = ("#1f5fa8", "#c0392b", "#2e8b57", "#8e44ad", "#d35400", "#16a085", "#7f8c8d",
           "#b8860b")


def svg(fig: Figure, index: int, label: str) -> Markup:
    """The figure as inline SVG: no XML prolog, no namespace URLs, no metadata, ids unique
    within the page."""
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": f"netload-{index}"}):
        fig.savefig(buf, format="svg",
                    metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    text = buf.getvalue()
    text = text[text.index("<svg"):]
    text = re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.DOTALL)
    text = re.sub(r"<!--.*?-->", "", text, flags=re.DOTALL)
    text = re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", text)
    prefix = f"fig{index}-"
    text = re.sub(r'\bid="([^"]+)"', rf'id="{prefix}\1"', text)
    text = re.sub(r'href="#([^"]+)"', rf'href="#{prefix}\1"', text)
    text = re.sub(r"url\(#([^)]+)\)", rf"url(#{prefix}\1)", text)
    text = text.replace("<svg", f'<svg role="img" aria-label="{label}"', 1)
    return Markup(text)


def figure(width: float = 9.0, height: float = 3.6) -> Figure:
    fig = Figure(figsize=(width, height), layout="constrained")
    return fig


# Free text (test ids, stream names, IMIX names) is drawn as it is written: matplotlib's
# mathtext would read "$...$" in it as TeX, and an unbalanced formula raises at draw time.
PLAIN_TEXT = {"text.parse_math": False}
