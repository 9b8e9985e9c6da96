"""The legend: what each node colour means, with the counts of the shown nodes, over a corner of the canvas.

Drawn in the canvas's theme; the counts follow every filter (the look counts shown nodes only)."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFontMetricsF, QPainter, QPaintEvent, QPen, QPixmap
from PySide6.QtWidgets import QWidget

from docatlas.gui.graph.palette import LIGHT, Theme

ROW = 17
SWATCH = 10
PAD = 8


class Legend(QWidget):
    """Colour swatches and labels; sized to its entries."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.entries: list[tuple[str, str, int]] = []
        self.title = ""
        self.theme = LIGHT
        self._picture: QPixmap | None = None
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)

    def set_entries(self, title: str, entries: list[tuple[str, str, int]], theme: Theme = LIGHT) -> None:
        """Show (label, colour, count) rows under a title; empty groups are left out."""
        self.title, self.theme = title, theme
        self.entries = [e for e in entries if e[2] > 0]
        metrics = QFontMetricsF(self.font())
        widest = max([metrics.horizontalAdvance(f"{label} ({count})") for label, _, count in self.entries]
                     + [metrics.horizontalAdvance(title)], default=0.0)
        self.setFixedSize(QSize(int(widest + SWATCH + 3 * PAD), ROW * (len(self.entries) + 1) + PAD))
        self._picture = QPixmap(self.size() * self.devicePixelRatioF())
        self._picture.setDevicePixelRatio(self.devicePixelRatioF())
        self._picture.fill(QColor(0, 0, 0, 0))
        painter = QPainter(self._picture)
        painter.setFont(self.font())
        self._draw(painter)
        painter.end()
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        """The picture drawn when the entries were set (the canvas repaints it every frame)."""
        if self._picture is not None:
            painter = QPainter(self)
            painter.drawPixmap(0, 0, self._picture)
            painter.end()

    def _draw(self, painter: QPainter) -> None:
        """A box in the theme's background with one row per colour."""
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        back = QColor(self.theme.background)
        back.setAlpha(230)
        painter.setPen(QPen(QColor(self.theme.frame), 1))
        painter.setBrush(back)
        painter.drawRoundedRect(QRectF(0.5, 0.5, self.width() - 1, self.height() - 1), 4, 4)
        painter.setPen(QColor(self.theme.text))
        font = painter.font()
        font.setBold(True)
        painter.setFont(font)
        painter.drawText(QPointF(PAD, ROW - 3), self.title)
        font.setBold(False)
        painter.setFont(font)
        for row, (label, colour, count) in enumerate(self.entries, start=1):
            y = row * ROW + 4
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(QColor(colour))
            painter.drawEllipse(QRectF(PAD, y, SWATCH, SWATCH))
            painter.setPen(QColor(self.theme.text))
            painter.drawText(QPointF(PAD + SWATCH + PAD / 2, y + SWATCH - 1), f"{label} ({count})")
