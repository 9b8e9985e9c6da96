"""The canvas's label texts, measured and laid out once (`QStaticText`), not in every frame.

A frame draws up to a few hundred labels on the GUI thread; `drawText` shapes its string
again on every call, while a prepared `QStaticText` only draws its glyphs (about three
times faster). Node labels are kept per model, community labels per overview; the node
cache is bounded. Every text is plain (`Qt.PlainText`): names are never read as markup.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetricsF, QStaticText, QTransform

from docatlas.gui.graph.overview import Overview

MOST = 5_000  # node labels kept laid out (a frame draws at most a few hundred); the cache starts again past this


def static_text(text: str, font: QFont) -> QStaticText:
    """`text` laid out in `font`, as plain text."""
    laid_out = QStaticText(text)
    laid_out.setTextFormat(Qt.TextFormat.PlainText)
    laid_out.prepare(QTransform(), font)
    return laid_out


class LabelTexts:
    """Widths and laid-out texts of the node labels (by node) and of the community labels."""

    def __init__(self, font: QFont, bold: QFont):
        self.font, self.bold = font, bold
        self.metrics = QFontMetricsF(font)
        self._names: list[str] | None = None
        self._widths: dict[int, float] = {}
        self._static: dict[tuple[str, bool], QStaticText] = {}
        self._overview: Overview | None = None
        self.disc_order: list[int] = []
        self.disc_widths: list[float] = []
        self._disc_static: list[QStaticText | None] = []

    def use_names(self, names: list[str]) -> None:
        """Label these names from now on (a new model: the caches start again)."""
        if names is not self._names:
            self._names, self._widths, self._static = names, {}, {}

    def width(self, node: int) -> float:
        """A node label's width in pixels (in the regular font)."""
        if node not in self._widths:
            self._widths[node] = self.metrics.horizontalAdvance(self._names[node])
        return self._widths[node]

    def static(self, node: int, bold: bool) -> QStaticText:
        """A node's label laid out, in bold (selected, hovered) or the regular font."""
        name = self._names[node]
        key = (name, bold)  # by the text itself, so it can never show another text
        laid_out = self._static.get(key)
        if laid_out is None:
            if len(self._static) >= MOST:
                self._static = {}
            laid_out = self._static[key] = static_text(name, self.bold if bold else self.font)
        return laid_out

    def use_overview(self, overview: Overview) -> None:
        """Label this overview's discs: biggest first, each as "top entities (members)"."""
        if overview is self._overview:
            return
        self._overview = overview
        order = sorted(range(len(overview.members)), key=lambda i: -int(overview.members[i]))
        self.disc_order = order
        self._disc_texts = [f"{overview.labels[i]} ({overview.members[i]:,})" for i in order]
        self.disc_widths = [self.metrics.horizontalAdvance(t) for t in self._disc_texts]
        self._disc_static = [None] * len(order)

    def disc_static(self, rank: int) -> QStaticText:
        """The label of the `rank`-th biggest disc, laid out."""
        laid_out = self._disc_static[rank]
        if laid_out is None:
            laid_out = self._disc_static[rank] = static_text(self._disc_texts[rank], self.font)
        return laid_out
